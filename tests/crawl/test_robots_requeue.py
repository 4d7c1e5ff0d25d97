"""The politeness delay after a robots.txt prerequisite is waited in the frontier, not
by a worker (issue 19, many hosts): eight hosts on 127.0.1.1-8, each served by its own
server with its own access log, two workers, a fixed 0.6 s delay.

Before, the worker that fetched a host's robots.txt slept the delay before fetching the
seed, so two workers started the eight hosts two at a time (the last seed came ~2.4 s
after the first robots.txt); now the seed goes back to its queue and the workers start
every host at once: all seeds are fetched one delay after the robots.txt fetches.
Politeness still holds per host (the servers' logs: never two requests at once, the
delay between robots.txt and the seed), and each seed has one crawl.log line.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Iterator
from typing import Any

import pytest

from sites import HTML, TestSite, html
from webark.crawl.controller import CrawlController
from webark.crawl.job import job_from_mapping
from webark.crawllog.parse import read_crawl_log

HOSTS = 8
DELAY = 0.6
TOL = 0.005  # seconds: clock granularity between the server's and crawler's views


@pytest.fixture(scope="module")
def crawl(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    pages = {"/": (200, HTML, html('<a href="/a.html">a</a>')), "/a.html": (200, HTML, html("a"))}
    sites = [TestSite(pages, host=f"127.0.1.{i + 1}").start() for i in range(HOSTS)]
    job = job_from_mapping(
        {
            "seeds": [s.url("/") for s in sites],
            "job_dir": str(tmp_path_factory.mktemp("requeue") / "job"),
            "contact": "archive@example.org",
            "allow_private": True,
            "min_delay": DELAY,
            "max_delay": DELAY,
            "delay_factor": 0,
            "workers": 2,
        }
    )
    summary = asyncio.run(CrawlController(job).run())
    yield {"sites": sites, "summary": summary, "log": read_crawl_log(job.logs_dir / "crawl.log")}
    for s in sites:
        s.stop()


def test_every_host_fetched_in_full(crawl: dict[str, Any]) -> None:
    for s in crawl["sites"]:
        assert s.paths() == ["/robots.txt", "/", "/a.html"]


def test_seeds_fetched_one_delay_after_robots(crawl: dict[str, Any]) -> None:
    hits = [s.snapshot() for s in crawl["sites"]]
    first_robots = min(h[0].start for h in hits)
    last_seed = max(h[1].start for h in hits)
    # two workers sleeping the delay would need HOSTS / 2 delays for the last seed
    assert last_seed - first_robots < DELAY + 0.4, (first_robots, last_seed)


def test_politeness_per_host(crawl: dict[str, Any]) -> None:
    for s in crawl["sites"]:
        for a, b in itertools.pairwise(sorted(s.snapshot(), key=lambda h: h.start)):
            assert b.start - a.end >= DELAY - TOL, (s.origin, a.path, b.path)


def test_one_line_per_uri_and_robots_as_prerequisite(crawl: dict[str, Any]) -> None:
    lines = crawl["log"]
    uris = [ln.uri for ln in lines]
    assert len(uris) == len(set(uris)) == 3 * HOSTS
    for s in crawl["sites"]:
        robots = next(ln for ln in lines if ln.uri == s.url("/robots.txt"))
        seed = next(ln for ln in lines if ln.uri == s.url("/"))
        assert (robots.status, robots.hop_path, robots.via) == (404, "P", s.url("/"))
        assert (seed.status, seed.hop_path, seed.is_seed) == (200, "", True)
