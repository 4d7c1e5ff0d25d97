"""Conditional requests on recrawls (Heritrix ``FetchHTTP`` with fetch history;
RFC 9110 §13.1): the second crawl of a site, using the first crawl's dedup index, sends
``If-None-Match`` / ``If-Modified-Since`` from each URL's last capture; a ``304 Not
Modified`` becomes a ``server-not-modified`` revisit record referring to that capture,
logged ``304`` with ``duplicate:server-not-modified``.

The site (127.0.0.10, served by this test) behaves like a typical server: HTML pages are
generated (no validators, always 200); static files carry an ``ETag`` and/or a
``Last-Modified`` and honour conditional requests (``If-None-Match`` wins over
``If-Modified-Since``, RFC 9110 §13.2.2). One file changes between the crawls.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import subprocess
import sys
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime
from email.utils import format_datetime, parsedate_to_datetime
from pathlib import Path
from typing import Any

import pytest

from sites import CSS, HTML, PNG, PNG_BYTES, Hit, Page, TestSite, html
from webark.core.digests import same_digest
from webark.crawl.controller import CrawlController, CrawlSummary
from webark.crawl.job import CrawlJob, job_from_mapping
from webark.crawllog.parse import read_crawl_log
from webark.dedup.sqlite_dedup import open_index
from webark.warc.check import check_file
from webark.warc.reader import ArchiveReader

NOT_MODIFIED = "http://netpreserve.org/warc/1.1/revisit/server-not-modified"
LAST_MODIFIED = datetime(2025, 6, 1, 12, 0, 0, tzinfo=UTC)


def etag(body: bytes) -> str:
    return '"' + hashlib.sha1(body).hexdigest()[:16] + '"'


class StaticFiles:
    """The site's handler. ``files``: path → (headers, body, validators) where
    validators is a subset of ``{"etag", "last-modified"}``. HTML pages come from
    ``pages`` without validators."""

    def __init__(self) -> None:
        self.files: dict[str, tuple[tuple[tuple[str, str], ...], bytes, set[str]]] = {
            "/style.css": (
                CSS, b"body { background: url(/img/bg.png) }", {"etag", "last-modified"}
            ),
            "/img/bg.png": (PNG, PNG_BYTES, {"etag"}),
            "/img/logo.png": (PNG, PNG_BYTES[::-1], {"last-modified"}),
            "/files/report.pdf": (
                (("Content-Type", "application/pdf"),), b"%PDF-1.4 version 1", {"etag"}
            ),
        }
        links = "".join(f'<a href="/p/{i}.html">p</a>' for i in range(1, 4))
        head = '<link rel="stylesheet" href="/style.css"><img src="/img/logo.png">'
        self.pages: dict[str, bytes] = {
            "/": html(head + links + '<a href="/files/report.pdf">report</a>'),
            **{f"/p/{i}.html": html(head + f"page {i}") for i in range(1, 4)},
        }

    def change(self, path: str, body: bytes) -> None:
        headers, _, validators = self.files[path]
        self.files[path] = (headers, body, validators)

    def __call__(self, path: str, req: Mapping[str, str]) -> Page | None:
        if path in self.pages:
            return (200, HTML, self.pages[path])
        if path not in self.files:
            return None
        headers, body, validators = self.files[path]
        out = list(headers)
        tag = etag(body)
        if "etag" in validators:
            out.append(("ETag", tag))
        if "last-modified" in validators:
            out.append(("Last-Modified", format_datetime(LAST_MODIFIED, usegmt=True)))
        inm, ims = req.get("if-none-match"), req.get("if-modified-since")
        if "etag" in validators and inm is not None:  # If-None-Match decides alone
            fresh = tag in [t.strip() for t in inm.split(",")]
        elif "last-modified" in validators and ims is not None:
            fresh = parsedate_to_datetime(ims) >= LAST_MODIFIED
        else:
            fresh = False
        if fresh:
            return (304, tuple(out[len(headers) :]), b"")
        return (200, tuple(out), body)


def make_job(tmp: Path, name: str, seed: str, **over: Any) -> CrawlJob:
    cfg: dict[str, Any] = {
        "seeds": [seed],
        "job_dir": str(tmp / name),
        "contact": "archive@example.org",
        "allow_private": True,
        "min_delay": 0,
        "max_delay": 0,
    }
    cfg.update(over)
    return job_from_mapping(cfg)


def run(job: CrawlJob) -> CrawlSummary:
    return asyncio.run(CrawlController(job).run())


def hits_between(site: TestSite, a: int, b: int) -> dict[str, Hit]:
    return {h.path: h for h in site.snapshot()[a:b]}


@pytest.fixture(scope="module")
def crawls(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    tmp = tmp_path_factory.mktemp("conditional")
    files = StaticFiles()
    site = TestSite({}, host="127.0.0.10", handler=files).start()
    seed = site.url("/")
    marks = [0]
    first = make_job(tmp, "first", seed, dedup=True)
    s1 = run(first)
    marks.append(len(site.snapshot()))
    files.change("/files/report.pdf", b"%PDF-1.4 version 2")
    index = str(first.state_dir / "dedup.sqlite")
    second = make_job(tmp, "second", seed, dedup_index=index)
    s2 = run(second)
    marks.append(len(site.snapshot()))
    third = make_job(tmp, "third", seed, dedup_index=index)
    s3 = run(third)
    marks.append(len(site.snapshot()))
    plain = make_job(tmp, "plain", seed, dedup_index=index, conditional_requests=False)
    s4 = run(plain)
    marks.append(len(site.snapshot()))
    hits = [hits_between(site, marks[i], marks[i + 1]) for i in range(4)]
    yield {
        "site": site,
        "jobs": (first, second, third, plain),
        "summaries": (s1, s2, s3, s4),
        "hits": hits,
        "index": index,
    }
    site.stop()


def records(summary: CrawlSummary, kind: str) -> dict[str, Any]:
    out = {}
    for path in summary.warcs:
        assert check_file(path).ok, path
        for rec in ArchiveReader(path):
            if rec.type == kind:
                out[rec.headers.target_uri] = (rec, rec.block.read_all())
    return out


def test_first_crawl_sends_no_conditions(crawls: dict[str, Any]) -> None:
    for h in crawls["hits"][0].values():
        assert "if-none-match" not in h.headers and "if-modified-since" not in h.headers


def test_recrawl_sends_validators_of_the_last_capture(crawls: dict[str, Any]) -> None:
    site, hits = crawls["site"], crawls["hits"][1]
    files: StaticFiles = site.handler  # type: ignore[assignment]
    css = hits["/style.css"].headers
    assert css["if-none-match"] == etag(files.files["/style.css"][1])
    assert css["if-modified-since"] == "Sun, 01 Jun 2025 12:00:00 GMT"
    # bg.png is linked from style.css only: found in the last capture of the 304'd CSS
    assert "if-modified-since" not in hits["/img/bg.png"].headers  # no Last-Modified seen
    assert "if-none-match" not in hits["/img/logo.png"].headers  # no ETag seen
    assert hits["/files/report.pdf"].headers["if-none-match"] == etag(b"%PDF-1.4 version 1")
    for path in ("/", "/p/1.html", "/robots.txt"):  # nothing to validate: unconditional
        assert "if-none-match" not in hits[path].headers, path
        assert "if-modified-since" not in hits[path].headers, path
    assert {p for p, h in hits.items() if h.status == 304} == {
        "/style.css", "/img/bg.png", "/img/logo.png"
    }
    assert hits["/files/report.pdf"].status == 200  # changed: a new capture


def test_304_written_as_server_not_modified_revisit(crawls: dict[str, Any]) -> None:
    s1, s2 = crawls["summaries"][:2]
    first = records(s1, "response")
    revisits = records(s2, "revisit")
    lines = {ln.uri: ln for ln in read_crawl_log(crawls["jobs"][1].logs_dir / "crawl.log")}
    site = crawls["site"]
    nm = {u: r for u, r in revisits.items() if r[0].headers.get("WARC-Profile") == NOT_MODIFIED}
    assert set(nm) == {site.url(p) for p in ("/style.css", "/img/bg.png", "/img/logo.png")}
    for uri, (rec, block) in nm.items():
        h = rec.headers
        orig, _ = first[uri]
        assert h.get("WARC-Refers-To") == orig.headers.record_id
        assert h.get("WARC-Refers-To-Target-URI") == uri
        assert h.get("WARC-Refers-To-Date") == orig.headers.get("WARC-Date")
        assert same_digest(h.payload_digest, orig.headers.payload_digest)
        assert block.startswith(b"HTTP/1.0 304") or block.startswith(b"HTTP/1.1 304")
        line = lines[uri]
        assert line.status == 304 and "duplicate:server-not-modified" in line.annotations
        assert "duplicate:digest" not in line.annotations
    # the unchanged HTML (no validators) is a digest revisit; the changed file is stored
    html_rev = revisits[site.url("/p/1.html")][0]
    assert "identical-payload-digest" in html_rev.headers.get("WARC-Profile")
    assert "duplicate:digest" in lines[site.url("/p/1.html")].annotations
    stored = records(s2, "response")
    assert site.url("/files/report.pdf") in stored
    assert lines[site.url("/files/report.pdf")].status == 200
    assert not [a for a in lines[site.url("/files/report.pdf")].annotations if "duplicate" in a]
    assert s2.snapshot.not_modified == 3


def test_index_keeps_the_newest_validators(crawls: dict[str, Any]) -> None:
    site = crawls["site"]
    third = crawls["hits"][2]
    # the changed file's new ETag (from the second crawl) is sent by the third
    assert third["/files/report.pdf"].headers["if-none-match"] == etag(b"%PDF-1.4 version 2")
    assert third["/files/report.pdf"].status == 304
    # after a 304, the validators of the first capture still apply
    assert third["/style.css"].status == 304
    with open_index(crawls["index"], readonly=True) as idx:
        last = idx.last_capture(site.url("/files/report.pdf"))
        assert last is not None and last.etag == etag(b"%PDF-1.4 version 2")
    s3 = crawls["summaries"][2]
    revisits = records(s3, "revisit")
    pdf, _ = revisits[site.url("/files/report.pdf")]
    assert pdf.headers.get("WARC-Profile") == NOT_MODIFIED
    second_pdf, _ = records(crawls["summaries"][1], "response")[site.url("/files/report.pdf")]
    assert pdf.headers.get("WARC-Refers-To") == second_pdf.headers.record_id


def test_conditional_requests_off(crawls: dict[str, Any]) -> None:
    for path, h in crawls["hits"][3].items():
        assert "if-none-match" not in h.headers and "if-modified-since" not in h.headers
        assert h.status == (404 if path == "/robots.txt" else 200)


def test_warcs_pass_warcio_check(crawls: dict[str, Any]) -> None:
    files = [p for s in crawls["summaries"] for p in s.warcs]
    warcio = Path(sys.executable).parent / "warcio"
    r = subprocess.run([str(warcio), "check", *files], capture_output=True)
    assert r.returncode == 0, (r.stdout + r.stderr).decode()[-2000:]
    assert all(os.path.getsize(f) > 0 for f in files)


def test_304_of_a_url_only_stored_as_a_digest_revisit(tmp_path: Path) -> None:
    """``/img/copy.png`` has the bytes of ``/img/bg.png``: the first crawl stores one of
    them as a digest revisit of the other. Its 304 in the recrawl must refer to the
    record that holds the payload (the other's response, with WARC-Refers-To), not to
    its own last capture, which is a revisit (found by a fresh-user trial: `warc check`
    warned "revisit without WARC-Refers-To")."""
    files = StaticFiles()
    files.files["/img/copy.png"] = (PNG, PNG_BYTES, {"etag"})
    files.pages["/"] = files.pages["/"].replace(b"</body>", b'<img src="/img/copy.png"></body>')
    site = TestSite({}, host="127.0.0.10", handler=files).start()
    try:
        first = make_job(tmp_path, "first", site.url("/"), dedup=True)
        s1 = run(first)
        index = str(first.state_dir / "dedup.sqlite")
        s2 = run(make_job(tmp_path, "second", site.url("/"), dedup_index=index))
    finally:
        site.stop()
    # whichever of the two was fetched first holds the payload; the other is a revisit
    pair = {site.url("/img/bg.png"), site.url("/img/copy.png")}
    (held,) = pair & set(records(s1, "response"))
    (dup,) = pair & set(records(s1, "revisit"))
    orig, _ = records(s1, "response")[held]
    rev, _ = records(s2, "revisit")[dup]
    assert rev.headers.get("WARC-Profile") == NOT_MODIFIED
    assert rev.headers.get("WARC-Refers-To") == orig.headers.record_id
    assert rev.headers.get("WARC-Refers-To-Target-URI") == held
    for path in s2.warcs:
        report = check_file(path)
        assert report.ok and report.warning_count == 0, (path, report.warnings[:3])
