"""A continuous crawl (``webark crawl`` with an ``rss:`` section, a subprocess) killed
with SIGKILL at 10 random moments while the sites publish, and resumed each time with
``webark crawl --resume`` (issue 14, "Done means" 3). An uninterrupted run of the same
job against the same servers, at the same time, is the reference. In the end:

* the same set of captured URIs (WARC response and revisit records) as the reference:
  every article, implied page, feed, image and style sheet;
* every article has one response record; more captures of a URI only for URIs in
  flight at a kill (the frontier fetches those again: their second capture is a revisit);
* every WARC passes ``warc check``, no ``.open`` file is left;
* no site is left crawling: every site finishes rounds and waits again after the last
  resume (feed state and round accounting survived the kills).

The kill moments come from a seeded RNG (``WEBARK_CRASH_SEED`` to vary them).
"""

from __future__ import annotations

import contextlib
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from crawl_support import captures, rss_sites
from news_site import NewsSite, SimClock

from webark.warc.check import check_file

KILLS = 10
BIN = Path(sys.executable).parent
HOSTS = {"kill-a.test": "127.0.0.51", "kill-b.test": "127.0.0.52"}
WAITS = [0.4, 0.5]
PUBLISH_S = 16.0  # real seconds over which the schedule publishes


@pytest.fixture(scope="module")
def news() -> Iterator[list[NewsSite]]:
    clock = SimClock(speed=60.0)
    # feeds list every article (per_feed): an entry that drops off a feed while the crawl
    # is down is lost for any crawler, and the reference would have it
    sites = [NewsSite(h, ip, clock, sections=("news", "sport"), per_feed=40)
             for h, ip in HOSTS.items()]  # fmt: skip
    rng = random.Random(7)
    t0 = clock.now()
    for s in sites:
        s.start()
        s.publish("news")
        s.schedule(sorted((t0 + rng.uniform(1, PUBLISH_S) * 60, rng.choice(s.sections))
                          for _ in range(14)))  # fmt: skip
    yield sites
    for s in sites:
        s.stop()


def _yaml(path: Path, job_dir: Path, sites: list[NewsSite]) -> Path:
    import json

    job = {"job_dir": str(job_dir), "contact": f"{path.stem}@example.org",
           "allow_private": True, "resolve": HOSTS, "min_delay": 0.01, "max_delay": 0.05,
           "delay_factor": 1.0, "workers": 3,
           "rss": {"poll_interval": 0.1, "sites": rss_sites(sites, WAITS)}}  # fmt: skip
    path.write_text(json.dumps(job))  # JSON is YAML
    return path


def _cmd(*args: str) -> list[str]:
    return [str(BIN / "webark"), "crawl", "--no-progress", "--no-control", *args]


def _sites_state(job_dir: Path) -> dict[str, tuple[str, int]]:
    db = job_dir / "state" / "rss.sqlite"
    if not db.exists():
        return {}
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)
    try:
        with contextlib.suppress(sqlite3.OperationalError):
            rows = con.execute("SELECT name, phase, rounds FROM sites")
            return {r[0]: (r[1], r[2]) for r in rows}
        return {}
    finally:
        con.close()


def _in_flight(job_dir: Path) -> set[str]:
    db = job_dir / "state" / "frontier.sqlite"
    if not db.exists():
        return set()
    con = sqlite3.connect(db)
    try:
        with contextlib.suppress(sqlite3.OperationalError):
            return {r[0] for r in con.execute("SELECT uri FROM uris WHERE state = 1")}
        return set()
    finally:
        con.close()


def _settled(job_dir: Path, after: dict[str, tuple[str, int]]) -> bool:
    now = _sites_state(job_dir)
    return bool(now) and all(
        phase == "WAITING" and rounds >= after.get(name, ("", 0))[1] + 2
        for name, (phase, rounds) in now.items()
    )


def _stop(p: subprocess.Popen[bytes], job_dir: Path, after: dict[str, tuple[str, int]]) -> None:
    deadline = time.monotonic() + 60
    while not _settled(job_dir, after):
        assert p.poll() is None, p.stderr.read().decode() if p.stderr else ""
        assert time.monotonic() < deadline, _sites_state(job_dir)
        time.sleep(0.05)
    p.send_signal(signal.SIGTERM)
    _, err = p.communicate(timeout=60)
    assert p.returncode == 0, err.decode()


def test_sigkill_10_times_then_resume(news: list[NewsSite], tmp_path: Path) -> None:
    ref_dir, jd = tmp_path / "ref", tmp_path / "killed"
    reference = subprocess.Popen(_cmd(str(_yaml(tmp_path / "ref.yaml", ref_dir, news))),
                                 stderr=subprocess.PIPE)  # fmt: skip
    rng = random.Random(int(os.environ.get("WEBARK_CRASH_SEED", "20261214")))
    yaml = _yaml(tmp_path / "job.yaml", jd, news)
    may_repeat: set[str] = set()
    end_of_schedule = time.monotonic() + PUBLISH_S + 0.5
    for kill in range(KILLS):
        resumable = (jd / "state" / "job.json").exists()
        p = subprocess.Popen(_cmd("--resume", str(jd)) if resumable else _cmd(str(yaml)),
                             stderr=subprocess.PIPE)  # fmt: skip
        log = jd / "logs" / "crawl.log"
        before = log.stat().st_size if log.exists() else 0
        deadline = time.monotonic() + 30
        while p.poll() is None and time.monotonic() < deadline:
            if log.exists() and log.stat().st_size > before:
                break
            time.sleep(0.005)
        time.sleep(rng.uniform(0.0, 0.8))
        if p.poll() is not None:
            pytest.fail(f"crawl ended before kill {kill + 1}: {p.stderr.read().decode()}")
        p.send_signal(signal.SIGKILL)
        p.wait()
        p.stderr.close()  # type: ignore[union-attr]
        may_repeat |= _in_flight(jd)
    time.sleep(max(0.0, end_of_schedule - time.monotonic()))
    published = {s.url(a.path) for s in news for a in s.published()}
    last = subprocess.Popen(_cmd("--resume", str(jd)), stderr=subprocess.PIPE)
    _stop(last, jd, _sites_state(jd))
    _stop(reference, ref_dir, {})
    ref, got = captures(ref_dir), captures(jd)
    assert {c.uri for c in got} == {c.uri for c in ref}
    assert published <= {c.uri for c in got}
    responses = Counter(c.uri for c in got if c.type == "response")
    for url in published:
        assert responses[url] == 1, url
    ref_count = Counter(c.uri for c in ref)
    counts = Counter(c.uri for c in got)
    articles = {u for u in counts if u.endswith(".html") and u.rsplit("/", 1)[-1][0].isdigit()}
    extra = {u for u in articles if counts[u] > 1}
    assert extra <= may_repeat, extra - may_repeat
    assert all(ref_count[u] == 1 for u in articles)
    for d in (ref_dir, jd):
        names = sorted(os.listdir(d / "warcs"))
        assert names and not [n for n in names if n.endswith(".open")]
        for n in names:
            assert check_file(str(d / "warcs" / n)).ok, n
    print(f"\nURIs in flight at kills: {len(may_repeat)}; articles captured twice: {len(extra)}")
