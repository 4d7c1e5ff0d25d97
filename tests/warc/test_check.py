"""`webark warc check` on real files: valid ones pass, each broken one fails with the
specific error at the right offset; digests are verified under both readings."""

from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path

import pytest

from webark.core.digests import Digest
from webark.warc.check import check_file
from webark.warc.reader import ArchiveReader


def _codes(rep, severity: str = "error") -> list[tuple[int | None, str]]:
    out = [(p.offset, p.code) for p in rep.file_problems if p.severity == severity]
    for r in rep.records:
        out += [(p.offset, p.code) for p in r.problems if p.severity == severity]
    return sorted(out, key=lambda t: (t[0] or -1, t[1]))


VALID = [
    "pywb/warcs/iana.warc.gz",
    "pywb/warcs/dupes.warc.gz",
    "warcio/example.warc.gz",
    "warcio/example-iana.org-chunked.warc",
    "resiliparse/warcfile.warc.gz",
    "jwat/warc/IAH-20080430204825-00000-blackbook.warc.gz",
    "jwat/warc/valid-warcfile-duplicate-concurrentto.warc",
    "jwat/warc/valid-warcfile-fields-continuation.warc",
    "jwat/warc/valid-warcfile-utf8.warc",
    "webarchive-discovery/transfer_compression_brotli.warc.gz",
]


@pytest.mark.parametrize("name", VALID)
def test_valid_files_have_no_errors(corpus: Path, name: str) -> None:
    rep = check_file(corpus / name)
    assert rep.ok, _codes(rep)
    assert rep.records


def test_iana_payload_digests_and_which_reading_matched(corpus: Path) -> None:
    rep = check_file(corpus / "pywb/warcs/iana.warc.gz")
    assert rep.counts == {"warcinfo": 1, "response": 48, "revisit": 123, "request": 171}
    payload = [d for r in rep.records for d in r.digests if d.field == "WARC-Payload-Digest"]
    ok = [d for d in payload if d.status == "ok"]
    assert len(ok) == 48  # every response; revisits are unverifiable here
    assert {d.status for d in payload} == {"ok", "unverifiable"}
    # iana.warc.gz stored 25 bodies de-chunked under "Transfer-Encoding: chunked" (interop
    # bug 3). Independently: for those, the body as stored has no chunk framing and its
    # sha1 is the header value.
    readings = {r.offset: d.reading for r in rep.records for d in r.digests if d.reading}
    odd = {o for o, rd in readings.items() if rd == "dechunked-body-under-chunked-header"}
    assert len(odd) == 25
    assert sum(1 for rd in readings.values() if rd == "transfer-decoded") == 23
    for rec in ArchiveReader(corpus / "pywb/warcs/iana.warc.gz"):
        if rec.offset in odd:
            assert rec.http.is_chunked
            assert rec.payload_was_dechunked_ok is False
            raw_body = rec.block.read_all()[rec.http.head_length :]
            want = Digest.parse(rec.headers.payload_digest).raw
            assert hashlib.sha1(raw_body).digest() == want


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        # request record Content-Length 1 byte short (pywb's own fixture)
        ("pywb/warcs/example.warc", [(4061, "content-length-mismatch")]),
        ("warcio/example-trunc.warc", [(1197, "content-length-mismatch")]),
        ("warcio-js/example-bad-length.warc",
         [(1197, "content-length-mismatch"), (3370, "single-crlf-after-block")]),
        ("jwat/warc/invalid-warcfile-record-then-garbage.warc", [(1135, "not-a-record")]),
        ("resiliparse/clipped.warc.gz", [(0, "truncated-member"), (0, "truncated-record")]),
        ("jwat/warc/invalid-warcfile-lonely-revisit.warc", [(0, "bad-content-length")]),
        # node-warc writes a single CRLF after each block (WARC 1.1 §4 requires two)
        ("node-warc/books.toscrape.warc", [(0, "single-crlf-after-block")]),
    ],
)
def test_broken_files_report_the_error_at_its_offset(corpus: Path, name: str,
                                                     expected: list) -> None:
    rep = check_file(corpus / name)
    assert not rep.ok
    found = _codes(rep)
    for item in expected:
        assert item in found, found


def test_duplicate_fields_reported(corpus: Path) -> None:
    rep = check_file(corpus / "jwat/warc/invalid-warcfile-duplicate-fields.warc")
    dup = [m for r in rep.records for p in r.problems if p.code == "duplicate-field"
           for m in [p.message]]
    assert len(dup) == 6
    assert any("WARC-Record-ID" in m for m in dup)


def test_whole_file_gzip_is_read_and_flagged(corpus: Path) -> None:
    rep = check_file(corpus / "warcio/example-bad-non-chunked.warc.gz")
    assert len(rep.records) == 6
    warnings = [c for _, c in _codes(rep, "warning")]
    assert "offsets-not-seekable" in warnings


def test_warcio_check_agrees_on_digest_failures(corpus: Path) -> None:
    """warcio is the peer: `warcio check` must flag the same file we flag."""
    path = corpus / "warcio/example-digest.warc"
    peer = subprocess.run([str(Path(sys.executable).parent / "warcio"), "check", str(path)],
                          capture_output=True, text=True)
    assert peer.returncode != 0
    rep = check_file(path)
    assert not rep.ok
    # the record with the corrupted Base32 payload digest is the first one
    assert any(off == 0 for off, _ in _codes(rep))
