#!/usr/bin/env python3
"""bench/reduplicate.py — ``webark reduplicate`` throughput: sorted vs file-order.

    .venv/bin/python bench/reduplicate.py                 # 200k records, 50 % revisits
    .venv/bin/python bench/reduplicate.py --records 20000 # smaller
    .venv/bin/python bench/reduplicate.py --quick         # 10k records: smoke test

Input (generated once with webark's WarcWriter, cached in ``/tmp/webark-bench`` or
``$WEBARK_BENCH_CACHE``): a collection of ``--records`` capture records in
``--harvests`` WARC files (one per harvest, written a week apart). Harvest 0 holds
responses only; in each later harvest a URL's capture is, with the probability that
makes revisits ``--revisit-share`` of all records (default 50 %), a revisit of one of
its earlier captures (identical-payload-digest, WARC-Refers-To*), else a new response
(changed content). Payloads are 1–8 KiB of HTML-like text, deterministic (seeded). The
collection is indexed (SQLite store) once.

Each strategy reduplicates the whole collection (every harvest) into a fresh folder,
in this process, after the WARCs were read once (page cache warm):

  sorted      collect all revisits, resolve them in index order, read the originals
              sorted by (WARC, offset), write (``webark.tools.reduplicate``, default)
  file-order  resolve each revisit when met, with replay's per-record
              ``RevisitResolver`` (index lookups and WARC reads in harvest order)

records/s = input records / wall seconds of the ``reduplicate()`` call; with ``--runs N``
the strategies run interleaved N times and the median run of each is reported. The two
outputs are compared (same records converted and verified). Last line of stdout: one
JSON object.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from _common import cache_dir, log, machine_info, warm_cache
from webark.index.collection import Collection
from webark.tools.reduplicate import ReduplicateOptions, reduplicate
from webark.tools.reduplicate_harvest import select_harvest
from webark.warc.builders import Original, RecordBuilder
from webark.warc.writer import WarcWriter

VERSION = 1
_WORDS = ["archive", "web", "crawl", "capture", "revisit", "payload", "digest", "index",
          "replay", "harvest", "collection", "record", "original", "memento", "timegate",
          "surt", "frontier"]


def _body(rng: random.Random, url: str, version: int) -> bytes:
    n = rng.randint(1024, 8192)
    words = []
    size = 0
    while size < n:
        w = rng.choice(_WORDS)
        words.append(w)
        size += len(w) + 1
    text = f"<html><head><title>{url} v{version}</title></head><body><p>{' '.join(words)}"
    return (text[:n] + "</p></body></html>").encode()


def _http(body: bytes) -> bytes:
    return (b"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n"
            b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body)


def generate(root: Path, records: int, harvests: int, share: float, seed: int = 42) -> Path:
    """Write the WARCs and the indexed collection under ``root`` (once)."""
    coll_dir = root / "coll"
    if (root / "done").exists():
        return coll_dir
    if root.exists():
        shutil.rmtree(root)
    rng = random.Random(seed)
    per = records // harvests
    urls = [f"http://site{i % 97}.bench.test/page/{i}" for i in range(per)]
    # revisit probability in harvests 1.. so that revisits are `share` of all records
    p = min(1.0, share * records / (records - per))
    # url -> (Original, body) of its latest response
    latest: dict[str, tuple[Original, bytes]] = {}
    version: dict[str, int] = {}
    start = datetime(2020, 1, 6, tzinfo=UTC)
    t0 = time.perf_counter()
    for h in range(harvests):
        when = [start + timedelta(days=7 * h)]

        def clock(when: list[datetime] = when) -> datetime:
            when[0] += timedelta(milliseconds=50)
            return when[0]

        b = RecordBuilder(clock=clock)
        with WarcWriter(root / "warcs", prefix=f"BENCH-H{h:02d}", builder=b,
                        template="{prefix}-{serial:05d}{ext}") as w:
            for url in urls:
                if h > 0 and rng.random() < p:
                    orig, body = latest[url]
                    w.write(b.revisit(url, _http(body), orig))
                else:
                    version[url] = version.get(url, 0) + 1
                    body = _body(rng, url, version[url])
                    (rec,) = w.write(b.response(url, _http(body)))
                    latest[url] = (Original(url, rec.headers.date_str or "", rec.record_id,
                                            rec.headers.payload_digest), body)
        log(f"  harvest {h}: {per} records ({time.perf_counter() - t0:.1f} s)")
    coll = Collection.init(coll_dir, add_mode="in-place")
    for r in coll.add(sorted((root / "warcs").glob("*.warc.gz"))):
        if r.status != "indexed":
            raise SystemExit(f"indexing failed: {r}")
    coll.close()
    log(f"  indexed ({time.perf_counter() - t0:.1f} s)")
    (root / "done").write_text("ok\n")
    return coll_dir


def run(coll_dir: Path, out: Path, strategy: str) -> dict[str, object]:
    if out.exists():
        shutil.rmtree(out)
    coll = Collection.open(coll_dir)
    harvest = select_harvest(coll, ["*"])
    phases: dict[str, float] = {}
    t0 = time.perf_counter()

    def progress(phase: str, done: int, total: int) -> None:
        phases[phase] = time.perf_counter() - t0

    report = reduplicate(coll, harvest, out,
                         ReduplicateOptions(strategy=strategy),  # type: ignore[arg-type]
                         progress=progress)
    wall = time.perf_counter() - t0
    coll.close()
    records = report.total("records")
    ends = sorted(phases.items(), key=lambda kv: kv[1])
    spans, prev = {}, 0.0
    for name, end in ends:
        spans[name] = round(end - prev, 2)
        prev = end
    return {
        "strategy": strategy, "wall_s": round(wall, 2), "records": records,
        "records_per_s": round(records / wall), "revisits": report.total("revisits"),
        "converted": report.total("converted"), "verified": report.total("verified"),
        "unresolved": report.total("unresolved"), "original_reads": report.original_reads,
        "phase_s": spans,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--records", type=int, default=200_000)
    ap.add_argument("--harvests", type=int, default=10)
    ap.add_argument("--revisit-share", type=float, default=0.5)
    ap.add_argument("--quick", action="store_true", help="10k records")
    ap.add_argument("--strategies", default="file-order,sorted")
    ap.add_argument("--runs", type=int, default=1,
                    help="runs per strategy, interleaved; the median run is reported")
    args = ap.parse_args()
    records = 10_000 if args.quick else args.records
    root = cache_dir() / f"reduplicate-v{VERSION}-{records}-{args.harvests}-{args.revisit_share}"
    log(f"input: {root}")
    coll_dir = generate(root, records, args.harvests, args.revisit_share)
    for p in sorted((root / "warcs").glob("*.warc.gz")):
        warm_cache(p)
    runs: dict[str, list[dict[str, object]]] = {}
    for i in range(args.runs):  # interleaved: a slow phase of the VM hits both alike
        for strategy in args.strategies.split(","):
            log(f"run {i + 1}/{args.runs}: {strategy} ...")
            res = run(coll_dir, root / f"out-{strategy}", strategy)
            log(f"  {res}")
            runs.setdefault(strategy, []).append(res)
    results = []
    for rs in runs.values():
        ordered = sorted(rs, key=lambda r: float(r["wall_s"]))  # type: ignore[arg-type]
        med = dict(ordered[len(ordered) // 2])
        med["all_wall_s"] = [r["wall_s"] for r in rs]
        results.append(med)
    by = {r["strategy"]: r for r in results}
    if len({(r["converted"], r["verified"], r["unresolved"]) for r in results}) != 1:
        raise SystemExit(f"strategies disagree: {results}")
    print(f"{'strategy':<12} {'records':>8} {'revisits':>8} {'wall s':>8} {'records/s':>10}")
    for r in results:
        print(f"{r['strategy']:<12} {r['records']:>8} {r['revisits']:>8} "
              f"{r['wall_s']:>8} {r['records_per_s']:>10}")
    speedup = None
    if "sorted" in by and "file-order" in by:
        speedup = round(float(by["file-order"]["wall_s"]) / float(by["sorted"]["wall_s"]), 2)
        print(f"sorted strategy: {speedup}x the records/s of file order")
    print(json.dumps({"bench": "reduplicate", "records": records, "harvests": args.harvests,
                      "results": results, "speedup": speedup, "machine": machine_info()}))


if __name__ == "__main__":
    main()
