"""robots.txt that redirects: RFC 9309 §2.3.1.2 asks crawlers to follow at least five
consecutive redirects, even to other hosts, and to apply the rules reached to the first
origin (Google does). The crawler used to take any 3xx robots.txt for "no robots.txt":
a site whose ``http://`` robots.txt redirects to its ``https://`` one (common) was
crawled as if it allowed everything.

Hosts (job ``resolve`` → 127.0.0.x, servers started here):

* ``hop.test``: ``/robots.txt`` → ``/r1`` → ``/r2`` → ``/rules.txt`` (``Disallow: /private/``);
* ``away.test``: ``/robots.txt`` → ``rules.test``'s ``/robots.txt`` (``Disallow: /``);
* ``loop.test``: ``/robots.txt`` → ``/a`` → ``/b`` → ``/a`` … (a loop, like more than
  five redirects: RFC 9309 lets the crawler take robots.txt as unavailable: allow all).
"""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import Any

import pytest

from sites import HTML, TEXT, TestSite, html
from webark.crawl.controller import CrawlController
from webark.crawl.job import job_from_mapping
from webark.crawllog.parse import read_crawl_log
from webark.warc.check import check_file

HOP, AWAY, RULES, LOOP = "hop.test", "away.test", "rules.test", "loop.test"
IPS = {HOP: "127.0.0.2", AWAY: "127.0.0.3", RULES: "127.0.0.4", LOOP: "127.0.0.5"}


def moved(to: str) -> tuple[int, tuple[tuple[str, str], ...], bytes]:
    return (301, (("Location", to), *HTML), html("moved"))


@pytest.fixture(scope="module")
def crawl(tmp_path_factory: pytest.TempPathFactory) -> Any:
    page = (200, HTML, html('<a href="/private/x.html">x</a><a href="/open.html">o</a>'))
    rules = TestSite({"/robots.txt": (200, TEXT, b"User-agent: *\nDisallow: /\n")},
                     host=IPS[RULES]).start()  # fmt: skip
    rules_robots = f"http://{RULES}:{rules.port}/robots.txt"
    sites = {
        HOP: TestSite({"/robots.txt": moved("/r1"), "/r1": moved("/r2"), "/r2": moved("/rules.txt"),
                       "/rules.txt": (200, TEXT, b"User-agent: *\nDisallow: /private/\n"),
                       "/": page, "/open.html": (200, HTML, html("open"))}, host=IPS[HOP]),
        AWAY: TestSite({"/robots.txt": moved(rules_robots), "/": page}, host=IPS[AWAY]),
        LOOP: TestSite({"/robots.txt": moved("/a"), "/a": moved("/b"), "/b": moved("/a"),
                        "/": page, "/open.html": (200, HTML, html("open"))}, host=IPS[LOOP]),
    }  # fmt: skip
    for s in sites.values():
        s.start()
    sites[RULES] = rules
    cfg = {
        "seeds": [f"http://{h}:{sites[h].port}/" for h in (HOP, AWAY, LOOP)],
        "job_dir": str(tmp_path_factory.mktemp("robots-redirects") / "job"),
        "contact": "robots@example.org", "allow_private": True, "resolve": IPS,
        "min_delay": 0, "max_delay": 0, "delay_factor": 0, "workers": 3,
    }  # fmt: skip
    job = job_from_mapping(cfg)
    summary = asyncio.run(CrawlController(job, extract_processes=0).run())
    yield {
        "summary": summary, "sites": sites,
        "origin": {h: f"http://{h}:{s.port}" for h, s in sites.items()},
        "log": read_crawl_log(job.logs_dir / "crawl.log"),
    }  # fmt: skip
    for s in sites.values():
        s.stop()


def test_redirected_robots_rules_applied(crawl: Any) -> None:
    sites = crawl["sites"]
    assert sites[HOP].paths()[:4] == ["/robots.txt", "/r1", "/r2", "/rules.txt"]
    assert "/private/x.html" not in sites[HOP].paths()
    assert "/open.html" in sites[HOP].paths()
    assert sites[AWAY].paths() == ["/robots.txt"]  # rules.test's Disallow: / applies
    assert sites[RULES].paths() == ["/robots.txt"]
    lines = {ln.uri: ln for ln in crawl["log"]}
    assert lines[crawl["origin"][HOP] + "/private/x.html"].status == -9998
    assert lines[crawl["origin"][AWAY] + "/"].status == -9998


def test_redirect_hops_logged_once_each(crawl: Any) -> None:
    log, origin = crawl["log"], crawl["origin"]
    assert [u for u, n in Counter(ln.uri for ln in log).items() if n > 1] == []
    hops = {ln.uri: ln.hop_path for ln in log}
    for path, hop_path in [("/robots.txt", "P"), ("/r1", "PR"), ("/r2", "PRR"),
                           ("/rules.txt", "PRRR")]:  # fmt: skip
        assert hops[origin[HOP] + path] == hop_path
    assert hops[origin[RULES] + "/robots.txt"] == "PR"
    assert crawl["summary"].stop_reason == "finished"
    assert all(check_file(p).ok for p in crawl["summary"].warcs)


def test_redirect_loop_stops(crawl: Any) -> None:
    paths = crawl["sites"][LOOP].paths()
    assert paths[:3] == ["/robots.txt", "/a", "/b"]  # /b -> /a: a loop, not fetched again
    # robots.txt is then taken as unavailable: all allowed
    assert paths.count("/robots.txt") == 1 and paths.count("/a") == 1
    assert "/private/x.html" in paths
    lines = {ln.uri: ln for ln in crawl["log"]}
    assert lines[crawl["origin"][LOOP] + "/b"].hop_path == "PRR"
