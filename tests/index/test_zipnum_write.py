"""The ZipNum writer (webark.index.zipnum_write): shards of gzip blocks, the summary and
the location file, read back by the ZipNum reader (pywb's layout)."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from webark.cdx.formats import formatter, sort_key
from webark.cdx.indexer import IndexOptions, index_file
from webark.index.sorted_file import SortedCdxFile
from webark.index.source import KeyRange, key_range
from webark.index.zipnum import ZipNumIndex
from webark.index.zipnum_write import write_shard, write_summary


def test_shards_read_back_as_the_sorted_lines(corpus: Path, tmp_path: Path) -> None:
    write = formatter("cdxj")
    lines = sorted((write(x) for x in index_file(corpus / "pywb/warcs/iana.warc.gz",
                                                  IndexOptions())), key=sort_key)
    assert len(lines) == 171
    raw = [s.encode() for s in lines]
    a = write_shard(raw[:100], tmp_path / "z-0.cdx.gz", "z-0", block_lines=40)
    b = write_shard(raw[100:], tmp_path / "z-1.cdx.gz", "z-1", block_lines=40,
                    first_block=len(a))
    assert [x.block_no for x in a + b] == [0, 1, 2, 3, 4]
    assert a[0].key == " ".join(lines[0].split(" ")[:2]) and b[0].offset == 0
    # each shard is one valid .cdx.gz (members concatenated)
    assert gzip.decompress((tmp_path / "z-0.cdx.gz").read_bytes()).splitlines() == raw[:100]
    write_summary(a + b, tmp_path / "z.idx", {"z-0": str(tmp_path / "z-0.cdx.gz"),
                                              "z-1": str(tmp_path / "z-1.cdx.gz")})
    assert (tmp_path / "z.loc").read_text() == "z-0\tz-0.cdx.gz\nz-1\tz-1.cdx.gz\n"
    (tmp_path / "all.cdxj").write_text("".join(s + "\n" for s in lines))
    zn, flat = ZipNumIndex(tmp_path / "z.idx"), SortedCdxFile(tmp_path / "all.cdxj")
    for rng in (KeyRange("", None), key_range("iana.org/_css/", "prefix"),
                key_range("http://www.iana.org/"), key_range("iana.org/domains/", "prefix")):
        for rev in (False, True):
            want = [write(x) for x in flat.scan(rng, rev)]
            assert want
            assert [write(x) for x in zn.scan(rng, rev)] == want


def test_summary_refuses_unsorted_blocks(tmp_path: Path) -> None:
    a = write_shard([b"b 2 {}"], tmp_path / "a.cdx.gz", "a")
    b = write_shard([b"a 1 {}"], tmp_path / "b.cdx.gz", "b")
    with pytest.raises(ValueError, match="not in key order"):
        write_summary(a + b, tmp_path / "x.idx", {})
    assert not (tmp_path / "x.idx").exists()
