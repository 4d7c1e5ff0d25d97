#!/usr/bin/env python3
"""bench/replay_memory.py — peak memory of ``webark serve`` when many clients ask for
the same very large HTML page at once.

    .venv/bin/python bench/replay_memory.py                  # 10 MB page, 1 and 40 clients
    .venv/bin/python bench/replay_memory.py --mb 20 --clients 1 10 40
    .venv/bin/python bench/replay_memory.py --gzip           # page stored gzip-encoded

**Page.** A generated HTML document of ``--mb`` MB (10^6 bytes; deterministic): a head
with stylesheets and scripts, then sections of links, images with ``srcset``,
``style`` attributes with ``url()``, inline ``<style>`` and ``<script>`` blocks with
absolute URLs, and UTF-8 text (``é``, ``—``: the decoded page is not 1 byte per
character), so every rewriter of :mod:`webark.rewrite` has work on every section. It is
written as one capture (``http://big.test/page.html``) into a per-record gzip WARC with
webark's ``WarcWriter``, in a collection made with ``Collection.init`` / ``add``, in a
temporary folder.

**Server.** ``webark serve DIR --port P`` (one process), started fresh for each client
count so its peak RSS (``VmHWM`` of ``/proc/PID/status``) belongs to that run only. The
RSS after one small request (the banner script) is the idle figure.

**Clients.** N threads, each with its own connection (``http.client``), released
together by a barrier, each GETting ``/big/{ts}/http://big.test/page.html`` (the
rewritten page with the banner). Every body must be complete (its ``Content-Length``)
and identical to the others (sha256), else the script exits 2.

Last line of stdout: one JSON object (per client count: idle and peak RSS in MiB, wall
time in s, response size, errors).
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import http.client
import json
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import ROOT, log, machine_info
from cdx_server import free_port, stop, wait_http

WEBARK = [sys.executable, "-c", "from webark.cli.main import main; main()"]
URL = "http://big.test/page.html"
WHEN = datetime(2024, 5, 1, 12, 0, 0, tzinfo=UTC)
TS = "20240501120000"


def big_page(size: int) -> bytes:
    """A deterministic HTML document of at least ``size`` bytes (module docstring)."""
    head = (
        '<!DOCTYPE html>\n<html lang="fr"><head><meta charset="utf-8">'
        "<title>Grande page — archive</title>"
        '<link rel="stylesheet" href="/css/site.css"><link rel="icon" href="/favicon.ico">'
        '<script src="https://cdn.big.test/lib.js"></script></head><body>\n'
    )
    parts = [head]
    n = len(head)
    i = 0
    while n < size:
        s = (
            f'<section id="s{i}"><h2>Section {i} — été</h2>'
            f'<p style="background:url(/img/bg{i % 50}.png)">Texte numéro {i}: '
            f'<a href="/articles/{i}.html">article</a>, <a href="http://other.test/p?id={i}">'
            f'ailleurs</a>, <a href="#s{i + 1}">suivant</a>.</p>'
            f'<img src="/img/{i}.jpg" srcset="/img/{i}-2x.jpg 2x, /img/{i}-3x.jpg 3x" alt="">'
            f"<style>.c{i}{{background-image:url('/img/c{i}.png')}}</style>"
            f'<script>var u{i} = "http://big.test/api/{i}"; var t = "plain text";</script>'
            f'<form action="/search"><input name="q" value="x{i}"></form></section>\n'
        )
        parts.append(s)
        n += len(s.encode("utf-8"))
        i += 1
    parts.append("</body></html>\n")
    return "".join(parts).encode("utf-8")


def make_collection(work: Path, size: int, gz: bool) -> tuple[Path, int]:
    """Write the WARC and the collection ``big`` under ``work``; returns (collections
    folder, payload size as stored)."""
    from webark.index.collection import Collection
    from webark.warc.writer import WarcWriter

    body = big_page(size)
    stored = gzip.compress(body, 6, mtime=0) if gz else body
    headers = [("Content-Type", "text/html; charset=utf-8"),
               ("Content-Length", str(len(stored)))]  # fmt: skip
    if gz:
        headers.append(("Content-Encoding", "gzip"))
    head = "HTTP/1.1 200 OK\r\n" + "".join(f"{k}: {v}\r\n" for k, v in headers) + "\r\n"
    req = b"GET /page.html HTTP/1.1\r\nHost: big.test\r\n\r\n"
    writer = WarcWriter(work / "warcs", prefix="BIG")
    with writer as w:
        w.write(*w.builder.exchange(URL, head.encode("latin-1") + stored, req, date=WHEN))
    colls = work / "colls"
    coll = Collection.init(colls / "big")
    with coll:
        for res in coll.add([Path(p) for p in writer.paths]):
            assert res.status == "indexed", res
    return colls, len(body)


def vm(pid: int) -> dict[str, int]:
    """VmHWM / VmRSS of ``pid`` in KiB."""
    out = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(("VmHWM:", "VmRSS:")):
            out[line.split(":")[0]] = int(line.split()[1])
    return out


def fetch(port: int, path: str) -> tuple[int, bytes, int | None]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=300)
    try:
        conn.request("GET", path)
        r = conn.getresponse()
        body = r.read()
        length = r.getheader("Content-Length")
        return r.status, body, int(length) if length is not None else None
    finally:
        conn.close()


def run(colls: Path, clients: int) -> dict[str, Any]:
    """One fresh server, ``clients`` concurrent requests for the page."""
    port = free_port()
    log_f = open(colls.parent / f"serve-{clients}.log", "wb")  # noqa: SIM115 - the child's
    proc = subprocess.Popen([*WEBARK, "serve", str(colls), "--port", str(port)],
                            stdout=log_f, stderr=subprocess.STDOUT, cwd=ROOT)  # fmt: skip
    try:
        wait_http(f"http://127.0.0.1:{port}/big/cdx?url=big.test/&matchType=host&limit=1",
                  proc, "webark serve")  # fmt: skip
        fetch(port, "/_webark/static/banner.js")
        idle = vm(proc.pid)
        path = f"/big/{TS}/{URL}"
        barrier = threading.Barrier(clients)
        results: list[tuple[int, bytes, int | None] | BaseException] = [b""] * clients  # type: ignore[list-item]

        def client(k: int) -> None:
            barrier.wait()
            try:
                results[k] = fetch(port, path)
            except BaseException as exc:  # reported below
                results[k] = exc

        threads = [threading.Thread(target=client, args=(k,)) for k in range(clients)]
        t0 = time.perf_counter()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        wall = time.perf_counter() - t0
        peak = vm(proc.pid)
    finally:
        stop(proc, "webark serve")
        log_f.close()
    digests: set[str] = set()
    errors: list[str] = []
    size = 0
    for r in results:
        if isinstance(r, BaseException):
            errors.append(repr(r))
            continue
        status, body, length = r
        if status != 200 or (length is not None and length != len(body)):
            errors.append(f"status {status}, {len(body)} of {length} bytes")
            continue
        size = len(body)
        digests.add(hashlib.sha256(body).hexdigest())
    if len(digests) > 1:
        errors.append(f"{len(digests)} different bodies")
    return {"clients": clients, "idle_rss_mib": round(idle["VmRSS"] / 1024, 1),
            "peak_rss_mib": round(peak["VmHWM"] / 1024, 1), "wall_s": round(wall, 2),
            "response_bytes": size, "sha256": sorted(digests)[:1], "errors": errors}  # fmt: skip


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mb", type=float, default=10.0, help="page size in MB (10^6 bytes)")
    ap.add_argument("--clients", type=int, nargs="+", default=[1, 40])
    ap.add_argument("--gzip", action="store_true", help="store the page gzip-encoded")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="webark-replay-memory-"))
    try:
        colls, size = make_collection(work, int(args.mb * 1_000_000), args.gzip)
        log(f"page: {size:,} bytes{' (stored gzip)' if args.gzip else ''}")
        runs = []
        for n in args.clients:
            r = run(colls, n)
            log(f"{n:3d} clients: idle {r['idle_rss_mib']} MiB, peak {r['peak_rss_mib']} MiB, "
                f"{r['wall_s']} s, response {r['response_bytes']:,} bytes, "
                f"errors {len(r['errors'])}")  # fmt: skip
            runs.append(r)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    load = Path("/proc/loadavg").read_text().split()[:3]
    sums = {d for r in runs for d in r["sha256"]}
    ok = all(not r["errors"] for r in runs) and len(sums) <= 1
    print(json.dumps({"page_bytes": size, "gzip": args.gzip, "runs": runs,
                      "loadavg": load, "machine": machine_info(), "ok": ok}))  # fmt: skip
    return 0 if ok else 2


if __name__ == "__main__":
    sys.exit(main())
