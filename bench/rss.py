#!/usr/bin/env python3
"""bench/rss.py — continuous crawling (CrawlRSS) against repeated snapshot crawls of the
same simulated news site over the same simulated period: captures of front pages and
bytes written; and the continuous crawl's memory over the run.

    .venv/bin/python bench/rss.py                       # 1 simulated day at 1440x (~60 s)
    .venv/bin/python bench/rss.py --sim-hours 24 --speed 720
    .venv/bin/python bench/rss.py --sim-hours 0.5 --speed 300 --json   # the CI mode

Site: ``tests/rss/news_site.py`` (a front page, section pages, RSS/Atom feeds, articles
with images and a style sheet, daily archives), one host on 127.0.0.61, its clock sped
up ``--speed`` times; articles appear at ``--per-hour`` per simulated hour, each in a
random section (seeded).

* continuous: ``webark crawl`` with an ``rss:`` section (every feed, implied pages:
  its section page and the front page), minimum wait ``--min-wait`` simulated minutes,
  for the whole period; its RSS (VmRSS of the crawler process) sampled every second.
* snapshots: ``webark crawl`` of the whole site (seed: the front page; every page,
  archives included) with the site's clock stopped, once every ``--snapshot-every``
  simulated days within the period (at its start, then …), and once at its end (the
  site at its largest) — the snapshot crawls the period would get.

Printed: front-page captures (WARC response + revisit records of the front page) and
bytes written (WARC files) by each, their ratios, and the same per 30 days / per day as
the source's figures (15–30 front pages a month by weekly snapshots against
1,500–1,800 continuously; under 0.5 GiB a day against 15–20 GiB a week). Memory: the
crawler's RSS at each quarter of the run (after the first), and the growth from the
first quarter to the end.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "tests" / "rss")]

from news_site import NewsSite, SimClock  # noqa: E402

from webark.warc.reader import ArchiveReader  # noqa: E402

WEBARK = str(Path(sys.executable).parent / "webark")
HOST, IP = "bench-news.test", "127.0.0.61"


def _rss_kib(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def _warcs(job_dir: Path, front: str) -> tuple[int, int]:
    """(front-page captures, bytes of WARC files) of a job."""
    fronts, size = 0, 0
    for p in sorted((job_dir / "warcs").iterdir()):
        size += p.stat().st_size
        for rec in ArchiveReader(str(p)):
            if rec.type in ("response", "revisit") and rec.headers.target_uri == front:
                fronts += 1
    return fronts, size


def _job(path: Path, job_dir: Path, extra: dict) -> Path:
    job = {"job_dir": str(job_dir), "contact": "bench@example.org", "allow_private": True,
           "resolve": {HOST: IP}, "min_delay": 0, "max_delay": 0, "delay_factor": 0,
           "workers": 4, **extra}  # fmt: skip
    path.write_text(json.dumps(job))
    return path


def continuous(site: NewsSite, work: Path, real_s: float, min_wait_s: float) -> dict:
    feeds = [{"uri": site.url(p), "implied_pages": [site.url(i) for i in imp]}
             for p, imp in site.feed_paths().items()]  # fmt: skip
    job = _job(work / "rss.json", work / "rss", {"rss": {"sites": [
        {"name": "bench", "min_wait": min_wait_s, "feeds": feeds}]}})  # fmt: skip
    p = subprocess.Popen([WEBARK, "crawl", "--no-progress", "--no-control", str(job)],
                         stderr=subprocess.DEVNULL)  # fmt: skip
    # the period is measured from the crawler's first crawl.log line: its start-up (imports,
    # extraction workers) takes seconds on a loaded machine and is no part of the period
    crawl_log = work / "rss" / "logs" / "crawl.log"
    ready = time.monotonic() + 120
    while time.monotonic() < ready and p.poll() is None:
        if crawl_log.exists() and crawl_log.stat().st_size:
            break
        time.sleep(0.05)
    samples: list[tuple[float, int]] = []
    t0 = time.monotonic()
    while time.monotonic() - t0 < real_s:
        time.sleep(1.0)
        samples.append((time.monotonic() - t0, _rss_kib(p.pid)))
    p.send_signal(signal.SIGTERM)
    p.wait(timeout=120)
    fronts, size = _warcs(work / "rss", site.url("/"))
    quarters = []
    for q in (0.25, 0.5, 0.75, 1.0):
        window = [k for t, k in samples if (q - 0.25) * real_s < t <= q * real_s] or [0]
        quarters.append(round(max(window) / 1024, 1))
    return {"front_captures": fronts, "warc_bytes": size, "rss_mib_by_quarter": quarters,
            "rss_growth_mib": round(quarters[-1] - quarters[0], 1), "exit": p.returncode}


def snapshot(site: NewsSite, work: Path, name: str, at: float) -> dict:
    site.clock.freeze(at)
    job = _job(work / f"{name}.json", work / name, {"seeds": [site.url("/")], "dedup": False,
                                                    "scope": {"max_hops": 50}})  # fmt: skip
    subprocess.run([WEBARK, "crawl", "--no-progress", "--no-control", str(job)],
                   check=True, stderr=subprocess.DEVNULL, timeout=3600)  # fmt: skip
    fronts, size = _warcs(work / name, site.url("/"))
    return {"front_captures": fronts, "warc_bytes": size}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sim-hours", type=float, default=24.0, help="simulated period (24)")
    ap.add_argument("--speed", type=float, default=1440.0, help="site clock speed-up (1440)")
    ap.add_argument("--per-hour", type=float, default=12.0, help="articles per sim hour (12)")
    ap.add_argument("--min-wait", type=float, default=10.0, help="sim minutes between rounds")
    ap.add_argument("--snapshot-every", type=float, default=7.0, help="sim days (7: weekly)")
    ap.add_argument("--json", action="store_true", help="print JSON only")
    args = ap.parse_args()
    period = args.sim_hours * 3600
    clock = SimClock(start=time.time() - 30 * 86400, speed=args.speed)  # dates in the past
    site = NewsSite(HOST, IP, clock, per_feed=15, article_kb=12, image_kb=40)
    rng = random.Random(14)
    t0 = clock.now()
    n = max(1, int(args.per_hour * args.sim_hours))
    for s in site.sections:  # the site has some history
        for k in range(5):
            site.publish(s, t0 - 3600 * (k + 1))
    site.schedule(sorted((t0 + rng.uniform(0, period), rng.choice(site.sections))
                         for _ in range(n)))  # fmt: skip
    site.start()
    load = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="webark-bench-rss-") as tmp:
        work = Path(tmp)
        cont = continuous(site, work, period / args.speed, args.min_wait * 60 / args.speed)
        snaps = []
        step = args.snapshot_every * 86400
        k = 0
        while k * step < period:
            snaps.append(snapshot(site, work, f"snap{k}", t0 + k * step))
            k += 1
        snaps.append(snapshot(site, work, "snap-end", t0 + period))
    site.stop()
    s_fronts = sum(s["front_captures"] for s in snaps)
    s_bytes = sum(s["warc_bytes"] for s in snaps)
    days = period / 86400
    out = {
        "sim_hours": args.sim_hours, "speed": args.speed, "articles": n,
        "min_wait_sim_min": args.min_wait, "snapshots": len(snaps), "loadavg": load,
        "continuous": cont, "snapshot_crawls": snaps,
        "front_captures_ratio": round(cont["front_captures"] / max(1, s_fronts), 1),
        "bytes_ratio": round(cont["warc_bytes"] / max(1, s_bytes), 3),
        "per_30_days": {"continuous_fronts": round(cont["front_captures"] * 30 / days),
                        "weekly_snapshot_fronts": round(30 / 7, 1)},
        "bytes_per_day": {"continuous": round(cont["warc_bytes"] / days),
                          "one_snapshot": snaps[-1]["warc_bytes"]},
    }  # fmt: skip
    if args.json:
        print(json.dumps(out))
        return 0
    print(f"simulated {args.sim_hours:g} h at {args.speed:g}x ({period / args.speed:.0f} s), "
          f"{n} articles; load average {load[0]:.2f}")
    print(f"front-page captures: continuous {cont['front_captures']}, "
          f"{len(snaps)} snapshot crawls {s_fronts} -> {out['front_captures_ratio']}x")
    print(f"WARC bytes: continuous {cont['warc_bytes']:,}, snapshots {s_bytes:,} "
          f"(one snapshot of the site at the end: {snaps[-1]['warc_bytes']:,})")
    print(f"per 30 days: continuous ~{out['per_30_days']['continuous_fronts']} front pages "
          f"vs ~4.3 by weekly snapshots; per day: continuous "
          f"{out['bytes_per_day']['continuous']:,} B vs {snaps[-1]['warc_bytes']:,} B "
          "per weekly snapshot")
    print(f"crawler RSS (MiB) by quarter: {cont['rss_mib_by_quarter']}, growth "
          f"{cont['rss_growth_mib']} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
