#!/usr/bin/env python3
"""bench/soak.py — ``webark serve`` under a long mixed replay/CDX load (issue 20).

    .venv/bin/python bench/soak.py                   # 64 clients for 300 s
    .venv/bin/python bench/soak.py --seconds 60      # a shorter soak
    .venv/bin/python bench/soak.py --workers 2 --clients 128

**Collection.** A collection (SQLite store) of real corpus WARCs, made once per run in
``<cache>/soak`` (``$WEBARK_BENCH_CACHE`` or ``/tmp/webark-bench``): pywb's sample WARCs
(iana.warc.gz, example, dupes, the URL-agnostic revisit pair), node-warc's
books.toscrape.warc (Chrome's headers with spaces in their names, the 25 dropped
connections of the issue's soak) and warcio's chunked iana.org capture.

**Load.** ``--clients`` (default 64) keep-alive HTTP/1.1 clients on one asyncio loop
(``bench/cdx_server.py``'s response reader; uvloop when installed), each cycling with
its own offset through a fixed list drawn (seed 20) from the collection's own index:
40% rewritten replay ``/{coll}/{ts}/{url}``, 20% ``id_`` replay, 30% CDX queries
(``closest`` exact URL, ``matchType=prefix`` on the host, JSON output), 10% calendars
``/{coll}/*/{url}`` and TimeMaps. Before the load each path is asked once and its status
kept: during the soak an **error** is a different status, a connection reset or closed
without an answer, or a read timeout (30 s). ``webark serve`` runs with ``--workers``
(default 1, the issue's figures) on 127.0.0.1 and is stopped by its own PID.

**Printed** every 10 s (``--every``): requests and errors in the window, requests/s,
p50/p99 latency of the window (ms), the server's RSS (VmRSS summed over its processes,
MiB). At the end: totals, overall p50/p99, RSS after the first window and at the end
(flat = the last within 10% of the first after warm-up), and one JSON line. There is no
peer here: pywb has no equivalent long run in ``../shared/peers``; the issue's own
figures (225 req/s, p99 846 ms, RSS ~230 MiB, 25 dropped connections) are the
reference.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any
from urllib.parse import quote

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import ROOT, cache_dir, log, machine_info, run_event_loop
from cdx_server import _read_response, free_port, memory_kb, stop, tree_pids, wait_http

COLL = "soak"
CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"
WARCS = [
    "pywb/warcs/iana.warc.gz", "pywb/warcs/example.warc.gz", "pywb/warcs/dupes.warc.gz",
    "pywb/warcs/example-url-agnostic-orig.warc.gz",
    "pywb/warcs/example-url-agnostic-revisit.warc.gz", "node-warc/books.toscrape.warc",
    "warcio/example-iana.org-chunked.warc",
]  # fmt: skip
WEBARK = [sys.executable, "-c", "from webark.cli.main import main; main()"]
READ_TIMEOUT = 30.0


def corpus_dir() -> Path:
    import os

    env = os.environ.get("WEBARK_CORPUS")
    return Path(env) if env else CORPUS


def build_collection(work: Path) -> Path:
    """``work/colls/soak`` with the corpus WARCs above, indexed (SQLite)."""
    sys.path.insert(0, str(ROOT / "src"))
    from webark.index.collection import Collection

    root = work / "colls"
    shutil.rmtree(root, ignore_errors=True)
    coll = Collection.init(root / COLL)
    with coll:
        for res in coll.add([corpus_dir() / w for w in WARCS]):
            if res.status != "indexed":
                raise SystemExit(f"cannot index {res}")
    return root


def request_paths(colls: Path, n: int = 2000) -> list[str]:
    """The mixed request list (see the module docstring), from the collection's index."""
    sys.path.insert(0, str(ROOT / "src"))
    from webark.index.collection import Collection
    from webark.index.source import KeyRange

    coll = Collection.open(colls / COLL)
    lines = [x for x in coll.source().scan(KeyRange("", None))
             if x.status.startswith(("2", "3")) and x.mime != "warc/revisit"]  # fmt: skip
    rnd = random.Random(20)
    out: list[str] = []
    for _ in range(n):
        x = rnd.choice(lines)
        kind = rnd.random()
        url = x.url
        if kind < 0.4:
            out.append(f"/{COLL}/{x.timestamp}/{url}")
        elif kind < 0.6:
            out.append(f"/{COLL}/{x.timestamp}id_/{url}")
        elif kind < 0.75:
            out.append(f"/{COLL}/cdx?url={quote(url, safe='')}&closest={x.timestamp}"
                       "&sort=closest&limit=1&output=json")  # fmt: skip
        elif kind < 0.9:
            host = url.split("/")[2]
            out.append(f"/{COLL}/cdx?url={quote(host, safe='')}/&matchType=prefix&limit=50"
                       "&output=json")  # fmt: skip
        elif kind < 0.95:
            out.append(f"/{COLL}/*/{url}")
        else:
            out.append(f"/{COLL}/timemap/link/{url}")
    return out


async def _ask(port: int, path: str) -> int:
    r, w = await asyncio.open_connection("127.0.0.1", port)
    try:
        w.write(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".encode())
        status, _ = await asyncio.wait_for(_read_response(r), READ_TIMEOUT)
        return status
    finally:
        w.close()


async def expected_statuses(port: int, paths: list[str]) -> dict[str, int]:
    """Each distinct path asked once (8 at a time): the status it must keep."""
    sem = asyncio.Semaphore(8)
    out: dict[str, int] = {}

    async def one(p: str) -> None:
        async with sem:
            out[p] = await _ask(port, p)

    await asyncio.gather(*(one(p) for p in dict.fromkeys(paths)))
    return out


def _pct(lat: list[float], p: float) -> float | None:
    if not lat:
        return None
    lat = sorted(lat)
    return round(lat[min(len(lat) - 1, int(p * len(lat)))] * 1000, 1)


async def soak(port: int, paths: list[str], expected: dict[str, int], clients: int,
               seconds: float, every: float, server_pid: int) -> dict[str, Any]:  # fmt: skip
    """Run the load; print one row per ``every`` seconds; the totals."""
    host = f"127.0.0.1:{port}".encode()
    reqs = [(p, b"GET " + p.encode() + b" HTTP/1.1\r\nHost: " + host + b"\r\n\r\n") for p in paths]
    window: list[float] = []
    all_lat: list[float] = []
    errors: dict[str, int] = {}
    win_errors = 0
    total = 0
    start = time.perf_counter()
    end = start + seconds
    rows: list[dict[str, Any]] = []

    async def worker(i: int) -> None:
        nonlocal win_errors, total
        conn: tuple[asyncio.StreamReader, asyncio.StreamWriter] | None = None
        k = i * 7919
        while time.perf_counter() < end:
            path, req = reqs[k % len(reqs)]
            k += 1
            t = time.perf_counter()
            what = ""
            try:
                if conn is None:
                    conn = await asyncio.open_connection("127.0.0.1", port)
                r, w = conn
                w.write(req)
                status, _ = await asyncio.wait_for(_read_response(r), READ_TIMEOUT)
                if status != expected[path]:
                    what = f"status {status} for {expected[path]}"
            except (TimeoutError, OSError, asyncio.IncompleteReadError, ValueError) as e:
                what = type(e).__name__
                if conn is not None:
                    conn[1].close()
                conn = None
            dt = time.perf_counter() - t
            window.append(dt)
            all_lat.append(dt)
            total += 1
            if what:
                win_errors += 1
                errors[what] = errors.get(what, 0) + 1
                if errors[what] <= 3:
                    log(f"error: {what}: {path}")
        if conn is not None:
            conn[1].close()

    async def reporter() -> None:
        nonlocal win_errors
        t0 = start
        print(f"{'t s':>6} {'requests':>9} {'errors':>7} {'req/s':>7} {'p50 ms':>8} "
              f"{'p99 ms':>8} {'RSS MiB':>8}", flush=True)  # fmt: skip
        while True:
            await asyncio.sleep(max(0.0, t0 + every - time.perf_counter()))
            now = time.perf_counter()
            lat, window[:] = list(window), []
            errs, win_errors = win_errors, 0
            rss = memory_kb(tree_pids(server_pid))["rss_kb"] / 1024
            row = {"t": round(now - start), "requests": len(lat), "errors": errs,
                   "rps": round(len(lat) / (now - t0), 1), "p50_ms": _pct(lat, 0.5),
                   "p99_ms": _pct(lat, 0.99), "rss_mib": round(rss, 1)}  # fmt: skip
            rows.append(row)
            print(f"{row['t']:>6} {row['requests']:>9} {errs:>7} {row['rps']:>7} "
                  f"{row['p50_ms']!s:>8} {row['p99_ms']!s:>8} {row['rss_mib']:>8}",
                  flush=True)  # fmt: skip
            t0 = now
            if now >= end:
                return

    await asyncio.gather(reporter(), *(worker(i) for i in range(clients)))
    elapsed = time.perf_counter() - start
    first, last = (rows[1] if len(rows) > 1 else rows[0]), rows[-1]
    return {"clients": clients, "seconds": round(elapsed, 1), "requests": total,
            "rps": round(total / elapsed, 1), "errors": sum(errors.values()),
            "error_kinds": errors, "p50_ms": _pct(all_lat, 0.5), "p99_ms": _pct(all_lat, 0.99),
            "rss_mib_after_warmup": first["rss_mib"], "rss_mib_end": last["rss_mib"],
            "rss_flat": last["rss_mib"] <= 1.1 * first["rss_mib"], "rows": rows}  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=300.0, help="length of the soak")
    ap.add_argument("--clients", type=int, default=64)
    ap.add_argument("--workers", type=int, default=1, help="webark serve --workers")
    ap.add_argument("--every", type=float, default=10.0, help="seconds per printed row")
    args = ap.parse_args()
    work = cache_dir() / "soak"
    work.mkdir(parents=True, exist_ok=True)
    colls = build_collection(work)
    paths = request_paths(colls)
    port = free_port()
    log_f = open(work / "serve.log", "wb")  # noqa: SIM115 - kept open for the child
    proc = subprocess.Popen([*WEBARK, "serve", str(colls), "--port", str(port), "--workers",
                             str(args.workers)], stdout=log_f, stderr=subprocess.STDOUT,
                            cwd=ROOT)  # fmt: skip
    try:
        wait_http(f"http://127.0.0.1:{port}/{COLL}/cdx?url=example.com&limit=1", proc,
                  "webark serve")  # fmt: skip
        expected = run_event_loop(expected_statuses(port, paths))
        codes: dict[int, int] = {}
        for s in expected.values():
            codes[s] = codes.get(s, 0) + 1
        log(f"{len(expected)} distinct requests ({len(paths)} in the cycle); statuses {codes}; "
            f"{args.clients} clients, {args.seconds:.0f} s, webark serve --workers "
            f"{args.workers} (pid {proc.pid})")  # fmt: skip
        res = run_event_loop(soak(port, paths, expected, args.clients, args.seconds,
                                  args.every, proc.pid))  # fmt: skip
        res["server_exit"] = proc.poll()
    finally:
        stop(proc, "webark serve")
        log_f.close()
    serve_log = (work / "serve.log").read_text(errors="replace")
    res["tracebacks_in_server_log"] = serve_log.count("Traceback")
    print(f"total: {res['requests']} requests in {res['seconds']} s ({res['rps']} req/s), "
          f"{res['errors']} errors {res['error_kinds'] or ''}, p50 {res['p50_ms']} ms, "
          f"p99 {res['p99_ms']} ms; server RSS {res['rss_mib_after_warmup']} MiB after "
          f"warm-up, {res['rss_mib_end']} MiB at the end "
          f"({'flat' if res['rss_flat'] else 'GREW'}); tracebacks in the server log: "
          f"{res['tracebacks_in_server_log']}")  # fmt: skip
    summary = {k: v for k, v in res.items() if k != "rows"}
    print(json.dumps({"bench": "soak", "machine": machine_info(), "workers": args.workers,
                      **summary, "rows": res["rows"]}))  # fmt: skip


if __name__ == "__main__":
    main()
