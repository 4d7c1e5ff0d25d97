"""Choosing captures for replay (webark.index.capture_select): closest with ties to the
earlier, latest first, only replayable types, exclusion, capture lists, neighbours; on a
WARC written with webark's writer (known dates) and on the pywb sample corpus."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from index_stores import StoreChoice
from webark.cdx.indexer import IndexOptions, index_file
from webark.cdx.line import CdxLine
from webark.index.capture_select import (
    REPLAYABLE_TYPES,
    capture_type,
    captures,
    closest,
    neighbours,
)
from webark.index.collection import Collection
from webark.warc.builders import Original, WarcinfoFields
from webark.warc.writer import WarcWriter

URL = "http://www.example.com/page?b=2&a=1"
DATES = [
    datetime(2020, 1, 1, tzinfo=UTC),
    datetime(2020, 1, 3, tzinfo=UTC),
    datetime(2020, 1, 10, 12, 0, 0, tzinfo=UTC),
    datetime(2021, 6, 1, tzinfo=UTC),
]


def _http(body: bytes) -> bytes:
    return (
        b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: "
        + str(len(body)).encode()
        + b"\r\n\r\n"
        + body
    )


@pytest.fixture(scope="module")
def coll(tmp_path_factory: pytest.TempPathFactory, index_store: StoreChoice) -> Collection:
    """Captures of URL at DATES (a response, then alternately revisits and responses),
    plus a request record and a capture of another URL whose key sorts right after."""
    d = tmp_path_factory.mktemp("cs")
    with WarcWriter(d / "w", compression="gzip", warcinfo=WarcinfoFields(hostname="h")) as w:
        first = w.builder.response(URL, _http(b"v0"), date=DATES[0])
        w.write(first, w.builder.request(URL, b"GET /page HTTP/1.1\r\n\r\n", date=DATES[0]))
        orig = Original(URL, first.headers["WARC-Date"], first.record_id,
                        first.headers.payload_digest)
        w.write(w.builder.revisit(URL, _http(b"v0"), orig, date=DATES[1]))
        w.write(w.builder.response(URL, _http(b"v2"), date=DATES[2]))
        w.write(w.builder.response(URL, _http(b"v3"), date=DATES[3]))
        w.write(w.builder.response(URL + "x", _http(b"other"), date=DATES[1]))
        path = w.paths[0]
    c = index_store.init(d / "coll")
    opts = IndexOptions(all_records=True)  # index the request too: it must not be chosen
    (res,) = c.add([path], index=lambda p, name: index_file(p, opts))
    assert res.status == "indexed", res.message
    return c


def _ts(lines: list[CdxLine]) -> list[str]:
    return [x.timestamp for x in lines]


def test_closest_orders_by_distance_ties_to_earlier(coll: Collection) -> None:
    src = coll.source()
    # 2020-01-02 is one day from both 01-01 and 01-03: the earlier comes first
    got = closest(src, URL, "20200102")
    assert _ts(got) == ["20200101000000", "20200103000000", "20200110120000", "20210601000000"]
    assert [capture_type(x) for x in got] == ["response", "revisit", "response", "response"]
    # the request record at 2020-01-01 is never chosen
    assert all(capture_type(x) in REPLAYABLE_TYPES for x in got)
    assert _ts(closest(src, URL, "2020011006")) == [
        "20200110120000", "20200103000000", "20200101000000", "20210601000000"]
    assert _ts(closest(src, URL, "2030", limit=2)) == ["20210601000000", "20200110120000"]
    assert _ts(closest(src, URL, "1999", limit=1)) == ["20200101000000"]
    # exact second
    assert _ts(closest(src, URL, "20200103000000", limit=1)) == ["20200103000000"]


def test_closest_latest_first_url_forms_and_exclude(coll: Collection) -> None:
    src = coll.source()
    assert _ts(closest(src, URL, None)) == [
        "20210601000000", "20200110120000", "20200103000000", "20200101000000"]
    # the same URL in other spellings (https, no www, query order) has the same key
    assert _ts(closest(src, "https://example.com/page?a=1&b=2", None, limit=1)) == [
        "20210601000000"]
    got = closest(src, URL, "2021", exclude=lambda x: x.timestamp.startswith("2021"))
    assert _ts(got)[0] == "20200110120000" and len(got) == 3
    assert closest(src, "http://www.example.com/nothing", "2020") == []
    with pytest.raises(ValueError):
        closest(src, URL, "2020x")


def test_captures_and_neighbours(coll: Collection) -> None:
    src = coll.source()
    assert [capture_type(x) for x in captures(src, URL, all_records=True)] == [
        "response", "request", "revisit", "response", "response"]
    assert _ts(list(captures(src, URL))) == [
        "20200101000000", "20200103000000", "20200110120000", "20210601000000"]
    assert _ts(list(captures(src, URL, from_ts="202001", to_ts="20200105"))) == [
        "20200101000000", "20200103000000"]
    prefix = list(captures(src, "http://example.com/page", "prefix"))
    assert sorted({x.url for x in prefix}) == [URL, URL + "x"]
    prev, nxt = neighbours(src, URL, "20200103000000")
    assert prev is not None and prev.timestamp == "20200101000000"
    assert nxt is not None and nxt.timestamp == "20200110120000"
    assert neighbours(src, URL, "20200101000000")[0] is None
    assert neighbours(src, URL, "20210601000000")[1] is None


def test_closest_on_pywb_corpus(tmp_path: Path, corpus: Path, index_store: StoreChoice) -> None:
    c = index_store.init(tmp_path / "pywb")
    warcs = corpus / "pywb" / "warcs"
    for r in c.add([warcs / "iana.warc.gz", warcs / "dupes.warc.gz", warcs / "example.warc.gz"]):
        assert r.status == "indexed", r.message
    src = c.source()
    # pywb/cdx/dupes.cdx: example.com response 20140127171200, revisit 20140127171251
    got = closest(src, "http://example.com", "20140127171250")
    assert [(x.timestamp, capture_type(x)) for x in got[:2]] == [
        ("20140127171251", "revisit"), ("20140127171200", "response")]
    # iana.org/ in iana.warc.gz (2014-01-26) and dupes.warc.gz (2014-01-27)
    latest = closest(src, "http://www.iana.org/", None)
    assert latest[0].timestamp == "20140127171238"
    assert all(x.urlkey == "org,iana)/" for x in latest)
    early = closest(src, "http://www.iana.org/", "2013")
    assert early[0].timestamp < "20140127" and early[0].filename == "iana.warc.gz"
