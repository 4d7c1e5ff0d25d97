"""Dedup across jobs: a recrawl of a site with the first crawl's dedup index writes
``identical-payload-digest`` revisits (``duplicate:digest`` in crawl.log) that point at
the first crawl's records; a crawl of a second host serving the same files writes
URL-agnostic revisits whose ``WARC-Refers-To-Target-URI`` is the first host's URL.

Sites: ``www.recrawl-a.test`` (127.0.0.8) and its mirror ``mirror-b.test`` (127.0.0.9),
served by this test, with no ``ETag`` / ``Last-Modified`` (so the recrawl cannot use
conditional requests: see test_conditional.py for those).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sites import TestSite, static_site
from webark.core.digests import same_digest
from webark.crawl.controller import CrawlController, CrawlSummary
from webark.crawl.job import CrawlJob, job_from_mapping
from webark.crawllog.parse import read_crawl_log
from webark.warc.check import check_file
from webark.warc.reader import ArchiveReader

A, B = "www.recrawl-a.test", "mirror-b.test"
IPS = {A: "127.0.0.8", B: "127.0.0.9"}
REVISIT_PROFILE = "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest"


def job(tmp: Path, name: str, seed: str, **over: Any) -> CrawlJob:
    cfg: dict[str, Any] = {
        "seeds": [seed],
        "job_dir": str(tmp / name),
        "contact": "archive@example.org",
        "allow_private": True,
        "resolve": IPS,
        "min_delay": 0,
        "max_delay": 0,
        "max_http_retries": 0,
        "backoff_base": 0.05,
    }
    cfg.update(over)
    return job_from_mapping(cfg)


def run(j: CrawlJob) -> CrawlSummary:
    return asyncio.run(CrawlController(j).run())


def records(summary: CrawlSummary) -> list[Any]:
    out = []
    for path in summary.warcs:
        assert check_file(path).ok, path
        out.extend(
            (os.path.basename(path), rec)
            for rec in ArchiveReader(path)
            if rec.type in ("response", "revisit")
        )
    return out


@pytest.fixture(scope="module")
def crawls(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    tmp = tmp_path_factory.mktemp("recrawl")
    pages = static_site(n_pages=12, crawl_delay=None)
    pages.pop("/error.html")  # a 500 is not deduplicated and only slows the crawl
    a = TestSite(pages, host=IPS[A]).start()
    b = TestSite(pages, host=IPS[B]).start()
    seed_a, seed_b = f"http://{A}:{a.port}/", f"http://{B}:{b.port}/"
    first = job(tmp, "first", seed_a, dedup=True)
    s1 = run(first)
    index = str(first.state_dir / "dedup.sqlite")
    second = job(tmp, "second", seed_a, dedup_index=index)
    s2 = run(second)
    mirror = job(tmp, "mirror", seed_b, dedup_index=index)
    s3 = run(mirror)
    yield {
        "jobs": (first, second, mirror),
        "summaries": (s1, s2, s3),
        "origins": (seed_a.rstrip("/"), seed_b.rstrip("/")),
    }
    a.stop()
    b.stop()


def originals(summary: CrawlSummary) -> dict[str, Any]:
    """WARC-Record-ID → (target URI, date, payload digest) of the responses."""
    return {
        rec.headers.record_id: (
            rec.headers.target_uri,
            rec.headers.get("WARC-Date"),
            rec.headers.payload_digest,
        )
        for _, rec in records(summary)
        if rec.type == "response"
    }


def test_recrawl_writes_revisits_of_the_first_crawl(crawls: dict[str, Any]) -> None:
    first, second, _ = crawls["jobs"]
    s1, s2, _ = crawls["summaries"]
    by_id = originals(s1)
    stored_first = {t for t, _, _ in by_id.values()}
    first_ok = {
        ln.uri: ln for ln in read_crawl_log(first.logs_dir / "crawl.log") if ln.status == 200
    }
    lines = {ln.uri: ln for ln in read_crawl_log(second.logs_dir / "crawl.log")}
    revisits = {rec.headers.target_uri: rec for _, rec in records(s2) if rec.type == "revisit"}
    # every 200 of the first crawl is a revisit now (same bytes), and nothing else is
    assert set(revisits) == {u for u in first_ok if not u.startswith("dns:")}
    for uri, rec in revisits.items():
        h = rec.headers
        assert h.get("WARC-Profile") == REVISIT_PROFILE
        assert h.get("WARC-Truncated") == "length"
        target, date, digest = by_id[h.get("WARC-Refers-To")]
        assert target == h.get("WARC-Refers-To-Target-URI")
        if uri in stored_first:  # the same-URL original is preferred ...
            assert target == uri
        else:  # ... a URL the first crawl stored as a revisit itself refers further
            assert target in stored_first
        assert h.get("WARC-Refers-To-Date") == date
        assert same_digest(h.payload_digest, digest)
        assert same_digest(lines[uri].digest, first_ok[uri].digest)
        assert "duplicate:digest" in lines[uri].annotations
        # the block keeps this capture's status line and headers (reversible dedup)
        block = rec.block.read_all()
        assert block.startswith(b"HTTP/1.") and block.endswith(b"\r\n\r\n")
    # the recrawl stored no response for them, only for the non-200s
    responses = [rec.headers.target_uri for _, rec in records(s2) if rec.type == "response"]
    assert all(lines[u].status != 200 for u in responses)
    dup_lines = [ln for ln in lines.values() if "duplicate:digest" in ln.annotations]
    assert len(dup_lines) == len(revisits)


def test_mirror_gets_url_agnostic_revisits(crawls: dict[str, Any]) -> None:
    _, _, mirror = crawls["jobs"]
    s1, _, s3 = crawls["summaries"]
    origin_a, origin_b = crawls["origins"]
    by_id = originals(s1)
    lines = {ln.uri: ln for ln in read_crawl_log(mirror.logs_dir / "crawl.log")}
    revisits = [rec for _, rec in records(s3) if rec.type == "revisit"]
    ok_b = {u for u, ln in lines.items() if ln.status == 200 and u.startswith("http")}
    assert {r.headers.target_uri for r in revisits} == ok_b
    assert len(ok_b) >= 15
    for rec in revisits:
        h = rec.headers
        uri = h.target_uri
        assert uri.startswith(origin_b)
        referred = h.get("WARC-Refers-To-Target-URI")
        same_path = origin_a + uri.removeprefix(origin_b)
        stored = {t for t, _, _ in by_id.values()}
        # the other host's URL: the same path, unless A stored that one as a revisit
        assert referred == same_path if same_path in stored else referred in stored
        assert referred.startswith(origin_a)
        target, date, digest = by_id[h.get("WARC-Refers-To")]
        assert (target, date) == (referred, h.get("WARC-Refers-To-Date"))
        assert same_digest(h.payload_digest, digest)
        assert "duplicate:digest" in lines[uri].annotations


def test_dedup_report_counts_kinds(crawls: dict[str, Any]) -> None:
    _, second, mirror = crawls["jobs"]
    _, s2, s3 = crawls["summaries"]
    assert s2.snapshot.duplicates == len([r for _, r in records(s2) if r.type == "revisit"])
    assert s3.snapshot.duplicates == len([r for _, r in records(s3) if r.type == "revisit"])
    hits2, hits3 = dict(s2.snapshot.dedup_hits), dict(s3.snapshot.dedup_hits)
    assert hits2["exact-url"] + hits2.get("digest-only", 0) == s2.snapshot.duplicates
    assert hits2["exact-url"] > hits2.get("digest-only", 0)
    assert hits3.get("digest-only") == s3.snapshot.duplicates
    assert (second.reports_dir / "crawl-report.txt").exists()
    assert (mirror.reports_dir / "crawl-report.txt").exists()
