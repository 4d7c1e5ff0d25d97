"""What the reader forgives (warc.md "Known interop bugs", DESIGN.md "Reading") and how
payloads come out of real records: de-chunking, Content-Encoding, digest conventions."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime
from pathlib import Path

import pytest

from webark.core.digests import Digest, DigestError
from webark.warc.reader import ArchiveReader
from webark.warc.record import WarcRecord


def _all(path: Path, careful: bool = False) -> list[WarcRecord]:
    return list(ArchiveReader(path, careful=careful))


def _warc(
    block: bytes,
    rtype: bytes = b"response",
    uri: bytes = b"http://example.com/",
    eol: bytes = b"\r\n",
) -> bytes:
    ct = (
        b"application/http; msgtype=" + rtype
        if rtype in (b"response", b"request")
        else b"application/octet-stream"
    )
    lines = [
        b"WARC/1.1",
        b"WARC-Type: " + rtype,
        b"WARC-Record-ID: <urn:uuid:" + hashlib.md5(block).hexdigest().encode() + b">",
        b"WARC-Date: 2024-05-06T07:08:09Z",
        b"WARC-Target-URI: " + uri,
        b"Content-Type: " + ct,
        b"Content-Length: %d" % len(block),
    ]
    return eol.join(lines) + eol + eol + block + b"\r\n\r\n"


# -- WARC header leniency -------------------------------------------------------------------


@pytest.mark.parametrize("careful", [False, True], ids=["fast", "careful"])
@pytest.mark.parametrize(
    ("name", "offset", "uri"),
    [
        ("warcio/example-wget-bad-target-uri.warc.gz", 824, "http://example.com/"),
        (
            "warcio/example-wget-bad-target-uri.warc.gz",
            2681,
            "metadata://gnu.org/software/wget/warc/wget.log",
        ),
        ("outbackcdx/test1.warc.gz", 434, "http://data.webarchive.org.uk/crawl-test-site/"),
        (
            "webarchive-discovery/truncated_datetime.warc",
            1198,
            "http://tokemon.sb.statsbiblioteket.dk/",
        ),
    ],
)
def test_wget_angle_brackets_around_the_target_uri_are_stripped(
    corpus: Path, name: str, offset: int, uri: str, careful: bool
) -> None:
    rec = next(r for r in _all(corpus / name, careful) if r.offset == offset)
    assert rec.headers["WARC-Target-URI"] == f"<{uri}>"  # kept as found
    assert rec.target_uri == uri


@pytest.mark.parametrize(
    ("name", "offset", "field", "encoding"),
    [
        ("pywb/warcs/example2.warc.gz", 363, "WARC-Payload-Digest", "hex"),
        ("pywb/warcs/example2.warc.gz", 363, "WARC-Block-Digest", "hex"),
        ("pywb/warcs/example2.warc.gz", 1649, "WARC-Block-Digest", "hex"),
        ("webarchive-commons/multiple-headers.warc", 0, "WARC-Payload-Digest", "HEX"),
        ("warcio/example.warc", 1197, "WARC-Payload-Digest", "base32"),
        ("warcio/example-digest.warc", 922, "WARC-Payload-Digest", "base64"),
        ("warcio/example-digest.warc", 2758, "WARC-Payload-Digest", "base64url"),
        ("warcio/example-digest.warc", 2758, "WARC-Block-Digest", "base64="),
    ],
)
def test_digests_in_any_encoding_match_the_bytes(
    corpus: Path, name: str, offset: int, field: str, encoding: str
) -> None:
    rec = next(r for r in _all(corpus / name) if r.offset == offset)
    value = rec.headers[field]
    body = value.partition(":")[2]
    if encoding == "hex":
        assert body == body.lower() and len(body) == 40
    elif encoding == "HEX":
        assert body == body.upper() and len(body) == 40
    elif encoding == "base32":
        assert len(body) == 32
    elif encoding == "base64":
        assert "/" in body or "+" in body
    elif encoding == "base64=":
        assert body.endswith("=") and len(body) == 28
    else:
        assert "_" in body or "-" in body
    digest = Digest.parse(value)
    data = rec.block.read_all() if field == "WARC-Block-Digest" else rec.payload()
    assert digest.raw == hashlib.sha1(data).digest()


def test_a_digest_that_is_no_encoding_at_all_is_refused(corpus: Path) -> None:
    # warcio's check test: the first record's payload digest is deliberately invalid
    rec = _all(corpus / "warcio/example-digest.warc")[0]
    assert rec.headers.payload_digest == "sha1:1112H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ"
    with pytest.raises(DigestError):
        Digest.parse(rec.headers.payload_digest)


@pytest.mark.parametrize("careful", [False, True], ids=["fast", "careful"])
def test_lf_only_http_heads_of_clueweb(corpus: Path, careful: bool) -> None:
    responses = [
        r
        for r in _all(corpus / "resiliparse/clueweb-quirk.warc.gz", careful)
        if r.type == "response"
    ]
    assert len(responses) == 29
    for rec in responses:
        h = rec.http
        assert h is not None
        assert h.status == 200
        assert h.forgiven == ("LF-only line endings in HTTP head",)
        assert rec.block.read_all()[: h.head_length].endswith(b"\n\n")
        assert h.mime == "text/html"
    first = responses[0]
    assert first.http is not None
    assert first.http.get("Content-Type") == "text/html; charset=EUC-JP"
    assert first.headers["WARC-TREC-ID"] == "clueweb09-ja0016-50-00000"
    # WARC-Date '2008-10-294T05:21:46-0700' is kept as found, not parsed
    assert first.headers.date_str == "2008-10-294T05:21:46-0700"
    assert first.date is None


def test_lf_only_warc_header_lines(corpus: Path, tmp_path: Path) -> None:
    body = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 5\r\n\r\nhello"
    first = _warc(body, eol=b"\n")
    second = _warc(body, uri=b"http://example.com/2")
    path = tmp_path / "lf.warc"
    path.write_bytes(first + second)
    for careful in (False, True):
        reader = ArchiveReader(path, careful=careful)
        records = list(reader)
        assert [(r.offset, r.target_uri) for r in records] == [
            (0, "http://example.com/"),
            (len(first), "http://example.com/2"),
        ]
        assert records[0].length == len(first) - 4
        assert [p.code for p in records[0].forgiven] == ["lf-line-endings"]
        assert records[0].payload() == b"hello"
        assert records[1].forgiven == ()


@pytest.mark.parametrize("careful", [False, True], ids=["fast", "careful"])
def test_httpx_status_line(corpus: Path, careful: bool) -> None:
    rec = next(
        r for r in _all(corpus / "pywb/warcs/example-extra.warc", careful) if r.offset == 3207
    )
    h = rec.http
    assert h is not None
    assert (h.protocol, h.status, h.reason) == ("HTTPX/1.1", 200, "OK")
    assert h.forgiven == ("non-HTTP protocol token 'HTTPX/1.1' in status line",)
    assert h.get("Content-Length") == "1270"


def test_http2_status_line(tmp_path: Path) -> None:
    page = b"<html>h2</html>"
    block = b"HTTP/2 200\r\ncontent-type: text/html\r\ncontent-length: 15\r\n\r\n" + page
    path = tmp_path / "h2.warc"
    path.write_bytes(_warc(block))
    for careful in (False, True):
        (rec,) = _all(path, careful)
        h = rec.http
        assert h is not None
        assert (h.protocol, h.status, h.reason) == ("HTTP/2", 200, "")
        assert "HTTP/2 status line (write HTTP/1.1 and WARC-Protocol: h2)" in h.forgiven
        assert h.mime == "text/html"
        assert rec.payload() == page


@pytest.mark.parametrize("careful", [False, True], ids=["fast", "careful"])
def test_status_line_without_reason_phrase(corpus: Path, careful: bool) -> None:
    (rec,) = _all(corpus / "pywb/warcs/missing-status-text.warc", careful)
    h = rec.http
    assert h is not None
    assert (h.status, h.reason) == (302, "")
    assert h.get("Location") == "http://www.iana.org/badst"
    assert "status line without reason phrase" in h.forgiven
    # the whole record has CR CR LF line endings (pywb's fixture)
    assert {p.code for p in rec.forgiven} == {"cr-cr-lf-line-endings", "cr-cr-lf-record-end"}
    (rec,) = _all(corpus / "webarchive-commons/multiple-headers.warc", careful)
    assert rec.http is not None and (rec.http.status, rec.http.reason) == (200, "")
    assert rec.headers.get_all("WARC-Protocol") == ["h2", "tls/1.3"]


@pytest.mark.parametrize("careful", [False, True], ids=["fast", "careful"])
def test_folded_warc_0_17_header_values(corpus: Path, careful: bool) -> None:
    (rec,) = _all(corpus / "jwat/warc/valid-warcfile-fields-continuation.warc", careful)
    assert rec.version == "WARC/0.17"
    assert rec.type == "continuation"
    assert rec.target_uri == "http://www.archive.org/"
    assert rec.record_id == "<urn:uuid:4042c21b-d898-43f0-9c95-b50da2d1aa42>"
    assert rec.headers["WARC-Segment-Number"] == "42"
    assert rec.headers["WARC-Segment-Origin-ID"] == (
        "<urn:uuid:ff728363-2d5f-4f5f-b832-9552de1a6037>"
    )
    assert rec.headers.content_length == rec.block.size == 693
    assert rec.date == datetime(2008, 4, 30, 20, 48, 26, tzinfo=UTC)
    assert [p.code for p in rec.forgiven] == ["folded-field"]

    (rec,) = _all(corpus / "jwat/warc/valid-warcfile-fields-metainfo.warc", careful)
    assert (rec.type, rec.headers.content_type) == ("metadata", "text/anvl")  # TAB-folded
    assert rec.headers.refers_to == "<urn:uuid:e7c9eff8-f5bc-4aeb-b3d2-9d3df99afb31>"
    assert rec.block.read_all().startswith(b"via: http://www.archive.org/\r\n")

    (rec,) = _all(corpus / "jwat/warc/valid-warcfile-fields-warcinfo.warc", careful)
    assert rec.headers.filename == "IAH-20080430204825-00000-blackbook.warc.gz"

    (rec,) = _all(corpus / "jwat/warc/valid-warcfile-utf8.warc", careful)
    filename = rec.headers.filename or ""
    assert filename.startswith("IAH-20080430204825-00000-blackbook.warc.gz ")
    assert "外国語の学習と教授" in filename and "ქართული" in filename


def test_header_names_are_case_insensitive(corpus: Path) -> None:
    records = _all(corpus / "jwat/warc/valid-warcfile-upper-lower-case.warc")
    assert [r.target_uri for r in records[1:]] == [
        "dns:www.archive.org",
        "DNS:WWW.ARCHIVE.ORG",
        "DNS:WWW.ARCHIVE.ORG",
        "dns:www.archive.org",
    ]
    assert {r.version for r in records} == {"WARC/1.0"}
    assert [p.code for p in records[1].forgiven] == ["lowercase-version-line"]


# -- payloads -----------------------------------------------------------------------------


def test_dechunked_body_left_under_a_chunked_header(tmp_path: Path) -> None:
    page = b"<html>already de-chunked</html>"
    stale = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + page
    chunked = (
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
        b"6\r\n<html>\r\n19\r\nalready de-chunked</html>\r\n0\r\n\r\n"
    )
    path = tmp_path / "chunks.warc"
    path.write_bytes(_warc(stale) + _warc(chunked, uri=b"http://example.com/c"))
    for careful in (False, True):
        a, b = _all(path, careful)
        assert a.http is not None and a.http.is_chunked
        assert a.payload() == page
        assert a.payload_was_dechunked_ok is False
        assert b.payload() == page
        assert b.payload_was_dechunked_ok is True
        assert b.payload_stream().read() == page


def test_iana_digest_convention(corpus: Path) -> None:
    # iana.warc.gz (pywb, LiveWeb writer 2014) stored the 25 bodies it received chunked
    # already de-chunked, under the original "Transfer-Encoding: chunked" (and
    # "Content-Length: -1") headers: interop bug 3. Its payload digests are over those
    # de-chunked bytes, i.e. the entity body as the spec defines it, and payload() gives
    # them unchanged because they do not parse as chunks.
    responses = [r for r in _all(corpus / "pywb/warcs/iana.warc.gz") if r.type == "response"]
    assert len(responses) == 48
    declared_chunked = [r for r in responses if r.http is not None and r.http.is_chunked]
    assert len(declared_chunked) == 25
    for rec in responses:
        assert rec.headers.payload_digest is not None
        digest = Digest.parse(rec.headers.payload_digest)
        assert digest.raw == hashlib.sha1(rec.payload()).digest(), rec.target_uri
    for rec in declared_chunked:
        assert rec.http is not None
        assert rec.payload_was_dechunked_ok is False
        assert rec.payload() == rec.block.read_all()[rec.http.head_length :]
        assert rec.http.get("Content-Length") == "-1"


def test_chunked_body_digested_with_its_framing(corpus: Path) -> None:
    # warcio's iana.org capture keeps the chunked bytes; its payload digest covers the
    # chunk framing (the wget/warcio convention warc.md notes as a compatibility case),
    # so it matches the transfer-encoded body, not the de-chunked payload.
    rec = next(
        r for r in _all(corpus / "warcio/example-iana.org-chunked.warc") if r.type == "response"
    )
    assert rec.http is not None and rec.http.is_chunked
    raw = rec.block.read_all()[rec.http.head_length :]
    assert raw.startswith(b"001c37\r\n<!doctype html>")
    assert raw.endswith(b"</html>\n\r\n0\r\n\r\n")
    payload = rec.payload()
    assert len(payload) == 0x1C37 == 7223
    assert payload.startswith(b"<!doctype html>") and payload.endswith(b"</html>\n")
    assert rec.payload_was_dechunked_ok is True
    digest = Digest.parse(rec.headers.payload_digest or "")
    assert digest.raw == hashlib.sha1(raw).digest()
    assert digest.raw != hashlib.sha1(payload).digest()


def test_chunked_request_body(corpus: Path) -> None:
    rec = _all(corpus / "cdxj-indexer/data/post-test-more.warc")[-1]
    assert (rec.type, rec.offset) == ("request", 2966)
    assert rec.http is not None and rec.http.method == "POST" and rec.http.is_chunked
    assert rec.payload() == b"somechunk-encodeddata"


@pytest.mark.parametrize("careful", [False, True], ids=["fast", "careful"])
def test_content_encodings_decode_to_the_same_page(corpus: Path, careful: bool) -> None:
    base = corpus / "webarchive-discovery"
    pages: dict[str, bytes] = {}
    raw: dict[str, bytes] = {}
    for name in (
        "transfer_compression_none.warc",
        "transfer_compression_gzip.warc",
        "transfer_compression_brotli.warc",
        "transfer_compression_brotli.warc.gz",
    ):
        (rec,) = [r for r in _all(base / name, careful) if r.type == "response"]
        assert rec.http is not None and rec.http.status == 200
        raw[name] = rec.payload()
        pages[name] = rec.payload(decode_content_encoding=True)
        assert pages[name] == rec.payload_stream(decode_content_encoding=True).read()
        # the payload digest covers the body with its content-coding kept
        digest = Digest.parse(rec.headers.payload_digest or "")
        assert digest.raw == hashlib.sha1(raw[name]).digest()
    assert len(set(pages.values())) == 1
    page = pages["transfer_compression_none.warc"]
    assert page.startswith(b"<html>") and b"Simple page" in page
    assert len(page) == 246
    # the encoded bodies really are different
    assert len({raw[n] for n in raw if not n.endswith(".gz")}) == 3
    assert raw["transfer_compression_gzip.warc"][:2] == b"\x1f\x8b"
