"""The raw fast path's reader (SortedCdxFile.scan_raw on a mapped file, SortedLines)
gives exactly the lines of a range (checked against a brute-force filter of the file,
mapped and by positional reads), on awkward files too; raw scans skip meta lines,
strip CR and filter by time like SortedCdxFile.scan."""

from __future__ import annotations

import itertools
import random
from pathlib import Path

import pytest

from webark.apps.cdx.sources import DirectoryCollections, raw_scanner
from webark.index.merge import MergedSource
from webark.index.sorted_file import SortedCdxFile, SortedLines
from webark.index.source import KeyRange, in_time


def _lines(n: int, rng: random.Random) -> list[bytes]:
    out = []
    for i in range(n):
        key = f"com,h{rng.randrange(50):02d})/p{rng.randrange(200)}"
        ts = f"20{rng.randrange(10, 25)}0101{rng.randrange(24):02d}0000"
        pad = "x" * (rng.randrange(10) if i % 97 else 9000)  # a few lines longer than a block
        out.append(f'{key} {ts} {{"url": "http://h/{pad}"}}'.encode())
    return sorted(out)


@pytest.fixture(params=["plain", "header", "crlf", "no-final-newline", "blank-lines", "tiny"])
def sorted_file(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[Path, list[bytes]]:
    rng = random.Random(7)
    lines = _lines(3 if request.param == "tiny" else 3000, rng)
    body = lines
    if request.param == "header":
        body = [b"!meta something", b"!another meta line", *lines]
    sep = b"\r\n" if request.param == "crlf" else b"\n"
    text = sep.join(body)
    if request.param != "no-final-newline":
        text += sep
    if request.param == "blank-lines":
        text = text.replace(b"\ncom,h10", b"\n\ncom,h10")
    p = tmp_path / "index.cdxj"
    p.write_bytes(text)
    return p, lines


def _keys(lines: list[bytes], rng: random.Random) -> list[tuple[bytes, bytes | None]]:
    out: list[tuple[bytes, bytes | None]] = [(b"", None), (b"", b"com,h05"), (b"zzz", None),
                                             (b"com,h49)/p199~", None)]  # fmt: skip
    for _ in range(150):
        k = rng.choice(lines).split(b" ")[0]
        host = k.split(b")/")[0]
        out += [(k, k + b"!"), (k + b" 2015", k + b"!"), (k, k + b" 2015"),
                (host + b")/", host + b"*"), (k[:-1], None)]  # fmt: skip
    return out


def test_sorted_lines_ranges(sorted_file: tuple[Path, list[bytes]]) -> None:
    path, _ = sorted_file
    stored = [x.rstrip(b"\r") for x in path.read_bytes().split(b"\n") if x.rstrip(b"\r")]
    mapped, read = SortedLines(path), SortedLines(path, use_mmap=False)
    assert mapped.mapping() is not None and read.mapping() is None
    crlf = b"\r\n" in path.read_bytes()
    for start, end in _keys(stored, random.Random(1)):
        want = [x for x in stored if x >= start and (end is None or x < end)]
        for reverse in (False, True):
            got = [x.rstrip(b"\r") if crlf else x for x in mapped.range(start, end, reverse)]
            assert got == (want[::-1] if reverse else want), (start, end, reverse)
            theirs = list(itertools.islice(read.range(start, end, reverse), 100_000))
            assert [x.rstrip(b"\r") for x in theirs] == got


def test_raw_scan_filters_like_the_store(sorted_file: tuple[Path, list[bytes]]) -> None:
    path, lines = sorted_file
    src = SortedCdxFile(path)
    raw = raw_scanner(src)
    assert raw is not None and raw.cdxj
    for rng in (KeyRange("", None), KeyRange("com,h1", "com,h3", "20150101000000",
                                              "20191231235959")):  # fmt: skip
        lo, hi = rng.start.encode(), rng.end.encode() if rng.end else None
        want = [
            x for x in lines
            if x >= lo and (hi is None or x < hi) and in_time(rng, x.split()[1].decode())
        ]  # fmt: skip
        for reverse in (False, True):
            got = list(raw.scan(rng, reverse))
            assert got == (want[::-1] if reverse else want)
            # the store's parsed scan agrees
            theirs = [[x.urlkey.encode(), x.timestamp.encode()] for x in src.scan(rng, reverse)]
            assert [x.split(b" ", 2)[:2] for x in got] == theirs


def test_raw_scanner_choices(tmp_path: Path) -> None:
    cdxj = tmp_path / "a.cdxj"
    cdxj.write_bytes(b'com,a)/ 20200101000000 {"url": "http://a/"}\n')
    cdx = tmp_path / "a.cdx"
    cdx.write_bytes(
        b" CDX N b a m s k r M S V g\ncom,a)/ 20200101000000 http://a/ - - - - - - - -\n"
    )
    assert raw_scanner(SortedCdxFile(cdxj)) is not None
    assert raw_scanner(SortedCdxFile(cdx)) is None  # classic CDX: the parsed path
    assert raw_scanner(MergedSource([SortedCdxFile(cdxj), SortedCdxFile(cdx)])) is None
    headed = tmp_path / "headed.cdxj"  # a " CDX" header line means classic CDX
    headed.write_bytes(b" CDX N b a\n" + cdxj.read_bytes())
    assert raw_scanner(SortedCdxFile(headed)) is None
    both = raw_scanner(MergedSource([SortedCdxFile(cdxj), SortedCdxFile(cdxj)]))
    assert both is not None
    assert len(list(both.scan(KeyRange("", None), False))) == 2
    assert raw_scanner(object()) is None


def test_directory_collections_cache_follows_new_files(colls_dir: Path) -> None:
    colls = DirectoryCollections(colls_dir, ttl=0)
    first = colls.get("cdxj")
    assert colls.get("cdxj") is first  # same files: same source
    (colls_dir / "cdxj" / "indexes" / "more.cdxj").write_bytes(
        b'com,zzz)/ 20200101000000 {"url": "http://zzz/"}\n'
    )
    second = colls.get("cdxj")
    assert second is not first and isinstance(second, MergedSource)
