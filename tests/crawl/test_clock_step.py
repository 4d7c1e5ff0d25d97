"""A wall clock that steps during a crawl (a leap second repeats 23:59:59; NTP steps the
clock back or forward): politeness and delays follow the monotonic clock, so no queue
stalls or speeds up, while crawl.log and WARC dates stay wall-clock UTC (they show the
step). Capture back-end issue, defect 5.

The crawl's process sees a wall clock that the test site steps back one hour when
``/p3.html`` is requested and forward two hours at ``/p6.html``: ``time.time``, the
fetcher's clock (WARC-Date, crawl.log fetch time) and the crawl.log's own time stamps.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

import webark.capture.crawllog as crawllog_mod
from sites import Page, TestSite, html
from webark.crawl.context import http_fetcher
from webark.crawl.controller import CrawlController
from webark.crawl.job import job_from_mapping
from webark.crawllog.parse import read_crawl_log
from webark.warc.reader import ArchiveReader

DELAY = 0.25
N = 9


class SteppedClock:
    """The real wall clock plus an offset the test site changes (thread-safe enough:
    one float, written by the server thread, read by the crawl)."""

    def __init__(self) -> None:
        self.offset = 0.0
        self._time = time.time

    def time(self) -> float:
        return self._time() + self.offset

    def now(self) -> datetime:
        return datetime.fromtimestamp(self.time(), UTC)


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> SteppedClock:
    c = SteppedClock()
    monkeypatch.setattr(time, "time", c.time)
    monkeypatch.setattr(crawllog_mod, "_now", c.now)
    return c


@pytest.fixture
def site(clock: SteppedClock) -> Iterator[TestSite]:
    links = "".join(f'<a href="/p{i}.html">p</a>' for i in range(N))
    pages: dict[str, Page] = {"/": (200, (("Content-Type", "text/html"),), html(links))}
    pages.update({f"/p{i}.html": (200, (("Content-Type", "text/html"),), html(f"<p>{i}</p>"))
                  for i in range(N)})  # fmt: skip

    def step(path: str, headers: Mapping[str, str]) -> Page | None:
        if path == "/p3.html":
            clock.offset -= 3600.0
        elif path == "/p6.html":
            clock.offset += 7200.0
        return None

    with TestSite(pages, handler=step) as s:
        yield s


def test_clock_steps_change_dates_not_politeness(tmp_path: Path, clock: SteppedClock,
                                                 site: TestSite) -> None:  # fmt: skip
    job = job_from_mapping({
        "seeds": [site.url("/")], "job_dir": str(tmp_path / "job"),
        "contact": "archive@example.org", "allow_private": True, "min_delay": DELAY,
        "max_delay": DELAY, "delay_factor": 0, "dns_records": False, "robots": "ignore",
    })  # fmt: skip
    fetcher = http_fetcher(job)
    fetcher.clock = clock.now
    t0 = time.monotonic()
    summary = asyncio.run(CrawlController(job, fetcher=fetcher, extract_processes=0).run())
    elapsed = time.monotonic() - t0
    # the crawl report's duration and rates are the monotonic clock's, not the step's
    assert 0 < summary.snapshot.elapsed <= elapsed
    assert summary.snapshot.uris_per_second > 1
    hits = sorted(site.snapshot(), key=lambda h: h.start)
    assert len(hits) == N + 1
    gaps = [b.start - a.end for a, b in itertools.pairwise(hits)]
    assert min(gaps) >= DELAY - 0.005, gaps  # never sooner: a step back did not speed it
    assert max(gaps) < DELAY + 1.0, gaps  # never stalled: a step forward did not hold it
    assert elapsed < N * DELAY + 10
    # the dates are the (stepped) wall clock's: back one hour, then forward two
    lines = read_crawl_log(job.logs_dir / "crawl.log")
    by_uri = {ln.uri: ln for ln in lines}
    before, after3 = by_uri[site.url("/p2.html")], by_uri[site.url("/p3.html")]
    after6 = by_uri[site.url("/p6.html")]
    assert timedelta(minutes=59) < before.timestamp - after3.timestamp < timedelta(minutes=61)
    assert timedelta(minutes=59) < after6.timestamp - before.timestamp < timedelta(minutes=61)
    dates = {}
    for name in (job.warcs_dir).iterdir():
        for rec in ArchiveReader(str(name)):
            if rec.type == "response":
                dates[rec.target_uri] = rec.headers.get("WARC-Date")
    # (a fetch started before its own step: /p4 is the first after the one back)
    assert dates[site.url("/p4.html")] < dates[site.url("/p2.html")] < dates[site.url("/p7.html")]
