"""webark.index.fuzzy: which capture answers a URL the archive does not hold exactly.

The index is a real SQLite store whose keys are made by the indexer's own key function
(``cdx_key``, and ``method_url`` for POSTs), so that what is compared is what replay
compares."""

from __future__ import annotations

from pathlib import Path

import pytest

from webark.cdx.line import CdxLine
from webark.cdx.post import method_url
from webark.index import fuzzy
from webark.index.fuzzy import FuzzyMatch, acceptable, extension_family, fuzzy_matches, mime_family
from webark.index.sqlite_store import SqliteStore
from webark.url import cdx_key

S = "http://www.site.test/"


def _line(url: str, ts: str, mime: str = "text/html", status: str = "200",
          key_url: str | None = None) -> CdxLine:  # fmt: skip
    return CdxLine(cdx_key(key_url or url), ts, url, mime, status, filename="f.warc.gz",
                   offset=abs(hash((url, ts, key_url))) % 10**9)  # fmt: skip


@pytest.fixture
def store(tmp_path: Path) -> SqliteStore:
    lines = [
        _line(S + "api?q=1&_=1507495059747", "20200801000000", "application/json"),
        _line(S + "data.json", "20200801000000", "application/json"),
        _line(S + "page.html", "20200101000000"),
        _line(S + "page.html?id=1", "20200101000000"),
        _line(S + "css/style.css?v=1", "20200101000000", "text/css"),
        _line(S + "css/style.css", "20210601000000", "text/css"),
        _line(S + "w/load.php?lang=en&modules=site&only=styles&version=T1", "20200101000000",
              "text/css"),
        _line(S + "w/load.php?lang=en&modules=other&only=styles&version=T2", "20200101000000",
              "text/css"),
        _line(S + "search.html", "20200101000000"),
        _line(S + "list.php", "20200101000000"),
        _line(S + "docs/index.html", "20200101000000"),
        _line(S + "guide/", "20200101000000"),
        _line(S + "gone.png?v=1", "20200101000000", "image/png", "404"),
        _line(S + "api/search", "20200101000000", "application/json"),
        _line(S + "api/search", "20200101000001", "application/json",
              key_url=method_url(S + "api/search", "POST", "application/json",
                                 b'{"q": "warc", "ts": 1600000000000}')),
    ]  # fmt: skip
    st = SqliteStore(tmp_path / "i.sqlite3")
    st.add_file("f.warc.gz", lines)
    return st


def _found(store: SqliteStore, url: str, ts: str | None = "2020"
           ) -> list[tuple[str, tuple[str, ...]]]:  # fmt: skip
    return [(m.line.url, m.rules) for m in fuzzy_matches(store, url, ts)]


def test_cache_busters(store: SqliteStore) -> None:
    assert _found(store, S + "api?q=1&_=1600000000000") == [
        (S + "api?q=1&_=1507495059747", ("cache-buster",))]
    assert _found(store, S + "data.json?_=1600000000123") == [(S + "data.json", ("cache-buster",))]
    assert _found(store, S + "data.json?rnd=0.8147236863931789") == [
        (S + "data.json", ("cache-buster",))]
    assert _found(store, S + "api?q=2&_=1600000000000") == []  # q is no cache-buster


def test_tracking_parameters(store: SqliteStore) -> None:
    assert _found(store, S + "page.html?utm_source=news&utm_medium=mail&fbclid=x") == [
        (S + "page.html", ("tracking-param",))]


def test_version_parameters_nearest_in_time_first(store: SqliteStore) -> None:
    # asked in March 2020: ?v=1 (January 2020) is nearer than the bare file (June 2021)
    assert _found(store, S + "css/style.css?v=2", "20200301") == [
        (S + "css/style.css?v=1", ("version-param",)), (S + "css/style.css", ("version-param",))]
    assert _found(store, S + "css/style.css?v=2", "20210301")[0][0] == S + "css/style.css"
    # the module list selects the content: only the same modules, another version
    assert _found(store, S + "w/load.php?lang=en&modules=site&only=styles&version=T9") == [
        (S + "w/load.php?lang=en&modules=site&only=styles&version=T1", ("version-param",))]
    # a version and a cache-buster at once: the version rule is named first
    assert _found(store, S + "css/style.css?v=1&_=1700000000000")[0] == (
        S + "css/style.css?v=1", ("cache-buster",))
    assert _found(store, S + "css/style.css?v=3&_=1700000000000")[0] == (
        S + "css/style.css?v=1", ("version-param", "cache-buster"))


def test_extra_parameters_only_for_static_paths(store: SqliteStore) -> None:
    assert _found(store, S + "search.html?q=json&check_keywords=yes") == [
        (S + "search.html", ("extra-param",))]
    assert _found(store, S + "list.php?page=2") == []  # a program's query selects its content
    # a capture with a parameter the URL asked lacks, or another value of it, never
    # answers it: page.html?id=2 is the bare page (id=2 extra), never page.html?id=1
    assert _found(store, S + "page.html?id=2") == [(S + "page.html", ("extra-param",))]
    assert _found(store, S + "guide/index.htm?id=1") == []


def test_index_pages(store: SqliteStore) -> None:
    assert _found(store, S + "docs/") == [(S + "docs/index.html", ("index-page",))]
    assert _found(store, S + "docs") == [(S + "docs/index.html", ("index-page",))]
    assert _found(store, S + "guide/index.html") == [(S + "guide/", ("index-page",))]


def test_method_captures_and_errors(store: SqliteStore) -> None:
    # a GET never gets a POST's answer, nor a POST a GET's
    got = fuzzy_matches(store, S + "api/search?q=warc", "2020")
    assert [(m.line.timestamp, m.rules) for m in got] == [("20200101000000", ("extra-param",))]
    posted = method_url(S + "api/search", "POST", "application/json",
                        b'{"ts": 1700000000000, "q": "warc"}')  # fmt: skip
    assert posted is not None
    assert _found(store, posted) == [(S + "api/search", ("cache-buster",))]
    other = method_url(S + "api/search", "POST", "application/json", b'{"q": "arc"}')
    assert other is not None and _found(store, other) == []
    # a recorded 404 answers nothing
    assert _found(store, S + "gone.png?v=2") == []


def test_the_fixed_prefix_finds_a_version_among_many_captures(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Thousands of module lists under one load.php: the capture with the same modules is
    found by a scan from the asked URL's fixed parameters, whatever the wide scan sees."""
    lines = [_line(S + f"load.php?modules=a{i:03d}&version=T1", "20200101000000", "text/css")
             for i in range(50)]  # fmt: skip
    st = SqliteStore(tmp_path / "i.sqlite3")
    st.add_file("f.warc.gz", lines)
    monkeypatch.setattr(fuzzy, "FUZZY_SCAN", 5)
    assert _found(st, S + "load.php?modules=a042&version=T2") == [
        (S + "load.php?modules=a042&version=T1", ("version-param",))]


def test_acceptable_keeps_the_resource_type() -> None:
    line = CdxLine("k", "20200101000000", "u")
    version = FuzzyMatch(line, ("version-param",), 1)
    buster = FuzzyMatch(line, ("cache-buster",), 1)
    assert acceptable(version, 200, "text/css", {"css"})
    assert not acceptable(version, 200, "text/html", None)  # a page's ?v= is its content
    assert not acceptable(version, 200, "text/css", {"js"})
    assert acceptable(buster, 200, "application/json", None)
    assert not acceptable(buster, 200, "text/html", {"image", "font"})
    assert acceptable(buster, 200, "application/octet-stream", {"font"})  # fonts often are
    assert not acceptable(buster, 200, "application/octet-stream", {"image"})
    assert acceptable(version, 302, "text/html", {"css"})  # the target is looked up in turn


def test_families() -> None:
    assert [mime_family(m) for m in ("text/css; charset=utf-8", "application/x-javascript",
                                     "text/javascript1.5", "image/svg+xml", "font/woff2",
                                     "application/vnd.api+json", "video/mp4", "text/plain",
                                     "application/octet-stream", None)] == [
        "css", "js", "js", "image", "font", "json", "media", "text", None, None]  # fmt: skip
    assert extension_family(S + "a/b.CSS?x=1") == "css"
    assert extension_family(S + "a/b") is None and extension_family(S + "a.tar.gz") is None
