"""A crawl of pages whose response heads are sloppy in ways browsers accept: a vertical
tab in ``Content-Type``, a ``Content-Type`` with spaces, a space before a colon, a line
that is no field. Before the fixes, the first failed as a broken connection (-3, retried
``max_retries`` times ``retry_delay`` apart: 7.5 h with Heritrix's defaults, and never
archived) and the second wrote ``text/html foo bar`` as the MIME field of crawl.log,
whose line then could not be read back (resume, reports, ``crawllog`` tools)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from sites import HTML, TEXT, TestSite, html
from webark.crawl.controller import CrawlController
from webark.crawl.job import job_from_mapping
from webark.crawllog import CrawlLogLine
from webark.crawllog.parse import iter_crawl_log
from webark.warc.check import check_file


def test_sloppy_heads_crawled_and_logged(tmp_path: Path) -> None:
    pages = {
        "/robots.txt": (200, TEXT, b"User-agent: *\n"),
        "/": (200, HTML, html('<a href="/vt.html">a</a><a href="/spaced.html">b</a>'
                              '<a href="/junk.html">c</a>')),
        "/vt.html": (200, (("Content-Type", "text/html\x0bx"),), html('<a href="/from-vt">x</a>')),
        "/spaced.html": (200, (("Content-Type", "text/html foo bar"),),
                         html('<a href="/from-spaced">x</a>')),
        "/junk.html": (200, (("X-Powered-By ", "php"), ("Content-Type", "text/html"),
                             ("X-A", "1\r\nA line without colon")),  # a line of its own
                       html('<a href="/from-junk">x</a>')),
    }  # fmt: skip
    with TestSite(pages) as site:
        cfg = {
            "seeds": [site.url("/")], "job_dir": str(tmp_path / "job"),
            "contact": "heads@example.org", "allow_private": True,
            "min_delay": 0, "max_delay": 0, "delay_factor": 0,
            "max_retries": 1, "retry_delay": 0.05,
        }  # fmt: skip
        job = job_from_mapping(cfg)
        summary = asyncio.run(CrawlController(job, extract_processes=0).run())
        paths = site.paths()
    assert summary.stop_reason == "finished"
    assert all(check_file(p).ok for p in summary.warcs)
    items = [item for _, item in iter_crawl_log(job.logs_dir / "crawl.log")]
    assert all(isinstance(item, CrawlLogLine) for item in items), items  # every line reads
    lines = {ln.uri: ln for ln in items if isinstance(ln, CrawlLogLine)}
    for path in ("/vt.html", "/spaced.html", "/junk.html"):
        line = lines[site.url(path)]
        assert (line.status, line.mime_type) == (200, "text/html"), path
        assert paths.count(path) == 1  # fetched once: no retry of a "broken" response
    assert {"/from-vt", "/from-spaced", "/from-junk"} <= set(paths)  # links extracted
