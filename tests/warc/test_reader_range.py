"""ArchiveReader over a byte range (``start``/``end``), as the parallel indexer uses it.

Each corpus file is split at every record boundary into two ranges; reading the two
ranges one after the other must give exactly what one read of the whole file gives
(offsets, lengths, version lines, headers, blocks, problems), in both modes.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from webark.warc.reader import ArchiveReader

FILES = [
    "pywb/warcs/iana.warc.gz",
    "warcio/example.warc",
    "resiliparse/warcfile.warc",
    "resiliparse/warcfile.warc.gz",
]


def _read(path: Path, careful: bool, start: int = 0, end: int | None = None) -> list[tuple]:
    reader = ArchiveReader(path, careful=careful, start=start, end=end)
    out = [
        (r.offset, r.length, r.version, list(r.headers), r.block.read_all())
        for r in reader
    ]
    assert reader.problems == []
    return out


@pytest.mark.parametrize("careful", [False, True], ids=["fast", "careful"])
@pytest.mark.parametrize("name", FILES)
def test_split_at_every_record(corpus: Path, name: str, careful: bool) -> None:
    path = corpus / name
    full = _read(path, careful)
    assert len(full) > 1
    size = path.stat().st_size
    # the whole file as a range, and end past the file
    assert _read(path, careful, 0, size) == full
    assert _read(path, careful, 0, size + 1000) == full
    for i in range(1, len(full)):
        cut = full[i][0]
        head = _read(path, careful, 0, cut)
        tail = _read(path, careful, cut)
        assert head == full[:i], (name, cut)
        assert tail == full[i:], (name, cut)
        if i % 7 and i != len(full) - 1:
            continue
        # an end inside a record: the record that starts before it is read to its end
        assert _read(path, careful, 0, cut - 1) == full[:i], (name, cut)
        assert _read(path, careful, full[i - 1][0], cut + 1) == full[i - 1 : i + 1]


@pytest.mark.parametrize("careful", [False, True], ids=["fast", "careful"])
def test_three_ranges_and_engine(corpus: Path, careful: bool) -> None:
    path = corpus / "pywb/warcs/iana.warc.gz"
    full = _read(path, careful)
    a, b = full[100][0], full[250][0]
    got = _read(path, careful, 0, a) + _read(path, careful, a, b) + _read(path, careful, b)
    assert got == full
    reader = ArchiveReader(path, careful=careful, start=a, end=b)
    assert sum(1 for _ in reader) == 150
    assert reader.engine == ("careful" if careful else "fast")
    assert reader.records_read == 150


def test_empty_range(corpus: Path) -> None:
    path = corpus / "warcio/example.warc"
    assert list(ArchiveReader(path, start=0, end=0)) == []
    size = path.stat().st_size
    assert list(ArchiveReader(path, start=size)) == []


def test_bad_range() -> None:
    with pytest.raises(ValueError):
        ArchiveReader("x.warc", start=-1)
    with pytest.raises(ValueError):
        ArchiveReader("x.warc", start=10, end=5)


def test_arc_ranges_refused(corpus: Path) -> None:
    arcs = sorted(corpus.rglob("*.arc")) + sorted(corpus.rglob("*.arc.gz"))
    assert arcs, "the corpus has ARC files"
    path = arcs[0]
    assert list(ArchiveReader(path))  # a whole ARC file reads
    with pytest.raises(ValueError, match="ARC"):
        list(ArchiveReader(path, start=0, end=100))
