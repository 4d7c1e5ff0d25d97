"""Findings 5 and 6 in WarcWriter: hand-built records that would make an invalid WARC
are refused (supplied digests that do not match the block, an ``application/http``
block that is not an HTTP message, an unknown revisit profile), and writing a big block
no longer costs several copies of it in memory."""

from __future__ import annotations

import dataclasses
import gzip
import hashlib
import json
import subprocess
import sys
import textwrap
from datetime import UTC, datetime
from pathlib import Path

import pytest

from webark.core.digests import Digest
from webark.core.errors import InvalidRecordError
from webark.core.ids import seeded_record_ids
from webark.warc.builders import RecordBuilder, WarcinfoFields
from webark.warc.check import check_file
from webark.warc.headers import WarcHeaders
from webark.warc.reader import ArchiveReader
from webark.warc.record import Block, WarcRecord
from webark.warc.writer import WarcWriter

WHEN = datetime(2024, 3, 1, 12, 30, 45, tzinfo=UTC)
INFO = WarcinfoFields(hostname="h")
BODY = b"<p>hello</p>"
RESPONSE = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 12\r\n\r\n" + BODY
CHUNKED_BODY = b"5\r\n<p>he\r\n7\r\nllo</p>\r\n0\r\n\r\n"
CHUNKED = (b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nTransfer-Encoding: chunked\r\n\r\n"
           + CHUNKED_BODY)


def _sha1(data: bytes) -> str:
    return Digest("sha1", hashlib.sha1(data).digest()).label()


def _writer(tmp_path: Path, **kw: object) -> WarcWriter:
    b = RecordBuilder(clock=lambda: WHEN, record_ids=seeded_record_ids(7))
    return WarcWriter(tmp_path, warcinfo=INFO, builder=b, **kw)  # type: ignore[arg-type]


def _hand_built(rtype: str, block: bytes, content_type: str,
                extra: list[tuple[str, str]]) -> WarcRecord:
    """A record made without the builder, the way a caller copying records would."""
    fields = [("WARC-Type", rtype),
              ("WARC-Record-ID", "<urn:uuid:11111111-2222-3333-4444-555555555555>"),
              ("WARC-Date", "2024-03-01T12:30:45Z"),
              ("WARC-Target-URI", "http://example.com/"), *extra]
    if block:
        fields.append(("Content-Type", content_type))
    fields.append(("Content-Length", str(len(block))))
    return WarcRecord(WarcHeaders(fields), Block(block))


def _refused(tmp_path: Path, rec: WarcRecord, code: str, **kw: object) -> str:
    with _writer(tmp_path, **kw) as w, pytest.raises(InvalidRecordError) as e:
        w.write(rec)
    assert f"{code}:" in str(e.value)
    assert w.paths == []  # nothing written, no file opened
    assert list(tmp_path.iterdir()) == []
    return str(e.value)


# -- finding 5: digests ---------------------------------------------------------------------
def test_wrong_block_digest_is_refused(tmp_path: Path) -> None:
    rec = _hand_built("response", RESPONSE, "application/http;msgtype=response",
                      [("WARC-Block-Digest", _sha1(b"something else"))])
    msg = _refused(tmp_path, rec, "warc-block-digest-mismatch")
    assert f"block is {_sha1(RESPONSE)}" in msg


def test_wrong_payload_digest_on_response_is_refused(tmp_path: Path) -> None:
    rec = _hand_built("response", RESPONSE, "application/http;msgtype=response",
                      [("WARC-Block-Digest", _sha1(RESPONSE)),
                       ("WARC-Payload-Digest", _sha1(RESPONSE))])  # digest of the block
    msg = _refused(tmp_path, rec, "warc-payload-digest-mismatch")
    assert f"payload is {_sha1(BODY)}" in msg


def test_wrong_payload_digest_on_resource_is_refused(tmp_path: Path) -> None:
    rec = _hand_built("resource", b"hello", "text/plain",
                      [("WARC-Payload-Digest", _sha1(b"hellO"))])
    _refused(tmp_path, rec, "warc-payload-digest-mismatch")


@pytest.mark.parametrize("payload", [BODY, CHUNKED_BODY], ids=["decoded", "chunked-bytes"])
def test_right_digests_are_written(tmp_path: Path, payload: bytes) -> None:
    """Both readings of a chunked payload are accepted (wget/warcio digest the chunked
    bytes; copying their records must keep working)."""
    rec = _hand_built("response", CHUNKED, "application/http;msgtype=response",
                      [("WARC-Block-Digest", _sha1(CHUNKED)),
                       ("WARC-Payload-Digest", _sha1(payload))])
    with _writer(tmp_path) as w:
        (out,) = w.write(rec)
    assert out.headers["WARC-Payload-Digest"] == _sha1(payload)
    assert check_file(w.paths[0]).ok


def test_builder_digests_are_hashed_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The builder's block remembers its digests, so the writer's check of them does
    not hash the block again."""
    b = RecordBuilder(clock=lambda: WHEN, record_ids=seeded_record_ids(3))
    chunked = b.response("http://example.com/c", CHUNKED)
    plain = b.response("http://example.com/", RESPONSE)
    head = len(RESPONSE) - len(BODY)
    assert set(plain.block._digests or {}) == {("sha1", 0, False), ("sha1", head, False)}
    news: list[str] = []
    real_new = hashlib.new

    def counting(name: str, *args: object, **kw: object) -> object:
        news.append(name)
        return real_new(name, *args, **kw)  # type: ignore[arg-type]

    with _writer(tmp_path) as w:
        w.write(plain)  # opens the file: its warcinfo is hashed (by the builder)
        monkeypatch.setattr(hashlib, "new", counting)
        w.write(chunked)
        w.write(plain)
        monkeypatch.undo()
    assert news == []


# -- finding 5: application/http blocks -------------------------------------------------------
@pytest.mark.parametrize("rtype", ["response", "request"])
@pytest.mark.parametrize("block", [b"hello world", b""], ids=["not-http", "empty"])
def test_http_content_type_needs_an_http_block(tmp_path: Path, rtype: str, block: bytes) -> None:
    rec = _hand_built(rtype, block, f"application/http;msgtype={rtype}", [])
    if not block:  # an empty block has no Content-Type of its own: give it one
        rec = dataclasses.replace(rec, headers=WarcHeaders(
            [*rec.headers.fields[:-1], ("Content-Type", f"application/http;msgtype={rtype}"),
             ("Content-Length", "0")]))
    msg = _refused(tmp_path, rec, "not-http")
    assert ("empty" if not block else f"not an HTTP {rtype}") in msg


def test_builder_response_with_a_non_http_block_is_refused(tmp_path: Path) -> None:
    b = RecordBuilder(clock=lambda: WHEN, record_ids=seeded_record_ids(3))
    _refused(tmp_path, b.response("http://example.com/", b"not http at all"), "not-http")


# -- finding 5: revisit profiles ----------------------------------------------------------------
def _revisit(profile: str) -> WarcRecord:
    return _hand_built("revisit", b"", "", [
        ("WARC-Profile", profile),
        ("WARC-Refers-To-Target-URI", "http://example.com/"),
        ("WARC-Refers-To-Date", "2024-01-01T00:00:00Z"),
        ("WARC-Payload-Digest", _sha1(BODY))])


def test_unknown_revisit_profile_is_refused(tmp_path: Path) -> None:
    typo = "http://netpreserve.org/warc/1.1/revisit/identical-payload-digst"
    msg = _refused(tmp_path, _revisit(typo), "unknown-profile")
    assert typo in msg and "allow_unknown_profile=True" in msg


def test_unknown_revisit_profile_allowed_explicitly(tmp_path: Path) -> None:
    pywb = "http://netpreserve.org/warc/1.0/revisit/uri-agnostic-identical-payload-digest"
    with _writer(tmp_path, allow_unknown_profile=True) as w:
        (out,) = w.write(_revisit(pywb))
    assert out.headers["WARC-Profile"] == pywb
    recs = list(ArchiveReader(w.paths[0]))
    assert [r.type for r in recs] == ["warcinfo", "revisit"]


@pytest.mark.parametrize("version", ["1.0", "1.1"])
def test_known_revisit_profiles_are_written(tmp_path: Path, version: str) -> None:
    with _writer(tmp_path) as w:
        w.write(_revisit(f"http://netpreserve.org/warc/{version}/revisit/server-not-modified"))
    assert len(list(ArchiveReader(w.paths[0]))) == 2


# -- finding 6: memory ------------------------------------------------------------------------
_MEASURE = textwrap.dedent("""
    import json, os, sys, tempfile
    from webark.warc.builders import WarcinfoFields
    from webark.warc.writer import WarcWriter

    def status(key):
        for line in open("/proc/self/status"):
            if line.startswith(key):
                return int(line.split()[1]) * 1024

    compression, n, directory = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    head = b"HTTP/1.1 200 OK\\r\\nContent-Length: %d\\r\\n\\r\\n" % n
    src = os.path.join(directory, "block")
    with open(src, "wb") as f:  # build the block without a second copy of it in memory
        f.write(head)
        for _ in range(n >> 20):
            f.write(os.urandom(1 << 20))
    with open(src, "rb") as f:
        block = f.read()
    os.remove(src)
    before = status("VmHWM")
    with WarcWriter(directory, compression=compression,
                    warcinfo=WarcinfoFields(hostname="h")) as w:
        out = w.write(*w.builder.exchange("http://example.com/big", block,
                                          b"GET /big HTTP/1.1\\r\\nHost: example.com\\r\\n\\r\\n"))
    print(json.dumps({"extra": status("VmHWM") - before, "path": w.paths[0],
                      "length": out[0].length}))
""")


@pytest.mark.parametrize("compression", ["gzip", "zstd", "none"])
def test_writing_a_big_block_does_not_copy_it(tmp_path: Path, compression: str) -> None:
    """48 MiB of random (incompressible) body: the writer used to need 115-173 MB more
    than the block itself (a slice for the payload digest, the serialized record, the
    compressed member, their concatenation); now at most about 16 MiB of compressed
    output is held before it is spooled to a temporary file."""
    n = 48 << 20
    run = subprocess.run([sys.executable, "-c", _MEASURE, compression, str(n), str(tmp_path)],
                         capture_output=True, text=True, check=True)
    res = json.loads(run.stdout)
    assert res["extra"] < 32 << 20, res
    recs = list(ArchiveReader(res["path"]))
    assert [r.type for r in recs] == ["warcinfo", "response", "request"]
    assert recs[1].block.size == n + len(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % n)
    # uncompressed: the reader's length leaves out CRLF CRLF (as pywb's CDX), the
    # writer's counts the bytes it wrote
    assert recs[1].length == res["length"]
    rep = check_file(res["path"])
    assert rep.ok and rep.digests_verified == 5


def test_big_in_memory_block_round_trips(tmp_path: Path) -> None:
    """The streamed member is the same record as the one-shot member."""
    body = bytes(range(256)) * (12 << 12)  # 3 MiB, several 1 MiB pieces
    block = b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(body) + body
    for compression in ("gzip", "zstd", "none"):
        d = tmp_path / compression
        d.mkdir()
        with _writer(d, compression=compression) as w:
            (resp,) = w.write(w.builder.response("http://example.com/", block))
        (rec,) = [r for r in ArchiveReader(w.paths[0]) if r.type == "response"]
        assert rec.block.read_all() == block
        assert rec.offset == resp.offset
        assert rec.length == resp.length
        if compression == "gzip":
            with open(w.paths[0], "rb") as f:
                f.seek(resp.offset)
                member = f.read(resp.length)
            assert gzip.decompress(member).endswith(body + b"\r\n\r\n")
