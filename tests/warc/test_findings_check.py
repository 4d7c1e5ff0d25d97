"""Findings 3, 4 and 7 in `webark warc check`: the payload digest of a segmented record
(it covers the reassembled payload, WARC 1.1 §7), WARC-Record-IDs used twice in a file,
and the counts a report carries for the CLI."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from corpus_location import CORPUS
from webark.core.digests import Digest
from webark.warc.check import check_file

EXAMPLE = CORPUS / "warcio" / "example.warc.gz"


def _sha1(data: bytes) -> str:
    return Digest("sha1", hashlib.sha1(data).digest()).label()


def _codes(rep, severity: str = "error") -> list[tuple[int | None, str]]:
    out = [(p.offset, p.code) for p in rep.file_problems if p.severity == severity]
    for r in rep.records:
        out += [(p.offset, p.code) for p in r.problems if p.severity == severity]
    return out


# -- finding 3: segmented records ---------------------------------------------------------
def test_lonely_continuation_payload_digest_is_unverifiable(corpus: Path) -> None:
    rep = check_file(corpus / "jwat/warc/valid-warcfile-contenttype-continuation.warc")
    assert rep.ok
    assert _codes(rep) == []
    (res,) = rep.records[0].digests
    assert (res.field, res.status) == ("WARC-Payload-Digest", "unverifiable")
    assert "segmented" in res.detail


HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 26\r\n\r\n"
BODY = b"abcdefghijklmnopqrstuvwxyz"
ORIGIN = "<urn:uuid:00000000-0000-0000-0000-00000000000a>"


def _rec(fields: list[tuple[str, str]], block: bytes) -> bytes:
    head = "".join(f"{n}: {v}\r\n" for n, v in fields)
    return (f"WARC/1.1\r\n{head}WARC-Block-Digest: {_sha1(block)}\r\n"
            f"Content-Length: {len(block)}\r\n\r\n").encode() + block + b"\r\n\r\n"


def _segmented(tmp_path: Path, payload_digest: str, on_first: bool,
               total: int | None = None) -> Path:
    first_block, second_block = HEAD + BODY[:10], BODY[10:]
    digest = [("WARC-Payload-Digest", payload_digest)]
    first = _rec([("WARC-Type", "response"), ("WARC-Record-ID", ORIGIN),
                  ("WARC-Date", "2024-01-01T00:00:00Z"),
                  ("WARC-Target-URI", "http://example.com/"),
                  ("WARC-Segment-Number", "1"),
                  *(digest if on_first else []),
                  ("Content-Type", "application/http;msgtype=response")], first_block)
    second = _rec([("WARC-Type", "continuation"),
                   ("WARC-Record-ID", "<urn:uuid:00000000-0000-0000-0000-00000000000b>"),
                   ("WARC-Date", "2024-01-01T00:00:00Z"),
                   ("WARC-Target-URI", "http://example.com/"),
                   ("WARC-Segment-Origin-ID", ORIGIN),
                   ("WARC-Segment-Number", "2"),
                   ("WARC-Segment-Total-Length",
                    str(total if total is not None else len(first_block) + len(second_block))),
                   *([] if on_first else digest)], second_block)
    path = tmp_path / "seg.warc"
    path.write_bytes(first + second)
    return path


@pytest.mark.parametrize("on_first", [True, False])
def test_reassembled_payload_digest_is_verified(tmp_path: Path, on_first: bool) -> None:
    rep = check_file(_segmented(tmp_path, _sha1(BODY), on_first))
    assert _codes(rep) == []
    assert rep.ok
    carrier = rep.records[0 if on_first else 1]
    payload = [d for d in carrier.digests if d.field == "WARC-Payload-Digest"]
    assert [(d.status, d.reading) for d in payload] == [("ok", "transfer-decoded")]
    assert payload[0].detail.startswith("reassembled from 2 segments")
    assert rep.digests_verified == 3  # two block digests and the payload digest


@pytest.mark.parametrize("on_first", [True, False])
def test_reassembled_payload_digest_mismatch(tmp_path: Path, on_first: bool) -> None:
    rep = check_file(_segmented(tmp_path, _sha1(BODY[:10]), on_first))
    offset = rep.records[0 if on_first else 1].offset
    assert _codes(rep) == [(offset, "warc-payload-digest-mismatch")]
    assert f"payload is {_sha1(BODY)}" in rep.errors[0].message


def test_segment_total_length_mismatch(tmp_path: Path) -> None:
    rep = check_file(_segmented(tmp_path, _sha1(BODY), True, total=5))
    assert _codes(rep) == [(rep.records[1].offset, "segment-total-length-mismatch")]
    (res,) = [d for d in rep.records[0].digests if d.field == "WARC-Payload-Digest"]
    assert res.status == "unverifiable"


# -- finding 4: duplicate record ids ------------------------------------------------------
OFFSETS = [0, 353, 784, 2012, 2621, 3207]
SIZE = 3816


def test_concatenated_file_has_duplicate_ids(tmp_path: Path) -> None:
    path = tmp_path / "dup.warc.gz"
    path.write_bytes(EXAMPLE.read_bytes() * 100)
    rep = check_file(path)
    assert not rep.ok
    dups = [p for p in rep.errors if p.code == "duplicate-record-id"]
    assert len(dups) == 6 * 99
    assert [p.offset for p in dups[:6]] == [SIZE + o for o in OFFSETS]
    assert "is also the id of the record at 784" in dups[2].message
    assert "<urn:uuid:a9c51e3e-0221-11e7-bf66-0242ac120005>" in dups[2].message
    assert {p.code for p in rep.errors} == {"duplicate-record-id"}


def test_duplicate_ids_in_one_whole_file_gzip_member(tmp_path: Path) -> None:
    """All records of a whole-file gzip share one offset: still found."""
    import gzip
    import zlib

    data, plain = EXAMPLE.read_bytes(), b""
    while data:
        d = zlib.decompressobj(zlib.MAX_WBITS | 16)
        plain += d.decompress(data)
        data = d.unused_data
    path = tmp_path / "whole.warc.gz"
    path.write_bytes(gzip.compress(plain * 2, mtime=0))
    rep = check_file(path)
    assert len([p for p in rep.errors if p.code == "duplicate-record-id"]) == 6


def test_record_id_key_ignores_uuid_case() -> None:
    from webark.warc.check import record_id_key

    a = "<urn:uuid:A9C51E3E-0221-11E7-BF66-0242AC120005>"
    b = "<urn:uuid:a9c51e3e-0221-11e7-bf66-0242ac120005> "
    assert record_id_key(a) == record_id_key(b)
    assert len(record_id_key(a)) == 16
    assert record_id_key("<http://example.com/id/1>") != record_id_key("<http://example.com/id/2>")
    assert len(record_id_key("<http://example.com/id/1>")) == 16


def test_no_duplicates_in_a_valid_file() -> None:
    rep = check_file(EXAMPLE)
    assert rep.ok


# -- finding 7: counts for the CLI ----------------------------------------------------------
def test_report_counts(tmp_path: Path) -> None:
    path = tmp_path / "dup.warc.gz"
    path.write_bytes(EXAMPLE.read_bytes() * 2)
    rep = check_file(path)
    assert rep.record_count == 12
    assert rep.error_count == 6
    assert rep.warning_count == len([p for r in rep.records for p in r.problems
                                     if p.severity == "warning"]) > 0
    assert rep.warning_count == 8
    assert rep.digests_verified == 14
    assert rep.digest_counts == {"ok": 14, "unverifiable": 2}
    js = rep.to_json()
    assert (js["records"], js["errors"], js["warnings"]) == (12, 6, rep.warning_count)
    assert js["digests"] == {"ok": 14, "unverifiable": 2}
