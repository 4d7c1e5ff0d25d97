"""Resolved captures (webark.index.resolved): payload ranges read straight from
uncompressed WARCs and by skipping in compressed ones (same bytes either way, on the
resiliparse corpus file in both forms, on books.toscrape.warc with chunked bodies, and on
a hybrid webark crawl), resource records, and self-redirects (/a/ ↔ /a, http → https,
pywb's iana.org → www.iana.org)."""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path

import pytest

from webark.index.capture_select import closest, is_replayable
from webark.index.collection import Collection
from webark.index.record_loader import RecordLoader
from webark.index.resolved import (
    NotReplayable,
    ResolvedCapture,
    redirect_target_key,
    resolve_capture,
)
from webark.index.revisits import RevisitResolver
from webark.index.source import KeyRange
from webark.warc.builders import WarcinfoFields
from webark.warc.writer import WarcWriter


def _open(coll: Collection) -> tuple[RecordLoader, RevisitResolver]:
    loader = RecordLoader(coll.resolver())
    return loader, RevisitResolver(coll.source(), loader)


def _all(coll: Collection) -> list[ResolvedCapture]:
    loader, rv = _open(coll)
    return [
        resolve_capture(x, loader, rv)
        for x in coll.source().scan(KeyRange("", None))
        if is_replayable(x)
    ]


def _ranges_agree(cap: ResolvedCapture) -> None:
    body = cap.payload_stream().read()
    assert len(body) == cap.payload_length
    n = len(body)
    for start, end in [(0, 0), (0, n - 1), (1, 9), (n // 3, n // 2), (n - 5, n - 1),
                       (n - 1, n + 100), (n + 10, n + 20)]:
        if start < 0 or end < start:
            continue
        assert b"".join(cap.payload_range(start, end)) == body[start : end + 1], (start, end)


def _collection(tmp: Path, name: str, files: list[Path]) -> Collection:
    coll = Collection.init(tmp / name)
    for r in coll.add(files):
        assert r.status == "indexed", r.message
    return coll


def test_ranges_uncompressed_and_gzip_corpus(tmp_path: Path, corpus: Path) -> None:
    plain = _all(_collection(tmp_path, "plain", [corpus / "resiliparse/warcfile.warc"]))
    gz = _all(_collection(tmp_path, "gz", [corpus / "resiliparse/warcfile.warc.gz"]))
    assert len(plain) == len(gz) > 10
    direct = 0
    for a, b in zip(plain, gz, strict=True):
        assert a.line.url == b.line.url and a.status == b.status
        assert a.payload_stream().read() == b.payload_stream().read()
        assert b.payload_file_offset() is None  # gzip: read and skip
        at = a.payload_file_offset()
        h = a.record.http
        if h is not None and h.is_chunked:
            assert at is None
        else:
            assert at is not None
            direct += 1
            with open(a.record.path, "rb") as f:
                f.seek(at)
                assert f.read(a.payload_length or 0) == a.payload_stream().read()
        _ranges_agree(a)
        _ranges_agree(b)
    assert direct > 10


def test_ranges_chunked_bodies(tmp_path: Path, corpus: Path) -> None:
    caps = _all(_collection(tmp_path, "books", [corpus / "node-warc/books.toscrape.warc"]))
    chunked = [c for c in caps if c.record.http is not None and c.record.http.is_chunked]
    assert len(chunked) == 4  # PROVENANCE: 4 HTTP chunked responses
    for c in caps:
        _ranges_agree(c)
    for c in chunked:
        assert c.payload_file_offset() is None
        assert b"\r\n0\r\n" not in c.payload_stream().read()[-8:]  # framing removed


def test_hybrid_crawl_serves_video_ranges_from_the_file(tmp_path: Path) -> None:
    video = os.urandom(300_000)
    page = b"<html>" + b"x" * 5000 + b"</html>"
    with WarcWriter(tmp_path / "w", hybrid=True, warcinfo=WarcinfoFields(hostname="h")) as w:
        for url, ctype, body in [("http://example.org/v.mp4", b"video/mp4", video),
                                 ("http://example.org/", b"text/html", page)]:
            w.write(w.builder.response(
                url, b"HTTP/1.1 200 OK\r\nContent-Type: " + ctype + b"\r\nContent-Length: "
                + str(len(body)).encode() + b"\r\n\r\n" + body,
                date=datetime(2024, 5, 1, tzinfo=UTC)))
        paths = w.paths
    assert sorted(Path(p).suffix for p in paths) == [".gz", ".warc"]
    coll = _collection(tmp_path, "c", [Path(p) for p in paths])
    by_url = {c.line.url: c for c in _all(coll)}
    v, p = by_url["http://example.org/v.mp4"], by_url["http://example.org/"]
    assert v.record.path.endswith(".warc") and v.payload_file_offset() is not None
    assert p.payload_file_offset() is None
    assert b"".join(v.payload_range(100_000, 199_999)) == video[100_000:200_000]
    assert b"".join(v.payload_range(299_990, 400_000)) == video[299_990:]
    _ranges_agree(p)
    with pytest.raises(ValueError):
        list(v.payload_range(5, 4))


def test_resource_record(tmp_path: Path, corpus: Path) -> None:
    coll = _collection(tmp_path, "r", [corpus / "pywb/warcs/httpbin-resource.warc.gz"])
    (cap,) = _all(coll)
    body = cap.payload_stream().read()
    assert cap.record.type == "resource" and cap.status == 200
    assert cap.header("Content-Length") == str(len(body)) == str(cap.payload_length)
    assert cap.header("Content-Type") == cap.record.headers.content_type
    assert b"resource.json" in body
    assert not cap.is_self_redirect()


def _redirect_warc(tmp_path: Path) -> Collection:
    cases = [
        ("http://example.org/a/", "/a"),  # /a/ -> /a  (self, pair)
        ("http://example.org/a", "http://example.org/a/"),  # /a -> /a/ (self, pair)
        ("http://example.org/s", "https://www.example.org/s"),  # scheme + www: same key
        ("http://example.org/q?b=1&a=2", "q?a=2&b=1"),  # same key, relative
        ("http://example.org/x", "/y"),  # elsewhere
        ("http://example.org/n", ""),  # no Location value
    ]
    with WarcWriter(tmp_path / "w", warcinfo=WarcinfoFields(hostname="h")) as w:
        for url, loc in cases:
            w.write(w.builder.response(
                url, b"HTTP/1.1 301 Moved\r\nLocation: " + loc.encode()
                + b"\r\nContent-Length: 0\r\n\r\n", date=datetime(2024, 1, 1, tzinfo=UTC)))
        w.write(w.builder.response(
            "http://example.org/ok", b"HTTP/1.1 200 OK\r\nLocation: /ok\r\n"
            b"Content-Length: 2\r\n\r\nok", date=datetime(2024, 1, 1, tzinfo=UTC)))
        paths = w.paths
    return _collection(tmp_path, "redirects", [Path(p) for p in paths])


def test_self_redirects(tmp_path: Path) -> None:
    by_url = {c.line.url: c for c in _all(_redirect_warc(tmp_path))}
    got = {u: (c.is_self_redirect(), redirect_target_key(c)) for u, c in by_url.items()}
    assert got == {
        "http://example.org/a/": (True, "org,example)/a"),
        "http://example.org/a": (True, "org,example)/a"),  # keys drop the final /
        "http://example.org/s": (True, "org,example)/s"),
        "http://example.org/q?b=1&a=2": (True, "org,example)/q?a=2&b=1"),
        "http://example.org/x": (False, "org,example)/y"),
        "http://example.org/n": (False, None),
        "http://example.org/ok": (False, None),
    }


def test_self_redirect_in_pywb_corpus(tmp_path: Path, corpus: Path) -> None:
    w = corpus / "pywb/warcs"
    coll = _collection(tmp_path, "p", [w / "dupes.warc.gz", w / "iana.warc.gz",
                                       w / "example.warc.gz"])
    loader, rv = _open(coll)
    src = coll.source()
    # dupes.cdx: http://iana.org 302 (-> http://www.iana.org/, the same key org,iana)/)
    first = closest(src, "http://iana.org", "20140127171238")
    caps = [resolve_capture(x, loader, rv) for x in first[:2]]
    redirect = next(c for c in caps if c.status == 302)
    assert redirect.is_self_redirect() and redirect_target_key(redirect) == "org,iana)/"
    # example.warc.gz: iana.org/domains/example 302 to another page: not a self-redirect
    (line,) = closest(src, "http://www.iana.org/domains/example", None, limit=1)
    cap = resolve_capture(line, loader, rv)
    assert cap.status == 302 and not cap.is_self_redirect()
    assert redirect_target_key(cap) not in (None, line.urlkey)


def test_not_replayable(tmp_path: Path, corpus: Path) -> None:
    coll = _collection(tmp_path, "e", [corpus / "pywb/warcs/example.warc.gz"])
    loader, rv = _open(coll)
    line = next(iter(coll.source().scan(KeyRange("", None))))
    from dataclasses import replace

    warcinfo = replace(line, offset=0)  # the warcinfo record at offset 0
    with pytest.raises(NotReplayable, match=r"example\.warc\.gz @ 0"):
        resolve_capture(warcinfo, loader, rv)
