"""The indexer on the whole corpus: no crash, line counts that can be explained, revisit
lines, problem reports, options, and the multi-process path (same lines as one process)."""

from __future__ import annotations

import shutil
from collections import Counter
from pathlib import Path

import pytest
from cdx_support import CORPUS

from webark.cdx.formats import formatter
from webark.cdx.indexer import (
    PARALLEL_MIN_BYTES,
    IndexOptions,
    index_file,
    index_file_text,
    index_records,
    split_points,
)
from webark.warc.headers import WarcHeaders
from webark.warc.reader import ArchiveReader
from webark.warc.record import Block, WarcRecord

ARCHIVES = sorted(
    p
    for p in CORPUS.rglob("*")
    if p.is_file() and p.name.endswith((".warc", ".warc.gz", ".arc", ".arc.gz", ".gz.bad"))
)


def test_corpus_has_archives() -> None:
    assert len(ARCHIVES) == 84


@pytest.mark.parametrize("path", ARCHIVES, ids=[str(p.relative_to(CORPUS)) for p in ARCHIVES])
def test_every_corpus_file_indexes_without_crash(path: Path) -> None:
    """Every (W)ARC of the corpus, broken ones included, in every format and compat:
    no exception, one line per selected record, and every line formats."""
    for compat in ("pywb", "cdxj-indexer"):
        for all_records in (False, True):
            opts = IndexOptions(
                compat=compat,
                all_records=all_records,  # type: ignore[arg-type]
                post_append=True,
            )
            fi = index_file(path, opts)
            lines = list(fi)
            assert len(lines) <= fi.records_read
            for fmt in ("cdxj", "cdx11", "cdx9", "ng"):
                for line in lines:
                    text = formatter(fmt)(line)  # type: ignore[arg-type]
                    assert "\n" not in text
            for line in lines:
                assert len(line.timestamp) == 14 and line.timestamp.isdigit()
                assert line.offset >= 0 and line.length > 0


def _count(rel: str, **kw: object) -> Counter[str]:
    return Counter(ln.record_type for ln in index_file(CORPUS / rel, IndexOptions(**kw)))  # type: ignore[arg-type]


def test_counts_iana() -> None:
    """iana.warc.gz: warcinfo + 48 responses + 123 revisits + 171 requests."""
    assert _count("pywb/warcs/iana.warc.gz") == {"response": 48, "revisit": 123}
    assert _count("pywb/warcs/iana.warc.gz", compat="pywb", all_records=True) == {
        "response": 48,
        "revisit": 123,
        "request": 171,
    }  # pywb never writes warcinfo
    assert _count("pywb/warcs/iana.warc.gz", all_records=True) == {
        "response": 48,
        "revisit": 123,
        "request": 171,
        "warcinfo": 1,
    }


def test_counts_heritrix_warc_0_17() -> None:
    """Heritrix 1.14 WARC/0.17: 299 responses (dns: included), 261 requests, 261
    ``text/anvl`` metadata records. cdxj-indexer indexes the metadata, pywb never."""
    rel = "jwat/warc/IAH-20080430204825-00000-blackbook.warc.gz"
    assert _count(rel) == {"response": 299, "metadata": 261}
    assert _count(rel, compat="pywb") == {"response": 299}
    assert _count(rel, compat="pywb", all_records=True) == {"response": 299, "request": 261}


def test_counts_arc_and_wget() -> None:
    """The same crawl as ARC: 299 records after the filedesc; wget WARC: the response
    and its three ``metadata://`` resource records (MANIFEST, arguments, log)."""
    assert _count("jwat/arc/IAH-20080430204825-00000-blackbook.arc.gz") == {"response": 299}
    assert _count("pywb/warcs/example-wget-1-14.warc.gz") == {"response": 1, "resource": 3}


def test_dns_lines() -> None:
    lines = list(
        index_file(
            CORPUS / "jwat/warc/IAH-20080430204825-00000-blackbook.warc.gz",
            IndexOptions(compat="pywb"),
        )
    )
    dns = [ln for ln in lines if ln.url.startswith("dns:")]
    assert len(dns) == 38  # as pywb 2.10 writes for this file
    assert all(ln.urlkey == ln.url and ln.mime == "text/dns" and ln.status == "200" for ln in dns)


def test_revisit_lines() -> None:
    """Revisits: MIME ``warc/revisit``, the original's payload digest, offset and length
    of the revisit record itself; status ``-`` (pywb) or from its HTTP head
    (cdxj-indexer)."""
    path = CORPUS / "pywb" / "warcs" / "dupes.warc.gz"
    for compat, status in (("pywb", "-"), ("cdxj-indexer", "200")):
        lines = list(index_file(path, IndexOptions(compat=compat)))  # type: ignore[arg-type]
        revisits = [ln for ln in lines if ln.record_type == "revisit"]
        assert len(revisits) == 9
        assert all(ln.mime == "warc/revisit" and ln.status == status for ln in revisits)
        byoff = {r.offset: r for r in ArchiveReader(path)}
        for ln in revisits:
            rec = byoff[ln.offset]
            assert rec.type == "revisit" and rec.length == ln.length
            wd = rec.headers.payload_digest or ""
            assert ln.digest in (wd, wd.removeprefix("sha1:"))
    # the revisit of example.com has the digest of the original response
    lines = list(index_file(path, IndexOptions(compat="pywb")))
    ex = [ln for ln in lines if ln.urlkey == "com,example)/"]
    assert {ln.digest for ln in ex} == {"B2LTWWPUOYAH7UIPQ7ZUPQ4VMBSVC36A"}
    assert [ln.mime for ln in ex] == ["text/html", "warc/revisit"]


def test_ng_revisit_refs_and_redirect() -> None:
    lines = list(index_file(CORPUS / "pywb/warcs/example.warc.gz", IndexOptions.for_format("ng")))
    rev = next(ln for ln in lines if ln.record_type == "revisit")
    assert rev.extra == {
        "refersToUri": "http://example.com?example=1",
        "refersToDate": "2014-01-03T03:03:21Z",
    }
    assert rev.urlkey == rev.surt == "http://(com,example,)/?example=1"
    redirect = next(ln for ln in lines if ln.status == "302")
    assert redirect.redirect == "/domains/reserved"


def test_bad_dates_are_reported_not_indexed() -> None:
    """ClueWeb09's ``2008-10-294T05:21:46-0700`` is no date: 29 records skipped, each
    reported with file and offset."""
    fi = index_file(CORPUS / "resiliparse/clueweb-quirk.warc.gz")
    assert list(fi) == []
    bad = [p for p in fi.problems if p.code == "cdx-bad-date"]
    assert len(bad) == 29 and all(p.offset is not None and p.offset > 0 for p in bad)
    assert all(p.path.endswith("clueweb-quirk.warc.gz") for p in bad)


def test_broken_record_reported_and_rest_indexed() -> None:
    """example.warc: the second request's Content-Length is one byte short; the reader
    reports it with its offset and every record is still indexed."""
    fi = index_file(
        CORPUS / "pywb/warcs/example.warc", IndexOptions(compat="pywb", all_records=True)
    )
    assert [ln.offset for ln in fi] == [460, 2451, 3161, 4061, 4771]
    assert [(p.severity, p.offset) for p in fi.problems] == [("error", 4061)]


def test_truncated_datetime_minute_precision() -> None:
    lines = list(
        index_file(
            CORPUS / "webarchive-discovery/truncated_datetime.warc", IndexOptions.for_format("ng")
        )
    )
    assert lines[0].date == "2019-08-15T01:02" and lines[0].timestamp == "20190815010200"


def test_index_records_is_pure_on_memory_records() -> None:
    rec = WarcRecord(
        WarcHeaders(
            [
                ("WARC-Type", "resource"),
                ("WARC-Target-URI", "http://www.Example.com/A?b=1&a=2"),
                ("WARC-Date", "2024-05-06T07:08:09.123Z"),
                ("Content-Type", "text/plain; x=y"),
            ]
        ),
        Block(b"hello"),
        offset=10,
        length=99,
    )
    (line,) = index_records([rec], "mem.warc")
    assert (line.urlkey, line.timestamp, line.mime, line.status) == (
        "com,example)/a?a=2&b=1",
        "20240506070809",
        "text/plain",
        "-",
    )
    assert line.digest == "sha1:VL2MMHO4YXUKFWV63YHTWSBM3GXKSQ2N"  # sha1("hello")
    assert (line.offset, line.length, line.filename) == (10, 99, "mem.warc")
    (pl,) = index_records([rec], "mem.warc", IndexOptions(compat="pywb"), offset_base=5)
    assert (pl.digest, pl.mime, pl.offset) == ("VL2MMHO4YXUKFWV63YHTWSBM3GXKSQ2N", "text/plain", 15)


def test_options() -> None:
    with pytest.raises(ValueError):
        IndexOptions(minimal=True, post_append=True)
    with pytest.raises(ValueError):
        IndexOptions(compat="heritrix")  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        IndexOptions(replace_fields=True)
    assert IndexOptions.for_format("cdx11").compat == "pywb"
    assert IndexOptions.for_format("cdxj").compat == "cdxj-indexer"
    assert IndexOptions.for_format("ng").scope_keys
    assert IndexOptions(dir_root="/a").file_name("/a/b/c.warc.gz") == "b/c.warc.gz"
    assert IndexOptions(filename="x").file_name("/a/b/c.warc.gz") == "x"
    assert IndexOptions(fields=("method",)).needs_pairing
    assert not IndexOptions(fields=("http:date",)).needs_pairing


# -- several processes --------------------------------------------------------------------------
def _concat(src: Path, dest: Path, min_bytes: int) -> Path:
    data = src.read_bytes()
    with dest.open("wb") as f:
        n = 0
        while n < min_bytes:
            f.write(data)
            n += len(data)
    return dest


def _text(path: Path, jobs: int, **kw: object) -> tuple[list[str], list[str]]:
    chunks = list(index_file_text(path, IndexOptions(**kw), "cdxj", jobs=jobs))  # type: ignore[arg-type]
    _text.chunks = len(chunks)  # type: ignore[attr-defined]
    return ([ln for c in chunks for ln in c.lines], [str(p) for c in chunks for p in c.problems])


@pytest.mark.parametrize("src", ["pywb/warcs/iana.warc.gz", "resiliparse/warcfile.warc"])
def test_parallel_equals_sequential(src: str, tmp_path: Path) -> None:
    """A file split over processes gives the very lines of one process (gzip per record
    and uncompressed), POST folding and all records included."""
    big = _concat(CORPUS / src, tmp_path / Path(src).name, PARALLEL_MIN_BYTES + 1)
    points = split_points(big, 4)
    assert points is not None and len(points) == 5 and points[-1] == big.stat().st_size
    one = _text(big, 1, post_append=True, all_records=True)
    many = _text(big, 3, post_append=True, all_records=True)
    assert _text.chunks == 3  # type: ignore[attr-defined]  # three ranges, all trusted
    assert many == one and len(one[0]) > 500


def test_parallel_falls_back_on_damage(tmp_path: Path) -> None:
    """A damaged record in the middle: the ranges after it are re-read in one process,
    so lines and problem reports are those of one process."""
    big = _concat(
        CORPUS / "pywb/warcs/iana.warc.gz", tmp_path / "big.warc.gz", PARALLEL_MIN_BYTES + 1
    )
    data = bytearray(big.read_bytes())
    mid = len(data) * 5 // 8
    data[mid : mid + 64] = b"\0" * 64
    big.write_bytes(bytes(data))
    one = _text(big, 1)
    many = _text(big, 2)
    assert many == one
    assert one[1], "the damage is reported"


def test_split_points_refuse_unsplittable(tmp_path: Path) -> None:
    arc = _concat(
        CORPUS / "jwat/arc/IAH-20080430204825-00000-blackbook.arc.gz", tmp_path / "x.arc.gz", 1
    )
    assert split_points(arc, 2) is None
    whole = tmp_path / "whole.warc.gz"
    shutil.copy(CORPUS / "warcio/example-bad-non-chunked.warc.gz", whole)
    assert split_points(whole, 2) is None


def test_pairs_never_straddle_ranges(tmp_path: Path) -> None:
    """Ranges never start at a record with WARC-Concurrent-To (the second of a
    request/response pair): every split point is a response without it."""
    big = _concat(
        CORPUS / "pywb/warcs/post-test.warc.gz", tmp_path / "post.warc.gz", PARALLEL_MIN_BYTES + 1
    )
    points = split_points(big, 6)
    assert points is not None
    starts = {r.offset: r for r in ArchiveReader(big)}
    for p in points[1:-1]:
        assert starts[p].headers.get("WARC-Concurrent-To") is None
    assert _text(big, 2, post_append=True) == _text(big, 1, post_append=True)
