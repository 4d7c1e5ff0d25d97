"""Real HTTP exchanges (pywb's iana.warc.gz, 2014) written through WarcWriter and read
back by the peers: ``warcio check`` (CLI) and fastwarc's digest verification; plus byte-
for-byte round trips.

iana.warc.gz stores its "chunked" bodies already de-chunked (interop bug 3 of warc.md),
so its payload digests are over the entity body — spec-correct — and our payload digests
of the same bodies must equal them. To test real chunk framing we re-chunk those bodies.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import itertools
import subprocess
import sys
from pathlib import Path

import pytest
from fastwarc.warc import ArchiveIterator

from corpus_location import CORPUS
from webark.warc.builders import Original, RecordBuilder, WarcinfoFields
from webark.warc.headers import WarcHeaders
from webark.warc.record import Block, WarcRecord
from webark.warc.writer import WarcWriter

IANA = CORPUS / "pywb" / "warcs" / "iana.warc.gz"
WARCIO = str(Path(sys.executable).parent / "warcio")
INFO = WarcinfoFields(hostname="crawler1", ip="10.0.0.5", operator="test <t@example.org>")


def sha1(data: bytes) -> str:
    return "sha1:" + base64.b32encode(hashlib.sha1(data).digest()).decode()


def parse(data: bytes) -> list[WarcRecord]:
    """Records of an uncompressed WARC with exact blocks (test helper: CRLF framing)."""
    out = []
    pos = 0
    while pos < len(data):
        end = data.index(b"\r\n\r\n", pos)
        version, *lines = data[pos:end].decode("utf-8").split("\r\n")
        headers = WarcHeaders([tuple(line.split(": ", 1)) for line in lines])  # type: ignore[misc]
        start = end + 4
        length = int(headers["Content-Length"])
        assert data[start + length : start + length + 4] == b"\r\n\r\n"
        out.append(WarcRecord(headers, Block(data[start : start + length]), version=version))
        pos = start + length + 4
    return out


@pytest.fixture(scope="module")
def iana_raw() -> bytes:
    return gzip.decompress(IANA.read_bytes())


@pytest.fixture(scope="module")
def iana(iana_raw: bytes) -> list[WarcRecord]:
    return parse(iana_raw)


def warcio_check(path: str) -> dict[str, list[str]]:
    """Problems per record id reported by ``warcio check -v``; asserts it ran."""
    proc = subprocess.run(
        [WARCIO, "check", "-v", path], capture_output=True, text=True, check=False
    )
    problems: dict[str, list[str]] = {}
    current = ""
    for line in proc.stdout.splitlines():
        if "WARC-Record-ID" in line:
            current = line.split("WARC-Record-ID ")[1].split()[0]
        elif "failed" in line:
            problems.setdefault(current, []).append(line.strip())
    assert proc.returncode == (1 if problems else 0), proc.stdout + proc.stderr
    return problems


def fastwarc_verify(path: str) -> dict[str, tuple[str, bool, bool | None]]:
    """(WARC-Type, block digest ok, payload digest ok or None) per record id. fastwarc's
    block check must run without parse_http, the payload check with it; revisit payload
    digests name the original's payload, so they are not checked."""
    out: dict[str, tuple[str, bool, bool | None]] = {}
    with open(path, "rb") as f:
        for rec in ArchiveIterator(f, parse_http=False):
            kind = rec.headers.get("WARC-Type") or ""
            out[str(rec.record_id)] = (kind, rec.verify_block_digest(), None)
    with open(path, "rb") as f:
        for rec in ArchiveIterator(f, parse_http=True):
            kind, block_ok, _ = out[str(rec.record_id)]
            if rec.headers.get("WARC-Payload-Digest") and kind in ("response", "request"):
                out[str(rec.record_id)] = (kind, block_ok, rec.verify_payload_digest())
    return out


def captures(iana: list[WarcRecord]) -> list[tuple[WarcRecord, WarcRecord]]:
    """(response or revisit, request) pairs in file order."""
    pairs = []
    for first, second in itertools.pairwise(iana[1:]):
        if first.type in ("response", "revisit") and second.type == "request":
            assert second.headers.concurrent_to == [first.record_id]
            pairs.append((first, second))
    return pairs


def rechunk(body: bytes, size: int = 4096) -> bytes:
    parts = [
        b"%x\r\n%s\r\n" % (len(body[i : i + size]), body[i : i + size])
        for i in range(0, len(body), size)
    ]
    return b"".join(parts) + b"0\r\n\r\n"


def test_iana_round_trips_byte_for_byte(
    tmp_path: Path, iana: list[WarcRecord], iana_raw: bytes
) -> None:
    """The records read from a file, written back uncompressed, give the same bytes: the
    file's own warcinfo comes first (no warcinfo of ours) and nothing is added."""
    assert len(iana) == 343
    with WarcWriter(tmp_path, compression="none", warcinfo=INFO) as w:
        written = [r for rec in iana for r in w.write(rec)]
    assert Path(w.paths[0]).read_bytes() == iana_raw
    assert [r.offset for r in written][:3] == [
        0,
        iana_raw.index(b"WARC/1.0", 1),
        iana_raw.index(b"WARC/1.0", written[1].offset + 1),
    ]


def test_own_output_round_trips(tmp_path: Path, iana: list[WarcRecord]) -> None:
    (tmp_path / "gz").mkdir()
    (tmp_path / "copy").mkdir()
    b = RecordBuilder()
    with WarcWriter(tmp_path / "gz", warcinfo=INFO, builder=b) as w:
        for resp, req in captures(iana)[:20]:
            if resp.type == "response":
                w.write(
                    *b.exchange(
                        resp.target_uri or "", resp.block, req.block, ip_address="192.0.43.8"
                    )
                )
    raw = gzip.decompress(Path(w.paths[0]).read_bytes())
    with WarcWriter(tmp_path / "copy", compression="none", warcinfo=INFO) as w2:
        for rec in parse(raw):
            w2.write(rec)
    assert Path(w2.paths[0]).read_bytes() == raw


def test_iana_exchanges_payload_digests_and_peers(tmp_path: Path, iana: list[WarcRecord]) -> None:
    b = RecordBuilder()
    written: list[tuple[WarcRecord, WarcRecord]] = []
    with WarcWriter(tmp_path, warcinfo=INFO, builder=b) as w:
        for resp, req in captures(iana):
            uri = resp.target_uri or ""
            if resp.type == "response":
                recs = b.exchange(uri, resp.block, req.block, ip_address="192.0.43.8")
            else:
                original = Original(
                    resp.headers["WARC-Refers-To-Target-URI"],
                    resp.headers["WARC-Refers-To-Date"],
                    None,
                    resp.headers.payload_digest,
                )
                recs = b.exchange(uri, resp.block, req.block, original=original)
            out = w.write(*recs)
            written.append((resp, out[0]))
    assert len(written) == 171
    for orig, ours in written:
        # same payload digest as the original file, block digest over the exact block
        assert ours.headers.payload_digest == orig.headers.payload_digest
        assert ours.headers.block_digest == sha1(orig.block.read_all())
        if orig.type == "revisit":
            assert ours.headers["WARC-Profile"].endswith("/1.1/revisit/identical-payload-digest")
            assert ours.headers["WARC-Truncated"] == "length"
    path = w.paths[0]
    assert warcio_check(path) == {}
    verified = fastwarc_verify(path)
    assert len(verified) == 1 + 2 * 171
    for kind, block_ok, payload_ok in verified.values():
        assert block_ok
        assert payload_ok is (kind in ("response", "request") or None)


def test_really_chunked_responses(tmp_path: Path, iana: list[WarcRecord]) -> None:
    """Payload digest over the de-chunked body equals the original's digest; block digest
    over the chunked wire bytes. warcio and fastwarc hash the chunk framing instead
    (warc.md compatibility note), so they — and only they — disagree on these records."""
    b = RecordBuilder()
    chunked: dict[str, str] = {}
    with WarcWriter(tmp_path, warcinfo=INFO, builder=b) as w:
        for resp, req in captures(iana):
            head = resp.http
            if resp.type != "response" or head is None or not head.is_chunked:
                continue
            block = resp.block.read_all()
            body = block[head.head_length :]
            head_bytes = block[: head.head_length].replace(b"Content-Length: -1\r\n", b"")
            wire = head_bytes + rechunk(body)
            out = w.write(*b.exchange(resp.target_uri or "", wire, req.block))
            assert out[0].headers.payload_digest == resp.headers.payload_digest == sha1(body)
            assert out[0].headers.block_digest == sha1(wire)
            chunked[out[0].record_id or ""] = out[0].headers.payload_digest or ""
    assert len(chunked) == 25
    problems = warcio_check(w.paths[0])
    assert problems == {rid: [f"payload digest failed {d}"] for rid, d in chunked.items()}
    verified = fastwarc_verify(w.paths[0])
    assert len(verified) == 1 + 2 * 25
    for rid, (kind, block_ok, payload_ok) in verified.items():
        assert block_ok
        assert payload_ok is {"warcinfo": None, "request": True, "response": False}[kind]
        assert (kind == "response") is (rid in chunked)


def test_hybrid_with_iana_media(tmp_path: Path, iana: list[WarcRecord]) -> None:
    b = RecordBuilder()
    with WarcWriter(tmp_path, warcinfo=INFO, builder=b, hybrid=True) as w:
        by_mime: dict[str, set[str]] = {}
        for resp, req in captures(iana)[:40]:
            if resp.type != "response" or resp.http is None:
                continue
            out = w.write(*b.exchange(resp.target_uri or "", resp.block, req.block))
            assert out[0].path == out[1].path  # the request follows its response
            by_mime.setdefault(resp.http.mime or "", set()).add(Path(out[0].path).suffix)
    assert by_mime["image/png"] == {".warc"}
    assert by_mime["image/svg+xml"] == by_mime["text/html"] == {".gz"}
    assert by_mime["application/octet-stream"] == {".gz"}
    for path in w.paths:
        assert warcio_check(path) == {}
        assert all(ok for _, ok, _ in fastwarc_verify(path).values())


def test_round_trip_through_the_project_reader(tmp_path: Path, iana_raw: bytes) -> None:
    """iana.warc.gz read by webark.warc.reader, written out uncompressed: same bytes."""
    from webark.warc.reader import iter_records

    with WarcWriter(tmp_path, compression="none", warcinfo=INFO) as w:
        for rec in iter_records(IANA):
            w.write(rec)
    assert Path(w.paths[0]).read_bytes() == iana_raw
