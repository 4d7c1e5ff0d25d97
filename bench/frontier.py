"""Frontier benchmark: many queued URIs across many hosts (issue 4).

Measures, in this process:

* insert rate: ``Frontier.add_many`` of N synthetic URIs (batches of ``--batch``),
  including CrawlURI construction, URL normalization, fingerprinting and the SQLite
  writes (WAL, synchronous=NORMAL);
* the seen filter: re-adding a sample of already-queued URIs (all refused);
* scheduling rate: ``next_ready`` + ``finished`` pairs (politeness delays set to 0 and a
  fake clock, so the figure is the frontier's own cost, not waiting);
* peak RSS of the process (target: <= 300 MB with 1 million queued URIs) and the size of
  the database.

    .venv/bin/python bench/frontier.py                     # 1,000,000 URIs, 10,000 hosts
    .venv/bin/python bench/frontier.py --uris 100000 --hosts 1000 --ops 50000   # quick

Prints a table, then one JSON line.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from webark.crawl.curi import CrawlURI
from webark.crawl.frontier import Frontier, FrontierConfig


def _uris(n: int, hosts: int, start: int = 0) -> Iterator[CrawlURI]:
    for i in range(start, start + n):
        h = i % hosts
        yield CrawlURI(
            f"http://www.host{h}.example.com/section/{i // hosts}/page-{i}.html?ref=bench",
            hops="L",
            via=f"http://www.host{h}.example.com/",
        )


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--uris", type=int, default=1_000_000)
    ap.add_argument("--hosts", type=int, default=10_000)
    ap.add_argument("--batch", type=int, default=10_000, help="URIs per add_many call")
    ap.add_argument("--ops", type=int, default=200_000, help="next_ready+finished pairs")
    ap.add_argument("--dir", help="folder for the database (default: a temporary one)")
    args = ap.parse_args(argv)

    tmp = tempfile.TemporaryDirectory(prefix="webark-frontier-", dir=args.dir)
    db = Path(tmp.name) / "frontier.db"
    t = [1_800_000_000.0]
    cfg = FrontierConfig(min_delay=0.0, delay_factor=0.0)
    f = Frontier.open(db, cfg, clock=lambda: t[0])
    rss0 = _peak_rss_mb()

    t0 = time.perf_counter()
    gen = _uris(args.uris, args.hosts)
    added = 0
    while True:
        batch = [c for _, c in zip(range(args.batch), gen, strict=False)]
        if not batch:
            break
        added += f.add_many(batch)
    insert_s = time.perf_counter() - t0
    rss_insert = _peak_rss_mb()

    sample = min(50_000, args.uris)
    t0 = time.perf_counter()
    dup = f.add_many(_uris(sample, args.hosts))
    dup_s = time.perf_counter() - t0

    ops = min(args.ops, args.uris)
    t0 = time.perf_counter()
    done = 0
    while done < ops:
        c = f.next_ready()
        if c is None:
            t[0] += 1.0
            continue
        t[0] += 0.0001
        f.finished(c, 200, 0.05, size=10_000)
        done += 1
    sched_s = time.perf_counter() - t0

    t0 = time.perf_counter()
    st = f.stats()
    stats_s = time.perf_counter() - t0
    f.close()
    t0 = time.perf_counter()
    f = Frontier.open(db, cfg, clock=lambda: t[0])
    reopen_s = time.perf_counter() - t0
    f.close()
    db_mb = sum(p.stat().st_size for p in db.parent.iterdir()) / 1e6
    peak = _peak_rss_mb()
    tmp.cleanup()

    res = {
        "bench": "frontier",
        "uris": args.uris,
        "hosts": args.hosts,
        "added": added,
        "insert_s": round(insert_s, 2),
        "insert_per_s": round(added / insert_s),
        "seen_rejects_per_s": round(sample / dup_s),
        "seen_false_adds": dup,
        "ops": done,
        "sched_s": round(sched_s, 2),
        "next_ready_finished_per_s": round(done / sched_s),
        "stats_ms": round(stats_s * 1000, 1),
        "reopen_ms": round(reopen_s * 1000, 1),
        "queued_after": st.queued,
        "queues": st.queues,
        "db_mb": round(db_mb, 1),
        "rss_start_mb": round(rss0, 1),
        "rss_after_insert_mb": round(rss_insert, 1),
        "peak_rss_mb": round(peak, 1),
        "target_rss_mb": 300,
        "ok": peak <= 300 and dup == 0,
        "python": sys.version.split()[0],
        "nproc": os.cpu_count(),
    }
    rows = [
        ("URIs queued", f"{added:,} across {st.queues:,} queues"),
        ("insert", f"{insert_s:.1f} s  ({res['insert_per_s']:,} URI/s)"),
        ("seen filter (re-add)", f"{res['seen_rejects_per_s']:,} URI/s, {dup} wrongly added"),
        (
            "next_ready+finished",
            f"{done:,} in {sched_s:.1f} s  ({res['next_ready_finished_per_s']:,}/s)",
        ),
        ("stats()", f"{res['stats_ms']} ms"),
        ("reopen", f"{res['reopen_ms']} ms"),
        ("database", f"{db_mb:.1f} MB"),
        (
            "peak RSS",
            f"{peak:.1f} MB (start {rss0:.1f}, after insert {rss_insert:.1f}; target <= 300)",
        ),
    ]
    w = max(len(k) for k, _ in rows)
    for k, v in rows:
        print(f"{k:<{w}}  {v}")
    print(json.dumps(res))
    return 0 if res["ok"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
