"""Crawl a real site: the Python documentation of Debian's ``python3-doc`` (530 HTML
pages, 67 MB), served from ``/usr/share/doc/python3/html`` by a static file server this
test starts on 127.0.0.1.

The crawl (:mod:`python_docs_site`) runs once per test session; the search tests
index the same WARCs. Every HTML page of the tree must be reached (status 200 in
crawl.log, a response record in the WARCs): 526 through links, the 4 orphans of
:data:`ORPHANS` through the Sphinx search index (``webark.crawl.extract.sphinx``); and
every 404 the server answered (robots.txt, links found in JavaScript, the changelog
Debian leaves out) must be logged with 404. The package is installed by
``scripts/setup.sh`` when ``WEBARK_DEMO_SITE=1`` (as ``.ci/run`` does); without it the
test is skipped, except under ``CI=true`` where a missing site is a failure (a skipped
test cannot fail).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from webark.crawllog.parse import read_crawl_log
from webark.warc.check import check_file
from webark.warc.reader import ArchiveReader

PAGES = 530
ORPHANS = {
    "distutils/_setuptools_disclaimer.html",
    "distutils/packageindex.html",
    "distutils/uploading.html",
    "includes/wasm-notavail.html",
}
"""Pages no other file links to: Sphinx lists them only as ``docnames`` (without
``.html``) in ``searchindex.js``, for its client-side search to build links from. A
crawler following links alone does not reach them (wget does not); webark reads the
search index. The test proves they are orphans rather than assuming it."""


@pytest.fixture(scope="module")
def docs_crawl(python_docs_crawl: dict[str, Any]) -> dict[str, Any]:
    """The session's crawl of the docs (:mod:`python_docs_site`, shared with the search
    tests)."""
    return python_docs_crawl


def test_all_pages_reached(docs_crawl: dict[str, Any]) -> None:
    root: Path = docs_crawl["root"]
    origin = docs_crawl["origin"]
    pages = sorted(p.relative_to(root).as_posix() for p in root.rglob("*.html"))
    assert len(pages) == PAGES
    lines = read_crawl_log(docs_crawl["job"].logs_dir / "crawl.log")
    ok = {ln.uri for ln in lines if ln.status == 200}
    want = {f"{origin}/{quote(p)}" for p in pages}
    # the index page is reached as the seed "/" (and maybe as /index.html too)
    want.discard(f"{origin}/index.html")
    assert origin + "/" in ok
    assert sorted(want - ok) == []
    assert len(ok & want) == PAGES - 1
    # the orphans came from the search index, as speculative (X) links of it
    by_uri = {ln.uri: ln for ln in lines}
    for page in ORPHANS:
        line = by_uri[f"{origin}/{page}"]
        assert line.hop_path.endswith("X"), line
        assert line.via == f"{origin}/searchindex.js", line
    assert docs_crawl["summary"].stop_reason == "finished"
    uris = [ln.uri for ln in lines]
    assert len(uris) == len(set(uris))


def test_orphans_are_unlinked(docs_crawl: dict[str, Any]) -> None:
    """No HTML, CSS or JS file of the tree names an orphan with its ``.html`` suffix
    (other than the orphan itself)."""
    root: Path = docs_crawl["root"]
    names = {Path(p).name.encode(): p for p in ORPHANS}
    for f in root.rglob("*"):
        if f.suffix not in (".html", ".js", ".css") or not f.is_file():
            continue
        data = f.read_bytes()
        for name, rel in names.items():
            if name in data:
                assert f.relative_to(root).as_posix() == rel, (f, rel)


def test_404s_logged(docs_crawl: dict[str, Any]) -> None:
    origin = docs_crawl["origin"]
    lines = {ln.uri: ln for ln in read_crawl_log(docs_crawl["job"].logs_dir / "crawl.log")}
    not_found = {path for path, code in docs_crawl["hits"] if code == 404}
    assert "/robots.txt" in not_found
    for path in not_found:
        assert lines[origin + path].status == 404, path
    # and the server answered every fetched URI exactly once
    paths = [path for path, _ in docs_crawl["hits"]]
    assert len(paths) == len(set(paths))
    http = [u for u in lines if u.startswith("http")]
    assert len(http) == len(paths)


def test_warcs(docs_crawl: dict[str, Any]) -> None:
    summary = docs_crawl["summary"]
    captured: set[str] = set()
    for path in summary.warcs:
        report = check_file(path)
        assert report.ok, (path, report.errors[:3])
        for rec in ArchiveReader(path):
            if rec.type in ("response", "revisit"):
                captured.add(rec.headers.target_uri or "")
    origin = docs_crawl["origin"]
    assert {origin + "/", origin + "/library/asyncio.html", origin + "/robots.txt"} <= captured
    assert len(captured) >= PAGES
