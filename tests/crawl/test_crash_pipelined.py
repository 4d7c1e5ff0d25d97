"""Crash test of the pipelined crawl: politeness delays off, so each queue is released
right after its fetch (``Frontier.release``) and the next fetch from the host overlaps
the link extraction of the previous URI in a worker process. ``webark crawl`` is killed
with SIGKILL at random moments and resumed; the end state must be the uninterrupted
reference crawl's, and no URI fetched twice except those in flight at a kill (released
ones included: they stay in flight until their outlinks are queued). The site and the
checks are those of ``test_crash_resume.py``."""

from __future__ import annotations

import os
import random
import subprocess
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
import test_crash_resume as base

from sites import TestSite
from webark.crawllog.parse import read_crawl_log

KILLS = 10


@pytest.fixture(scope="module")
def servers() -> Iterator[dict[str, TestSite]]:
    out = {
        host: TestSite(
            base.tree_site(base.N_PAGES[host]), host=ip, delay=0.005, handler=base.OnceBusy()
        ).start()
        for host, ip in base.HOSTS.items()
    }
    yield out
    for s in out.values():
        s.stop()


def _yaml(path: Path, job_dir: Path, contact: str, sites: dict[str, TestSite]) -> Path:
    seeds = "".join(f"\n  - http://{h}:{s.port}/" for h, s in sites.items())
    resolve = "".join(f"\n  {h}: {ip}" for h, ip in base.HOSTS.items())
    path.write_text(
        f"seeds:{seeds}\njob_dir: {job_dir}\ncontact: {contact}\nallow_private: true\n"
        f"resolve:{resolve}\n"
        "min_delay: 0\nmax_delay: 0\ndelay_factor: 0\nworkers: 4\ndedup: true\n"
        "max_http_retries: 2\nbackoff_base: 0.05\nretry_delay: 0.1\nmax_retries: 3\n"
    )
    return path


def test_sigkill_pipelined_crawl_then_resume(
    servers: dict[str, TestSite], tmp_path: Path
) -> None:
    ref_dir, jd = tmp_path / "ref", tmp_path / "killed"
    env = {**os.environ, "WEBARK_EXTRACT_PROCESSES": "2"}
    ref_yaml = _yaml(tmp_path / "ref.yaml", ref_dir, "pref@example.org", servers)
    reference = subprocess.Popen(base.crawl_cmd(str(ref_yaml)), stderr=subprocess.PIPE, env=env)
    rng = random.Random(int(os.environ.get("WEBARK_CRASH_SEED", "20261130")))
    yaml = _yaml(tmp_path / "job.yaml", jd, "pcrash@example.org", servers)
    may_repeat: set[str] = set()
    robots_unsaved_at_kill = False
    most_in_flight = 0
    log = jd / "logs" / "crawl.log"
    for kill in range(KILLS):
        resumable = (jd / "state" / "job.json").exists()
        argv = base.crawl_cmd("--resume", str(jd)) if resumable else base.crawl_cmd(str(yaml))
        before = log.stat().st_size if log.exists() else 0
        p = subprocess.Popen(argv, stderr=subprocess.PIPE, env=env)
        base.wait_for_log_growth(p, log, before)  # mid-crawl
        time.sleep(rng.uniform(0.0, 0.25))
        base.kill_9(p, kill + 1)
        flying = base.in_flight(jd)
        most_in_flight = max(most_in_flight, len(flying))
        may_repeat |= flying
        robots_unsaved_at_kill |= base.robots_saved(jd) < len(base.HOSTS)
    print(f"\nURIs in flight at kills: {len(may_repeat)}, at most {most_in_flight} at once")
    done = subprocess.run(
        base.crawl_cmd("--resume", str(jd)), capture_output=True, timeout=120, env=env
    )
    assert done.returncode == 0, done.stderr.decode()[-3000:]
    _, ref_err = reference.communicate(timeout=120)
    assert reference.returncode == 0, ref_err.decode()[-3000:]

    want = base.captured(ref_dir)
    assert len(want) >= 260
    assert base.captured(jd) == want
    warcs = sorted(str(jd / "warcs" / n) for n in os.listdir(jd / "warcs"))
    assert not [w for w in warcs if w.endswith(".open")]
    files = [w for w in warcs if w.endswith(".warc.gz")]
    check = subprocess.run(
        [str(base.BIN / "webark"), "warc", "check", *files], capture_output=True
    )
    assert check.returncode == 0, check.stdout.decode()[-3000:]

    lines = read_crawl_log(jd / "logs" / "crawl.log")
    per_uri = Counter(ln.uri for ln in lines)
    assert [u for u, n in per_uri.items() if n > 1] == []
    ref_lines = read_crawl_log(ref_dir / "logs" / "crawl.log")
    assert {ln.uri: ln.status for ln in lines} == {ln.uri: ln.status for ln in ref_lines}

    hits = base.hits_of(servers, "pcrash@example.org")
    assert set(hits) == {u for u in want if u.startswith("http")}
    assert base.unexplained_repeats(hits, may_repeat, robots_unsaved_at_kill) == set()
    assert may_repeat, "the kills hit URIs in flight"
