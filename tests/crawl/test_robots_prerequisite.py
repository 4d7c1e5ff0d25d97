"""The robots.txt prerequisite as a new user meets it (issue 19): a host whose robots.txt
fetch fails once (connection refused: the server is not up yet) and a sitemap named only
in robots.txt, on sites this test serves on 127.0.0.x.

Before the fixes the refused robots.txt made every URI of the host fail at once with
-61 and the crawl "finished" with nothing; the ``Sitemap:`` line was never fetched.
"""

from __future__ import annotations

import asyncio
import socket
import threading
from pathlib import Path
from typing import Any

from sites import HTML, TEXT, TestSite, html
from webark.crawl.controller import CrawlController
from webark.crawl.job import job_from_mapping
from webark.crawllog.parse import read_crawl_log

HOST = "127.0.0.8"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return int(s.getsockname()[1])


def _job(tmp: Path, seed: str, **more: Any) -> Any:
    return job_from_mapping({
        "seeds": [seed], "job_dir": str(tmp / "job"), "contact": "robots@example.org",
        "allow_private": True, "min_delay": 0, "max_delay": 0, "delay_factor": 0,
        "retry_delay": 0.4, "workers": 2, **more,
    })  # fmt: skip


PAGES = {
    "/robots.txt": (200, TEXT, b"User-agent: *\nDisallow: /private/\n"),
    "/": (200, HTML, html('<a href="/a.html">a</a><a href="/private/no.html">no</a>')),
    "/a.html": (200, HTML, html("a")),
}


def test_refused_robots_txt_retried_then_host_crawled(tmp_path: Path) -> None:
    port = _free_port()
    started: list[TestSite] = []  # the port listens only once the site is made

    def start() -> None:
        started.append(TestSite(PAGES, host=HOST, port=port).start())

    later = threading.Timer(1.0, start)  # connections refused until then
    later.start()
    try:
        job = _job(tmp_path, f"http://{HOST}:{port}/", max_retries=10)
        summary = asyncio.run(CrawlController(job, extract_processes=0).run())
    finally:
        later.join()
        for site in started:
            site.stop()
    assert summary.stop_reason == "finished"
    lines = [ln for ln in read_crawl_log(job.logs_dir / "crawl.log")]
    by_uri = {ln.uri: ln for ln in lines}
    seed = by_uri[f"http://{HOST}:{port}/"]
    assert seed.status == 200 and any(a.endswith("t") for a in seed.annotations)  # retried
    robots = [ln for ln in lines if ln.uri.endswith("/robots.txt")]
    assert [ln.status for ln in robots] == [200]  # failures not logged: not final
    assert by_uri[f"http://{HOST}:{port}/a.html"].status == 200
    assert by_uri[f"http://{HOST}:{port}/private/no.html"].status == -9998  # rules obeyed


def test_robots_txt_failing_for_good_is_logged_once_then_61(tmp_path: Path) -> None:
    port = _free_port()  # nothing ever listens
    job = _job(tmp_path, f"http://{HOST}:{port}/", max_retries=2, retry_delay=0.05)
    summary = asyncio.run(CrawlController(job, extract_processes=0).run())
    assert summary.stop_reason == "finished"
    lines = read_crawl_log(job.logs_dir / "crawl.log")
    robots = [ln for ln in lines if ln.uri.endswith("/robots.txt")]
    assert [(ln.status, ln.hop_path) for ln in robots] == [(-2, "P")]
    (seed,) = [ln for ln in lines if ln.uri == f"http://{HOST}:{port}/"]
    assert seed.status == -61 and "3t" in seed.annotations  # 1 try + 2 retries


def test_sitemap_named_only_in_robots_txt_is_crawled(tmp_path: Path) -> None:
    with TestSite({}, host="127.0.0.9") as site:
        site.pages.update({
            "/robots.txt": (200, TEXT, b"User-agent: *\nDisallow:\n"
                            b"Sitemap: " + site.url("/maps/site.xml").encode() + b"\n"
                            b"Sitemap: http://elsewhere.invalid/sitemap.xml\n"),
            "/": (200, HTML, html("no links")),
            "/maps/site.xml": (200, (("Content-Type", "application/xml"),),
                               b'<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/'
                               b'schemas/sitemap/0.9"><url><loc>'
                               + site.url("/from-map.html").encode() + b"</loc></url></urlset>"),
            "/from-map.html": (200, HTML, html("found through the sitemap")),
        })  # fmt: skip
        job = _job(tmp_path, site.url("/"))
        summary = asyncio.run(CrawlController(job, extract_processes=0).run())
        paths = site.paths()
    assert summary.stop_reason == "finished"
    lines = {ln.uri: ln for ln in read_crawl_log(job.logs_dir / "crawl.log")}
    sitemap = lines[site.url("/maps/site.xml")]
    assert (sitemap.status, sitemap.hop_path) == (200, "PM")
    assert sitemap.via == site.url("/robots.txt")
    assert (lines[site.url("/from-map.html")].status,
            lines[site.url("/from-map.html")].hop_path) == (200, "PMM")  # fmt: skip
    assert paths.count("/maps/site.xml") == 1 and "/from-map.html" in paths
    assert not any("elsewhere.invalid" in u for u in lines)  # out of scope: not queued
