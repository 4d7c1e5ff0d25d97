"""A recrawl against a wget-made dedup index of a chunked site gives revisits
(decision 2 of the crawl-speed issue: keep the WARC 1.1 reading of payload digests, but
find originals whose digests other tools wrote over the chunked bytes).

GNU wget crawls a site served chunked on 127.0.0.1 into a WARC (its WARC-Payload-Digest
is over the chunk-framed body); ``webark dedup build`` makes an index of that WARC;
webark then recrawls the site with that index. Every chunked page becomes an
``identical-payload-digest`` revisit of wget's record, carrying the digest as wget's
record states it (so replay tools that resolve revisits by URL and digest, pywb
included, find the original)."""

from __future__ import annotations

import asyncio
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from sites import Page, TestSite, chunked, html
from system_packages import require
from webark.core.digests import Digest
from webark.crawl.controller import CrawlController
from webark.crawl.job import job_from_mapping
from webark.crawllog.parse import read_crawl_log
from webark.warc.check import check_file
from webark.warc.reader import ArchiveReader

WEBARK = [sys.executable, "-c", "from webark.cli.main import main; main()"]
N = 5


@pytest.fixture(scope="module")
def site() -> Iterator[TestSite]:
    links = "".join(f'<a href="/p{i}.html">page {i}</a>' for i in range(N))
    ch = (("Content-Type", "text/html"), ("Transfer-Encoding", "chunked"))
    pages: dict[str, Page] = {
        "/robots.txt": (200, (("Content-Type", "text/plain"),), b"User-agent: *\nAllow: /\n"),
        "/": (200, ch, chunked(html(links), size=37)),
    }
    for i in range(N):
        pages[f"/p{i}.html"] = (200, ch, chunked(html(f"<p>{'words ' * 50} {i}</p>"), size=64))
    with TestSite(pages) as s:
        yield s


def test_recrawl_finds_wget_originals_by_their_chunked_digest(tmp_path: Path,
                                                              site: TestSite) -> None:  # fmt: skip
    wget = shutil.which("wget")
    require(wget is not None, "GNU wget", "WEBARK_TEST_TOOLS=1 bash scripts/setup.sh")
    assert wget is not None
    subprocess.run([wget, "--recursive", "--level=inf", "--no-parent", "-e", "robots=off",
                    "--no-verbose", f"--warc-file={tmp_path / 'wget'}", "-P",
                    str(tmp_path / "tree"), site.url("/")],
                   check=False, capture_output=True, timeout=120)  # fmt: skip
    wget_warc = tmp_path / "wget.warc.gz"
    stated = {r.target_uri: r.headers.payload_digest for r in ArchiveReader(str(wget_warc))
              if r.type == "response"}  # fmt: skip
    assert len(stated) == N + 1, stated
    # wget digests the chunked bytes: not the WARC 1.1 reading
    wget_rec = next(r for r in ArchiveReader(str(wget_warc)) if r.type == "response"
                    and r.target_uri == site.url("/p0.html"))  # fmt: skip
    readings = dict(wget_rec.payload_digests("sha1"))
    assert readings["transfer-decoded"] != readings["chunked-bytes"]
    index = tmp_path / "wget-index.sqlite"
    built = subprocess.run([*WEBARK, "dedup", "build", str(index), "--from-warc",
                            str(wget_warc)], check=True, capture_output=True, text=True,
                           timeout=120)  # fmt: skip
    # dedup build says which reading wget's digests follow
    assert f"by reading: chunked-bytes {N + 1}" in built.stdout, built.stdout

    job = job_from_mapping({
        "seeds": [site.url("/")], "job_dir": str(tmp_path / "recrawl"),
        "contact": "archive@example.org", "allow_private": True, "min_delay": 0,
        "max_delay": 0, "delay_factor": 0, "dns_records": False, "robots": "ignore",
        "dedup_index": str(index), "conditional_requests": False,
    })  # fmt: skip
    summary = asyncio.run(CrawlController(job, extract_processes=0).run())
    lines = {ln.uri: ln for ln in read_crawl_log(job.logs_dir / "crawl.log")}
    pages = [site.url("/")] + [site.url(f"/p{i}.html") for i in range(N)]
    assert all("duplicate:digest" in lines[u].annotations for u in pages), lines
    for path in summary.warcs:
        assert check_file(path).ok
        for rec in ArchiveReader(path):
            if rec.type == "revisit":
                uri = rec.target_uri
                assert rec.headers.payload_digest == stated[uri]  # wget's, as stated
                assert rec.headers.get("WARC-Refers-To-Target-URI") == uri
            assert rec.type != "response" or rec.target_uri not in pages
    # the crawl.log keeps webark's own (WARC 1.1) digest of what it fetched
    ours = Digest("sha1", readings["transfer-decoded"]).label()
    assert lines[site.url("/p0.html")].digest == ours
