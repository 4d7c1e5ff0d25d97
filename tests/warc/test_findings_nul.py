"""Finding 1: runs of NUL bytes between compressed members (a record zeroed by disk or
tape damage) are reported with their offset and size: an error when data follows, a
warning when they only pad the end of the file. Before the fix the careful reader
stripped them silently, so `webark warc check` said OK."""

from __future__ import annotations

import zlib
from pathlib import Path

import pytest
import zstandard

from corpus_location import CORPUS
from webark.warc.check import check_file
from webark.warc.reader import ArchiveReader

EXAMPLE = CORPUS / "warcio" / "example.warc.gz"
# member offsets of warcio/example.warc.gz (6 records, one gzip member each)
OFFSETS = [0, 353, 784, 2012, 2621, 3207]
SIZE = 3816


def _read(path: Path, careful: bool) -> tuple[ArchiveReader, list[tuple[int, int]]]:
    reader = ArchiveReader(path, careful=careful)
    return reader, [(r.offset, r.length) for r in reader]


def _nul_problems(reader: ArchiveReader) -> list[tuple[str, str, int | None]]:
    return [(p.severity, p.code, p.offset) for p in reader.problems
            if p.code in ("nul-bytes", "nul-padding")]


def test_example_layout() -> None:
    data = EXAMPLE.read_bytes()
    assert len(data) == SIZE
    assert [data[o : o + 2] for o in OFFSETS] == [b"\x1f\x8b"] * 6


@pytest.mark.parametrize("careful", [False, True])
def test_zeroed_record_is_an_error(tmp_path: Path, careful: bool) -> None:
    """The tester's case: the third record (784..2012) overwritten with zeros."""
    data = bytearray(EXAMPLE.read_bytes())
    data[784:2012] = bytes(1228)
    path = tmp_path / "z.warc.gz"
    path.write_bytes(bytes(data))
    reader, records = _read(path, careful)
    assert [o for o, _ in records] == [0, 353, 2012, 2621, 3207]
    assert _nul_problems(reader) == [("error", "nul-bytes", 784)]
    (p,) = [p for p in reader.problems if p.code == "nul-bytes"]
    assert "1228 NUL bytes at 784-2012" in p.message


def test_check_fails_a_zeroed_record(tmp_path: Path) -> None:
    data = bytearray(EXAMPLE.read_bytes())
    data[784:2012] = bytes(1228)
    path = tmp_path / "z.warc.gz"
    path.write_bytes(bytes(data))
    rep = check_file(path)
    assert not rep.ok
    assert len(rep.records) == 5
    # a file-level problem: it belongs to no record (not to the record before it)
    assert [(p.code, p.offset) for p in rep.file_problems] == [("nul-bytes", 784)]
    assert all(p.code != "nul-bytes" for r in rep.records for p in r.problems)


@pytest.mark.parametrize("careful", [False, True])
@pytest.mark.parametrize("n", [1, 3, 100, 70000])
def test_nul_run_between_members(tmp_path: Path, careful: bool, n: int) -> None:
    data = EXAMPLE.read_bytes()
    path = tmp_path / "n.warc.gz"
    path.write_bytes(data[:784] + bytes(n) + data[784:])
    reader, records = _read(path, careful)
    assert [o for o, _ in records] == OFFSETS[:2] + [o + n for o in OFFSETS[2:]]
    # lengths are those of the members, without the NUL bytes
    assert [ln for _, ln in records] == [353, 431, 1228, 609, 586, 609]
    assert _nul_problems(reader) == [("error", "nul-bytes", 784)]
    assert f"{n} NUL bytes at 784-{784 + n}" in reader.problems[0].message


@pytest.mark.parametrize("careful", [False, True])
@pytest.mark.parametrize("n", [1, 100])
def test_trailing_nul_padding_is_a_warning(tmp_path: Path, careful: bool, n: int) -> None:
    path = tmp_path / "t.warc.gz"
    path.write_bytes(EXAMPLE.read_bytes() + bytes(n))
    reader, records = _read(path, careful)
    assert [o for o, _ in records] == OFFSETS
    assert _nul_problems(reader) == [("warning", "nul-padding", SIZE)]
    assert f"{n} NUL bytes at {SIZE}-{SIZE + n}" in reader.problems[0].message


def test_check_passes_trailing_padding_with_a_warning(tmp_path: Path) -> None:
    path = tmp_path / "t.warc.gz"
    path.write_bytes(EXAMPLE.read_bytes() + bytes(512))
    rep = check_file(path)
    assert rep.ok
    assert [(p.severity, p.code, p.offset) for p in rep.file_problems] == [
        ("warning", "nul-padding", SIZE)]


@pytest.mark.parametrize("careful", [False, True])
def test_leading_nul_bytes(tmp_path: Path, careful: bool) -> None:
    """NUL bytes before the first member: the file is still recognised as gzip (it was
    read as an uncompressed file with no record before)."""
    path = tmp_path / "l.warc.gz"
    path.write_bytes(bytes(10) + EXAMPLE.read_bytes())
    reader, records = _read(path, careful)
    assert reader.compression == "gzip"
    assert [o for o, _ in records] == [o + 10 for o in OFFSETS]
    assert _nul_problems(reader) == [("error", "nul-bytes", 0)]


def _zstd_members() -> list[bytes]:
    data, out = EXAMPLE.read_bytes(), []
    while data:
        d = zlib.decompressobj(zlib.MAX_WBITS | 16)
        record = d.decompress(data)
        data = d.unused_data
        out.append(zstandard.ZstdCompressor(write_checksum=True).compress(record))
    return out


def test_zstd_nul_runs(tmp_path: Path) -> None:
    frames = _zstd_members()
    inside = tmp_path / "i.warc.zst"
    inside.write_bytes(b"".join(frames[:2]) + bytes(50) + b"".join(frames[2:]))
    reader, records = _read(inside, careful=False)
    cut = len(frames[0]) + len(frames[1])
    assert len(records) == 6 and records[2][0] == cut + 50
    assert _nul_problems(reader) == [("error", "nul-bytes", cut)]
    # before: reported as "garbage-between-members"; now named for what it is
    assert all(p.code != "garbage-between-members" for p in reader.problems)

    trailing = tmp_path / "t.warc.zst"
    whole = b"".join(frames)
    trailing.write_bytes(whole + bytes(50))
    reader, records = _read(trailing, careful=False)
    assert len(records) == 6
    assert _nul_problems(reader) == [("warning", "nul-padding", len(whole))]
    assert check_file(trailing).ok


# uncompressed files: NUL bytes between records were a "not-a-record" error, trailing
# padding included; now reported as in compressed files
PLAIN = CORPUS / "warcio" / "example.warc"
PLAIN_OFFSETS = [0, 488, 1197, 2566, 3370, 4316]
PLAIN_SIZE = 5120


@pytest.mark.parametrize("careful", [False, True])
def test_uncompressed_nul_runs(tmp_path: Path, careful: bool) -> None:
    data = PLAIN.read_bytes()
    assert len(data) == PLAIN_SIZE
    inside = tmp_path / "i.warc"
    inside.write_bytes(data[:488] + bytes(100) + data[488:])
    reader, records = _read(inside, careful)
    assert [o for o, _ in records] == [0] + [o + 100 for o in PLAIN_OFFSETS[1:]]
    assert _nul_problems(reader) == [("error", "nul-bytes", 488)]
    assert [p.code for p in reader.problems] == ["nul-bytes"]

    trailing = tmp_path / "t.warc"
    trailing.write_bytes(data + bytes(100))
    reader, records = _read(trailing, careful)
    assert [o for o, _ in records] == PLAIN_OFFSETS
    assert [(p.severity, p.code, p.offset) for p in reader.problems] == [
        ("warning", "nul-padding", PLAIN_SIZE)]
    assert check_file(trailing).ok
