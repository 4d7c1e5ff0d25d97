"""RecordBuilder: every field of every record type, digests checked with hashlib."""

from __future__ import annotations

import base64
import hashlib
from datetime import UTC, datetime

import pytest

from webark import __version__
from webark.core.errors import InvalidRecordError
from webark.core.ids import seeded_record_ids
from webark.warc.builders import (
    MetadataFields,
    Original,
    RecordBuilder,
    WarcinfoFields,
    profile_uri,
    warc_fields_block,
)
from webark.warc.record import Block
from webark.warc.validate_fields import field_problems, field_warnings

WHEN = datetime(2024, 3, 1, 12, 30, 45, 123456, tzinfo=UTC)
BODY = (
    b"<!doctype html>\n<html>\n<head>\n    <title>Example Domain</title>\n</head>\n"
    b"<body>\n<div>\n    <h1>Example Domain</h1>\n    <p>This domain is for use in "
    b"illustrative examples in documents.</p>\n</div>\n</body>\n</html>\n"
)
HEAD = (
    b"HTTP/1.1 200 OK\r\nAge: 414476\r\nCache-Control: max-age=604800\r\n"
    b"Content-Type: text/html; charset=UTF-8\r\nDate: Fri, 01 Mar 2024 12:30:45 GMT\r\n"
    b'Etag: "3147526947+ident"\r\nLast-Modified: Thu, 17 Oct 2019 07:18:26 GMT\r\n'
    b"Server: ECS (nyb/1D2E)\r\nVary: Accept-Encoding\r\n"
)
RESPONSE = HEAD + b"Content-Length: %d\r\n\r\n" % len(BODY) + BODY
CHUNKED = (
    HEAD
    + b"Transfer-Encoding: chunked\r\n\r\n"
    + b"40\r\n"
    + BODY[:64]
    + b"\r\n"
    + b"%x;ext=1\r\n" % (len(BODY) - 64)
    + BODY[64:]
    + b"\r\n0\r\nX-Trailer: 1\r\n\r\n"
)
REQUEST = (
    b"GET / HTTP/1.1\r\nHost: example.com\r\nUser-Agent: webark/0.1 (+mailto:a@example.org)\r\n"
    b"Accept: */*\r\nAccept-Encoding: identity\r\n\r\n"
)
NOT_MODIFIED = (
    b"HTTP/1.1 304 Not Modified\r\nAge: 414476\r\nCache-Control: max-age=604800\r\n"
    b'Date: Fri, 01 Mar 2024 12:30:45 GMT\r\nEtag: "3147526947+ident"\r\n\r\n'
)


def sha1(data: bytes) -> str:
    return "sha1:" + base64.b32encode(hashlib.sha1(data).digest()).decode()


def builder(**kw: object) -> RecordBuilder:
    return RecordBuilder(clock=lambda: WHEN, record_ids=seeded_record_ids(7), **kw)  # type: ignore[arg-type]


def assert_valid(record: object) -> None:
    assert field_problems(record.version, record.headers) == []  # type: ignore[attr-defined]


def test_response_fields_and_digests() -> None:
    r = builder().response("http://example.com/", RESPONSE, ip_address="93.184.216.34")
    assert [n for n, _ in r.headers] == [
        "WARC-Type",
        "WARC-Record-ID",
        "WARC-Date",
        "WARC-Target-URI",
        "WARC-IP-Address",
        "WARC-Block-Digest",
        "WARC-Payload-Digest",
        "Content-Type",
        "Content-Length",
    ]
    h = r.headers
    assert h["WARC-Type"] == "response"
    assert h["WARC-Date"] == "2024-03-01T12:30:45Z"
    assert h["Content-Type"] == "application/http;msgtype=response"
    assert h["Content-Length"] == str(len(RESPONSE))
    assert h["WARC-Block-Digest"] == sha1(RESPONSE)
    assert h["WARC-Payload-Digest"] == sha1(BODY)
    assert r.block.read_all() == RESPONSE
    assert r.version == "WARC/1.1"
    assert_valid(r)
    assert field_warnings(r.version, r.headers) == []


def test_chunked_payload_digest_is_over_the_dechunked_body() -> None:
    r = builder().response("http://example.com/", CHUNKED)
    assert r.headers["WARC-Block-Digest"] == sha1(CHUNKED)  # the wire bytes
    assert r.headers["WARC-Payload-Digest"] == sha1(BODY)  # chunking removed
    assert r.headers["WARC-Payload-Digest"] != sha1(CHUNKED[CHUNKED.index(b"\r\n\r\n") + 4 :])


def test_content_encoding_is_kept_in_the_payload() -> None:
    import gzip

    gz = gzip.compress(BODY, mtime=0)
    wire = HEAD + b"Content-Encoding: gzip\r\nContent-Length: %d\r\n\r\n" % len(gz) + gz
    r = builder().response("http://example.com/", wire)
    assert r.headers["WARC-Payload-Digest"] == sha1(gz)


def test_sha256_option_and_warc_1_0() -> None:
    b = builder(digest_algorithm="sha256", version="WARC/1.0", date_precision=3)
    r = b.response("http://example.com/", RESPONSE)
    assert r.headers["WARC-Block-Digest"] == "sha256:" + hashlib.sha256(RESPONSE).hexdigest()
    assert r.headers["WARC-Payload-Digest"] == "sha256:" + hashlib.sha256(BODY).hexdigest()
    assert r.version == "WARC/1.0"
    assert r.headers["WARC-Date"] == "2024-03-01T12:30:45Z"  # 1.0: whole seconds
    assert_valid(r)
    assert builder(date_precision=3).format_date() == "2024-03-01T12:30:45.123Z"


def test_builder_rejects_bad_configuration() -> None:
    with pytest.raises(ValueError):
        RecordBuilder(version="WARC/0.18")
    with pytest.raises(ValueError):
        RecordBuilder(digest_algorithm="crc32")
    with pytest.raises(ValueError):
        RecordBuilder(date_precision=7)


def test_exchange_shares_one_date_and_links_records() -> None:
    ticks = iter([WHEN.replace(second=s) for s in range(10, 60)])
    b = RecordBuilder(clock=lambda: next(ticks), record_ids=seeded_record_ids(1))
    meta = MetadataFields(
        via="http://example.org/links.html",
        hops_from_seed="LLE",
        source_tag="http://example.org/",
        fetch_time_ms=231,
        outlinks=(
            "http://example.com/style.css E link/@href",
            "http://www.iana.org/domains/example L a/@href",
        ),
    )
    resp, req, md = b.exchange(
        "http://example.com/", RESPONSE, REQUEST, ip_address="93.184.216.34", metadata=meta
    )
    assert [r.type for r in (resp, req, md)] == ["response", "request", "metadata"]
    assert {r.headers["WARC-Date"] for r in (resp, req, md)} == {"2024-03-01T12:30:10Z"}
    assert req.headers.concurrent_to == [resp.record_id]
    assert md.headers.concurrent_to == [resp.record_id]
    assert len({resp.record_id, req.record_id, md.record_id}) == 3
    assert req.headers["Content-Type"] == "application/http;msgtype=request"
    assert req.headers["WARC-IP-Address"] == "93.184.216.34"
    assert req.headers["WARC-Block-Digest"] == sha1(REQUEST)
    assert req.headers["WARC-Payload-Digest"] == sha1(b"")
    assert md.block.read_all() == (
        b"via: http://example.org/links.html\r\nhopsFromSeed: LLE\r\n"
        b"sourceTag: http://example.org/\r\nfetchTimeMs: 231\r\n"
        b"outlink: http://example.com/style.css E link/@href\r\n"
        b"outlink: http://www.iana.org/domains/example L a/@href\r\n"
    )
    assert md.headers["Content-Type"] == "application/warc-fields"
    assert "WARC-Payload-Digest" not in md.headers
    for r in (resp, req, md):
        assert_valid(r)


def test_revisit_identical_payload_digest() -> None:
    b = builder()
    orig = b.response("http://example.com/", RESPONSE)
    original = Original(
        "http://example.com/",
        orig.headers["WARC-Date"],
        orig.record_id,
        orig.headers.payload_digest,
    )
    rv = b.revisit("http://example.com/", CHUNKED, original, ip_address="93.184.216.34")
    h = rv.headers
    head = CHUNKED[: CHUNKED.index(b"\r\n\r\n") + 4]
    assert rv.block.read_all() == head  # the HTTP headers kept, body dropped
    assert h["WARC-Profile"] == "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest"
    assert h["WARC-Truncated"] == "length"
    assert h["WARC-Payload-Digest"] == sha1(BODY)
    assert h["WARC-Block-Digest"] == sha1(head)
    assert h["WARC-Refers-To"] == orig.record_id
    assert h["WARC-Refers-To-Target-URI"] == "http://example.com/"
    assert h["WARC-Refers-To-Date"] == "2024-03-01T12:30:45Z"
    assert h["Content-Length"] == str(len(head))
    assert_valid(rv)
    assert field_warnings(rv.version, rv.headers) == []


def test_url_agnostic_revisit_from_head_only() -> None:
    """A digest-only dedup hit: other URL, original known by digest and date."""
    original = Original(
        "http://example.org/copy.html",
        datetime(2023, 12, 24, 8, 0, 1, tzinfo=UTC),
        None,
        sha1(BODY),
    )
    rv = builder(version="WARC/1.0").revisit(
        "http://example.com/", RESPONSE[: RESPONSE.index(b"\r\n\r\n") + 4], original
    )
    assert rv.headers["WARC-Profile"] == (
        "http://netpreserve.org/warc/1.0/revisit/identical-payload-digest"
    )
    assert rv.headers["WARC-Refers-To-Date"] == "2023-12-24T08:00:01Z"
    assert rv.headers["WARC-Refers-To-Target-URI"] == "http://example.org/copy.html"
    assert "WARC-Refers-To" not in rv.headers
    assert rv.headers["WARC-Truncated"] == "length"
    assert rv.headers["WARC-Payload-Digest"] == sha1(BODY)
    assert_valid(rv)


def test_revisit_refuses_a_different_payload_or_none() -> None:
    b = builder()
    with pytest.raises(InvalidRecordError, match="not identical"):
        b.revisit(
            "http://example.com/",
            RESPONSE,
            Original("http://example.com/", "2024-01-01T00:00:00Z", None, sha1(b"other")),
        )
    with pytest.raises(InvalidRecordError, match="needs a payload digest"):
        b.revisit(
            "http://example.com/",
            NOT_MODIFIED.replace(b"304 Not Modified", b"200 OK"),
            Original("http://example.com/", "2024-01-01T00:00:00Z"),
        )
    with pytest.raises(InvalidRecordError, match="not an HTTP response"):
        b.revisit(
            "http://example.com/",
            b"\x00\x01binary",
            Original("http://example.com/", "2024-01-01T00:00:00Z", None, sha1(BODY)),
        )


def test_revisit_server_not_modified() -> None:
    b = builder()
    original = Original(
        "http://example.com/",
        "2024-02-01T10:00:00Z",
        "<urn:uuid:00000000-0000-4000-8000-000000000001>",
        sha1(BODY),
    )
    resp, req = b.exchange("http://example.com/", NOT_MODIFIED, REQUEST, original=original)
    assert resp.type == "revisit"
    assert resp.headers["WARC-Profile"] == (
        "http://netpreserve.org/warc/1.1/revisit/server-not-modified"
    )
    assert resp.block.read_all() == NOT_MODIFIED
    assert "WARC-Truncated" not in resp.headers  # nothing was cut from a 304
    assert resp.headers["WARC-Payload-Digest"] == sha1(BODY)  # the original's
    assert req.headers.concurrent_to == [resp.record_id]
    assert_valid(resp)


def test_resource_conversion_and_warcinfo() -> None:
    png = bytes.fromhex(
        "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
        "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082"
    )
    b = builder()
    shot = b.resource(
        "urn:view:http://example.com/",
        png,
        "image/png",
        concurrent_to=["<urn:uuid:00000000-0000-4000-8000-000000000002>"],
    )
    assert shot.headers["WARC-Block-Digest"] == shot.headers["WARC-Payload-Digest"] == sha1(png)
    assert shot.headers["Content-Type"] == "image/png"
    assert_valid(shot)
    conv = b.conversion(
        "http://example.com/", b"Example Domain\n", "text/plain", refers_to=shot.record_id
    )
    assert conv.headers["WARC-Refers-To"] == shot.record_id
    assert conv.headers["WARC-Payload-Digest"] == sha1(b"Example Domain\n")
    assert_valid(conv)
    info = b.warcinfo(
        WarcinfoFields(
            hostname="crawl1.example.org",
            ip="10.0.0.5",
            operator="Web Archive <archive@example.org>",
            http_header_user_agent="webark/0.1 (+https://example.org/bot)",
            is_part_of="weekly-2024-03",
            extra=(("description", "weekly crawl"),),
        ),
        "TEST-20240301123045123-00000-1~crawl1~0.warc.gz",
    )
    assert info.headers["WARC-Filename"] == "TEST-20240301123045123-00000-1~crawl1~0.warc.gz"
    assert "WARC-Target-URI" not in info.headers
    assert info.block.read_all().decode().split("\r\n") == [
        f"software: webark/{__version__}",
        "hostname: crawl1.example.org",
        "ip: 10.0.0.5",
        "operator: Web Archive <archive@example.org>",
        "http-header-user-agent: webark/0.1 (+https://example.org/bot)",
        "robots: obey",
        "format: WARC File Format 1.1",
        "conformsTo: https://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/",
        "isPartOf: weekly-2024-03",
        "description: weekly crawl",
        "",
    ]
    assert_valid(info)


def test_spooled_blocks_are_digested_by_streaming() -> None:
    import tempfile

    big = (BODY * 40000)[: 5 * 1024 * 1024]
    wire = HEAD + b"Content-Length: %d\r\n\r\n" % len(big) + big
    with tempfile.TemporaryFile() as tmp:
        tmp.write(wire)
        tmp.seek(0)
        r = builder().response("http://example.com/big", Block(file=tmp, size=len(wire)))
        assert not r.block.in_memory
        assert r.headers["WARC-Block-Digest"] == sha1(wire)
        assert r.headers["WARC-Payload-Digest"] == sha1(big)


def test_warc_fields_refuse_injection() -> None:
    assert warc_fields_block([("via", "http://a/")]) == b"via: http://a/\r\n"
    with pytest.raises(InvalidRecordError):
        warc_fields_block([("via", "http://a/\r\nhopsFromSeed: X")])
    with pytest.raises(InvalidRecordError):
        warc_fields_block([("bad name", "x")])
    assert profile_uri("server-not-modified", "WARC/1.0") == (
        "http://netpreserve.org/warc/1.0/revisit/server-not-modified"
    )
