"""Exchange.to_records: response/request/metadata, revisits, failures."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from fetch_support import Server, fetcher, keep_alive, run, warc_writer

from webark.fetch import Exchange, FetchError, FetchFailure
from webark.warc.builders import MetadataFields, Original, RecordBuilder
from webark.warc.check import check_file
from webark.warc.record import Block

BODY = b"<html><a href='/x'>x</a></html>"
OK = (
    b'HTTP/1.1 200 OK\r\nETag: "v1"\r\nContent-Type: text/html\r\nContent-Length: %d\r\n\r\n'
    % len(BODY)
    + BODY
)
NOT_MODIFIED = b'HTTP/1.1 304 Not Modified\r\nETag: "v1"\r\n\r\n'
WHEN = datetime(2026, 1, 1, 12, 0, 0, tzinfo=UTC)


def answer(req: bytes) -> bytes:
    return NOT_MODIFIED if b"If-None-Match" in req else OK


def two_fetches() -> tuple[Exchange, Exchange]:
    async def go() -> tuple[Exchange, Exchange]:
        async with Server(keep_alive(answer)) as srv, fetcher(clock=lambda: WHEN) as f:
            first = await f.fetch(srv.url("/page"))
            again = await f.fetch(srv.url("/page"), headers=[("If-None-Match", '"v1"')])
        return first, again

    return run(go())


def test_response_request_metadata(tmp_warcs: Path) -> None:
    ex, _ = two_fetches()
    meta = MetadataFields(via="http://127.0.0.1/", hops_from_seed="L", outlinks=("/x L a/@href",))
    with warc_writer(tmp_warcs) as w:
        recs = w.write(*ex.to_records(w.builder, meta))
        path = w.paths[0]
    assert [r.type for r in recs] == ["response", "request", "metadata"]
    assert {r.headers.get("WARC-Date") for r in recs} == {"2026-01-01T12:00:00Z"}
    block = recs[2].block.read_all().decode()
    assert f"fetchTimeMs: {ex.duration_ms}\r\n" in block and "hopsFromSeed: L\r\n" in block
    assert recs[2].headers.get("WARC-Concurrent-To") == recs[0].record_id
    assert check_file(path).ok


def test_metadata_keeps_a_given_fetch_time() -> None:
    ex, _ = two_fetches()
    recs = ex.to_records(RecordBuilder(), MetadataFields(fetch_time_ms=7))
    assert b"fetchTimeMs: 7\r\n" in recs[2].block.read_all()


def test_not_modified_becomes_server_not_modified_revisit(tmp_warcs: Path) -> None:
    first, again = two_fetches()
    assert again.status == 304
    with warc_writer(tmp_warcs) as w:
        orig = w.write(*first.to_records(w.builder))[0]
        original = Original(
            orig.target_uri or "",
            orig.headers.get("WARC-Date") or "",
            orig.record_id,
            first.payload_digest,
        )
        recs = w.write(*again.to_records(w.builder, original=original))
        path = w.paths[0]
    rev = recs[0]
    assert rev.type == "revisit"
    assert (rev.headers.get("WARC-Profile") or "").endswith("/revisit/server-not-modified")
    assert rev.headers.get("WARC-Refers-To") == orig.record_id
    assert rev.headers.get("WARC-Payload-Digest") == first.payload_digest
    assert rev.block.read_all() == NOT_MODIFIED
    assert check_file(path).ok


def test_identical_payload_revisit() -> None:
    first, _ = two_fetches()
    original = Original("http://127.0.0.1/old", WHEN, "<urn:uuid:x>", first.payload_digest)
    recs = first.to_records(RecordBuilder(), original=original)
    assert recs[0].type == "revisit"
    assert (recs[0].headers.get("WARC-Profile") or "").endswith("identical-payload-digest")
    assert recs[0].block.read_all() == OK[: first.head_length]


def test_failed_exchange_has_no_records() -> None:
    ex = Exchange(
        url="http://example.test/",
        ip_address=None,
        request=b"",
        response=Block(),
        status=-2,
        started=WHEN,
        duration_ms=3,
        error=FetchFailure(-2, "ConnectionRefusedError", "refused"),
    )
    assert not ex.ok and ex.annotations == ("err=ConnectionRefusedError",)
    with pytest.raises(FetchError, match=r"example\.test"):
        ex.to_records(RecordBuilder())


def test_extra_fields_reach_response_and_request() -> None:
    ex, _ = two_fetches()
    recs = ex.to_records(RecordBuilder(), extra_fields=[("WARC-Protocol", "http/1.1")])
    assert [r.headers.get("WARC-Protocol") for r in recs] == ["http/1.1", "http/1.1"]
