"""The short CI mode of ``bench/rss.py`` (issue 14, "Done means" 4): 30 simulated minutes
of a news site publishing (clock sped up 180 times: 10 real seconds) crawled
continuously, against snapshot crawls of the same site at the start and the end. The
crawler's memory stays flat (RSS growth from the first quarter of the run to the end
under 12 MiB) and continuous crawling captures the front page more often than the
snapshots. The full run (a simulated day or week) is the bench itself."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench" / "rss.py"


def test_thirty_simulated_minutes_flat_memory() -> None:
    out = subprocess.run([sys.executable, str(BENCH), "--sim-hours", "0.5", "--speed", "180",
                          "--per-hour", "40", "--min-wait", "2", "--json"],
                         capture_output=True, text=True, timeout=300, check=True)  # fmt: skip
    r = json.loads(out.stdout)
    cont = r["continuous"]
    assert cont["exit"] == 0
    assert cont["rss_growth_mib"] < 12, cont
    assert all(q > 0 for q in cont["rss_mib_by_quarter"]), cont
    snaps = r["snapshot_crawls"]
    assert len(snaps) == 2 and all(s["front_captures"] == 1 for s in snaps)
    assert cont["front_captures"] >= 4 and r["front_captures_ratio"] >= 2, r
