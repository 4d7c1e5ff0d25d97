"""Sphinx search index: the docnames of ``searchindex.js`` become X links."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from webark.crawl.extract import extract_links
from webark.crawl.extract.sphinx import SphinxSearchIndexExtractor, sphinx_docname_links

DOC_DIRS = (Path("/usr/share/doc/python3/html"), Path("/usr/share/doc/python3.11/html"))
U = "http://docs.example.org/3/searchindex.js"


def test_real_python_docs_index() -> None:
    """Debian's python3-doc: every docname (497, orphans included) becomes a page URL
    under the index's folder, and each is a file of the tree, except the changelog,
    which Debian leaves out of the package (a 404 the crawl logs)."""
    root = next((d for d in DOC_DIRS if (d / "searchindex.js").exists()), None)
    if root is None:
        pytest.skip("python3-doc is not installed (scripts/setup.sh with WEBARK_DEMO_SITE=1)")
    data = (root / "searchindex.js").read_bytes()
    links = extract_links(U, "application/javascript", data)
    # only the docnames: the index's strings are search terms, not scanned as script
    assert {(lk.hop, lk.context) for lk in links} == {("X", "js sphinx-docname")}
    sphinx = links
    names = json.loads(data.decode()[len("Search.setIndex(") : -1])["docnames"]
    assert len(sphinx) == len(names) == 497
    prefix = "http://docs.example.org/3/"
    missing = []
    for lk in sphinx:
        assert lk.url.startswith(prefix)
        if not (root / lk.url[len(prefix) :]).is_file():
            missing.append(lk.url[len(prefix) :])
    assert missing == ["whatsnew/changelog.html"]
    urls = {lk.url for lk in sphinx}
    assert prefix + "distutils/uploading.html" in urls
    assert prefix + "includes/wasm-notavail.html" in urls


@pytest.mark.parametrize(
    "text",
    [
        "",
        "var x = 1;",
        "Search.setIndex(",  # cut
        'Search.setIndex({"docnames": ["a", "b"]',  # cut before the closing parenthesis
        'Search.setIndex({"docnames": "a"})',  # not a list
        "Search.setIndex([1, 2])",  # not an object
        'Search.setIndex({"docnames": ["a",]})',  # not JSON
        'Other.setIndex({"docnames": ["a"]})',
    ],
)
def test_not_an_index_gives_nothing(text: str) -> None:
    assert sphinx_docname_links(U, text) == []


def test_odd_docnames_and_layout() -> None:
    text = '\ufeff  Search.setIndex({"docnames": ["index", "", 7, "/abs", "a b", "x/../y"]});\n'
    assert [lk.url for lk in sphinx_docname_links(U, text)] == [
        "http://docs.example.org/3/index.html",
        "http://docs.example.org/3/a%20b.html",
        "http://docs.example.org/3/y.html",
    ]


@pytest.mark.parametrize(
    ("url", "mime", "handled"),
    [
        (U, "application/javascript", True),
        (U + "?v=3", "text/javascript", True),
        (U, "", True),
        (U, "text/html", False),
        ("http://docs.example.org/3/mysearchindex.js", "application/javascript", False),
        ("http://docs.example.org/3/searchindex.json", "application/json", False),
    ],
)
def test_handles(url: str, mime: str, handled: bool) -> None:
    assert SphinxSearchIndexExtractor().handles(mime, url) is handled


def test_a_searchindex_js_that_is_not_sphinx_is_scanned_as_script() -> None:
    code = b'var idx = "/data/terms.json"; fetch("img/logo.png");'
    links = extract_links(U, "application/javascript", code)
    assert [(lk.url, lk.context) for lk in links] == [
        ("http://docs.example.org/data/terms.json", "js string"),
        ("http://docs.example.org/3/img/logo.png", "js string"),
    ]
    # and an ordinary script is not read as an index
    assert extract_links("http://docs.example.org/3/app.js", "application/javascript",
                         b'Search.setIndex({"docnames": ["a"]})') == []
