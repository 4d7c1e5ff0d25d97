"""Job-file settings that the crawl used to ignore, each checked in a real crawl of a site
served on 127.0.0.1 (capture back-end issue, defects 1-4):

1. ``reject_content_types`` / ``reject_status`` (after-fetch decide rules): a rejected
   response is not archived, its links are not followed, its crawl.log line is -5000.
2. ``dedup_policy``: which captures are deduplicated (here: never HTML), validated with
   every mistake reported.
3. ``hybrid_compression``: images in uncompressed ``.warc`` files.
4. ``max_uris_per_host`` / ``max_bytes_per_host``: Heritrix's quota enforcer, each
   blocked URI logged -5003 with a ``Q:`` annotation, exactly once.
"""

from __future__ import annotations

import asyncio
import os
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sites import Page, TestSite, html
from webark.crawl.controller import CrawlController, CrawlSummary
from webark.crawl.job import CrawlJob, JobConfigError, job_from_mapping
from webark.crawllog.parse import read_crawl_log
from webark.warc.check import check_file
from webark.warc.reader import ArchiveReader

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 8


def _pages() -> dict[str, Page]:
    h = (("Content-Type", "text/html"),)
    links = "".join(f'<a href="/p{i}.html">p{i}</a>' for i in range(8))
    return {
        "/robots.txt": (200, (("Content-Type", "text/plain"),), b"User-agent: *\nAllow: /\n"),
        "/": (200, h, html(links + '<a href="/movie.mp4">m</a><a href="/gone.html">g</a>'
                           '<img src="/logo.png"><img src="/logo-copy.png">')),
        **{f"/p{i}.html": (200, h, html(f"<p>page {i}</p>")) for i in range(8)},
        "/movie.mp4": (200, (("Content-Type", "video/mp4"),), b"\x00\x00\x00\x18ftypmp42" * 50),
        "/logo.png": (200, (("Content-Type", "image/png"),), PNG),
        "/logo-copy.png": (200, (("Content-Type", "image/png"),), PNG),
    }


GONE: Page = (404, (("Content-Type", "text/html"),), html('<a href="/only-from-404.html">x</a>'))


@pytest.fixture(scope="module")
def site() -> Iterator[TestSite]:
    pages = _pages()
    pages["/gone.html"] = GONE
    pages["/only-from-404.html"] = (200, (("Content-Type", "text/html"),), html("<p>hidden</p>"))
    with TestSite(pages) as s:
        yield s


def job(tmp: Path, site: TestSite, name: str, **over: Any) -> CrawlJob:
    cfg: dict[str, Any] = {
        "seeds": [site.url("/")], "job_dir": str(tmp / name), "contact": "archive@example.org",
        "allow_private": True, "min_delay": 0, "max_delay": 0, "delay_factor": 0,
        "dns_records": False, **over,
    }  # fmt: skip
    return job_from_mapping(cfg)


def run(j: CrawlJob) -> CrawlSummary:
    return asyncio.run(CrawlController(j, extract_processes=0).run())


def records(j: CrawlJob) -> list[tuple[str, str, str]]:
    """(file name, record type, target URI) of every response/revisit."""
    out = []
    for name in sorted(os.listdir(j.warcs_dir)):
        assert check_file(j.warcs_dir / name).ok, name
        for rec in ArchiveReader(str(j.warcs_dir / name)):
            if rec.type in ("response", "revisit"):
                out.append((name, rec.type, rec.target_uri or ""))
    return out


def test_after_fetch_rules_reject_unarchived_and_unfollowed(tmp_path: Path,
                                                            site: TestSite) -> None:  # fmt: skip
    j = job(tmp_path, site, "reject", scope={"reject_content_types": ["video/.*"],
                                             "reject_status": [404]})  # fmt: skip
    run(j)
    lines = {ln.uri: ln for ln in read_crawl_log(j.logs_dir / "crawl.log")}
    movie, gone = lines[site.url("/movie.mp4")], lines[site.url("/gone.html")]
    assert movie.status == -5000 and movie.extra == {"httpStatus": 200,
                                                     "rejectedBy": "reject_content_types"}
    assert movie.mime_type == "video/mp4"
    assert gone.status == -5000 and gone.extra["rejectedBy"] == "reject_status"
    archived = {uri for _, _, uri in records(j)}
    assert site.url("/movie.mp4") not in archived and site.url("/gone.html") not in archived
    assert site.url("/") in archived and site.url("/p3.html") in archived
    assert site.url("/only-from-404.html") not in lines  # the 404's links were not followed
    # the same crawl without the rules archives both
    plain = job(tmp_path, site, "plain")
    run(plain)
    archived = {uri for _, _, uri in records(plain)}
    assert {site.url("/movie.mp4"), site.url("/gone.html"),
            site.url("/only-from-404.html")} <= archived  # fmt: skip


def test_dedup_policy_from_the_job_file(tmp_path: Path, site: TestSite) -> None:
    first = job(tmp_path, site, "first", dedup=True)
    run(first)
    second = job(tmp_path, site, "second", dedup_index=str(first.dedup_path),
                 conditional_requests=False, dedup_policy={"skip_mime_types": ["text/html"]})
    run(second)
    kinds = Counter((uri.rsplit(".", 1)[-1] if "." in uri[-5:] else "html", t)
                    for _, t, uri in records(second))  # fmt: skip
    # HTML is never deduplicated; images and the robots.txt are revisits
    assert kinds[("html", "revisit")] == 0 and kinds[("html", "response")] == 11
    assert kinds[("png", "revisit")] == 2 and kinds[("png", "response")] == 0
    # within one crawl: logo-copy.png repeats logo.png (digest-only)
    lines = read_crawl_log(first.logs_dir / "crawl.log")
    assert [ln.uri for ln in lines if "duplicate:digest" in ln.annotations] == [
        site.url("/logo-copy.png")]


def test_dedup_policy_mistakes_all_reported(tmp_path: Path, site: TestSite) -> None:
    with pytest.raises(JobConfigError) as e:
        job(tmp_path, site, "bad", dedup_policy={"statuses": [200, 99], "min_size": -1,
                                                 "skip_mime": ["a/b"]})  # fmt: skip
    text = str(e.value)
    assert "dedup_policy.statuses[1]" in text and "dedup_policy.min_size" in text
    assert "dedup_policy.skip_mime: unknown key" in text
    assert len(e.value.problems) == 3


def test_hybrid_compression_from_the_job_file(tmp_path: Path, site: TestSite) -> None:
    j = job(tmp_path, site, "hybrid", hybrid_compression=True)
    run(j)
    by_file = {uri: name for name, _, uri in records(j)}
    assert by_file[site.url("/logo.png")].endswith(".warc")
    assert by_file[site.url("/movie.mp4")].endswith(".warc")
    assert by_file[site.url("/p1.html")].endswith(".warc.gz")


def test_per_host_quota_blocks_and_logs_each_uri_once(tmp_path: Path, site: TestSite) -> None:
    j = job(tmp_path, site, "quota", max_uris_per_host=4)
    mark = len(site.snapshot())
    run(j)
    lines = read_crawl_log(j.logs_dir / "crawl.log")
    uris = [ln.uri for ln in lines]
    assert len(uris) == len(set(uris))  # one line per URI
    ok = [ln for ln in lines if ln.status > 0 and not ln.uri.endswith("/robots.txt")]
    blocked = [ln for ln in lines if ln.status == -5003]
    assert len(ok) == 4  # /, and three more (robots.txt, a prerequisite, is not counted)
    assert blocked and all("Q:hostQuota" in ln.annotations for ln in blocked)
    # every link of the seed page got a line: fetched, or blocked by the quota
    assert {site.url(f"/p{i}.html") for i in range(8)} <= set(uris)
    assert len(records(j)) == 5  # with robots.txt
    fetched = {site.url(h.path) for h in site.snapshot()[mark:]}
    assert not fetched & {ln.uri for ln in blocked}  # blocked URIs were never requested


def test_quota_and_resolve_mistakes(tmp_path: Path, site: TestSite) -> None:
    with pytest.raises(JobConfigError) as e:
        job(tmp_path, site, "q", max_uris_per_host=0, resolve={"a.test": "127.0.0.300"},
            warc_compression="bzip2")  # fmt: skip
    keys = [k for k, _ in e.value.problems]
    assert keys == ["warc_compression", "resolve.a.test", "max_uris_per_host"] or set(keys) == {
        "warc_compression", "resolve.a.test", "max_uris_per_host"}
    assert "'127.0.0.300' is not an IPv4 or IPv6 address" in str(e.value)
