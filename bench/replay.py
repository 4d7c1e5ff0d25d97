#!/usr/bin/env python3
"""bench/replay.py — replay of rewritten HTML pages: ``webark serve`` vs pywb 2.10
``wayback``, on the same WARCs of a python docs crawl.

    .venv/bin/python bench/replay.py                 # 10 s per phase (~1.5 min)
    .venv/bin/python bench/replay.py --seconds 20
    .venv/bin/python bench/replay.py --quick         # 3 s phases: smoke test
    .venv/bin/python bench/replay.py --only webark   # skip pywb
    .venv/bin/python bench/replay.py --check         # exit 1 if the target is missed
    .venv/bin/python bench/replay.py --baseline main --rounds 3   # before/after in one run

**WARCs.** A ``webark crawl`` of Debian's python3-doc served by nginx on
``127.0.0.1:8801`` (the peers' ``site.sh``, started and stopped again when it is not
running; job as in ``bench/crawl.py``: dedup on, delays off), made once into
``<cache>/replay/crawl/`` (cache: ``$WEBARK_BENCH_CACHE`` or ``/tmp/webark-bench``;
``--recrawl`` makes it again). About 560 captures, 530 HTML pages.

**Servers.** webark: collection ``pydocs`` (``webark collection init`` + ``add --link``,
SQLite index) served by ``webark serve --workers 2`` (``--workers``). pywb 2.10:
``wb-manager init pydocs`` + ``wb-manager add pydocs WARC`` (pywb's own indexer), then
``wayback -b 127.0.0.1`` from its own venv (``--pywb-venv``, default
``<cache>/venv-pywb``, created with ``pip install pywb==2.10.0`` if missing). Both on
127.0.0.1, stopped by their own PIDs.

**Pages.** ``--pages`` (200) HTML 200 captures spread evenly over the sorted list of
the crawl's pages (read from the webark collection's index), each at its exact capture timestamp,
in each server's default rewritten mode for a page: webark ``/pydocs/{ts}/{url}``
(rewritten, with the banner inserted); pywb ``/pydocs/{ts}mp_/{url}`` — pywb's default
is framed replay, where ``/{ts}/{url}`` is a small top frame holding the banner and the
rewritten page is the ``mp_`` frame inside it, so a page view costs pywb that request
*plus* the frame's (not counted here: the figure favours pywb).

**Load.** The load generator of ``bench/cdx_server.py`` (asyncio + uvloop HTTP/1.1 client
in a child process): 8 clients, ``--seconds`` per phase after a 2 s untimed warm-up,
first with a new TCP connection per request (the server's capacity; the target is
judged on it), then ``--seconds / 2`` with keep-alive connections. Reported:
requests/s, p50/p90/p99 latency, errors (non-200 or empty body), server CPU (% of one
core, all its processes) and CPU µs per request; ``x pywb`` = webark's requests/s /
pywb's, ``x CPU`` = pywb's CPU per request / webark's (the figure that moves least when
other work shares the cores, and that does not count webark's second worker: pywb's
gevent server uses one core).

**Checks.** Before the load, ``--sample`` (25) of the pages are fetched from both
servers: each must be a 200 ``text/html`` whose links stay in the archive (the
``href``/``src`` values, resolved against the replay URL as a browser does, other than
fragments, non-HTTP schemes and the server's own files: the share that lands in
``/pydocs/`` must be ≥ 0.99; pywb leaves relative links as they are, which resolve into
the archive, and rewrites the absolute ones), with the server's insert
(webark's banner data ``__webark_banner``; pywb's ``wombat.js``); a failed check prints
a WARNING and the script exits 2.

**Before and after.** ``--baseline REF`` also serves webark as of git ``REF`` (its
``src/`` exported with ``git archive`` into ``<cache>/replay/baseline-src``, run by the
same interpreter with ``PYTHONPATH`` set to it, over its own collection of the same
WARCs); ``--rounds N`` measures every server N times, the order turned around each round
so that a busy spell of the machine does not favour one of them; each figure is the
round with the median requests/s. Both webark rows get their own ratio to pywb.

Target (issue 5): webark ≥ 3× pywb's requests/s. The last line of stdout is one JSON
object.
"""

from __future__ import annotations

import argparse
import html
import json
import os
import re
import shutil
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any
from urllib.parse import urljoin

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import ROOT, LoadgenArgs, cache_dir, log, machine_info, run_event_loop
from cdx_server import (
    _phase,
    free_port,
    memory_kb,
    pywb_venv,
    pywb_version,
    stop,
    tree_pids,
    wait_http,
)
from crawl import JOB_YAML, SEED, site

COLL = "pydocs"
CLIENTS = 8
TARGET = 3.0
WEBARK = [sys.executable, "-c", "from webark.cli.main import main; main()"]
_LINK = re.compile(rb"""\s(?:href|src)\s*=\s*["']([^"']*)["']""", re.I)
_LOCAL = (b"#", b"data:", b"javascript:", b"mailto:", b"about:")
#: where each server keeps its own files (scripts, styles of the banner/insert)
OWN_FILES = {"webark": "/_webark/", "pywb": "/static/"}


# --- input ------------------------------------------------------------------------------
def crawl_warcs(work: Path, recrawl: bool) -> list[Path]:
    """The WARCs of a python docs crawl (made once, see the module docstring)."""
    done = work / "crawl" / "done"
    if recrawl or not done.exists():
        shutil.rmtree(work / "crawl", ignore_errors=True)
        (work / "crawl").mkdir(parents=True)
        started = False
        if site("status").get("status") != "running":
            log("starting the peers' site (site.sh start)")
            site("start")
            started = True
        try:
            job = work / "crawl" / "job.yaml"
            job.write_text(JOB_YAML.format(seed=SEED, job_dir=work / "crawl" / "job"))
            log(f"crawling {SEED} into {work / 'crawl'} ...")
            subprocess.run([*WEBARK, "crawl", "--no-progress", str(job)], check=True,
                           cwd=ROOT, stdout=subprocess.DEVNULL)  # fmt: skip
        finally:
            if started:
                site("stop")
        done.write_text("ok\n")
    warcs = sorted((work / "crawl" / "job" / "warcs").glob("*.warc.gz"))
    if not warcs:
        raise SystemExit(f"no WARCs in {work / 'crawl'}: run with --recrawl")
    return warcs


def page_list(colls: Path, n: int) -> list[tuple[str, str]]:
    """``n`` (timestamp, url) HTML 200 captures spread over the crawl's sorted pages, read
    from the webark collection's index itself (not over HTTP: the list must not depend on
    the server measured)."""
    sys.path.insert(0, str(ROOT / "src"))
    from webark.index.collection import Collection
    from webark.index.source import key_range

    source = Collection.open(colls / COLL).source()
    pages = sorted({(x.url, x.timestamp) for x in source.scan(key_range(SEED, "prefix"))
                    if x.mime == "text/html" and x.status == "200"})  # fmt: skip
    if len(pages) < n:
        raise SystemExit(f"only {len(pages)} HTML pages in the crawl, {n} wanted")
    step = len(pages) / n
    return [(pages[int(i * step)][1], pages[int(i * step)][0]) for i in range(n)]


# --- servers ----------------------------------------------------------------------------
Server = tuple[subprocess.Popen[bytes], int]
"""A server process and its port."""


def start_webark(work: Path, warcs: list[Path], workers: int, src: Path | None = None,
                 label: str = "webark") -> Server:  # fmt: skip
    """``webark serve`` over a new collection of ``warcs`` in ``work/{label}-colls``; with
    ``src``, the webark of that source tree (``PYTHONPATH``) indexes and serves."""
    root = work / f"{label}-colls"
    shutil.rmtree(root, ignore_errors=True)
    env = dict(os.environ, PYTHONPATH=str(src)) if src is not None else None
    subprocess.run([*WEBARK, "collection", "init", str(root / COLL)], check=True,
                   capture_output=True, env=env)  # fmt: skip
    subprocess.run([*WEBARK, "collection", "add", "--link", "--no-progress", str(root / COLL),
                    *map(str, warcs)], check=True, capture_output=True, env=env)  # fmt: skip
    port = free_port()
    log_f = open(work / f"{label}-serve.log", "wb")  # noqa: SIM115 - kept open for the child
    proc = subprocess.Popen([*WEBARK, "serve", str(root), "--port", str(port),
                             "--workers", str(workers)],
                            stdout=log_f, stderr=subprocess.STDOUT, cwd=ROOT, env=env)  # fmt: skip
    wait_http(f"http://127.0.0.1:{port}/{COLL}/cdx?url={SEED}&limit=1", proc, "webark serve")
    return proc, port


def start_pywb(work: Path, warcs: list[Path], venv: Path) -> Server:
    root = work / "pywb-root"
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    wbm = str(venv / "bin" / "wb-manager")
    subprocess.run([wbm, "init", COLL], cwd=root, check=True, capture_output=True)
    subprocess.run([wbm, "add", COLL, *map(str, warcs)], cwd=root, check=True,
                   capture_output=True)  # fmt: skip
    port = free_port()
    log_f = open(work / "wayback.log", "wb")  # noqa: SIM115 - kept open for the child
    proc = subprocess.Popen([str(venv / "bin" / "wayback"), "-b", "127.0.0.1", "-p", str(port)],
                            cwd=root, stdout=log_f, stderr=subprocess.STDOUT)  # fmt: skip
    wait_http(f"http://127.0.0.1:{port}/{COLL}/cdx?url={SEED}&limit=1", proc, "pywb wayback")
    return proc, port


def export_baseline(work: Path, ref: str) -> Path:
    """``src/`` of git ``ref`` exported into ``work/baseline-src`` (replaced); its path."""
    dest = work / "baseline-src"
    shutil.rmtree(dest, ignore_errors=True)
    dest.mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", ref, "src"], check=True,
                             capture_output=True).stdout  # fmt: skip
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)
    return dest / "src"


def replay_path(server: str, ts: str, url: str) -> str:
    """The request path of a page's default rewritten replay on ``server``."""
    return f"/{COLL}/{ts}{'mp_' if server == 'pywb' else ''}/{url}"


# --- checks -----------------------------------------------------------------------------
def check_page(server: str, port: int, ts: str, url: str) -> dict[str, Any]:
    """Fetch one page; its status, type, size and how many links point into the archive."""
    full = f"http://127.0.0.1:{port}{replay_path(server, ts, url)}"
    try:
        with urllib.request.urlopen(full, timeout=30) as r:
            status, ctype, body = r.status, r.headers.get("Content-Type", ""), r.read()
    except urllib.error.HTTPError as exc:
        return {"url": full, "status": exc.code, "ok": False, "why": f"HTTP {exc.code}"}
    # every link, resolved as the browser does against the replay URL, must land in the
    # collection (pywb leaves relative links as they are: they resolve into the archive
    # as they stand); the servers' own files and non-HTTP links (file:, ftp:) aside
    kind = "pywb" if server == "pywb" else "webark"  # webark@REF is a webark
    own = f"http://127.0.0.1:{port}{OWN_FILES[kind]}"
    values = [m.group(1).strip() for m in _LINK.finditer(body)]
    links = [urljoin(full, html.unescape(v.decode("latin-1"))) for v in values
             if not v.startswith(_LOCAL)]  # fmt: skip
    links = [x for x in links if x.startswith(("http://", "https://")) and not x.startswith(own)]
    inside = [x for x in links if x.startswith(f"http://127.0.0.1:{port}/{COLL}/")]
    share = len(inside) / len(links) if links else 0.0
    marker = b"__webark_banner" if kind == "webark" else b"wombat.js"
    problems = []
    if status != 200:
        problems.append(f"status {status}")
    if not ctype.startswith("text/html"):
        problems.append(f"Content-Type {ctype!r}")
    if share < 0.99:
        outside = [x for x in links if x not in inside][:3]
        problems.append(f"{share:.1%} of {len(links)} links rewritten (e.g. {outside})")
    if marker not in body:
        problems.append(f"no {marker.decode()} insert")
    return {"url": full, "status": status, "bytes": len(body), "links": len(links),
            "rewritten_share": round(share, 4), "ok": not problems,
            "why": "; ".join(problems)}  # fmt: skip


def check_sample(pages: list[tuple[str, str]], ports: dict[str, int], n: int) -> dict[str, Any]:
    sample = pages[:: max(1, len(pages) // n)][:n]
    out: dict[str, Any] = {"pages": len(sample)}
    for server, port in ports.items():
        rows = [check_page(server, port, ts, url) for ts, url in sample]
        bad = [r for r in rows if not r["ok"]]
        out[server] = {"ok": len(rows) - len(bad),
                       "failed": [f"{r['url']}: {r['why']}" for r in bad][:5],
                       "avg_bytes": round(sum(r.get("bytes", 0) for r in rows) / len(rows)),
                       "avg_links": round(sum(r.get("links", 0) for r in rows) / len(rows)),
                       }  # fmt: skip
    return out


# --- load -------------------------------------------------------------------------------
def loadgen_main(argv: list[str]) -> None:
    a = LoadgenArgs.parse(argv)
    res = run_event_loop(_phase(a.port, a.paths, CLIENTS, a.seconds, a.warm, a.keepalive, a.pids))
    print(json.dumps(res))


def run_phase(work: Path, server: str, port: int, paths: list[str], secs: float, warm: float,
              keepalive: bool, pid: int) -> dict[str, Any]:  # fmt: skip
    qfile = work / f"paths-{server}.txt"
    qfile.write_text("\n".join(paths))
    pids = tree_pids(pid)
    r = subprocess.run([sys.executable, __file__, "--loadgen",
                        *LoadgenArgs.argv(port, qfile, secs, warm, keepalive, pids)],
                       capture_output=True, text=True, check=True)  # fmt: skip
    return json.loads(r.stdout.strip().splitlines()[-1])


# --- main -------------------------------------------------------------------------------
def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--loadgen":
        loadgen_main(sys.argv[2:])
        return
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=10.0, help="per new-connection phase")
    ap.add_argument("--warmup", type=float, default=2.0)
    ap.add_argument("--pages", type=int, default=200)
    ap.add_argument("--sample", type=int, default=25, help="pages checked on both servers")
    ap.add_argument("--workers", type=int, default=2, help="webark serve --workers")
    ap.add_argument("--only", choices=("webark", "pywb"))
    ap.add_argument("--pywb-venv", default=str(cache_dir() / "venv-pywb"))
    ap.add_argument("--recrawl", action="store_true", help="crawl the docs again")
    ap.add_argument("--quick", action="store_true", help="3 s phases, 1 s warm-up")
    ap.add_argument("--check", action="store_true", help="exit 1 when the target is missed")
    ap.add_argument("--baseline", metavar="REF",
                    help="also measure webark as of git REF (before/after in one run)")
    ap.add_argument("--rounds", type=int, default=1,
                    help="measurements per server, alternating order; medians reported")
    args = ap.parse_args()
    if args.quick:
        args.seconds, args.warmup = 3.0, 1.0

    work = cache_dir() / "replay"
    work.mkdir(parents=True, exist_ok=True)
    warcs = crawl_warcs(work, args.recrawl)
    size = sum(w.stat().st_size for w in warcs)
    log(f"WARCs: {', '.join(w.name for w in warcs)} ({size / 1e6:.1f} MB)")
    names = [args.only] if args.only else ["webark", "pywb"]
    baseline = f"webark@{args.baseline}" if args.baseline and args.only != "pywb" else None
    if baseline:
        names.insert(1, baseline)
    venv = pywb_venv(Path(args.pywb_venv)) if "pywb" in names else None
    servers: dict[str, tuple[subprocess.Popen[bytes], int]] = {}
    results: dict[str, dict[str, Any]] = {}
    out: dict[str, Any] = {"bench": "replay", "machine": machine_info(),
                           "load_before": os.getloadavg()[0], "clients": CLIENTS,
                           "warcs": [str(w) for w in warcs], "warc_bytes": size}  # fmt: skip
    failed_checks = False
    try:
        # webark is started first in any case: its collection lists the pages
        servers["webark"] = start_webark(work, warcs, args.workers)
        pages = page_list(work / "webark-colls", args.pages)
        out["pages"] = len(pages)
        if baseline:
            src = export_baseline(work, args.baseline)
            servers[baseline] = start_webark(work, warcs, args.workers, src, "baseline")
            out["baseline"] = {"ref": args.baseline, "commit": subprocess.run(
                ["git", "-C", str(ROOT), "rev-parse", args.baseline], capture_output=True,
                text=True).stdout.strip()}  # fmt: skip
        if "pywb" in names:
            assert venv is not None
            servers["pywb"] = start_pywb(work, warcs, venv)
        for name, (proc, port) in servers.items():
            log(f"{name} on 127.0.0.1:{port} (pid {proc.pid})")
        ports = {k: v[1] for k, v in servers.items() if k in names}
        out["checks"] = chk = check_sample(pages, ports, args.sample)
        for name in ports:
            c = chk[name]
            log(f"check {name}: {c['ok']}/{chk['pages']} pages ok, avg {c['avg_bytes']:,} bytes, "
                f"{c['avg_links']} links")  # fmt: skip
            for f in c["failed"]:
                log(f"  WARNING {f}")
            failed_checks |= c["ok"] != chk["pages"]
        rows: dict[str, dict[str, list[dict[str, Any]]]] = {n: {} for n in names}
        for rnd in range(max(1, args.rounds)):
            for name in names if rnd % 2 == 0 else names[::-1]:
                proc, port = servers[name]
                paths = [replay_path(name, ts, url) for ts, url in pages]
                for ka in (False, True):
                    secs = args.seconds / 2 if ka else args.seconds
                    row = run_phase(work, name, port, paths, secs, args.warmup, ka, proc.pid)
                    row["load"] = round(os.getloadavg()[0], 2)
                    key = "keepalive" if ka else "new_connection"
                    rows[name].setdefault(key, []).append(row)
                    log(f"  {name:6} {key:14} {row['rps']:>8,.1f} req/s  p50 {row['p50_ms']} ms  "
                        f"p99 {row['p99_ms']} ms  errors {row['errors']}  "
                        f"server CPU {row['server_cpu_pct']}%  load {row['load']:.2f}")  # fmt: skip
        for name in names:
            proc, _ = servers[name]
            res: dict[str, Any] = {}
            for key, got in rows[name].items():
                res[key] = sorted(got, key=lambda r: r["rps"])[len(got) // 2]
                res[key]["rounds_rps"] = [r["rps"] for r in got]
            res.update(memory_kb(tree_pids(proc.pid)))
            results[name] = res
    finally:
        for name, (proc, _) in servers.items():
            stop(proc, name)
    out["webark"] = {"server": f"webark serve --workers {args.workers}",
                     **results.get("webark", {})}  # fmt: skip
    if baseline and baseline in results:
        out["webark_baseline"] = {"server": f"{baseline} serve --workers {args.workers}",
                                  **results[baseline]}  # fmt: skip
    if "pywb" in results:
        assert venv is not None
        out["pywb"] = {"server": f"pywb wayback {pywb_version(venv)} (mp_ pages)",
                       **results["pywb"]}  # fmt: skip
    print()
    print(f"replay of {out['pages']} python docs pages (rewritten HTML), {CLIENTS} clients, "
          f"{args.seconds:g} s (new connections) / {args.seconds / 2:g} s "
          "(keep-alive)")  # fmt: skip
    hdr = (f"{'connection':11} {'server':7} {'req/s':>8} {'p50 ms':>7} {'p90 ms':>7} {'p99 ms':>7} "
           f"{'errors':>6} {'srv CPU':>7} {'us/req':>7} {'body KB':>7} {'x pywb':>7} "
           f"{'x CPU':>6}")  # fmt: skip
    print(hdr)
    print("-" * len(hdr))
    ratios: dict[str, float | None] = {}
    cpu_ratios: dict[str, float | None] = {}
    baseline_ratios: dict[str, float | None] = {}

    def versus(w: dict[str, Any] | None, p: dict[str, Any] | None) -> tuple[Any, Any]:
        ratio = round(w["rps"] / p["rps"], 2) if w and p and p["rps"] else None
        cpu = (round(p["server_cpu_us_per_req"] / w["server_cpu_us_per_req"], 2)
               if w and p and w["server_cpu_us_per_req"] else None)  # fmt: skip
        return ratio, cpu

    for key in ("new_connection", "keepalive"):
        w = results.get("webark", {}).get(key)
        p = results.get("pywb", {}).get(key)
        ratios[key], cpu_ratios[key] = versus(w, p)
        shown_rows = [("webark", w, *versus(w, p))]
        if baseline:
            b = results.get(baseline, {}).get(key)
            baseline_ratios[key] = versus(b, p)[0]
            shown_rows.append((baseline, b, *versus(b, p)))
        shown_rows.append(("pywb", p, None, None))
        for name, cell, ratio, cpu in shown_rows:
            if not cell:
                continue
            shown = f"{ratio}x" if ratio else ""
            shown_cpu = f"{cpu}x" if cpu else ""
            print(f"{'new' if key == 'new_connection' else 'keep-alive':11} {name:7} "
                  f"{cell['rps']:>8,.1f} {cell['p50_ms']:>7} {cell['p90_ms']:>7} "
                  f"{cell['p99_ms']:>7} "
                  f"{cell['errors']:>6} {cell['server_cpu_pct']:>6}% "
                  f"{cell['server_cpu_us_per_req']:>7} {cell['avg_body_bytes'] / 1000:>7.1f} "
                  f"{shown:>7} {shown_cpu:>6}")  # fmt: skip
    met = ratios["new_connection"] is not None and ratios["new_connection"] >= TARGET
    met = met and results.get("webark", {}).get("new_connection", {}).get("errors", 1) == 0
    out["ratio_rps"] = ratios
    out["ratio_cpu_per_request"] = cpu_ratios
    if baseline:
        out["baseline_ratio_rps"] = baseline_ratios
        print(f"before ({baseline}): {baseline_ratios['new_connection']}x pywb; "
              f"after (this tree): {ratios['new_connection']}x pywb "
              f"(new connections, load {os.getloadavg()[0]:.2f})")  # fmt: skip
    out["target"] = {"x_pywb_rps": TARGET, "met": met}
    print(f"target: webark >= {TARGET:g}x pywb requests/s (new connections): "
          f"{'met' if met else 'MISSED'} ({ratios['new_connection']}x)")  # fmt: skip
    print(json.dumps(out))
    if failed_checks:
        log("WARNING: some pages failed the checks (see above)")
        sys.exit(2)
    if args.check and not met:
        sys.exit(1)


if __name__ == "__main__":
    main()
