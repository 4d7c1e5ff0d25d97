"""One crawl over several host names mapped to 127.0.0.2-4 by the job's ``resolve``
overrides, each served by a server this test starts, with its own access log.

* ``www.alpha.test`` (127.0.0.2): robots.txt with a ``webark`` group (``Disallow`` with
  ``*`` and ``$``, an ``Allow`` inside a disallowed folder, ``Crawl-delay``) and a
  ``*`` group disallowing everything; a redirect chain of two hops; 404s.
* ``beta.test`` (127.0.0.3): no robots.txt (404: all allowed); a burst of 503 answers
  with ``Retry-After: 1``, then 200s.
* ``cal.gamma.test`` (127.0.0.4): crawler traps: an endless calendar
  (``/cal?date=…`` links to the next and previous day), endlessly deeper paths
  (``/deep/1/2/3/…``) and a self-repeating path (``/loop/loop/…``).

The servers' own logs (arrival and finish times per request) prove politeness: never
two requests at once to one host, the pause between them at least the job's
``min_delay`` or the robots.txt Crawl-delay, and at least the Retry-After after a 503;
robots-excluded paths are never requested and are logged with -9998.
"""

from __future__ import annotations

import asyncio
import datetime
import itertools
import threading
from collections.abc import Iterator, Mapping
from typing import Any

import pytest

from sites import HTML, TEXT, Hit, Page, TestSite, html
from webark.crawl.controller import CrawlController, CrawlSummary
from webark.crawl.job import job_from_mapping
from webark.crawllog import CrawlLogLine
from webark.crawllog.parse import read_crawl_log
from webark.warc.check import check_file

ALPHA, BETA, GAMMA = "www.alpha.test", "beta.test", "cal.gamma.test"
MIN_DELAY = 0.03
CRAWL_DELAY = 0.12  # alpha's robots.txt, webark group
RETRY_AFTER = 1  # beta's 503 burst
BURST = (4, 5)  # beta's 4th and 5th requests (robots.txt is the 1st) get 503
CAL_BUDGET = 12  # scope query_explosion budget
MAX_DEPTH = 6  # scope max_path_depth
TOL = 0.005  # seconds: clock granularity between the server's and crawler's views

ALPHA_ROBOTS = f"""\
User-agent: *
Disallow: /

User-agent: webark
Disallow: /*.pdf$
Disallow: /search
Allow: /private/public.html
Disallow: /private/
Crawl-delay: {CRAWL_DELAY}
"""


def alpha_pages(beta: str) -> dict[str, Page]:
    links = [
        "/p/1.html", "/r1", "/missing.html", "/doc.pdf", "/doc.pdf?download=1",
        "/search?q=python", "/private/a.html", "/private/public.html", f"{beta}/",
    ]  # fmt: skip
    pages: dict[str, Page] = {
        "/robots.txt": (200, TEXT, ALPHA_ROBOTS.encode()),
        "/": (200, HTML, html("".join(f'<a href="{u}">x</a>' for u in links))),
        "/r1": (301, (("Location", "/r2"), *HTML), html("moved")),
        "/r2": (302, (("Location", "/final.html"), *HTML), html("moved again")),
        "/final.html": (200, HTML, html('<a href="/gone.html">gone</a>')),
        "/doc.pdf": (200, (("Content-Type", "application/pdf"),), b"%PDF-1.4 never fetched"),
        "/doc.pdf?download=1": (200, (("Content-Type", "application/pdf"),), b"%PDF-1.4 ok"),
        "/search?q=python": (200, HTML, html("never fetched")),
        "/private/a.html": (200, HTML, html("never fetched")),
        "/private/public.html": (200, HTML, html("allowed by Allow")),
    }
    for i in range(1, 6):
        pages[f"/p/{i}.html"] = (200, HTML, html(f'<a href="/p/{i + 1}.html">next</a>'))
    return pages


def beta_pages() -> dict[str, Page]:
    pages: dict[str, Page] = {
        "/": (200, HTML, html("".join(f'<a href="/b/{i}.html">b</a>' for i in range(1, 7))))
    }
    for i in range(1, 7):
        pages[f"/b/{i}.html"] = (200, HTML, html(f"page {i}"))
    return pages


class Burst:
    """Beta's handler: the requests numbered in :data:`BURST` (1-based, in arrival order)
    get ``503 Service Unavailable`` with ``Retry-After``."""

    def __init__(self) -> None:
        self.count = 0
        self.lock = threading.Lock()

    def __call__(self, path: str, headers: Mapping[str, str]) -> Page | None:
        with self.lock:
            self.count += 1
            n = self.count
        if n in BURST:
            return (503, (("Retry-After", str(RETRY_AFTER)), *TEXT), b"busy, come back later")
        return None


def trap(path: str, headers: Mapping[str, str]) -> Page | None:
    """Gamma: an endless calendar, endlessly deep paths, a path repeating itself."""
    if path == "/":
        body = '<a href="/cal?date=2026-01-01">calendar</a><a href="/deep/1/">deep</a>'
        return (200, HTML, html(body + '<a href="/loop/">loop</a>'))
    if path.startswith("/cal?date="):
        day = datetime.date.fromisoformat(path.removeprefix("/cal?date="))
        prev, nxt = day - datetime.timedelta(days=1), day + datetime.timedelta(days=1)
        links = f'<a href="/cal?date={prev}">&lt;</a><a href="?date={nxt}">&gt;</a>'
        return (200, HTML, html(links))
    if path.startswith("/deep/") and path.endswith("/"):
        n = path.rstrip("/").rsplit("/", 1)[1]
        return (200, HTML, html(f'<a href="{int(n) + 1}/">deeper</a>'))
    if path.startswith("/loop/") and path.endswith("/"):
        return (200, HTML, html('<a href="loop/">again</a>'))
    return None


@pytest.fixture(scope="module")
def crawl(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    beta = TestSite(beta_pages(), host="127.0.0.3", handler=Burst()).start()
    gamma = TestSite({}, host="127.0.0.4", handler=trap).start()
    beta_origin = f"http://{BETA}:{beta.port}"
    alpha = TestSite(alpha_pages(beta_origin), host="127.0.0.2").start()
    origins = {
        ALPHA: f"http://{ALPHA}:{alpha.port}",
        BETA: beta_origin,
        GAMMA: f"http://{GAMMA}:{gamma.port}",
    }
    job = job_from_mapping(
        {
            "seeds": [origins[ALPHA] + "/", origins[BETA] + "/", origins[GAMMA] + "/"],
            "job_dir": str(tmp_path_factory.mktemp("multihost") / "job"),
            "contact": "archive@example.org",
            "allow_private": True,
            "resolve": {ALPHA: "127.0.0.2", BETA: "127.0.0.3", GAMMA: "127.0.0.4"},
            "min_delay": MIN_DELAY,
            "max_delay": 0.2,
            "delay_factor": 2.0,
            "workers": 6,
            "backoff_base": 0.1,
            "max_http_retries": 3,
            "scope": {
                "query_explosion": {"budget": CAL_BUDGET},
                "max_path_depth": MAX_DEPTH,
            },
        }
    )
    summary: CrawlSummary = asyncio.run(CrawlController(job).run())
    yield {
        "job": job,
        "summary": summary,
        "sites": {ALPHA: alpha, BETA: beta, GAMMA: gamma},
        "origins": origins,
        "log": read_crawl_log(job.logs_dir / "crawl.log"),
    }
    for s in (alpha, beta, gamma):
        s.stop()


def by_uri(lines: list[CrawlLogLine]) -> dict[str, CrawlLogLine]:
    return {ln.uri: ln for ln in lines}


def gaps(hits: list[Hit]) -> list[tuple[Hit, Hit, float]]:
    """Consecutive requests to one server: (previous, next, idle seconds between)."""
    hits = sorted(hits, key=lambda h: h.start)
    return [(a, b, b.start - a.end) for a, b in itertools.pairwise(hits)]


def test_crawl_finished_and_warcs_valid(crawl: dict[str, Any]) -> None:
    summary = crawl["summary"]
    assert summary.stop_reason == "finished"
    assert summary.warcs and all(check_file(p).ok for p in summary.warcs)
    uris = [ln.uri for ln in crawl["log"]]
    assert len(uris) == len(set(uris)), "one final crawl.log line per URI"


def test_never_two_requests_at_once_to_one_host(crawl: dict[str, Any]) -> None:
    for name, site in crawl["sites"].items():
        hits = site.snapshot()
        assert len(hits) >= 8, name
        for a, b, idle in gaps(hits):
            assert idle >= 0, f"{name}: {b.path} began before {a.path} ended"
    # ... while the hosts were crawled in parallel
    alpha, beta = crawl["sites"][ALPHA].snapshot(), crawl["sites"][BETA].snapshot()
    a0, a1 = min(h.start for h in alpha), max(h.end for h in alpha)
    assert any(a0 < h.start < a1 for h in beta)


def test_delays_respected(crawl: dict[str, Any]) -> None:
    # alpha: robots.txt Crawl-delay of the webark group, from the robots.txt fetch on
    for a, b, idle in gaps(crawl["sites"][ALPHA].snapshot()):
        assert idle >= CRAWL_DELAY - TOL, (a.path, b.path, idle)
    # gamma: the job's min_delay
    for a, b, idle in gaps(crawl["sites"][GAMMA].snapshot()):
        assert idle >= MIN_DELAY - TOL, (a.path, b.path, idle)
    # beta: min_delay, and Retry-After after each 503 of the burst
    beta_gaps = gaps(crawl["sites"][BETA].snapshot())
    after_503 = [idle for a, _, idle in beta_gaps if a.status == 503]
    assert len(after_503) == len(BURST)
    assert min(after_503) >= RETRY_AFTER - TOL
    for a, b, idle in beta_gaps:
        assert idle >= MIN_DELAY - TOL, (a.path, b.path, idle)


def test_5xx_burst_retried(crawl: dict[str, Any]) -> None:
    beta = crawl["sites"][BETA].snapshot()
    assert [h.status for h in beta[BURST[0] - 1 : BURST[-1]]] == [503] * len(BURST)
    hit_503 = {h.path for h in beta if h.status == 503}
    lines = by_uri(crawl["log"])
    origin = crawl["origins"][BETA]
    for path in crawl["sites"][BETA].pages:
        line = lines[origin + path]
        assert line.status == 200, path  # every page in the end
        tries = [a for a in line.annotations if a.endswith("t") and a[:-1].isdigit()]
        if path in hit_503:
            n_503 = [h.path for h in beta].count(path) - 1
            assert tries == [f"{n_503 + 1}t"], (path, line.annotations)
        else:
            assert tries == [], (path, line.annotations)
    assert lines[origin + "/robots.txt"].status == 404


def test_robots_rules_honoured(crawl: dict[str, Any]) -> None:
    alpha = crawl["sites"][ALPHA]
    requested = {h.path for h in alpha.snapshot()}
    excluded = {"/doc.pdf", "/search?q=python", "/private/a.html"}
    assert not requested & excluded
    # `$` anchors the pdf rule; Allow wins inside a disallowed folder (longest match)
    assert {"/doc.pdf?download=1", "/private/public.html"} <= requested
    lines = by_uri(crawl["log"])
    origin = crawl["origins"][ALPHA]
    for path in excluded:
        line = lines[origin + path]
        assert line.status == -9998 and line.hop_path == "L" and line.via == origin + "/"
    not_found = {"/gone.html", "/missing.html", "/p/6.html"}
    assert requested == (set(alpha.pages) - excluded) | not_found
    order = [h.path for h in sorted(alpha.snapshot(), key=lambda h: h.start)]
    assert order[0] == "/robots.txt" and order.count("/robots.txt") == 1


def test_trap_bounded(crawl: dict[str, Any]) -> None:
    paths = [h.path for h in crawl["sites"][GAMMA].snapshot()]
    assert len(paths) == len(set(paths))
    cal = [p for p in paths if p.startswith("/cal?")]
    assert len(cal) == CAL_BUDGET  # the query-explosion budget of the /cal path
    deep = [p for p in paths if p.startswith("/deep/")]
    assert max(p.count("/") for p in deep) == MAX_DEPTH  # /deep/1/2/3/4/
    assert len(deep) == MAX_DEPTH - 2
    assert [p for p in paths if p.startswith("/loop/")] == ["/loop/", "/loop/loop/"]
    assert len(paths) == 2 + CAL_BUDGET + len(deep) + 2  # robots.txt, /, traps


def test_crawl_log_lines_and_hop_paths(crawl: dict[str, Any]) -> None:
    lines = by_uri(crawl["log"])
    o = crawl["origins"]
    a = o[ALPHA]
    assert lines[a + "/"].hop_path == "" and lines[a + "/"].via is None
    assert lines[a + "/r1"].status == 301 and lines[a + "/r1"].hop_path == "L"
    assert lines[a + "/r2"].status == 302 and lines[a + "/r2"].hop_path == "LR"
    assert lines[a + "/r2"].via == a + "/r1"
    final = lines[a + "/final.html"]
    assert (final.status, final.hop_path, final.via) == (200, "LRR", a + "/r2")
    assert lines[a + "/gone.html"].status == 404 and lines[a + "/gone.html"].hop_path == "LRRL"
    assert lines[a + "/missing.html"].status == 404
    assert lines[a + "/p/5.html"].hop_path == "LLLLL"
    assert lines[a + "/robots.txt"].hop_path == "P" and lines[a + "/robots.txt"].via == a + "/"
    for host in (ALPHA, BETA, GAMMA):
        dns = lines[f"dns:{host}"]
        assert dns.status == 1 and dns.hop_path == "P" and dns.mime_type == "text/dns"
    # beta is linked from alpha too, but is a seed: it keeps the seed's (empty) hop path
    assert lines[o[BETA] + "/"].hop_path == ""
    assert lines[o[BETA] + "/b/3.html"].hop_path == "L"
    assert lines[o[BETA] + "/b/3.html"].source_tag == o[BETA] + "/"
    g = o[GAMMA]
    assert lines[g + "/deep/1/2/3/4/"].hop_path == "LLLL"
    assert lines[g + "/cal?date=2026-01-02"].hop_path == "LL"
    assert lines[g + "/cal?date=2026-01-02"].via == g + "/cal?date=2026-01-01"
    # out-of-scope URIs are not logged (as in Heritrix): the next deep and loop steps
    assert g + "/deep/1/2/3/4/5/" not in lines
    assert g + "/loop/loop/loop/" not in lines
    statuses = {ln.status for ln in crawl["log"]}
    assert statuses <= {1, 200, 301, 302, 404, -9998}


def test_logged_uris_match_server_logs(crawl: dict[str, Any]) -> None:
    """Every URI fetched appears in crawl.log with the status the server sent last."""
    lines = by_uri(crawl["log"])
    for host, site in crawl["sites"].items():
        last: dict[str, int] = {}
        for h in site.snapshot():
            last[h.path] = h.status
        for path, status in last.items():
            assert lines[crawl["origins"][host] + path].status == status, (host, path)
    fetched = {
        crawl["origins"][host] + h.path
        for host, site in crawl["sites"].items()
        for h in site.snapshot()
    }
    http_lines = {u for u, ln in lines.items() if u.startswith("http") and ln.status > 0}
    assert http_lines == fetched

