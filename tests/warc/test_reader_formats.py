"""Formats built here: ``.warc.zst`` per the IIPC zstd proposal (plain and with a
dictionary), and a record larger than SPOOL_LIMIT."""

from __future__ import annotations

import gzip
import hashlib
import os
import struct
from pathlib import Path

import pytest
import zstandard

from webark.warc.reader import ArchiveReader, read_record_at
from webark.warc.record import SPOOL_LIMIT, WarcRecord

# warcio/example.warc split at its records (offsets from warcio's gold index)
EXAMPLE_OFFSETS = [0, 488, 1197, 2566, 3370, 4316]


def _example_records(corpus: Path) -> list[bytes]:
    data = (corpus / "warcio/example.warc").read_bytes()
    ends = [*EXAMPLE_OFFSETS[1:], len(data)]
    return [data[a:b] for a, b in zip(EXAMPLE_OFFSETS, ends, strict=True)]


def _write_zst(path: Path, records: list[bytes], dictionary: str | None) -> list[tuple[int, int]]:
    """One frame per record, each with Frame_Content_Size and Content_Checksum; with
    ``dictionary`` ("raw" or "zstd"), a 0x184D2A5D skippable frame first. Returns the
    (offset, length) of every record frame."""
    out = bytearray()
    zdict = None
    if dictionary:
        zdict = zstandard.train_dictionary(1024, records * 16)
        payload = zdict.as_bytes()
        if dictionary == "zstd":
            payload = zstandard.ZstdCompressor().compress(payload)
        out += struct.pack("<II", 0x184D2A5D, len(payload)) + payload
    cctx = zstandard.ZstdCompressor(
        level=3, write_checksum=True, write_content_size=True, dict_data=zdict
    )
    frames = []
    for rec in records:
        frame = cctx.compress(rec)
        params = zstandard.get_frame_parameters(frame)
        assert params.content_size == len(rec) and params.has_checksum
        assert (params.dict_id != 0) == bool(dictionary)
        frames.append((len(out), len(frame)))
        out += frame
    path.write_bytes(bytes(out))
    return frames


@pytest.mark.parametrize("dictionary", [None, "raw", "zstd"])
def test_zstd_warc_reads_back_with_frame_offsets(
    corpus: Path, tmp_path: Path, dictionary: str | None
) -> None:
    raw = _example_records(corpus)
    path = tmp_path / "example.warc.zst"
    frames = _write_zst(path, raw, dictionary)
    if dictionary:
        assert frames[0][0] > 8  # after the dictionary frame
    plain = list(ArchiveReader(corpus / "warcio/example.warc"))
    for careful in (False, True):
        reader = ArchiveReader(path, careful=careful)
        records = list(reader)
        assert reader.compression == "zstd"
        assert reader.problems == []
        assert reader.seekable is True
        assert [(r.offset, r.length) for r in records] == frames
        assert [r.headers for r in records] == [r.headers for r in plain]
        assert [r.block.read_all() for r in records] == [r.block.read_all() for r in plain]
    for offset, length in frames:
        rec = read_record_at(path, offset)
        assert (rec.offset, rec.length) == (offset, length)
    assert read_record_at(path, frames[2][0]).target_uri == "http://example.com/"


def test_zstd_two_records_in_one_frame_are_not_seekable(corpus: Path, tmp_path: Path) -> None:
    raw = _example_records(corpus)
    cctx = zstandard.ZstdCompressor(write_checksum=True, write_content_size=True)
    first = cctx.compress(raw[0])
    path = tmp_path / "bad.warc.zst"
    path.write_bytes(first + cctx.compress(raw[1] + raw[2]) + cctx.compress(raw[3]))
    reader = ArchiveReader(path)
    records = list(reader)
    assert [r.type for r in records] == ["warcinfo", "warcinfo", "response", "request"]
    assert [r.offset for r in records] == [0, len(first), len(first), records[3].offset]
    assert records[2].length == -1
    assert reader.seekable is False
    assert [(p.code, p.offset) for p in reader.problems] == [("offsets-not-seekable", len(first))]


def _big_record(uri: bytes, body: bytes) -> bytes:
    block = (
        b"HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\n"
        b"Content-Length: %d\r\n\r\n" % len(body)
    ) + body
    head = (
        b"WARC/1.1\r\nWARC-Type: response\r\nWARC-Record-ID: <urn:uuid:%s>\r\n"
        b"WARC-Date: 2024-01-01T00:00:00Z\r\nWARC-Target-URI: %s\r\n"
        b"Content-Type: application/http;msgtype=response\r\nContent-Length: %d\r\n\r\n"
        % (hashlib.md5(uri).hexdigest().encode(), uri, len(block))
    )
    return head + block + b"\r\n\r\n"


def _sha1_of_stream(rec: WarcRecord) -> bytes:
    h = hashlib.sha1()
    with rec.payload_stream() as f:
        while chunk := f.read(1 << 20):
            h.update(chunk)
    return h.digest()


@pytest.mark.parametrize("compressed", [False, True], ids=["warc", "warc.gz"])
def test_record_larger_than_the_spool_limit(tmp_path: Path, compressed: bool) -> None:
    body = os.urandom(1 << 20) * 20  # 20 MiB
    assert len(body) > SPOOL_LIMIT
    big = _big_record(b"http://example.com/big", body)
    small = _big_record(b"http://example.com/small", b"tiny")
    path = tmp_path / ("big.warc.gz" if compressed else "big.warc")
    if compressed:
        first = gzip.compress(big, 1)
        path.write_bytes(first + gzip.compress(small))
        expect = [(0, len(first)), (len(first), path.stat().st_size - len(first))]
    else:
        path.write_bytes(big + small)
        expect = [(0, len(big) - 4), (len(big), len(small) - 4)]
    for careful in (False, True):
        records = list(ArchiveReader(path, careful=careful))
        assert [(r.offset, r.length) for r in records] == expect
        rec = records[0]
        assert rec.block.in_memory is False
        assert rec.block.size == rec.headers.content_length
        assert rec.http is not None and rec.http.status == 200
        stream = rec.payload_stream()
        assert not hasattr(stream, "getbuffer")  # a file, not an in-memory copy
        stream.close()
        assert _sha1_of_stream(rec) == hashlib.sha1(body).digest()
        assert records[1].payload() == b"tiny"
        assert records[1].block.in_memory is True
    again = read_record_at(path, 0)
    assert again.block.in_memory is False
    assert _sha1_of_stream(again) == hashlib.sha1(body).digest()


def test_read_record_at_windows_a_large_uncompressed_block(tmp_path: Path) -> None:
    """Replay reads one record: a 3 MiB block of an uncompressed WARC is not copied but
    read from the file on demand, ranges included, and the record after it is intact."""
    body = os.urandom(3 << 20)
    first = _big_record(b"http://example.com/first", b"one")
    big = _big_record(b"http://example.com/video", body)
    small = _big_record(b"http://example.com/small", b"tiny")
    path = tmp_path / "w.warc"
    path.write_bytes(first + big + small)
    rec = read_record_at(path, len(first))
    assert rec.block.in_memory is False
    assert (rec.offset, rec.length) == (len(first), len(big) - 4)
    assert rec.block.size == rec.headers.content_length
    assert rec.http is not None and rec.http.status == 200
    assert _sha1_of_stream(rec) == hashlib.sha1(body).digest()
    with rec.block.open() as f:  # a range, as replay serves it
        f.seek(rec.block.size - len(body) + 1000)
        assert f.read(5000) == body[1000:6000]
        f.seek(0, os.SEEK_END)
        assert f.read(10) == b""
    assert rec.block.head(4) == b"HTTP"
    assert read_record_at(path, len(first) + len(big)).payload() == b"tiny"
    # small blocks are still read into memory
    assert read_record_at(path, 0).block.in_memory is True


def test_read_record_at_window_of_a_cut_record(tmp_path: Path) -> None:
    """A large record cut short by the end of the file: the window holds what is there,
    and the reader still says the record is truncated."""
    body = os.urandom(2 << 20)
    big = _big_record(b"http://example.com/big", body)
    path = tmp_path / "cut.warc"
    path.write_bytes(big[: len(big) - 4096])
    rec = read_record_at(path, 0)
    assert rec.block.size == rec.headers.content_length - 4092
    assert [p.code for p in rec.forgiven] == ["truncated-record"]
    assert rec.block.read_all() == big[big.index(b"\r\n\r\n") + 4 : len(big) - 4096]


def test_large_record_cut_short_then_more_records(tmp_path: Path) -> None:
    # the search for a record inside a cut block also works on a spooled block
    body = os.urandom(1 << 20) * 18
    big = _big_record(b"http://example.com/big", body)
    small = _big_record(b"http://example.com/small", b"tiny")
    cut = len(big) - (1 << 20)
    path = tmp_path / "cut.warc"
    path.write_bytes(big[:cut] + small)
    for careful in (False, True):
        reader = ArchiveReader(path, careful=careful)
        records = list(reader)
        assert [(r.offset, r.target_uri) for r in records] == [
            (0, "http://example.com/big"),
            (cut, "http://example.com/small"),
        ]
        assert records[0].block.size == cut - (big.index(b"\r\n\r\n") + 4)
        assert records[0].block.in_memory is False
        assert [(p.code, p.offset) for p in reader.problems] == [("truncated-record", 0)]
        assert records[1].payload() == b"tiny"


@pytest.mark.parametrize("damage", ["cut", "flip"])
def test_zstd_damaged_frame(corpus: Path, tmp_path: Path, damage: str) -> None:
    raw = _example_records(corpus)
    cctx = zstandard.ZstdCompressor(write_checksum=True, write_content_size=True)
    frames = [cctx.compress(r) for r in raw]
    if damage == "cut":  # the response frame loses its second half
        frames[2] = frames[2][: len(frames[2]) // 2]
    else:  # a byte in the middle of the response frame is flipped
        bad = bytearray(frames[2])
        bad[len(bad) // 2] ^= 0xFF
        frames[2] = bytes(bad)
    starts = [sum(len(f) for f in frames[:i]) for i in range(len(frames))]
    path = tmp_path / "damaged.warc.zst"
    path.write_bytes(b"".join(frames))
    reader = ArchiveReader(path)
    records = list(reader)
    assert [(r.offset, r.type) for r in records] == [
        (starts[i], t)
        for i, t in enumerate(["warcinfo", "warcinfo", "response", "request", "revisit", "request"])
        if i != 2
    ]
    assert (reader.problems[0].code, reader.problems[0].offset) == ("bad-member", starts[2])
