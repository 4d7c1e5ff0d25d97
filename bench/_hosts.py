"""The python docs on many loopback hosts, for ``bench/crawl.py --hosts N``.

One nginx (its own configuration, PID file and logs under ``<cache>/hosts``, not the
peers' nginx) listens on ``127.0.1.1:8801`` … ``127.0.1.N:8801`` (Linux routes all of
127.0.0.0/8 to the loopback interface), one ``server`` block per address, each with its
own access log in the format::

    $msec $request_time $status $request_uri

``$msec`` is when nginx logged the request (its end, millisecond resolution) and
``$request_time`` how long it took from the first byte read, so a request spans
``[msec - request_time, msec]``. :func:`overlaps` reads the logs and finds two requests
to one host that were served at the same time, which a polite crawler never makes.

Stopped by the master PID from the PID file (``kill -QUIT``), never by name.
"""

from __future__ import annotations

import itertools
import os
import shutil
import signal
import subprocess
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

DOC_ROOT = Path("/usr/share/doc/python3.11/html")
PORT = 8801
LOG_FORMAT = "$msec $request_time $status $request_uri"


def host_ip(i: int) -> str:
    """The address of host ``i`` (0-based): ``127.0.1.(i + 1)``; at most 254 hosts."""
    if not 0 <= i < 254:
        raise ValueError(f"host index {i} out of 0..253")
    return f"127.0.1.{i + 1}"


def seeds(n: int) -> list[str]:
    """The seed URLs of ``n`` hosts: ``http://127.0.1.k:8801/``."""
    return [f"http://{host_ip(i)}:{PORT}/" for i in range(n)]


def _nginx() -> str:
    for cand in (shutil.which("nginx"), "/usr/sbin/nginx"):
        if cand and Path(cand).exists():
            return cand
    raise SystemExit("nginx missing: run the peers' site.sh start once (it apt-installs it)")


class Hosts:
    """An nginx serving :data:`DOC_ROOT` on ``n`` loopback hosts (a context manager:
    started on enter, stopped on exit). ``logs`` is the folder of the access logs
    (``<ip>.log``); :meth:`reset_logs` empties them between runs."""

    def __init__(self, n: int, base: Path) -> None:
        self.n = n
        self.base = base
        self.logs = base / "logs"
        self.pidfile = base / "nginx.pid"
        self.pid: int | None = None

    def _conf(self) -> str:
        b = self.base
        lines = [
            "worker_processes 1;",
            "daemon on;",
            f"pid {self.pidfile};",
            f"error_log {b}/error.log warn;",
            "user root;",
            "events { worker_connections 1024; }",
            "http {",
            "    include /etc/nginx/mime.types;",
            "    default_type application/octet-stream;",
            "    sendfile on;",
            "    keepalive_timeout 30;",
            "    keepalive_requests 100000;",
            f"    log_format timing '{LOG_FORMAT}';",
            *(f"    {k}_temp_path {b}/tmp/{k};" for k in
              ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")),
        ]
        for i in range(self.n):
            ip = host_ip(i)
            lines += [
                "    server {",
                f"        listen {ip}:{PORT};",
                f"        root {DOC_ROOT};",
                "        index index.html;",
                f"        access_log {self.logs}/{ip}.log timing;",
                "    }",
            ]
        lines.append("}")
        return "\n".join(lines) + "\n"

    def __enter__(self) -> Hosts:
        if not (DOC_ROOT / "index.html").is_file():
            raise SystemExit(f"{DOC_ROOT} missing (apt-get install python3-doc)")
        shutil.rmtree(self.base, ignore_errors=True)
        (self.base / "tmp").mkdir(parents=True)
        self.logs.mkdir()
        conf = self.base / "nginx.conf"
        conf.write_text(self._conf())
        subprocess.run([_nginx(), "-c", str(conf), "-q"], check=True)
        for _ in range(100):
            if self.pidfile.is_file() and self.pidfile.read_text().strip():
                break
            time.sleep(0.05)
        self.pid = int(self.pidfile.read_text())
        for url in (seeds(self.n)[0], seeds(self.n)[-1]):
            for _ in range(50):
                try:
                    with urllib.request.urlopen(url + "index.html", timeout=2) as r:
                        r.read()
                    break
                except OSError:
                    time.sleep(0.1)
            else:
                raise RuntimeError(f"{url} does not answer")
        self.reset_logs()
        return self

    def reset_logs(self) -> None:
        """Empty every access log (nginx keeps its file open: truncate in place)."""
        for p in self.logs.glob("*.log"):
            os.truncate(p, 0)

    def __exit__(self, *exc: object) -> None:
        if self.pid is None:
            return
        try:
            os.kill(self.pid, signal.SIGQUIT)
            for _ in range(50):
                os.kill(self.pid, 0)
                time.sleep(0.1)
            os.kill(self.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        self.pid = None


@dataclass(frozen=True)
class Served:
    """One request of an access log: start and end (epoch seconds), status, path."""

    start: float
    end: float
    status: int
    path: str


def read_logs(logs: Path) -> dict[str, list[Served]]:
    """Every host's requests (``{ip: [Served, …]}`` sorted by start) from the logs."""
    out: dict[str, list[Served]] = {}
    for p in sorted(logs.glob("*.log")):
        reqs = []
        for line in p.read_text().splitlines():
            msec, rt, status, path = line.split(" ", 3)
            end = float(msec)
            reqs.append(Served(end - float(rt), end, int(status), path))
        if reqs:
            out[p.stem] = sorted(reqs, key=lambda r: r.start)
    return out


def overlaps(served: dict[str, list[Served]]) -> list[tuple[str, Served, Served]]:
    """Pairs of requests to one host that were served at the same time: the next one
    started before the one before it ended (nginx's clock, millisecond resolution)."""
    bad = []
    for ip, reqs in served.items():
        for a, b in itertools.pairwise(reqs):
            if b.start < a.end:
                bad.append((ip, a, b))
    return bad


def min_gap(served: dict[str, list[Served]]) -> float | None:
    """The shortest time from the end of a request to the start of the next one to
    the same host (seconds; the politeness delay a crawler kept), None without pairs."""
    gaps = [b.start - a.end for reqs in served.values() for a, b in itertools.pairwise(reqs)]
    return min(gaps) if gaps else None


HOSTS_JOB = """\
seeds: [@SEEDS@]
job_dir: @JOB_DIR@
contact: webarchive@example.org
allow_private: true
min_delay: @DELAY@
max_delay: @DELAY@
delay_factor: 0
max_uris_per_host: @PER_HOST@
dedup: true
scope: {max_trans_hops: 0}
"""


def hosts_job(n: int, delay: float, per_host: int) -> str:
    """The webark job of the many-hosts mode (``@JOB_DIR@`` left to fill in): ``n``
    seeds, a fixed politeness delay of ``delay`` seconds (min = max, no delay factor),
    ``per_host`` successful fetches per host (robots.txt included)."""
    return (HOSTS_JOB.replace("@SEEDS@", ", ".join(seeds(n))).replace("@DELAY@", str(delay))
            .replace("@PER_HOST@", str(per_host)))


def fetch_durations_ms(crawl_log: Path) -> list[int]:
    """The fetch durations of a crawl.log (column 9 ``timestamp+duration``, ms)."""
    out = []
    for line in crawl_log.read_text().splitlines():
        cols = line.split()
        if len(cols) > 8 and "+" in cols[8]:
            out.append(int(cols[8].rsplit("+", 1)[1]))
    return out


def judge(served: dict[str, list[Served]], n: int, delay: float, fetch_s: float,
          wall_s: float) -> dict[str, object]:
    """The figures of one many-hosts run, from the access logs.

    * ``bound``: ``n / (delay + fetch_s)`` URLs/s, one fetch per host per delay + fetch;
    * ``steady``: requests after each host's first / (last request start − first request
      start over all hosts): the rate while the crawl ran, without process start-up;
    * ``overall``: all requests / ``wall_s`` (spawn to exit of the crawler);
    * ``overlaps``: pairs of requests to one host served at the same time (must be 0);
      ``min_gap_s``: the shortest gap between two requests to one host."""
    total = sum(len(r) for r in served.values())
    first = min((r[0].start for r in served.values()), default=0.0)
    last = max((r[-1].start for r in served.values()), default=0.0)
    bound = n / (delay + fetch_s)
    steady = (total - len(served)) / (last - first) if last > first else 0.0
    gap = min_gap(served)
    return {
        "hosts_seen": len(served),
        "requests": total,
        "bound_urls_per_s": round(bound, 3),
        "steady_urls_per_s": round(steady, 3),
        "overall_urls_per_s": round(total / wall_s, 3),
        "steady_of_bound": round(steady / bound, 4),
        "overall_of_bound": round(total / wall_s / bound, 4),
        "overlaps": len(overlaps(served)),
        "min_gap_s": None if gap is None else round(gap, 4),
    }
