"""The WARC/ARC reader and ``warc check`` on damaged files: corpus files (pywb's
example WARC uncompressed and per-record gzip, its ARC plain and gzip) with bytes
overwritten, cut, or inserted, and bytes that only start like a WARC. Reading never
raises for bad content (``ArchiveReader``'s contract: only ``OSError`` for I/O) on
either path (fast, careful), every record's fields and block can be read, and
``check_file`` always returns a report."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from fuzz_support import FUZZ, TIMEOUT
from hypothesis import given
from hypothesis import strategies as st

from corpus_location import CORPUS
from webark.warc.check import check_file
from webark.warc.reader import ArchiveReader

pytestmark = pytest.mark.timeout(TIMEOUT)

_NAMES = ("example.warc", "example.warc.gz", "example.arc", "example.arc.gz")
SEEDS = {name: (CORPUS / "pywb/warcs" / name).read_bytes() for name in _NAMES}


@st.composite
def damaged(draw: st.DrawFn) -> bytes:
    """A seed file with a few bytes overwritten, a run inserted, and/or cut short."""
    data = bytearray(SEEDS[draw(st.sampled_from(sorted(SEEDS)))])
    for _ in range(draw(st.integers(0, 6))):
        data[draw(st.integers(0, len(data) - 1))] = draw(st.integers(0, 255))
    if draw(st.booleans()):
        at = draw(st.integers(0, len(data)))
        data[at:at] = draw(st.binary(max_size=40))
    if draw(st.booleans()):
        del data[draw(st.integers(0, len(data))) :]
    return bytes(data)


WARC_LIKE = st.builds(lambda head, rest: head + rest,
                      st.sampled_from([b"WARC/1.1\r\n", b"WARC/1.0\r\n", b"\x1f\x8b\x08\x00",
                                       b"filedesc://", b"\x28\xb5\x2f\xfd", b""]),
                      st.binary(max_size=600))  # fmt: skip


def _file(data: bytes) -> Iterator[str]:
    fd, path = tempfile.mkstemp(prefix="webark-fuzz-", suffix=".warc")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        yield path
    finally:
        os.unlink(path)


def _read_all(path: str, careful: bool) -> int:
    n = 0
    reader = ArchiveReader(path, careful=careful)
    for rec in reader:
        n += 1
        _ = (rec.type, rec.target_uri, rec.record_id, rec.date, rec.is_truncated)
        _ = (rec.http_status, rec.payload_offset, rec.forgiven)
        assert len(rec.block.read_all()) == rec.block.size
        assert rec.offset >= 0
    assert all(p.code for p in reader.problems)
    return n


@FUZZ
@given(st.one_of(damaged(), WARC_LIKE))
def test_reader_never_raises_on_bad_bytes(data: bytes) -> None:
    for path in _file(data):
        fast = _read_all(path, careful=False)
        careful = _read_all(path, careful=True)
        assert fast >= 0 and careful >= 0


@FUZZ
@given(st.one_of(damaged(), WARC_LIKE))
def test_warc_check_always_reports(data: bytes) -> None:
    for path in _file(data):
        report = check_file(path)
        assert report.path == path
        assert isinstance(report.ok, bool)


def test_seeds_are_read_whole() -> None:
    for name, data in SEEDS.items():
        for path in _file(data):
            n = _read_all(path, careful=True)
            assert n == _read_all(path, careful=False) >= 2, name
            assert len(check_file(path).records) == n, name


def test_seed_folder_exists() -> None:
    assert Path(CORPUS / "pywb/warcs").is_dir()
