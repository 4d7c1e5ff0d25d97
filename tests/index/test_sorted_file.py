"""Binary search over a sorted file (SortedLines, SortedCdxFile) against brute force, the
CDX header/meta lines, the digest side index and errors."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from webark.cdx.formats import format_cdx11
from webark.cdx.line import CdxLine
from webark.index import sorted_file as sf
from webark.index.sorted_file import (
    SortedCdxFile,
    SortedLines,
    build_digest_index,
    write_sorted_cdxj,
)
from webark.index.source import IndexUnavailable, KeyRange, key_range


@pytest.mark.parametrize(
    ("probe", "mapped", "cache_span"),
    [(3, False, 0), (16, False, 0), (4096, False, 0), (3, True, 0), (4096, True, 1 << 18)],
)
def test_range_matches_brute_force(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, probe: int, mapped: bool, cache_span: int
) -> None:
    """Random sorted files (short lines, long lines, no final newline, blank lines) and
    random bounds: forward and backward ranges equal a filter over all non-blank lines,
    mapped and by positional reads. Tiny probe and chunk sizes make every line cross
    block boundaries; a cache span of 0 caches every probe (reused by later keys)."""
    monkeypatch.setattr(sf, "PROBE_SIZE", probe)
    monkeypatch.setattr(sf, "MAX_CHUNK", max(probe, 64))
    monkeypatch.setattr(sf, "PROBE_CACHE_SPAN", cache_span)
    rnd = random.Random(probe + mapped)
    path = tmp_path / "s.txt"
    for i in range(60):
        lines = sorted(
            {
                "".join(rnd.choice("ab c") for _ in range(rnd.randint(1, 9))).encode()
                for _ in range(rnd.randint(0, 40))
            }
        )
        lines = sorted([ln for ln in lines if ln.strip()] + [b"b" * rnd.randint(0, 300)])
        lines = [ln for ln in lines if ln]
        text = b"\n".join(lines) + (b"\n" if rnd.random() < 0.8 else b"")
        if i % 3 == 0:  # blank lines (runs of them too) anywhere, at the start and end
            text = b"".join(
                c + b"\n" * rnd.choice((0, 0, 0, 1, 3)) if c == b"\n" else c
                for c in (text[j : j + 1] for j in range(len(text)))
            )
            text = b"\n" * rnd.randint(0, 2) + text
        path.write_bytes(text)
        s = SortedLines(path, use_mmap=mapped)
        for _ in range(25):
            a, b = sorted(
                "".join(rnd.choice("ab c") for _ in range(rnd.randint(0, 4))).encode()
                for _ in range(2)
            )
            want = [ln for ln in lines if a <= ln < b]
            assert list(s.range(a, b)) == want
            assert list(s.range(a, b, reverse=True)) == want[::-1]
            assert list(s.range(a, None)) == [ln for ln in lines if a <= ln]


@pytest.mark.parametrize("mapped", [True, False])
def test_blank_lines_hide_no_neighbours(tmp_path: Path, mapped: bool) -> None:
    """Regression: a blank line compared as the smallest line, so the binary search
    skipped the lines before it (``range(b"a", b"b")`` of ``"a 1\\n\\nb 2\\n"`` was
    empty); the CDX scan lost captures the same way."""
    p = tmp_path / "blank.txt"
    p.write_bytes(b"a 1\n\nb 2\n")
    s = SortedLines(p, use_mmap=mapped)
    assert list(s.range(b"a", b"b")) == [b"a 1"]
    assert list(s.range(b"a", b"b", reverse=True)) == [b"a 1"]
    assert list(s.range(b"", None)) == [b"a 1", b"b 2"]
    assert list(s.range(b"", None, reverse=True)) == [b"b 2", b"a 1"]
    p.write_bytes(b"a 1\r\n\r\n\r\nb 2\r\n")  # CRLF blank lines
    s = SortedLines(p, use_mmap=mapped)
    assert list(s.range(b"a", b"b")) == [b"a 1\r"]
    assert list(s.range(b"b", None, reverse=True)) == [b"b 2\r"]

    cdx = tmp_path / "blank.cdxj"
    a = b'com,example)/a 20200101000000 {"url": "http://example.com/a"}'
    b = b'com,example)/b 20200101000000 {"url": "http://example.com/b"}'
    cdx.write_bytes(a + b"\n\n" + b + b"\n")
    src = SortedCdxFile(cdx)
    src.lines.use_mmap = mapped
    got = [x.url for x in src.scan(key_range("http://example.com/a"))]
    assert got == ["http://example.com/a"]
    assert list(src.scan_raw(key_range("example.com/", "host"), reverse=True)) == [b, a]


def test_a_replaced_file_is_seen(tmp_path: Path) -> None:
    """The mapping is kept between queries and renewed when the file is replaced:
    before the next query (recheck=0) or after ``recheck`` seconds."""
    p = tmp_path / "r.txt"
    sf.atomic_write_lines(p, [b"a", b"b"])
    now, later = SortedLines(p), SortedLines(p, recheck=3600)
    assert list(now.range(b"", None)) == list(later.range(b"", None)) == [b"a", b"b"]
    sf.atomic_write_lines(p, [b"a", b"c", b"d"])
    assert list(now.range(b"", None)) == [b"a", b"c", b"d"]
    assert list(later.range(b"", None)) == [b"a", b"b"]  # the old file, whole
    later.recheck = 0
    assert list(later.range(b"", None)) == [b"a", b"c", b"d"]


def test_empty_file(tmp_path: Path) -> None:
    p = tmp_path / "empty.cdxj"
    p.write_bytes(b"")
    assert list(SortedCdxFile(p).scan(KeyRange("", None))) == []
    assert list(SortedCdxFile(p).scan(KeyRange("", None), reverse=True)) == []


def test_cdx11_file_with_header_and_letters(corpus: Path) -> None:
    """pywb's iana.cdx (header ` CDX N b a m s k r M S V g`, 171 lines): a full scan
    gives every line once, the header is not a line."""
    src = SortedCdxFile(corpus / "pywb/cdx/iana.cdx")
    gold = (corpus / "pywb/cdx/iana.cdx").read_text().splitlines()[1:]
    got = list(src.scan(KeyRange("", None)))
    assert [format_cdx11(x) for x in got] == gold
    assert [format_cdx11(x) for x in src.scan(KeyRange("", None), reverse=True)] == gold[::-1]


def test_pywb_binsearch_prefix(corpus: Path) -> None:
    """pywb's binsearch doctest: prefix 'org,iana)/domains/root' in iana.cdx."""
    src = SortedCdxFile(corpus / "pywb/cdx/iana.cdx")
    got = list(src.scan(key_range("org,iana)/domains/root", "prefix")))
    assert [(x.urlkey, x.timestamp, x.status, x.offset) for x in got] == [
        ("org,iana)/domains/root", "20140126200912", "200", 657746),
        ("org,iana)/domains/root/db", "20140126200927", "302", 671278),
        ("org,iana)/domains/root/db", "20140126200928", "200", 672225),
        ("org,iana)/domains/root/servers", "20140126201227", "200", 733840),
    ]


def test_meta_lines_crlf_and_bad_lines_are_skipped(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    p = tmp_path / "x.cdxj"
    p.write_bytes(
        b'!meta {"title": "t"}\r\n'
        b'com,example)/ 20200101000000 {"url": "http://example.com/", "status": "200"}\r\n'
        b"com,example)/ 20200101000001 not-json-and-not-cdx\r\n"
        b'com,example)/ 20200101000002 {"url": "http://example.com/", "status": "404"}\r\n'
    )
    got = list(SortedCdxFile(p).scan(key_range("http://example.com/")))
    assert [(x.timestamp, x.status) for x in got] == [
        ("20200101000000", "200"),
        ("20200101000002", "404"),
    ]
    assert "skipping unreadable CDX line" in caplog.text
    raw = list(
        SortedCdxFile(p).scan_raw(key_range("http://example.com/", from_ts="20200101000001"))
    )
    assert raw == [
        b"com,example)/ 20200101000001 not-json-and-not-cdx",
        b'com,example)/ 20200101000002 {"url": "http://example.com/", "status": "404"}',
    ]


def test_missing_file_is_unavailable(tmp_path: Path) -> None:
    src = SortedCdxFile(tmp_path / "gone.cdxj")
    with pytest.raises(IndexUnavailable):
        list(src.scan(key_range("http://example.com/")))
    with pytest.raises(IndexUnavailable):
        list(src.by_digest("sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ"))


def test_digest_side_index(tmp_path: Path, corpus_lines: dict[str, list[CdxLine]], proj) -> None:  # type: ignore[no-untyped-def]
    project = proj
    """by_digest with and without the side index gives the same lines (any encoding of
    the digest); a stale side index is ignored; the external sort path (tiny runs)
    writes the same file as the in-memory one."""
    lines = [x for ls in corpus_lines.values() for x in ls]
    p = tmp_path / "all.cdxj"
    assert write_sorted_cdxj(lines, p) == 199
    digests = sorted({x.digest for x in lines if x.digest != "-"})
    plain = SortedCdxFile(p, digest_index=None)
    expect = {d: [project(x) for x in plain.by_digest(d)] for d in digests}
    # the revisit of iana's Inconsolata.otf and its original share one digest
    assert len(expect["sha1:LNMEDYOENSOEI5VPADCKL3CB6N3GWXPR"]) == 5

    n = build_digest_index(p)
    assert n == sum(1 for x in lines if x.digest != "-")
    side = SortedCdxFile(p)
    for d in digests:
        assert [project(x) for x in side.by_digest(d)] == expect[d]
    r0 = side.stats.reads
    got = list(side.by_digest("LNMEDYOENSOEI5VPADCKL3CB6N3GWXPR"))  # no label: same hash
    assert [project(x) for x in got] == expect["sha1:LNMEDYOENSOEI5VPADCKL3CB6N3GWXPR"]
    assert side.stats.reads - r0 <= 8  # a lookup, not a scan

    small = tmp_path / "small.digests"
    build_digest_index(p, small, chunk_lines=7)
    assert small.read_bytes() == Path(str(p) + ".digests").read_bytes()

    with p.open("ab") as f:  # the index changed: the side index is stale
        f.write(b'zz,example)/ 20300101000000 {"url": "http://example.zz/"}\n')
    stale = SortedCdxFile(p)
    assert [project(x) for x in stale.by_digest(digests[0])] == expect[digests[0]]
