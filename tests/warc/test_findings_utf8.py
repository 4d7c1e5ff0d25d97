"""Finding 2: WARC header bytes that are not UTF-8 are kept as they are (surrogate
escapes, written back unchanged) and reported as forgiven ``non-utf8-field-value``; the
fast path hands such records to the careful reader (fastwarc turns them into U+FFFD).
Before the fix `recompress` rewrote ``\\xe9`` as ``EF BF BD``."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from webark.warc.check import check_file
from webark.warc.convert import recompress
from webark.warc.headers import WarcHeaders
from webark.warc.reader import ArchiveReader


def _record(uri: bytes, rid: str = "12345678-1234-1234-1234-123456789abc") -> bytes:
    return (b"WARC/1.1\r\nWARC-Type: resource\r\n"
            b"WARC-Record-ID: <urn:uuid:" + rid.encode() + b">\r\n"
            b"WARC-Date: 2024-01-01T00:00:00Z\r\n"
            b"WARC-Target-URI: " + uri + b"\r\n"
            b"Content-Type: text/plain\r\nContent-Length: 5\r\n\r\nhello\r\n\r\n")


LATIN1 = _record(b"http://example.com/caf\xe9")
RAW_VALUE = "http://example.com/caf\udce9"


def _write(tmp_path: Path, name: str, records: list[bytes]) -> Path:
    path = tmp_path / name
    if name.endswith(".gz"):
        path.write_bytes(b"".join(gzip.compress(r, mtime=0) for r in records))
    else:
        path.write_bytes(b"".join(records))
    return path


@pytest.mark.parametrize("name", ["l.warc", "l.warc.gz"])
@pytest.mark.parametrize("careful", [False, True])
def test_non_utf8_value_is_kept_and_reported(tmp_path: Path, name: str, careful: bool) -> None:
    ok = _record(b"http://example.com/a", "00000000-0000-0000-0000-000000000001")
    path = _write(tmp_path, name, [ok, LATIN1, ok.replace(b"0001>", b"0002>")])
    reader = ArchiveReader(path, careful=careful)
    recs = list(reader)
    assert len(recs) == 3
    rec = recs[1]
    assert rec.headers["WARC-Target-URI"] == RAW_VALUE
    assert rec.target_uri == "http://example.com/caf%E9"
    assert [p.code for p in rec.forgiven] == ["non-utf8-field-value"]
    assert rec.forgiven[0].severity == "forgiven"
    assert "caf\\xe9" in rec.forgiven[0].message
    assert b"WARC-Target-URI: http://example.com/caf\xe9\r\n" in rec.headers.to_bytes(rec.version)
    assert b"\xef\xbf\xbd" not in rec.headers.to_bytes(rec.version)
    # the fast path hands over at the record, not before it
    assert reader.engine == ("careful" if careful else "fast+careful")
    assert recs[0].forgiven == () and recs[2].forgiven == ()


def test_recompress_keeps_the_bytes(tmp_path: Path) -> None:
    src = _write(tmp_path, "l.warc", [LATIN1])
    dst = tmp_path / "l.warc.gz"
    recompress(src, dst)
    out = gzip.decompress(dst.read_bytes())
    assert b"WARC-Target-URI: http://example.com/caf\xe9\r\n" in out
    assert b"\xef\xbf\xbd" not in out


def test_check_reports_forgiven(tmp_path: Path) -> None:
    rep = check_file(_write(tmp_path, "l.warc", [LATIN1]))
    assert rep.ok
    assert [(p.severity, p.code) for p in rep.records[0].problems if p.severity == "forgiven"] \
        == [("forgiven", "non-utf8-field-value")]
    assert rep.records[0].target_uri == "http://example.com/caf%E9"


def test_check_type_with_bad_bytes_is_printable(tmp_path: Path) -> None:
    rec = LATIN1.replace(b"WARC-Type: resource", b"WARC-Type: resource\xe9")
    rep = check_file(_write(tmp_path, "t.warc", [rec]))
    assert dict(rep.counts) == {"resource\\xe9": 1}
    assert rep.records[0].type.encode("utf-8") == b"resource\\xe9"


@pytest.mark.parametrize("name", ["u.warc", "u.warc.gz"])
def test_valid_utf8_stays_on_the_fast_path(tmp_path: Path, name: str) -> None:
    path = _write(tmp_path, name, [_record("http://example.com/café".encode())] * 2)
    reader = ArchiveReader(path)
    recs = list(reader)
    assert reader.engine == "fast"
    assert [r.target_uri for r in recs] == ["http://example.com/café"] * 2
    assert all(r.forgiven == () for r in recs)


def test_headers_to_bytes_round_trips_surrogate_escapes() -> None:
    h = WarcHeaders([("X-Name", "a\udce9b"), ("WARC-Target-URI", "http://x/\udcff")])
    assert h.to_bytes("WARC/1.1") == (
        b"WARC/1.1\r\nX-Name: a\xe9b\r\nWARC-Target-URI: http://x/\xff\r\n\r\n")
    assert h.target_uri == "http://x/%FF"
