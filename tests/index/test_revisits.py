"""Revisit resolution (webark.index.revisits + resolve_capture): a chain of 300 revisits
of one URL (each resolves, the index is read once, not 300 times), a URL-agnostic
original found by digest, WARC-Refers-To-Target-URI/Date preferred over a nearer
digest match, the empty payload, a missing original; and every revisit of the corpus
WARCs, checked by recomputing the payload digest."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from index_stores import StoreChoice
from webark.cdx.line import CdxLine
from webark.core.digests import Digest, digest_label, same_digest
from webark.index.capture_select import capture_type
from webark.index.collection import Collection
from webark.index.record_loader import RecordLoader
from webark.index.resolved import UnresolvedRevisit, resolve_capture
from webark.index.revisits import (
    EMPTY_PAYLOAD_DIGESTS,
    RevisitResolver,
    is_empty_payload_digest,
)
from webark.index.source import IndexSource, KeyRange
from webark.warc.builders import Original, WarcinfoFields
from webark.warc.record import WarcRecord
from webark.warc.writer import WarcWriter

T0 = datetime(2015, 3, 1, tzinfo=UTC)
URL = "http://example.com/chain.html"
BODY = b"<html>" + b"the same page " * 200 + b"</html>"


def _http(body: bytes, status: bytes = b"200 OK", extra: bytes = b"") -> bytes:
    return (b"HTTP/1.1 " + status + b"\r\nContent-Type: text/html\r\n" + extra
            + b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body)


def _orig(rec: WarcRecord) -> Original:
    return Original(rec.target_uri or "", rec.headers["WARC-Date"], rec.record_id,
                    rec.headers.payload_digest)


@dataclass
class Built:
    coll: Collection
    response: WarcRecord
    ids: dict[str, str]  # role → WARC-Record-ID


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory, index_store: StoreChoice) -> Built:
    d = tmp_path_factory.mktemp("rv")
    ids: dict[str, str] = {}
    with WarcWriter(d / "w", warcinfo=WarcinfoFields(hostname="h")) as w:
        b = w.builder
        resp = b.response(URL, _http(BODY), date=T0)
        w.write(resp)
        for i in range(300):
            w.write(b.revisit(URL, _http(BODY), _orig(resp), date=T0 + timedelta(hours=i + 1)))
        # URL-agnostic: same payload, another query string, no WARC-Refers-To-*
        agn = b.revisit(URL + "?utm=1", _http(BODY), _orig(resp),
                        date=T0 + timedelta(days=40))
        for name in ("WARC-Refers-To", "WARC-Refers-To-Target-URI", "WARC-Refers-To-Date"):
            agn.headers.remove(name)
        w.write(agn)
        ids["agnostic"] = agn.record_id or ""
        # two captures with one payload: "near" is close in time to the revisit, "far"
        # is the one it refers to; Refers-To-* must win over the nearer digest match
        other = b"<p>shared</p>"
        far = b.response("http://example.org/far", _http(other), date=T0)
        near = b.response("http://example.org/near", _http(other),
                          date=T0 + timedelta(days=99))
        refers = b.revisit("http://example.org/new", _http(other), _orig(far),
                           date=T0 + timedelta(days=100))
        w.write(far, near, refers)
        ids.update(far=far.record_id or "", near=near.record_id or "",
                   refers=refers.record_id or "")
        # empty payload, no original anywhere; and a payload nobody has
        empty = b.revisit(
            "http://example.org/empty", _http(b"", b"301 Moved", b"Location: /e/\r\n"),
            Original("http://example.org/gone", T0, None, digest_label(b"")),
            date=T0 + timedelta(days=2))
        missing = b.revisit(
            "http://example.org/missing", _http(b"lost"),
            Original("http://example.org/missing", T0, None, digest_label(b"lost")),
            date=T0 + timedelta(days=3))
        w.write(empty, missing)
        ids.update(empty=empty.record_id or "", missing=missing.record_id or "")
        path = w.paths[0]
    coll = index_store.init(d / "coll")
    (r,) = coll.add([path])
    assert r.status == "indexed", r.message
    return Built(coll, resp, ids)


class CountingSource:
    """An IndexSource that counts the lines it hands out (index work done)."""

    def __init__(self, inner: IndexSource):
        self.inner = inner
        self.lines = 0

    def _count(self, it: Iterator[CdxLine]) -> Iterator[CdxLine]:
        for x in it:
            self.lines += 1
            yield x

    def scan(self, rng: KeyRange, reverse: bool = False) -> Iterator[CdxLine]:
        return self._count(self.inner.scan(rng, reverse))

    def by_digest(self, digest: str) -> Iterator[CdxLine]:
        return self._count(self.inner.by_digest(digest))


def _line_of(coll: Collection, record_id: str) -> tuple[CdxLine, WarcRecord]:
    loader = RecordLoader(coll.resolver())
    for line in coll.source().scan(KeyRange("", None)):
        rec = loader.load(line)
        if rec.record_id == record_id:
            return line, rec
    raise AssertionError(record_id)


def test_empty_payload_digests() -> None:
    assert "3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ" in EMPTY_PAYLOAD_DIGESTS
    assert "sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ" in EMPTY_PAYLOAD_DIGESTS
    assert ("sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
            in EMPTY_PAYLOAD_DIGESTS)
    assert is_empty_payload_digest("sha1:" + Digest.parse(digest_label(b"")).hex())
    assert not is_empty_payload_digest(digest_label(b"x"))
    assert not is_empty_payload_digest("-") and not is_empty_payload_digest(None)


def test_chain_of_300_revisits_reads_the_url_once(built: Built) -> None:
    coll = built.coll
    counting = CountingSource(coll.source())
    loader = RecordLoader(coll.resolver())
    resolver = RevisitResolver(counting, loader)
    lines = [x for x in coll.source().scan(KeyRange("com,example)/chain.html",
                                                    "com,example)/chain.html!"))]
    revisits = [x for x in lines if capture_type(x) == "revisit"]
    assert len(lines) == 301 and len(revisits) == 300
    counting.lines = 0
    for line in revisits:
        got = resolve_capture(line, loader, resolver)
        assert got.status == 200
        assert got.original is not None
        assert got.original.record_id == built.response.record_id
        assert got.payload_stream().read() == BODY
        assert got.payload_length == len(BODY)
    # one scan of the URL's 301 lines for all 300 resolutions (not 300 x 301)
    assert counting.lines == 301


def test_url_agnostic_original_found_by_digest(built: Built) -> None:
    coll = built.coll
    line, rec = _line_of(coll, built.ids["agnostic"])
    assert rec.headers.refers_to_target_uri is None
    loader = RecordLoader(coll.resolver())
    got = resolve_capture(line, loader, RevisitResolver(coll.source(), loader))
    assert got.original is not None
    assert got.original.record_id == built.response.record_id
    assert got.payload_stream().read() == BODY


def test_refers_to_target_uri_and_date_win(built: Built) -> None:
    coll = built.coll
    line, rec = _line_of(coll, built.ids["refers"])
    assert rec.headers.refers_to_target_uri == "http://example.org/far"
    loader = RecordLoader(coll.resolver())
    found = RevisitResolver(coll.source(), loader).original(line, rec)
    assert found is not None
    assert found[1].record_id == built.ids["far"]  # not the nearer "near"
    # without the Refers-To fields the digest lookup takes the closest in time
    rec.headers.remove("WARC-Refers-To-Target-URI")
    found = RevisitResolver(coll.source(), loader).original(line, rec)
    assert found is not None and found[1].record_id == built.ids["near"]


def test_empty_payload_and_missing_original(built: Built) -> None:
    coll = built.coll
    loader = RecordLoader(coll.resolver())
    resolver = RevisitResolver(coll.source(), loader)
    line, rec = _line_of(coll, built.ids["empty"])
    assert resolver.original(line, rec) is None
    got = resolve_capture(line, loader, resolver)
    assert (got.status, got.original, got.payload_length) == (301, None, 0)
    assert got.payload_stream().read() == b""
    assert list(got.payload_range(0, 10)) == []
    assert got.header("location") == "/e/"
    line, _ = _line_of(coll, built.ids["missing"])
    with pytest.raises(UnresolvedRevisit, match=r"example\.org/missing") as e:
        resolve_capture(line, loader, resolver)
    assert e.value.line == line and "@" in str(e.value)


CORPUS_SETS = {
    "pywb": ["pywb/warcs/iana.warc.gz", "pywb/warcs/dupes.warc.gz",
             "pywb/warcs/example.warc.gz", "pywb/warcs/example.warc",
             "pywb/warcs/example-extra.warc",
             "pywb/warcs/example-url-agnostic-orig.warc.gz",
             "pywb/warcs/example-url-agnostic-revisit.warc.gz"],
    "cdxj-indexer": ["cdxj-indexer/data/example.warc.gz"],
    "warcio": ["warcio/example.warc", "warcio/example.warc.gz"],
}


@pytest.mark.parametrize("name", sorted(CORPUS_SETS))
def test_every_corpus_revisit_resolves(
    name: str, tmp_path: Path, corpus: Path, index_store: StoreChoice
) -> None:
    coll = index_store.init(tmp_path / name)
    for r in coll.add([corpus / f for f in CORPUS_SETS[name]]):
        assert r.status == "indexed", r.message
    loader = RecordLoader(coll.resolver())
    # verify_payload: example-extra.warc holds a damaged copy of its response (one
    # byte short, `webark warc check`: warc-payload-digest-mismatch) that must not
    # be chosen as an original
    resolver = RevisitResolver(coll.source(), loader, verify_payload=True)
    n = headless = 0
    for line in coll.source().scan(KeyRange("", None)):
        if capture_type(line) != "revisit":
            continue
        got = resolve_capture(line, loader, resolver)
        n += 1
        want = got.record.headers.payload_digest
        assert want is not None
        if is_empty_payload_digest(want):
            assert got.payload_stream().read() == b""
            continue
        assert got.original is not None
        assert got.original.type in ("response", "resource")
        own = got.record.http
        if own is None:  # example-extra.warc: empty revisit blocks; the original's head
            headless += 1
            assert got.status == got.original.http_status == 200
            assert got.original.http is not None
            assert got.headers == list(got.original.http.headers)
        else:
            assert (got.status, got.headers) == (own.status, list(own.headers))
        body = got.payload_stream().read()
        assert len(body) == got.payload_length
        algo = Digest.parse(want).algorithm
        # the transfer-decoded payload served has the revisit's digest (WARC 1.1)
        assert same_digest(want, digest_label(body, algo)), (line, want)
    assert headless == (2 if name == "pywb" else 0)
    assert n == {"pywb": 123 + 9 + 1 + 1 + 2 + 1, "cdxj-indexer": 1, "warcio": 2}[name]
