"""ZipNum (pywb's sample: zipnum-sample.idx/.loc/.cdx.gz, 38 blocks, 188 lines) against
the plain lines of its decompressed shard, pywb's expected answers, and the error cases
(zipnum-bad.*)."""

from __future__ import annotations

import shutil
import zlib
from pathlib import Path

import pytest

from webark.cdx.formats import format_cdx11, parse_line
from webark.index.merge import MergedSource
from webark.index.source import IndexUnavailable, KeyRange, digest_key, key_range
from webark.index.sqlite_store import SqliteStore
from webark.index.zipnum import ZipNumBlock, ZipNumIndex


@pytest.fixture(scope="module")
def misc(corpus: Path) -> Path:
    return corpus / "pywb" / "misc"


@pytest.fixture(scope="module")
def zn(misc: Path) -> ZipNumIndex:
    return ZipNumIndex(misc / "zipnum-sample.idx")


@pytest.fixture(scope="module")
def plain(misc: Path) -> list[str]:
    """Every CDX line of the shard, in file order: each gzip member decompressed on its
    own (a block's last line has no newline, so `zcat` would glue it to the next)."""
    data = (misc / "zipnum-sample.cdx.gz").read_bytes()
    out: list[str] = []
    while data:
        d = zlib.decompressobj(zlib.MAX_WBITS | 16)
        out += [ln for ln in d.decompress(data).decode().split("\n") if ln]
        data = d.unused_data
    return out


QUERIES = [
    ("http://iana.org", None, None, None),
    ("http://iana.org/domains/*", None, None, None),
    ("http://iana.org/domains/", "domain", None, None),
    ("*.iana.org", None, "20140126201", "20140126201259"),
    ("http://iana.org/time-zones*", None, None, None),
    ("http://iana.org/time-zones/*", None, None, None),
    ("http://iana.org/time-zones/Y", None, None, None),
    ("http://iana.org/_css/2013.1/fonts/opensans-bold.ttf", None, None, None),
    ("http://iana.org/_css/2013.1/fonts/opensans-bold.ttf", None, "20140126200912", None),
    ("http://example.com/", "host", None, None),
    ("com", "domain", None, None),
    ("http://aaa.zz/", "domain", None, None),
    ("http://aaa.aaa/", None, None, None),
]


def test_sample_shape(plain: list[str], zn: ZipNumIndex) -> None:
    assert len(plain) == 188  # 38 blocks of up to 5 lines
    blocks = list(zn.blocks(KeyRange("", None)))
    assert len(blocks) == 38
    assert blocks[0] == ZipNumBlock("com,example)/ 20140127171200", "zipnum", 0, 275, 1)
    # every block's key is the key of its first line
    for b in blocks:
        first = zn.read_block(b)[0].decode()
        assert first.startswith(b.key + " ")


@pytest.mark.parametrize("reverse", [False, True], ids=["fwd", "rev"])
@pytest.mark.parametrize(("url", "match", "f", "t"), QUERIES)
def test_queries_equal_plain_lines(
    zn: ZipNumIndex,
    plain: list[str],
    url: str,
    match: str | None,
    f: str | None,
    t: str | None,
    reverse: bool,
) -> None:
    rng = key_range(url, match, f, t)  # type: ignore[arg-type]

    def inside(line: str) -> bool:
        key, ts = line.split(" ")[:2]
        k = f"{key} {ts}"
        return (
            rng.start <= k
            and (rng.end is None or k < rng.end)
            and (rng.from_ts is None or ts >= rng.from_ts)
            and (rng.to_ts is None or ts <= rng.to_ts)
        )

    want = [ln for ln in plain if inside(ln)]
    if reverse:
        want.reverse()
    assert [format_cdx11(x) for x in zn.scan(rng, reverse)] == want


def test_pywb_expected_answers(zn: ZipNumIndex) -> None:
    """Transcribed from pywb's test_zipnum.py doctests."""
    got = [
        (x.timestamp, x.url, x.mime, x.offset, x.filename)
        for x in zn.scan(key_range("http://iana.org"))
    ]
    assert got == [
        ("20140126200624", "http://www.iana.org/", "text/html", 334, "iana.warc.gz"),
        ("20140127171238", "http://iana.org", "unk", 1858, "dupes.warc.gz"),
        ("20140127171238", "http://www.iana.org/", "warc/revisit", 2678, "dupes.warc.gz"),
    ]
    # showPagedIndex for prefix 'iana.org/domains/'
    assert [
        (b.key, b.offset, b.length, b.block_no)
        for b in zn.blocks(key_range("http://iana.org/domains/", "prefix"))
    ] == [
        ("org,iana)/dnssec 20140126201307", 8517, 373, 35),
        ("org,iana)/domains/int 20140126201239", 8890, 355, 36),
        ("org,iana)/domains/root/servers 20140126201227", 9245, 386, 37),
    ]
    assert len(list(zn.scan(key_range("http://iana.org/domains/*")))) == 9
    assert [x.url for x in zn.scan(key_range("http://iana.org/time-zones*"), reverse=True)] == [
        "http://www.iana.org/time-zones/Y",
        "http://www.iana.org/time-zones/X",
        "http://www.iana.org/time-zones",
    ]
    assert list(zn.scan(key_range("http://aaa.zz/", "domain"))) == []
    assert len(list(zn.blocks(key_range("*.iana.org")))) == 38


def test_by_digest_scans_all_blocks(zn: ZipNumIndex, plain: list[str]) -> None:
    d = "4Z27MYWOSXY2XDRAJRW7WRMT56LXDD4R"
    want = [ln for ln in plain if digest_key(ln.split(" ")[5]) == digest_key(d)]
    assert len(want) == 3
    assert [format_cdx11(x) for x in zn.by_digest("sha1:" + d)] == want


def test_merged_with_sqlite(tmp_path: Path, zn: ZipNumIndex, plain: list[str]) -> None:
    """ZipNum + an SQLite store holding a copy of the iana lines: merged, sorted."""
    iana = [parse_line(ln) for ln in plain if "iana.warc.gz" in ln]
    store = SqliteStore(tmp_path / "m.sqlite3")
    store.add_file("iana.warc.gz", iana)
    m = MergedSource([zn, store])
    rng = key_range("http://iana.org/time-zones*")
    got = list(m.scan(rng))
    assert [(x.timestamp, x.url) for x in got] == [
        (x.timestamp, x.url)
        for x in sorted([*zn.scan(rng), *store.scan(rng)], key=lambda x: (x.urlkey, x.timestamp))
    ]
    assert len(got) == 6
    assert list(m.scan(rng, reverse=True)) == got[::-1]


@pytest.mark.parametrize(
    ("url", "shard"),
    [
        ("http://example.com/", "foo"),  # shard not in the .loc at all
        ("http://example.zz/x", "foo2"),  # shard listed without a location
        ("http://iana.org/x", "bar"),  # location does not exist
    ],
)
def test_bad_index_is_unavailable(misc: Path, url: str, shard: str) -> None:
    """pywb: 'No Locations Found for: foo' / 'foo2', IOError for 'bar'; all of them are
    an unavailable index for us (a 503, not an empty answer)."""
    bad = ZipNumIndex(misc / "zipnum-bad.idx")
    with pytest.raises(IndexUnavailable, match=repr(shard)):
        list(bad.scan(key_range(url)))


def test_missing_files_and_broken_blocks(tmp_path: Path, misc: Path) -> None:
    for name in ("zipnum-sample.idx", "zipnum-sample.cdx.gz"):
        shutil.copy(misc / name, tmp_path / name)
    rng = key_range("http://iana.org")
    with pytest.raises(IndexUnavailable):  # no .loc
        list(ZipNumIndex(tmp_path / "zipnum-sample.idx").scan(rng))
    (tmp_path / "zipnum-sample.loc").write_text("zipnum\tnowhere.cdx.gz\n")
    with pytest.raises(IndexUnavailable, match="no location could be opened"):
        list(ZipNumIndex(tmp_path / "zipnum-sample.idx").scan(rng))
    (tmp_path / "zipnum-sample.loc").write_text("zipnum\tnowhere.cdx.gz\tzipnum-sample.cdx.gz\n")
    assert len(list(ZipNumIndex(tmp_path / "zipnum-sample.idx").scan(rng))) == 3
    shard = tmp_path / "zipnum-sample.cdx.gz"
    data = bytearray(shard.read_bytes())
    data[300:340] = b"\0" * 40  # inside block 2 (275+328)
    shard.write_bytes(bytes(data))
    with pytest.raises(IndexUnavailable, match="gzip"):
        list(ZipNumIndex(tmp_path / "zipnum-sample.idx").scan(rng))
    with pytest.raises(IndexUnavailable):
        list(ZipNumIndex(tmp_path / "gone.idx").scan(rng))
