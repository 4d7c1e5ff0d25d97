#!/usr/bin/env python3
"""bench/cdx_server.py — the resolution API (CDX server) over HTTP: ``webark serve`` vs
pywb 2.10 ``wayback``, on the same 1-million-line sorted CDXJ index.

    .venv/bin/python bench/cdx_server.py                 # 10 s per phase, ~3.5 min
    .venv/bin/python bench/cdx_server.py --seconds 20    # the peers' phase length
    .venv/bin/python bench/cdx_server.py --quick         # 100k lines, 2 s phases: smoke test
    .venv/bin/python bench/cdx_server.py --only webark   # skip pywb
    .venv/bin/python bench/cdx_server.py --check         # exit 1 if a target is missed

**Index.** ``--lines`` (default 1,000,000) synthetic CDXJ lines, generated once into
``<cache>/cdxsrv/index-<N>.cdxj`` (cache: ``$WEBARK_BENCH_CACHE`` or ``/tmp/webark-bench``)
in ~20 s, deterministic (seed 20261130; the sha256 is printed and kept in
``index-<N>.json``): 2,000 hosts (``{word}{i:04d}.{tld}``, a third with ``www.``, half
https), each with ``N / 2000 / 5`` URLs from a few path templates (``/``, ``/a/b/c/{n}/``,
``/{word}/{n}.html``, ``/page?id={n}``, ``/img/{n}.jpg``), each URL captured 5 times at
uniform random seconds of 2015–2024; keys by ``webark.url.cdx_key``; the JSON blob as
cdxj-indexer writes it (url, mime, status, ``sha1:`` digest, length, offset, filename),
``LC_ALL=C`` sorted. 1M lines ≈ 250 MB.

**Servers.** webark: a collection made with ``Collection.init(store="cdxj")`` whose
``indexes/index.cdxj`` is a hard link to the index, served by ``webark serve --workers
2`` (one process per core, each with its own SO_REUSEPORT socket). pywb 2.10.0:
``wb-manager init bench``, the same file copied to ``collections/bench/indexes/``,
``wayback -b 127.0.0.1`` run from its own venv (``--pywb-venv``, default
``<cache>/venv-pywb``, created with ``pip install pywb==2.10.0`` if missing) — as
``shared/peers/cdx_server_bench.sh`` does. Both are stopped by their own PIDs.

**Load** (as the peers' script): 16 clients, ``--seconds`` per phase after a 2 s
untimed warm-up; queries drawn with a fixed seed from the index itself (its original
URLs and host names, as the peers' script does):

* ``closest``: ``/bench/cdx?url=<url>&closest=<uniform random second>&sort=closest``
  ``&limit=1&output=json``
* ``host``: ``/bench/cdx?url=<host>&matchType=host&limit=100&output=json``

each with a new TCP connection per request (the server's capacity, pywb's reference
figures), then with keep-alive connections (``--seconds / 2``). Reported: requests/s,
p50/p90/p99 latency, errors (non-200 or empty body), CPU of the server (all its
processes) and of the load generator, in % of one core, and the server's CPU time per
request (µs; "x CPU" = pywb's / webark's): the figure that moves least when other work
shares the two cores — requests/s and tail latency do move, by up to 2× on this VM when
other sessions run benchmarks (``load`` is logged per phase; run it on a quiet machine).

**Load generator.** A minimal HTTP/1.1 client on asyncio streams + uvloop in a child
process (not aiohttp as in the peers' script: at the thousands of requests/s webark
answers, aiohttp's client needs more than the one core that the server does not use).
It parses Content-Length, chunked and close-delimited bodies. In new-connection mode it
sends ``Connection: close`` and, after reading the whole response, closes with
``SO_LINGER`` 0 (a reset): at thousands of connections per second on one machine both
ends otherwise pile up tens of thousands of TIME_WAIT sockets and ``connect()``'s port
search becomes the bottleneck (measured: the same server fell from ~5,600 to ~2,000
requests/s as TIME_WAIT grew). The server still accepts, sets up and tears down one
connection per request. pywb gets the same client.

**Checks.** Before the load, 200 closest and 20 host queries go to both servers and
their answers are compared (closest: the same timestamp; host: the same 100 lines).

Targets (issue): webark ≥ 10× pywb's requests/s and p99 < 10 ms, each row. The last line
of stdout is one JSON object.
"""

from __future__ import annotations

import argparse
import asyncio
import calendar
import hashlib
import json
import os
import random
import shutil
import signal
import socket
import struct
import subprocess
import sys
import time
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import ROOT, LoadgenArgs, cache_dir, log, machine_info, run_event_loop

SEED = 20261130
CLIENTS = 16
COLL = "bench"
TLDS = ("com", "org", "net", "de", "fr", "uk", "io", "info")
WORDS = ("news", "blog", "shop", "docs", "media", "forum", "wiki", "photos", "about", "static")
B32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
T_START = calendar.timegm((2015, 1, 1, 0, 0, 0, 0, 0, 0))
T_SPAN = 10 * 365 * 86400


# --- index ------------------------------------------------------------------------------
def generate_index(path: Path, lines: int, hosts: int = 2000) -> dict[str, Any]:
    """Write the synthetic sorted CDXJ index (see the module docstring); returns its
    description (lines, bytes, sha256, seconds)."""
    sys.path.insert(0, str(ROOT / "src"))
    from webark.url import cdx_key

    t0 = time.perf_counter()
    rng = random.Random(SEED)
    per_url = 5
    urls_per_host = max(1, lines // hosts // per_url)
    out: list[bytes] = []
    for hi in range(hosts):
        host = f"{WORDS[hi % 10]}{hi:04d}.{TLDS[hi % 8]}"
        if hi % 3 == 0:
            host = "www." + host
        scheme = "https" if hi % 2 else "http"
        for ui in range(urls_per_host):
            path_ = rng.choice(
                (
                    f"/a/b/c/{ui}/",
                    f"/{rng.choice(WORDS)}/{ui}.html",
                    f"/page?id={ui}",
                    f"/img/{ui}.jpg",
                )
            )
            if ui == 0:
                path_ = "/"
            url = f"{scheme}://{host}{path_}"
            key = cdx_key(url)
            mime = "image/jpeg" if path_.endswith(".jpg") else "text/html"
            for _ in range(per_url):
                ts = time.strftime("%Y%m%d%H%M%S", time.gmtime(T_START + rng.randrange(T_SPAN)))
                digest = "".join(rng.choice(B32) for _ in range(32))
                blob = (
                    f'{{"url": "{url}", "mime": "{mime}", "status": "200", '
                    f'"digest": "sha1:{digest}", "length": "{rng.randrange(500, 30000)}", '
                    f'"offset": "{rng.randrange(10**9)}", '
                    f'"filename": "bench-{rng.randrange(100):05d}.warc.gz"}}'
                )
                out.append(f"{key} {ts} {blob}".encode())
    out.sort()
    tmp = path.with_suffix(".tmp")
    h = hashlib.sha256()
    with open(tmp, "wb") as f:
        for b in out:
            f.write(b + b"\n")
            h.update(b + b"\n")
    os.replace(tmp, path)
    info = {"lines": len(out), "bytes": path.stat().st_size, "sha256": h.hexdigest(),
            "generate_s": round(time.perf_counter() - t0, 1), "hosts": hosts}  # fmt: skip
    path.with_suffix(".json").write_text(json.dumps(info))
    return info


def index_for(lines: int) -> tuple[Path, dict[str, Any]]:
    d = cache_dir() / "cdxsrv"
    d.mkdir(parents=True, exist_ok=True)
    path = d / f"index-{lines}.cdxj"
    meta = path.with_suffix(".json")
    if path.exists() and meta.exists():
        info = json.loads(meta.read_text())
        if info.get("bytes") == path.stat().st_size:
            return path, info
    log(f"generating {lines:,} CDXJ lines into {path} ...")
    info = generate_index(path, lines)
    log(f"  {info['lines']:,} lines, {info['bytes'] / 1e6:.1f} MB in {info['generate_s']} s")
    return path, info


def sample_queries(index: Path, n: int) -> dict[str, list[str]]:
    """Query paths for each phase (fixed seed): known URLs / hosts from the index."""
    urls: list[str] = []
    hosts: set[str] = set()
    tmin, tmax = "99999999999999", "00000000000000"
    with open(index, "rb") as f:
        for i, raw in enumerate(f):
            _key, ts, rest = raw.split(b" ", 2)
            t = ts.decode()
            tmin, tmax = min(tmin, t), max(tmax, t)
            if i % 5 == 0:  # every URL has 5 captures in a row: one line each
                u = json.loads(rest)["url"]
                urls.append(u)
                hosts.add(urlsplit(u).hostname or "")
    hl = sorted(hosts)
    rng = random.Random(12345)
    t0 = calendar.timegm(time.strptime(tmin, "%Y%m%d%H%M%S"))
    t1 = calendar.timegm(time.strptime(tmax, "%Y%m%d%H%M%S"))

    def closest() -> str:
        ts = time.strftime("%Y%m%d%H%M%S", time.gmtime(rng.uniform(t0, t1)))
        u = quote(rng.choice(urls), safe="")
        return f"/{COLL}/cdx?url={u}&closest={ts}&sort=closest&limit=1&output=json"

    def host() -> str:
        h = quote(rng.choice(hl), safe="")
        return f"/{COLL}/cdx?url={h}&matchType=host&limit=100&output=json"

    return {"closest": [closest() for _ in range(n)], "host": [host() for _ in range(n)],
            "known_urls": [str(len(urls))], "known_hosts": [str(len(hl))],
            "time_range": [tmin, tmax]}  # fmt: skip


# --- servers ----------------------------------------------------------------------------
def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_http(url: str, proc: subprocess.Popen[bytes], what: str, timeout: float = 60.0) -> None:
    import urllib.request

    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if proc.poll() is not None:
            raise SystemExit(f"{what} exited with {proc.returncode}")
        try:
            with urllib.request.urlopen(url, timeout=5) as r:
                if r.status == 200:
                    return
        except OSError:
            time.sleep(0.2)
    raise SystemExit(f"{what} did not answer {url}")


def stop(proc: subprocess.Popen[bytes], what: str) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    log(f"{what} (pid {proc.pid}) stopped")


def tree_pids(pid: int) -> list[int]:
    out = [pid]
    try:
        kids = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        kids = []
    for k in kids:
        out += tree_pids(int(k))
    return out


def memory_kb(pids: list[int]) -> dict[str, int]:
    """Summed over ``pids``: peak RSS (VmHWM), current RSS, and its private part
    (RssAnon: heap, not the page cache of a mapped index, which all workers share)."""
    out = {"peak_rss_kb": 0, "rss_kb": 0, "rss_anon_kb": 0}
    names = {"VmHWM:": "peak_rss_kb", "VmRSS:": "rss_kb", "RssAnon:": "rss_anon_kb"}
    for p in pids:
        try:
            for line in Path(f"/proc/{p}/status").read_text().splitlines():
                key = names.get(line.split(":", 1)[0] + ":")
                if key:
                    out[key] += int(line.split()[1])
        except OSError:
            pass
    return out


def start_webark(index: Path, workers: int) -> tuple[subprocess.Popen[bytes], int]:
    sys.path.insert(0, str(ROOT / "src"))
    from webark.index.collection import Collection

    root = cache_dir() / "cdxsrv" / "webark-colls"
    shutil.rmtree(root, ignore_errors=True)
    coll = Collection.init(root / COLL, store="cdxj")
    target = coll.indexes_dir / "index.cdxj"
    try:
        os.link(index, target)
    except OSError:
        shutil.copyfile(index, target)
    port = free_port()
    cmd = [sys.executable, "-c", "from webark.cli.main import main; main()", "serve",
           str(root), "--port", str(port), "--workers", str(workers)]  # fmt: skip
    log_f = open(root / "serve.log", "wb")  # noqa: SIM115 - kept open for the child
    proc = subprocess.Popen(cmd, stdout=log_f, stderr=subprocess.STDOUT, cwd=ROOT)
    wait_http(f"http://127.0.0.1:{port}/{COLL}/cdx?url=example.com&limit=1", proc, "webark serve")
    return proc, port


def pywb_venv(path: Path) -> Path:
    if not (path / "bin" / "wayback").exists():
        log(f"creating {path} with pywb==2.10.0 ...")
        subprocess.run([sys.executable, "-m", "venv", str(path)], check=True)
        subprocess.run([str(path / "bin" / "pip"), "install", "-q", "pywb==2.10.0"], check=True)
    return path


def start_pywb(index: Path, venv: Path) -> tuple[subprocess.Popen[bytes], int]:
    root = cache_dir() / "cdxsrv" / "pywb-root"
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    subprocess.run([str(venv / "bin" / "wb-manager"), "init", COLL], cwd=root, check=True,
                   capture_output=True)  # fmt: skip
    shutil.copyfile(index, root / "collections" / COLL / "indexes" / "index.cdxj")
    port = free_port()
    log_f = open(root / "wayback.log", "wb")  # noqa: SIM115 - kept open for the child
    proc = subprocess.Popen(
        [str(venv / "bin" / "wayback"), "-b", "127.0.0.1", "-p", str(port)],
        cwd=root, stdout=log_f, stderr=subprocess.STDOUT,
    )  # fmt: skip
    wait_http(f"http://127.0.0.1:{port}/{COLL}/cdx?url=example.com&limit=1", proc, "pywb wayback")
    return proc, port


def pywb_version(venv: Path) -> str:
    code = "import pywb; print(pywb.__version__)"
    r = subprocess.run([str(venv / "bin" / "python"), "-c", code], capture_output=True, text=True)
    return r.stdout.strip() or "?"


# --- answers compared -------------------------------------------------------------------
def compare_answers(qs: dict[str, list[str]], ports: dict[str, int]) -> dict[str, Any]:
    import urllib.request

    def get(port: int, path: str) -> list[dict[str, str]]:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=30) as r:
            return [json.loads(x) for x in r.read().splitlines() if x.strip()]

    same_closest = same_host = 0
    diffs: list[str] = []
    for path in qs["closest"][:200]:
        ta = [x["timestamp"] for x in get(ports["webark"], path)]
        tb = [x["timestamp"] for x in get(ports["pywb"], path)]
        if ta == tb and ta:
            same_closest += 1
        elif len(diffs) < 3:
            diffs.append(f"{path}: webark {ta} pywb {tb}")
    for path in qs["host"][:20]:
        names = ("urlkey", "timestamp", "url", "mime", "status", "digest", "length", "offset")
        la = [tuple(x[f] for f in names) for x in get(ports["webark"], path)]
        lb = [tuple(x[f] for f in names) for x in get(ports["pywb"], path)]
        if la == lb and la:
            same_host += 1
        elif len(diffs) < 6:
            diffs.append(f"{path}: {len(la)} vs {len(lb)} lines differ")
    return {"closest_same": f"{same_closest}/200", "host_same": f"{same_host}/20", "diffs": diffs}


# --- load generator (child process) -----------------------------------------------------
async def _read_response(r: asyncio.StreamReader) -> tuple[int, int]:
    head = await r.readuntil(b"\r\n\r\n")
    status = int(head[9:12])
    low = head.lower()
    i = low.find(b"\r\ncontent-length:")
    if i >= 0:
        n = int(low[i + 17 : low.index(b"\r\n", i + 2)])
        body = await r.readexactly(n)
        return status, len(body.strip())
    if b"\r\ntransfer-encoding: chunked" in low:
        size = 0
        nonblank = 0
        while True:
            line = await r.readuntil(b"\r\n")
            n = int(line.split(b";")[0].strip(), 16)
            if n == 0:
                await r.readuntil(b"\r\n")
                return status, nonblank
            chunk = await r.readexactly(n + 2)
            size += n
            nonblank += len(chunk[:-2].strip())
    body = await r.read()
    return status, len(body.strip())


def _server_cpu(pids: list[int]) -> float:
    tick = os.sysconf("SC_CLK_TCK")
    total = 0
    for p in pids:
        try:
            fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])
        except OSError:
            pass
    return total / tick


async def _phase(port: int, paths: list[str], clients: int, secs: float, warm: float,
                 keepalive: bool, pids: list[int]) -> dict[str, Any]:  # fmt: skip
    lat: list[float] = []
    codes: dict[str, int] = {}
    errors = 0
    nbytes = 0
    start = time.perf_counter()
    measure_from = start + warm
    end = measure_from + secs
    marks: dict[str, float] = {}
    host = f"127.0.0.1:{port}".encode()
    conn_hdr = b"keep-alive" if keepalive else b"close"
    reqs = [b"GET " + p.encode() + b" HTTP/1.1\r\nHost: " + host + b"\r\nConnection: " + conn_hdr
            + b"\r\n\r\n" for p in paths]  # fmt: skip
    linger = struct.pack("ii", 1, 0)

    async def sampler() -> None:
        await asyncio.sleep(max(0.0, measure_from - time.perf_counter()))
        marks["s0"], marks["c0"] = _server_cpu(pids), time.process_time()
        await asyncio.sleep(max(0.0, end - time.perf_counter()))
        marks["s1"], marks["c1"] = _server_cpu(pids), time.process_time()

    async def worker(i: int) -> None:
        nonlocal errors, nbytes
        conn: tuple[asyncio.StreamReader, asyncio.StreamWriter] | None = None
        k = i * 7919
        while True:
            req = reqs[k % len(reqs)]
            k += 1
            t = time.perf_counter()
            if t >= end:
                break
            try:
                if conn is None:
                    conn = await asyncio.open_connection("127.0.0.1", port)
                r, w = conn
                w.write(req)
                st, body = await _read_response(r)
                if not keepalive:
                    w.get_extra_info("socket").setsockopt(
                        socket.SOL_SOCKET, socket.SO_LINGER, linger
                    )
                    w.close()
                    conn = None
                code = str(st)
            except (OSError, asyncio.IncompleteReadError, ValueError) as exc:
                code, body = type(exc).__name__, 0
                if conn is not None:
                    conn[1].close()
                conn = None
            t2 = time.perf_counter()
            if t >= measure_from and t2 <= end + 5:
                lat.append(t2 - t)
                codes[code] = codes.get(code, 0) + 1
                nbytes += body
                if code != "200" or body == 0:
                    errors += 1
        if conn is not None:
            conn[1].close()

    await asyncio.gather(sampler(), *(worker(i) for i in range(clients)))
    lat.sort()
    n = len(lat)

    def pct(p: float) -> float | None:
        return round(lat[min(n - 1, int(p * n))] * 1000, 2) if n else None

    return {"clients": clients, "seconds": secs, "keepalive": keepalive, "requests": n,
            "rps": round(n / secs, 1), "p50_ms": pct(0.50), "p90_ms": pct(0.90),
            "p99_ms": pct(0.99), "mean_ms": round(sum(lat) / n * 1000, 2) if n else None,
            "errors": errors, "status": codes, "avg_body_bytes": round(nbytes / n) if n else 0,
            "server_cpu_pct": round(100 * (marks["s1"] - marks["s0"]) / secs, 1),
            "server_cpu_us_per_req": round((marks["s1"] - marks["s0"]) / n * 1e6) if n else None,
            "loadgen_cpu_pct": round(100 * (marks["c1"] - marks["c0"]) / secs, 1)}  # fmt: skip


def loadgen_main(argv: list[str]) -> None:
    a = LoadgenArgs.parse(argv)
    res = run_event_loop(_phase(a.port, a.paths, CLIENTS, a.seconds, a.warm, a.keepalive, a.pids))
    print(json.dumps(res))


def run_phase(port: int, paths: list[str], secs: float, warm: float, keepalive: bool,
              server_pid: int, name: str) -> dict[str, Any]:  # fmt: skip
    qfile = cache_dir() / "cdxsrv" / f"queries-{name}.txt"
    qfile.write_text("\n".join(paths))
    pids = tree_pids(server_pid)
    r = subprocess.run(
        [sys.executable, __file__, "--loadgen",
         *LoadgenArgs.argv(port, qfile, secs, warm, keepalive, pids)],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    return json.loads(r.stdout.strip().splitlines()[-1])


# --- main -------------------------------------------------------------------------------
ROWS = (("closest", False), ("host", False), ("closest", True), ("host", True))


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--loadgen":
        loadgen_main(sys.argv[2:])
        return
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lines", type=int, default=1_000_000)
    ap.add_argument("--seconds", type=float, default=10.0, help="per new-connection phase")
    ap.add_argument("--warmup", type=float, default=2.0)
    ap.add_argument("--workers", type=int, default=2, help="webark serve --workers")
    ap.add_argument("--only", choices=("webark", "pywb"))
    ap.add_argument("--pywb-venv", default=str(cache_dir() / "venv-pywb"))
    ap.add_argument("--quick", action="store_true", help="100k lines, 2 s phases")
    ap.add_argument("--check", action="store_true", help="exit 1 when a target is missed")
    args = ap.parse_args()
    if args.quick:
        args.lines, args.seconds, args.warmup = 100_000, 2.0, 1.0

    index, info = index_for(args.lines)
    mb = int(str(info["bytes"])) / 1e6
    log(f"index {index}: {info['lines']:,} lines, {mb:.1f} MB, sha256 {info['sha256']}")
    qs = sample_queries(index, 20000)
    servers: dict[str, tuple[subprocess.Popen[bytes], int]] = {}
    results: dict[str, dict[str, Any]] = {}
    out: dict[str, Any] = {"bench": "cdx_server", "machine": machine_info(),
                              "load_before": os.getloadavg()[0], "index": info,
                              "known_urls": int(qs["known_urls"][0]),
                              "known_hosts": int(qs["known_hosts"][0]),
                              "time_range": qs["time_range"], "clients": CLIENTS}  # fmt: skip
    names = [args.only] if args.only else ["webark", "pywb"]
    venv = pywb_venv(Path(args.pywb_venv)) if "pywb" in names else None
    try:
        for name in names:
            if name == "webark":
                servers[name] = start_webark(index, args.workers)
            else:
                assert venv is not None
                servers[name] = start_pywb(index, venv)
            log(f"{name} on 127.0.0.1:{servers[name][1]} (pid {servers[name][0].pid})")
        if len(servers) == 2:
            out["answers"] = cmp = compare_answers(qs, {k: v[1] for k, v in servers.items()})
            log(f"answers: closest {cmp['closest_same']} same, host {cmp['host_same']} same")
            for d in cmp["diffs"]:
                log("  " + d)
        for name, (proc, port) in servers.items():
            res: dict[str, Any] = {}
            for kind, ka in ROWS:
                secs = args.seconds / 2 if ka else args.seconds
                row = run_phase(port, qs[kind], secs, args.warmup, ka, proc.pid, f"{name}-{kind}")
                key = kind + ("_keepalive" if ka else "")
                res[key] = row
                log(
                    f"  {name:6} {key:18} {row['rps']:>9,.1f} req/s  p50 {row['p50_ms']} ms  "
                    f"p99 {row['p99_ms']} ms  errors {row['errors']}  "
                    f"server CPU {row['server_cpu_pct']}%  load {os.getloadavg()[0]:.2f}"
                )
            res.update(memory_kb(tree_pids(proc.pid)))
            results[name] = res
    finally:
        for name, (proc, _) in servers.items():
            stop(proc, name)
    out["webark"] = {"server": f"webark serve --workers {args.workers} (uvicorn, SO_REUSEPORT)",
                     **results.get("webark", {})}  # fmt: skip
    if "pywb" in results:
        assert venv is not None
        out["pywb"] = {"server": f"pywb wayback {pywb_version(venv)}", **results["pywb"]}
    ok = True
    table = [
        "",
        f"{'query':8} {'connection':11} {'server':7} {'req/s':>9} {'p50 ms':>7} {'p99 ms':>7} "
        f"{'errors':>6} {'srv CPU':>7} {'us/req':>7} {'lg CPU':>6} {'x pywb':>7} "
        f"{'x CPU':>6} target",
    ]
    targets: dict[str, Any] = {}
    for kind, ka in ROWS:
        key = kind + ("_keepalive" if ka else "")
        w = results.get("webark", {}).get(key)
        p = results.get("pywb", {}).get(key)
        ratio = cpu_ratio = None
        if isinstance(w, dict) and isinstance(p, dict) and p["rps"]:
            ratio = round(float(w["rps"]) / float(p["rps"]), 1)
            if w["server_cpu_us_per_req"]:
                cpu_ratio = round(p["server_cpu_us_per_req"] / w["server_cpu_us_per_req"], 1)
        for name, cell in (("webark", w), ("pywb", p)):
            if not isinstance(cell, dict):
                continue
            row = cell
            verdict = ""
            if name == "webark":
                met = (
                    (ratio is None or ratio >= 10)
                    and row["p99_ms"] is not None
                    and row["p99_ms"] < 10
                )
                met = met and row["errors"] == 0
                ok &= met
                verdict = "met" if met else "MISSED"
                targets[key] = {"x_pywb": ratio, "x_pywb_cpu_per_req": cpu_ratio,
                                "p99_ms": row["p99_ms"], "met": met}  # fmt: skip
            table.append(
                f"{kind:8} {'keep-alive' if ka else 'new':11} {name:7} {row['rps']:>9,.1f} "
                f"{row['p50_ms']:>7} {row['p99_ms']:>7} {row['errors']:>6} "
                f"{row['server_cpu_pct']:>6}% {row['server_cpu_us_per_req']:>7} "
                f"{row['loadgen_cpu_pct']:>5}% "
                f"{(str(ratio) + 'x') if name == 'webark' and ratio else '':>7} "
                f"{(str(cpu_ratio) + 'x') if name == 'webark' and cpu_ratio else '':>6} {verdict}"
            )
    out["targets"] = targets
    out["targets_met"] = ok
    print("\n".join(table))
    print(json.dumps(out))
    if args.check and not ok:
        sys.exit(1)


if __name__ == "__main__":
    main()
