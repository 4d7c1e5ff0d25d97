#!/usr/bin/env python3
"""bench/proxy.py — the archiving proxy: ``webark proxy`` vs warcprox 2.x, side by side
in one run, on the same loopback site.

    .venv/bin/python bench/proxy.py                  # 10 s per phase
    .venv/bin/python bench/proxy.py --seconds 5 --clients 16
    .venv/bin/python bench/proxy.py --only webark    # skip warcprox

**Site.** nginx on 127.0.0.2 (warcprox refuses 127.0.0.1; a config of its own under
``<cache>/proxy/``; cache: ``$WEBARK_BENCH_CACHE`` or ``/tmp/webark-bench``) serving
``--pages`` (200) static files of 8-24 KB, each distinct, over HTTP and over HTTPS
(a throwaway certificate from trustme; neither proxy verifies upstream certificates).

**Proxies.** webark: ``webark proxy --job DIR`` (dedup on, gzip WARCs, crawl.log).
warcprox 2.x from its own venv (``--warcprox-venv``, default ``<cache>/venv-warcprox``,
made with ``pip install warcprox==2.13.1`` when missing): ``warcprox -z -d DIR -j
DEDUP.sqlite`` (gzip, its sqlite dedup db; its defaults otherwise). Each gets a fresh
folder per run. Both started and stopped by their own PIDs.

**Load.** ``--clients`` (16) keep-alive connections from an asyncio (uvloop) client in
this process, each sending GET requests in absolute form (HTTP) or, after one
``CONNECT``, inside its TLS tunnel (HTTPS; the proxies' CA is not checked), cycling over
the pages (so after the first round most captures are revisits on both: the dedup path).
A 2 s untimed warm-up, then ``--seconds``. Reported per proxy and phase: requests/s,
p50/p99 latency (ms), errors (non-200, short bodies, broken connections), CPU µs per
request (the proxy process's user+system time over the phase / requests) and peak RSS
(VmHWM, MB). ``x warcprox`` = webark's requests/s / warcprox's, and warcprox's p99 and
CPU per request / webark's. warcprox closes the client connection after each
response, so its HTTPS figure includes a CONNECT and a TLS handshake per request (its
own behaviour, with the same client as webark's).

Target (issue 12): ≥ 3× warcprox's requests/s at no higher p99. The last line of stdout
is one JSON object.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import ssl
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import cache_dir, log, machine_info, run_event_loop
from cdx_server import free_port, stop

ROOT = Path(__file__).resolve().parents[1]
WARCPROX_VERSION = "2.13.1"
SITE_IP = "127.0.0.2"
"""The site's address: loopback, but not 127.0.0.1, which warcprox refuses outright."""


# -- the site -----------------------------------------------------------------------------
def make_site(root: Path, pages: int) -> tuple[subprocess.Popen[bytes], int, int]:
    """nginx serving ``pages`` files on HTTP and HTTPS ports; (process, http, https)."""
    import trustme

    docs = root / "docs"
    docs.mkdir(parents=True, exist_ok=True)
    for i in range(pages):
        size = 8192 + (i * 797) % 16384
        (docs / f"p{i}.html").write_bytes((f"<p>page {i} ".encode() * (size // 12))[:size])
    ca = trustme.CA()
    cert = ca.issue_cert(SITE_IP)
    cert.private_key_pem.write_to_path(str(root / "site.key"))
    cert.cert_chain_pems[0].write_to_path(str(root / "site.crt"))
    http, https = free_port(), free_port()
    (root / "logs").mkdir(exist_ok=True)
    conf = root / "nginx.conf"
    conf.write_text(f"""
daemon off; worker_processes 1; pid {root}/nginx.pid; error_log {root}/logs/error.log;
events {{ worker_connections 1024; }}
http {{
  access_log off; keepalive_requests 100000;
  client_body_temp_path {root}/tmp; proxy_temp_path {root}/tmp;
  fastcgi_temp_path {root}/tmp; uwsgi_temp_path {root}/tmp; scgi_temp_path {root}/tmp;
  default_type text/html;
  server {{ listen {SITE_IP}:{http}; root {docs}; }}
  server {{ listen {SITE_IP}:{https} ssl; root {docs};
           ssl_certificate {root}/site.crt; ssl_certificate_key {root}/site.key; }}
}}
""")
    (root / "tmp").mkdir(exist_ok=True)
    proc = subprocess.Popen(["nginx", "-c", str(conf), "-p", str(root)],
                            stderr=subprocess.DEVNULL)  # fmt: skip
    time.sleep(0.5)
    return proc, http, https


# -- the proxies --------------------------------------------------------------------------
def warcprox_venv(path: Path) -> Path:
    if not (path / "bin" / "warcprox").exists():
        log(f"installing warcprox {WARCPROX_VERSION} into {path}")
        subprocess.run([sys.executable, "-m", "venv", str(path)], check=True)
        subprocess.run([str(path / "bin" / "pip"), "install", "-q",
                        f"warcprox=={WARCPROX_VERSION}"], check=True)  # fmt: skip
    return path


def start_webark(work: Path) -> tuple[subprocess.Popen[bytes], int]:
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-c", "from webark.cli.main import main; main()", "proxy",
         "--job", str(work / "job"), "--port", str(port), "--allow-private",
         "--ca-file", str(work / "ca.pem"), "--resolve-only"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    return proc, port


def start_warcprox(work: Path, venv: Path) -> tuple[subprocess.Popen[bytes], int]:
    port = free_port()
    work.mkdir(parents=True, exist_ok=True)
    proc = subprocess.Popen(
        [str(venv / "bin" / "warcprox"), "-b", "127.0.0.1", "-p", str(port), "-z",
         "-d", str(work / "warcs"), "-j", str(work / "dedup.sqlite"),
         "-c", str(work / "ca.pem"), "--certs-dir", str(work / "certs")],
        cwd=work, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    return proc, port


def wait_listening(port: int, proc: subprocess.Popen[bytes], what: str) -> None:
    import socket

    for _ in range(300):
        if proc.poll() is not None:
            raise SystemExit(f"{what} exited with {proc.returncode}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.1)
    raise SystemExit(f"{what} did not listen on {port}")


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def peak_rss_mb(pid: int) -> float:
    m = re.search(r"VmHWM:\s+(\d+)", Path(f"/proc/{pid}/status").read_text())
    return int(m.group(1)) / 1024 if m else 0.0


# -- the load -----------------------------------------------------------------------------
class Load:
    def __init__(self) -> None:
        self.latencies: list[float] = []
        self.errors = 0
        self.counting = False


async def _read_response(reader: asyncio.StreamReader) -> tuple[int, int, int, bool]:
    """(status, body bytes read, Content-Length, the connection closes after it)."""
    head = await reader.readuntil(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    m = re.search(rb"\r\ncontent-length:\s*(\d+)", head, re.I)
    length = int(m.group(1)) if m else 0
    body = await reader.readexactly(length) if length else b""
    close = head.startswith(b"HTTP/1.0") or re.search(rb"\r\nconnection:\s*close", head,
                                                       re.I) is not None  # fmt: skip
    return status, len(body), length, close


async def client(port: int, origin: str, paths: list[str], k: int, tls: bool, load: Load,
                 stop_at: float) -> None:  # fmt: skip
    host = origin.split("://", 1)[1]
    i = k
    while time.monotonic() < stop_at:
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            if tls:
                writer.write(f"CONNECT {host} HTTP/1.1\r\nHost: {host}\r\n\r\n".encode())
                await reader.readuntil(b"\r\n\r\n")
                ctx = ssl.create_default_context()
                ctx.check_hostname = False
                ctx.verify_mode = ssl.CERT_NONE
                await writer.start_tls(ctx, server_hostname=host.split(":")[0])
            while time.monotonic() < stop_at:
                path = paths[i % len(paths)]
                i += 1
                target = path if tls else origin + path
                t0 = time.perf_counter()
                writer.write(f"GET {target} HTTP/1.1\r\nHost: {host}\r\n"
                             "User-Agent: bench/proxy.py\r\n\r\n".encode())  # fmt: skip
                status, got, want, close = await _read_response(reader)
                if load.counting:
                    load.latencies.append(time.perf_counter() - t0)
                    if status != 200 or got != want or not got:
                        load.errors += 1
                if close:  # (a new connection, and for HTTPS a new CONNECT and handshake)
                    break
            writer.close()
        except (OSError, asyncio.IncompleteReadError, ssl.SSLError, ValueError):
            if load.counting:
                load.errors += 1
            await asyncio.sleep(0.01)


async def phase(port: int, origin: str, paths: list[str], clients: int, secs: float,
                tls: bool, pid: int) -> dict[str, float]:  # fmt: skip
    load = Load()
    warm = 2.0
    start = time.monotonic()
    tasks = [asyncio.create_task(client(port, origin, paths, k, tls, load, start + warm + secs))
             for k in range(clients)]  # fmt: skip
    await asyncio.sleep(warm)
    load.counting = True
    cpu0, t0 = cpu_seconds(pid), time.monotonic()
    await asyncio.sleep(secs)
    load.counting = False
    cpu1, elapsed = cpu_seconds(pid), time.monotonic() - t0
    await asyncio.gather(*tasks)
    lat = sorted(load.latencies)
    n = len(lat)

    def pct(p: float) -> float:
        return lat[min(n - 1, int(p * n))] * 1000 if n else float("nan")

    return {"requests_per_s": n / elapsed, "p50_ms": pct(0.50), "p99_ms": pct(0.99),
            "errors": load.errors, "cpu_us_per_request": (cpu1 - cpu0) / max(1, n) * 1e6,
            "requests": n}  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--clients", type=int, default=16)
    ap.add_argument("--pages", type=int, default=200)
    ap.add_argument("--only", choices=["webark", "warcprox"])
    ap.add_argument("--warcprox-venv", type=Path, default=None)
    a = ap.parse_args()
    root = cache_dir() / "proxy"
    site, http, https = make_site(root / "site", a.pages)
    paths = [f"/p{i}.html" for i in range(a.pages)]
    results: dict[str, dict[str, dict[str, float]]] = {}
    try:
        names = [a.only] if a.only else ["webark", "warcprox"]
        for name in names:
            work = root / f"run-{name}-{int(time.time())}"
            work.mkdir(parents=True)
            if name == "webark":
                proc, port = start_webark(work)
            else:
                venv = warcprox_venv((a.warcprox_venv or cache_dir() / "venv-warcprox").resolve())
                proc, port = start_warcprox(work, venv)
            try:
                wait_listening(port, proc, name)
                results[name] = {}
                for label, origin, tls in (("http", f"http://{SITE_IP}:{http}", False),
                                           ("https", f"https://{SITE_IP}:{https}", True)):
                    log(f"{name} {label}: {a.clients} clients, {a.seconds} s")
                    r = run_event_loop(phase(port, origin, paths, a.clients, a.seconds, tls,
                                             proc.pid))  # fmt: skip
                    r["peak_rss_mb"] = peak_rss_mb(proc.pid)
                    results[name][label] = r
            finally:
                stop(proc, name)
    finally:
        stop(site, "nginx")
    print(f"{'proxy':10} {'phase':6} {'req/s':>8} {'p50 ms':>8} {'p99 ms':>8} {'errors':>7} "
          f"{'CPU us/req':>11} {'peak RSS MB':>12}")  # fmt: skip
    for name, by_phase in results.items():
        for label, r in by_phase.items():
            print(f"{name:10} {label:6} {r['requests_per_s']:8.0f} {r['p50_ms']:8.1f} "
                  f"{r['p99_ms']:8.1f} {r['errors']:7d} {r['cpu_us_per_request']:11.0f} "
                  f"{r['peak_rss_mb']:12.1f}")  # fmt: skip
    ratios: dict[str, dict[str, float]] = {}
    if "webark" in results and "warcprox" in results:
        for label in results["webark"]:
            w, p = results["webark"][label], results["warcprox"][label]
            ratios[label] = {
                "x_requests_per_s": w["requests_per_s"] / max(p["requests_per_s"], 1e-9),
                "x_p99": p["p99_ms"] / max(w["p99_ms"], 1e-9),
                "x_cpu": p["cpu_us_per_request"] / max(w["cpu_us_per_request"], 1e-9),
            }
            print(f"{label}: webark {ratios[label]['x_requests_per_s']:.2f}x warcprox's "
                  f"requests/s; warcprox p99 / webark p99 = {ratios[label]['x_p99']:.2f}; "
                  f"warcprox CPU/request / webark's = {ratios[label]['x_cpu']:.2f}")  # fmt: skip
    print(json.dumps({"machine": machine_info(), "clients": a.clients, "seconds": a.seconds,
                      "results": results, "ratios": ratios}))  # fmt: skip


if __name__ == "__main__":
    main()
