#!/usr/bin/env python3
"""bench/replay_thumbnails.py — the cost of the thumbnails in the capture lists (issue
13): the capture calendar of one URL with 1,000 captures and the URL list of a host
with 1,000 URLs, every capture with a ``urn:thumbnail:`` record, served by this
checkout and by webark as of git ``--baseline`` (default: the commit before the one
that added ``src/webark/apps/replay/screenshots.py``, i.e. without thumbnails), side by
side in one run.

    .venv/bin/python bench/replay_thumbnails.py                   # 1,000 captures, 20 rounds
    .venv/bin/python bench/replay_thumbnails.py --captures 10000 --rounds 5
    .venv/bin/python bench/replay_thumbnails.py --baseline 67aa1e3

**Data.** One WARC written with webark's ``WarcWriter``: ``--captures`` captures of
``http://bench.test/page?id=1`` one minute apart, and one capture of each of
``--captures`` URLs ``http://bench.test/u/{n}.html``; each capture followed 2 s later
by its ``urn:view:`` and ``urn:thumbnail:`` resource records (small images: the pages
never read them, only their index lines). Collection ``bench`` (SQLite index store), in
``<cache>/thumbnails/`` (cache: ``$WEBARK_BENCH_CACHE`` or ``/tmp/webark-bench``).

**Timing.** Each server runs in a child process (``PYTHONPATH`` = its ``src/``; the
baseline's exported with ``git archive``), in process through Starlette's
``TestClient`` (no network): two untimed requests, then the median of ``--rounds``
GETs of ``/bench/*/http://bench.test/page?id=1`` (calendar) and
``/bench/*/http://bench.test/u/*`` (URL list), wall seconds; plus the number of
``<img class="thumb"`` in each page (0 for the baseline). ``x base`` = this checkout's
median / the baseline's (> 1: slower).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tarfile
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

PAGE = "http://bench.test/page?id=1"
LIST = "http://bench.test/u/*"
T0 = datetime(2024, 1, 1, tzinfo=UTC)

_CHILD = r"""
import json, re, statistics, sys, time
from starlette.testclient import TestClient
from webark.apps.replay.app import create_server
colls, rounds, paths = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
out = {}
with TestClient(create_server(colls)) as c:
    for p in paths:
        for _ in range(2):
            r = c.get(p)
            assert r.status_code == 200, (p, r.status_code)
        times = []
        for _ in range(rounds):
            t = time.perf_counter()
            r = c.get(p)
            times.append(time.perf_counter() - t)
        out[p] = {"median_s": statistics.median(times),
                  "thumbs": r.text.count('<img class="thumb"'), "bytes": len(r.content)}
print(json.dumps(out))
"""


def cache_dir() -> Path:
    return Path(os.environ.get("WEBARK_BENCH_CACHE") or "/tmp/webark-bench")


def build(work: Path, n: int) -> Path:
    """The collection folder (made once per ``n``)."""
    from webark.index.collection import Collection
    from webark.warc.writer import WarcWriter

    colls = work / f"colls-{n}"
    if (colls / "bench").exists():
        return colls
    w = WarcWriter(work / f"warcs-{n}", prefix="BENCH")
    body = b"<html><title>bench</title><p>page</p></html>"
    resp = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: %d\r\n\r\n" % len(body)
    with w:
        for i in range(n):
            one = f"http://bench.test/u/{i}.html"
            for url, when in ((PAGE, T0 + timedelta(minutes=i)), (one, T0)):
                path = url.split("bench.test", 1)[1]
                req = f"GET {path} HTTP/1.1\r\nHost: bench.test\r\n\r\n".encode()
                rec = w.write(*w.builder.exchange(url, resp + body, req, date=when))[0]
                for kind, ctype in (("view", "image/png"), ("thumbnail", "image/jpeg")):
                    w.write(w.builder.resource(f"urn:{kind}:{url}", b"image bytes " + kind.encode(),
                                               ctype, date=when + timedelta(seconds=2),
                                               concurrent_to=[rec.record_id or ""]))  # fmt: skip
    coll = Collection.init(colls / "bench", store="sqlite")
    with coll:
        for res in coll.add([Path(p) for p in w.paths]):
            assert res.status == "indexed", res
    return colls


def before_thumbnails() -> str:
    """The commit before the one that added ``screenshots.py`` (the default baseline)."""
    added = subprocess.run(
        ["git", "-C", str(ROOT), "log", "--diff-filter=A", "--format=%H", "--",
         "src/webark/apps/replay/screenshots.py"],
        check=True, capture_output=True, text=True,
    ).stdout.split()  # fmt: skip
    if not added:
        raise SystemExit("no commit adds src/webark/apps/replay/screenshots.py: give --baseline")
    return added[-1] + "^"


def export_src(ref: str, dest: Path) -> Path:
    """``src/`` of git ``ref`` exported into ``dest``; the ``src`` path."""
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", ref, "src"], check=True,
                             capture_output=True).stdout  # fmt: skip
    with tempfile.NamedTemporaryFile(suffix=".tar") as f:
        f.write(archive)
        f.flush()
        with tarfile.open(f.name) as tar:
            tar.extractall(dest, filter="data")
    return dest / "src"


def measure(src: Path, colls: Path, rounds: int) -> dict[str, dict[str, float]]:
    paths = [f"/bench/*/{PAGE}", f"/bench/*/{LIST}"]
    env = {**os.environ, "PYTHONPATH": str(src)}
    res = subprocess.run([sys.executable, "-c", _CHILD, str(colls), str(rounds), *paths],
                         check=True, capture_output=True, text=True, env=env)  # fmt: skip
    return json.loads(res.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--captures", type=int, default=1000)
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--baseline", default=None, metavar="REF",
                    help="git ref to compare with (default: before the thumbnails)")
    args = ap.parse_args()
    args.baseline = args.baseline or before_thumbnails()
    work = cache_dir() / "thumbnails"
    work.mkdir(parents=True, exist_ok=True)
    colls = build(work, args.captures)
    with tempfile.TemporaryDirectory() as tmp:
        base = measure(export_src(args.baseline, Path(tmp)), colls, args.rounds)
    mine = measure(ROOT / "src", colls, args.rounds)
    print(f"{args.captures} captures, median of {args.rounds} GETs (wall s)")
    print(f"{'page':<44} {'webark@' + args.baseline[:9]:>14} {'this checkout':>14} {'x base':>7}"
          f" {'thumbs':>7}")  # fmt: skip
    for p in mine:
        b, m = base[p]["median_s"], mine[p]["median_s"]
        print(f"{p:<44} {b:>14.4f} {m:>14.4f} {m / b:>7.2f} {int(mine[p]['thumbs']):>7}")
    print(json.dumps({"captures": args.captures, "baseline": args.baseline,
                      "baseline_results": base, "results": mine}))  # fmt: skip


if __name__ == "__main__":
    main()
