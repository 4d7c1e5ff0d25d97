"""A crawl killed after robots.txt was logged but before it was saved in
``state/robots.sqlite``, then resumed while the site serves a *different* robots.txt.

Before the fix the resumed crawl fetched robots.txt again and wrote a second robots.txt
capture to the WARC without logging it (one crawl.log line, two WARC records: the second
capture was lost to every crawl.log reader). Heritrix logs every fetch it makes; webark
keeps one final line per URI, so the resumed crawl now reads the rules back from the WARC
record the logged line points at: no second fetch, no unlogged capture, and the rules in
force are those of the archived, logged capture.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
from collections import Counter
from pathlib import Path

import pytest

from sites import HTML, TEXT, TestSite, html
from webark.crawl.controller import CrawlController
from webark.crawl.job import job_from_mapping
from webark.crawllog.parse import read_crawl_log
from webark.warc.check import check_file
from webark.warc.reader import ArchiveReader

FIRST = b"User-agent: *\nDisallow: /first-rules/\n"
SECOND = b"User-agent: *\nDisallow: /b.html\n"


@pytest.mark.parametrize("redirected", [False, True])
def test_robots_logged_not_saved_read_back_on_resume(tmp_path: Path, redirected: bool) -> None:
    rules = "/rules.txt" if redirected else "/robots.txt"  # robots.txt -> /rules.txt
    moved = (301, (("Location", "/rules.txt"),), b"")
    pages = {
        rules: (200, TEXT, FIRST),
        "/robots.txt": moved if redirected else (200, TEXT, FIRST),
        "/": (200, HTML, html('<a href="/first-rules/a.html">a</a><a href="/b.html">b</a>')),
        "/first-rules/a.html": (200, HTML, html("excluded by the first rules")),
        "/b.html": (200, HTML, html("excluded by the second rules")),
    }
    with TestSite(pages) as site:
        cfg = {
            "seeds": [site.url("/")], "job_dir": str(tmp_path / "job"),
            "contact": "resume@example.org", "allow_private": True,
            "min_delay": 0, "max_delay": 0, "delay_factor": 0,
        }  # fmt: skip
        job = job_from_mapping(cfg)
        asyncio.run(CrawlController(job, extract_processes=0).run())
        # the kill window: robots.txt logged, not saved; /b.html fetched, not logged
        con = sqlite3.connect(job.state_dir / "robots.sqlite")
        assert con.execute("DELETE FROM robots").rowcount >= 1
        con.commit()
        con.close()
        b = site.url("/b.html")
        log = job.logs_dir / "crawl.log"
        kept = [ln for ln in log.read_text().splitlines() if ln.split()[3] != b]
        log.write_text("".join(ln + "\n" for ln in kept))
        con = sqlite3.connect(job.state_dir / "frontier.sqlite")
        (qid,) = con.execute("SELECT qid FROM uris WHERE uri = ?", (b,)).fetchone()
        con.execute("UPDATE uris SET state = 0, status = NULL WHERE uri = ?", (b,))
        con.execute("UPDATE queues SET queued = 1, finished = finished - 1 WHERE qid = ?", (qid,))
        con.commit()
        con.close()
        site.pages[rules] = (200, TEXT, SECOND)  # the site changed its rules
        before = len(site.paths())
        summary = asyncio.run(CrawlController(job_from_mapping(cfg), resume=True).run())
        new = site.paths()[before:]

    assert summary.stop_reason == "finished"
    assert new == ["/b.html"]  # robots.txt not fetched again
    lines = read_crawl_log(job.logs_dir / "crawl.log")
    assert [u for u, n in Counter(ln.uri for ln in lines).items() if n > 1] == []
    robots_lines = [ln for ln in lines if ln.uri.endswith(("/robots.txt", "/rules.txt"))]
    # every robots.txt capture in the WARCs has its crawl.log line, and the other way
    records = [
        (Path(rec.path).name, rec.offset)
        for warc in summary.warcs + tuple(sorted(map(str, job.warcs_dir.glob("*.warc.gz"))))
        for rec in ArchiveReader(warc)
        if rec.type == "response" and (rec.target_uri or "").endswith(("/robots.txt", "/rules.txt"))
    ]
    logged = [
        (json.loads(ln.extra_info or "{}")["warcFilename"],
         json.loads(ln.extra_info or "{}")["warcFileOffset"])
        for ln in robots_lines
    ]  # fmt: skip
    assert sorted(set(records)) == sorted(logged) and len(logged) == 1 + redirected
    # the rules in force are those of the logged capture (FIRST allows /b.html)
    by_uri = {ln.uri: ln for ln in lines}
    assert by_uri[site.url("/b.html")].status == 200
    assert by_uri[site.url("/first-rules/a.html")].status == -9998
    assert all(check_file(str(p)).ok for p in job.warcs_dir.glob("*.warc.gz"))
