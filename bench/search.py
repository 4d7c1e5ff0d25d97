#!/usr/bin/env python3
"""bench/search.py — full-text search and the PostgreSQL store, side by side in one run:

1. ``webark search build`` documents/s, SQLite FTS5 vs PostgreSQL, with 1 and 2 jobs;
2. queries/s and latency (p50/p99) of the search page's JSON (``/{coll}/search?q=…&
   output=json``) for 16 clients, SQLite vs PostgreSQL;
3. CDX ``closest`` and ``host`` lookups/s for 16 clients, the PostgreSQL store against
   the SQLite store, with the ratio.

    .venv/bin/python bench/search.py              # 1M CDX lines, 4 copies of the docs, 10 s phases
    .venv/bin/python bench/search.py --quick      # 100k lines, 1 copy, 2 s phases: smoke test

**Search input**: the python docs (Debian's ``python3-doc``, 530 pages) crawled once
with ``webark crawl`` from a static server on 127.0.0.1 into
``<cache>/search/pydocs-job`` (cache: ``$WEBARK_BENCH_CACHE`` or ``/tmp/webark-bench``),
then ``--copies`` hard links of its WARCs under other names (so ``search build`` makes
``530 × copies`` documents: the same pages, each copy a WARC of its own). Queries: 2,000
drawn with a fixed seed from the words of the pages' titles: one or two words, or a
quoted two-word phrase of a title.

**CDX input**: the synthetic 1M-line index of ``bench/cdx_server.py`` (same generator,
same cache, same query mix: closest to a random second of a known URL, limit 1; host,
limit 100), loaded into a SQLite store and a PostgreSQL store (100 WARC names, one
transaction each; load lines/s reported), then ``VACUUM ANALYZE`` on PostgreSQL (so no
autovacuum runs during the timed phases).

**Servers**: ``webark serve --workers 2`` over one collection at a time (so CPU is
counted per store); PostgreSQL 15 (Debian's) as a throwaway cluster on 127.0.0.1 with
its default durability (fsync on; ``tests/pg_cluster.py``), on the same two cores. The
load generator is ``bench/cdx_server.py``'s (keep-alive connections here: the figures
are the cost of a query, not of a TCP handshake). Server CPU is given per request, for
webark's processes and for PostgreSQL's.

The last line of stdout is one JSON object. The load average is logged per phase: the
machine is shared, run it quiet for final figures.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any
from urllib.parse import quote

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from _common import ROOT, cache_dir, log, machine_info
from cdx_server import free_port as _free_port
from cdx_server import (
    index_for,
    memory_kb,
    run_phase,
    sample_queries,
    stop,
    tree_pids,
    wait_http,
)

sys.path.insert(0, str(ROOT / "src"))
WEBARK = [sys.executable, "-c", "from webark.cli.main import main; main()"]
DOCS = (Path("/usr/share/doc/python3/html"), Path("/usr/share/doc/python3.11/html"))
COLL = "bench"


def crawl_docs() -> list[Path]:
    """The python docs crawled once into the cache; their WARCs."""
    job = cache_dir() / "search" / "pydocs-job"
    done = job / "DONE"
    if done.exists():
        return sorted((job / "warcs").glob("*.warc.gz"))
    root = next((d for d in DOCS if (d / "index.html").exists()), None)
    if root is None:
        raise SystemExit("python3-doc is not installed: WEBARK_DEMO_SITE=1 bash scripts/setup.sh")
    import asyncio
    import functools
    import shutil
    import threading
    from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

    from webark.crawl.controller import CrawlController
    from webark.crawl.job import job_from_mapping

    class Quiet(SimpleHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: object) -> None:
            pass

    shutil.rmtree(job, ignore_errors=True)
    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(root)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    origin = f"http://127.0.0.1:{server.server_address[1]}"
    log(f"crawling the python docs from {origin} into {job} ...")
    spec = {"seeds": [origin + "/"], "job_dir": str(job), "contact": "bench@example.org",
            "allow_private": True, "min_delay": 0, "max_delay": 0, "delay_factor": 0,
            "scope": {"max_trans_hops": 0}}  # fmt: skip
    asyncio.run(CrawlController(job_from_mapping(spec)).run())
    server.shutdown()
    done.write_text("ok\n")
    return sorted((job / "warcs").glob("*.warc.gz"))


def copies_of(warcs: list[Path], n: int) -> list[Path]:
    """``n`` hard-linked copies of ``warcs`` under other names."""
    d = cache_dir() / "search" / f"copies-{n}"
    d.mkdir(parents=True, exist_ok=True)
    out = []
    for i in range(n):
        for w in warcs:
            p = d / f"copy{i:02d}-{w.name}"
            if not p.exists():
                os.link(w, p)
            out.append(p)
    return out


def queries(titles: list[str], n: int) -> list[str]:
    rng = random.Random(20261201)
    words = [[w for w in re.findall(r"[A-Za-z]{4,}", t) if w.lower() != "python"]
             for t in titles]  # fmt: skip
    words = [w for w in words if w]
    out = []
    for _ in range(n):
        ws = rng.choice(words)
        kind = rng.random()
        if kind < 0.4 or len(ws) < 2:
            out.append(rng.choice(ws).lower())
        elif kind < 0.7:
            out.append(" ".join(rng.sample(ws, 2)).lower())
        else:
            i = rng.randrange(len(ws) - 1)
            out.append(f'"{ws[i]} {ws[i + 1]}"'.lower())
    return out


def serve(root: Path, workers: int) -> tuple[subprocess.Popen[bytes], int]:
    port = _free_port()
    log_f = open(root / "serve.log", "wb")  # noqa: SIM115 - kept open for the child
    argv = [*WEBARK, "serve", str(root), "--port", str(port), "--workers", str(workers)]
    proc = subprocess.Popen(argv, stdout=log_f, stderr=subprocess.STDOUT)
    wait_http(f"http://127.0.0.1:{port}/{COLL}/cdx?url=example.com&limit=1", proc, "webark serve")
    return proc, port


def phase(proc: subprocess.Popen[bytes], port: int, paths: list[str], args: argparse.Namespace,
          name: str, pg_pid: int | None) -> dict[str, Any]:  # fmt: skip
    before = _cpu(pg_pid)
    t0 = time.perf_counter()
    row = run_phase(port, paths, args.seconds, args.warmup, True, proc.pid, name)
    wall = time.perf_counter() - t0
    pg_cpu = _cpu(pg_pid) - before
    if pg_pid is not None and row["requests"]:
        # PostgreSQL's CPU over the whole phase (warm-up included), per timed request
        row["postgres_cpu_us_per_req"] = round(pg_cpu / row["requests"] * 1e6 * args.seconds
                                               / wall)  # fmt: skip
    row["load"] = round(os.getloadavg()[0], 2)
    log(f"  {name:22} {row['rps']:>8,.1f} q/s  p50 {row['p50_ms']} ms  p99 {row['p99_ms']} ms  "
        f"errors {row['errors']}  webark {row['server_cpu_us_per_req']} us/q"
        + (f"  postgres {row.get('postgres_cpu_us_per_req')} us/q" if pg_pid else "")
        + f"  load {row['load']}")  # fmt: skip
    return row


def _cpu(pid: int | None) -> float:
    """CPU seconds of PostgreSQL so far: its live processes, plus the backends that
    ended (their time is in the postmaster's cutime/cstime once it has reaped them)."""
    if pid is None:
        return 0.0
    from cdx_server import _server_cpu

    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        reaped = (int(fields[13]) + int(fields[14])) / os.sysconf("SC_CLK_TCK")
    except OSError:
        reaped = 0.0
    return _server_cpu(tree_pids(pid)) + reaped


def build(coll: Path, jobs: int, pg_pid: int | None) -> dict[str, Any]:
    """A fresh ``webark search build -j jobs`` (the index removed first); its figures:
    wall time, and CPU seconds of webark's processes and of PostgreSQL's (``pg_pid``)."""
    import shutil

    from webark.index.collection import Collection
    from webark.search.open import search_path

    c = Collection.open(coll)
    if c.config.search == "sqlite":
        shutil.rmtree(search_path(c).parent, ignore_errors=True)
    else:
        from webark.index.pg_connect import connect

        url, schema = c.config.search_pg()
        with connect(url, schema=schema) as conn:
            conn.execute("DROP TABLE IF EXISTS search_docs, search_files, search_configs")
    ru0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    pg0 = _cpu(pg_pid)
    t0 = time.perf_counter()
    r = subprocess.run([*WEBARK, "search", "build", str(coll), "-j", str(jobs), "--json",
                        "--no-progress"], capture_output=True, text=True)  # fmt: skip
    wall = time.perf_counter() - t0
    ru1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    if r.returncode != 0:
        raise SystemExit(f"search build failed: {r.stderr}")
    rep = json.loads(r.stdout.splitlines()[0])
    cpu = ru1.ru_utime + ru1.ru_stime - ru0.ru_utime - ru0.ru_stime
    n = rep["documents"]
    return {"jobs": jobs, "documents": n, "seconds": round(wall, 2),
            "docs_per_s": round(n / wall, 1), "webark_cpu_s": round(cpu, 2),
            "postgres_cpu_s": round(_cpu(pg_pid) - pg0, 2),
            "docs_per_cpu_s": round(n / (cpu + _cpu(pg_pid) - pg0), 1),
            "load": round(os.getloadavg()[0], 2)}  # fmt: skip


def load_cdx(store: Any, index: Path) -> dict[str, Any]:
    from webark.cdx.formats import parse_cdxj

    by_file: dict[str, list[Any]] = {}
    with open(index, encoding="utf-8") as f:
        for raw in f:
            line = parse_cdxj(raw.rstrip("\n"))
            by_file.setdefault(line.filename, []).append(line)
    t0 = time.perf_counter()
    n = sum(store.add_file(name, lines) for name, lines in sorted(by_file.items()))
    secs = time.perf_counter() - t0
    return {"lines": n, "seconds": round(secs, 1), "lines_per_s": round(n / secs)}


def _per_req(row: dict[str, Any]) -> int | None:
    """CPU per request of webark's and PostgreSQL's processes together (us)."""
    w = row.get("server_cpu_us_per_req")
    return None if w is None else int(w) + int(row.get("postgres_cpu_us_per_req") or 0)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lines", type=int, default=1_000_000, help="CDX lines")
    ap.add_argument("--copies", type=int, default=4, help="copies of the docs WARCs")
    ap.add_argument("--seconds", type=float, default=10.0, help="per load phase")
    ap.add_argument("--warmup", type=float, default=2.0)
    ap.add_argument("--workers", type=int, default=2, help="webark serve --workers")
    ap.add_argument("--quick", action="store_true", help="100k lines, 1 copy, 2 s phases")
    args = ap.parse_args()
    if args.quick:
        args.lines, args.copies, args.seconds, args.warmup = 100_000, 1, 2.0, 1.0
    from pg_cluster import PgCluster
    from webark.index.collection import Collection

    out: dict[str, Any] = {"bench": "search", "machine": machine_info(),
                           "load_before": os.getloadavg()[0], "clients": 16}  # fmt: skip
    warcs = copies_of(crawl_docs(), args.copies)
    cdx_index, cdx_info = index_for(args.lines)
    out["cdx_index"] = cdx_info
    cdx_qs = sample_queries(cdx_index, 20000)
    pg = PgCluster(durable=True)
    os.environ["PGPASSFILE"] = str(pg.passfile)
    work = cache_dir() / "search" / "run"
    import shutil

    shutil.rmtree(work, ignore_errors=True)
    try:
        # 1. search build
        colls: dict[str, Path] = {}
        for kind in ("sqlite", "postgres"):
            root = work / f"search-{kind}"
            kw = {"url": pg.url, "schema": "bench_search"} if kind == "postgres" else {}
            c = Collection.init(root / COLL, store=kind, **kw)  # type: ignore[arg-type]
            assert all(r.status == "indexed" for r in c.add(warcs, "in-place"))
            c.close()
            colls[kind] = root
        out["build"] = {}
        for kind, root in colls.items():
            for jobs in (2, 1):  # the -j1 index is the one queried
                row = build(root / COLL, jobs, pg.pid if kind == "postgres" else None)
                out["build"][f"{kind}-j{jobs}"] = row
                log(f"search build {kind:8} -j{jobs}: {row['documents']} documents in "
                    f"{row['seconds']} s = {row['docs_per_s']} docs/s; CPU webark "
                    f"{row['webark_cpu_s']} s, postgres {row['postgres_cpu_s']} s = "
                    f"{row['docs_per_cpu_s']} docs/CPU-s (load {row['load']})")
        pg.sql("VACUUM ANALYZE bench_search.search_docs")
        # 2. queries
        c = Collection.open(colls["sqlite"] / COLL)
        from webark.search import open_search

        idx = open_search(c)
        titles = sorted({d.title for d in idx.documents()})
        idx.close()
        qs = [f"/{COLL}/search?q={quote(q)}&output=json" for q in queries(titles, 2000)]
        out["search"] = {}
        for kind, root in colls.items():
            proc, port = serve(root, args.workers)
            try:
                out["search"][kind] = phase(proc, port, qs, args, f"search {kind}",
                                            pg.pid if kind == "postgres" else None)  # fmt: skip
                out["search"][kind].update(memory_kb(tree_pids(proc.pid)))
            finally:
                stop(proc, "webark serve")
        # 3. CDX lookups
        out["cdx"] = {}
        out["cdx_load"] = {}
        for kind in ("sqlite", "postgres"):
            root = work / f"cdx-{kind}"
            kw = {"url": pg.url, "schema": "bench_cdx"} if kind == "postgres" else {}
            c = Collection.init(root / COLL, store=kind, **kw)  # type: ignore[arg-type]
            out["cdx_load"][kind] = load_cdx(c.store(), cdx_index)
            c.close()
            if kind == "postgres":  # statistics, and no autovacuum run during the phases
                pg.sql("VACUUM ANALYZE bench_cdx.captures")
            log(f"CDX load {kind:8}: {out['cdx_load'][kind]}")
            proc, port = serve(root, args.workers)
            try:
                pg_pid = pg.pid if kind == "postgres" else None
                for q in ("closest", "host"):
                    row = phase(proc, port, cdx_qs[q], args, f"cdx {q} {kind}", pg_pid)
                    out["cdx"][f"{kind}-{q}"] = row
            finally:
                stop(proc, "webark serve")
    finally:
        pg.stop()
    table = ["", f"{'what':28} {'SQLite':>12} {'PostgreSQL':>12} {'PG/SQLite':>9}"]

    def row(label: str, a: float | None, b: float | None, unit: str) -> None:
        ratio = f"{b / a:.2f}x" if a and b else ""
        table.append(f"{label:28} {a!s:>8} {unit:3} {b!s:>8} {unit:3} {ratio:>9}")

    for jobs in (1, 2):
        row(f"search build -j{jobs} docs/s", out["build"][f"sqlite-j{jobs}"]["docs_per_s"],
            out["build"][f"postgres-j{jobs}"]["docs_per_s"], "")  # fmt: skip
    row("search build docs/CPU-s", out["build"]["sqlite-j1"]["docs_per_cpu_s"],
        out["build"]["postgres-j1"]["docs_per_cpu_s"], "")  # fmt: skip
    s = out["search"]
    row("search queries/s (16 clients)", s["sqlite"]["rps"], s["postgres"]["rps"], "")
    row("search p99", s["sqlite"]["p99_ms"], s["postgres"]["p99_ms"], "ms")
    row("search CPU/query (all)", _per_req(s["sqlite"]), _per_req(s["postgres"]), "us")
    for q in ("closest", "host"):
        a, b = out["cdx"][f"sqlite-{q}"], out["cdx"][f"postgres-{q}"]
        row(f"CDX {q} lookups/s", a["rps"], b["rps"], "")
        row(f"CDX {q} p99", a["p99_ms"], b["p99_ms"], "ms")
        row(f"CDX {q} CPU/lookup (all)", _per_req(a), _per_req(b), "us")
    ld = out["cdx_load"]
    row("CDX load lines/s", ld["sqlite"]["lines_per_s"], ld["postgres"]["lines_per_s"], "")
    out["ratios"] = {
        "cdx_closest_pg_over_sqlite": round(out["cdx"]["postgres-closest"]["rps"]
                                            / out["cdx"]["sqlite-closest"]["rps"], 2),
        "cdx_host_pg_over_sqlite": round(out["cdx"]["postgres-host"]["rps"]
                                         / out["cdx"]["sqlite-host"]["rps"], 2),
        "search_pg_over_sqlite": round(s["postgres"]["rps"] / s["sqlite"]["rps"], 2),
    }  # fmt: skip
    out["load_after"] = os.getloadavg()[0]
    print("\n".join(table))
    print(json.dumps(out))


if __name__ == "__main__":
    main()
