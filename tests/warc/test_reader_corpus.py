"""ArchiveReader over every (W)ARC file of the corpus, in both modes.

Expected record counts are written out literally below; each comes from sources that do
not depend on webark: the PROVENANCE.md description, ``grep -c '^WARC/x.y$'`` over the
(decompressed) file, warcio's ArchiveIterator used as a peer, and the gold indexes
(warcio ``index``, pywb / cdxj-indexer CDX) whose offsets and lengths are checked here.
"""

from __future__ import annotations

import collections
import hashlib
import itertools
import json
from pathlib import Path

import pytest

from webark.core.errors import FormatError
from webark.warc.reader import ArchiveReader, read_record_at
from webark.warc.record import WarcRecord

# fmt: off
EXPECTED_RECORDS: dict[str, int] = {
    # "agree": grep -c of version lines == warcio's count == PROVENANCE (where it says)
    "cdxj-indexer/data/cc.warc.gz": 3,                 # agree; request, response, metadata
    "cdxj-indexer/data/example.warc.gz": 6,            # agree; PROVENANCE: 2 warcinfo, 2 pairs
    "cdxj-indexer/data/missing-http.warc.gz": 2,       # agree; PROVENANCE: response and request
    "cdxj-indexer/data/post-test-more.warc": 6,        # agree (gzip despite its name); 3 POST pairs
    "jwarc/cc.warc.gz": 1,                             # agree; PROVENANCE: single response
    "jwarc/gzip_extra_sl.warc.gz": 1,                  # agree; PROVENANCE: one warcinfo
    # ARC: an independent walk by the ARC length fields and warcio agree; PROVENANCE counts
    # only the http(s) records (96; 260 + 1 https), we also count filedesc and dns: ones
    "jwat/arc/1-1-20110922131213-00000-svc-VirtualBox.arc": 102,   # 1 filedesc + 5 dns + 96
    "jwat/arc/IAH-20080430204825-00000-blackbook.arc.gz": 300,     # 1 filedesc + 38 dns + 261
    "jwat/arc/invalid-arcfile-record-then-garbage.arc": 1,  # PROVENANCE: one record + garbage
    "jwat/arc/small_BNF.arc": 6,                       # walk + warcio; 5 records + filedesc
    "jwat/arc/test-arc-1.0-dashed-fields.arc": 2,      # walk + warcio
    "jwat/arc/test-arc-1.0-invalid-fields.arc": 2,     # walk + warcio
    # gzip-layer fixtures hold no WARC at all (text, or broken gzip of text)
    "jwat/gzip/invalid-compression.gz": 0,
    "jwat/gzip/invalid-entries.gz": 0,
    "jwat/gzip/invalid-magic.gz": 0,
    "jwat/gzip/invalid-truncated.gz": 0,
    "jwat/gzip/sample.txt.gz": 0,
    "jwat/gzip/three-files.gz": 0,
    "jwat/warc/IAH-20080430204825-00000-blackbook.warc.gz": 822,  # agree; PROVENANCE: 822
    "jwat/warc/invalid-warcfile-contenttype-recommended.warc": 7,  # agree; PROVENANCE: 7
    "jwat/warc/invalid-warcfile-contenttype-warcinfo-recommended.warc": 1,  # agree
    "jwat/warc/invalid-warcfile-digest-fields.warc": 4,  # agree; PROVENANCE: 4 responses
    "jwat/warc/invalid-warcfile-duplicate-fields.warc": 1,  # agree
    "jwat/warc/invalid-warcfile-encoding-headers.warc.gz": 4,  # agree
    # no usable Content-Length: reported (bad-content-length) and skipped, by design
    # (grep finds 1/1/1/1/1/4/1/2 version lines; warcio reads some as empty records)
    "jwat/warc/invalid-warcfile-fields-empty.warc": 0,
    "jwat/warc/invalid-warcfile-fields-invalidformat.warc": 0,
    "jwat/warc/invalid-warcfile-fields-missing.warc": 0,
    "jwat/warc/invalid-warcfile-lonely-continuation.warc": 0,
    "jwat/warc/invalid-warcfile-lonely-monkeys.warc": 0,
    "jwat/warc/invalid-warcfile-lonely-request-response-resource-conversion.warc": 0,
    "jwat/warc/invalid-warcfile-lonely-revisit.warc": 0,
    "jwat/warc/invalid-warcfile-lonely-warcinfo-metadata.warc": 0,
    "jwat/warc/invalid-warcfile-record-then-garbage.warc": 1,  # agree; then garbage
    "jwat/warc/invalid-warcfile-segment-number-continuation.warc": 2,  # agree
    "jwat/warc/invalid-warcfile-segment-number-response.warc": 2,  # agree
    "jwat/warc/valid-warcfile-contenttype-continuation.warc": 1,  # agree
    "jwat/warc/valid-warcfile-duplicate-concurrentto.warc": 1,  # agree
    "jwat/warc/valid-warcfile-fields-continuation.warc": 1,  # agree
    "jwat/warc/valid-warcfile-fields-metainfo.warc": 1,  # agree
    "jwat/warc/valid-warcfile-fields-warcinfo.warc": 1,  # agree
    "jwat/warc/valid-warcfile-non-warc-headers.warc": 1,  # agree
    "jwat/warc/valid-warcfile-upper-lower-case.warc": 5,  # warcio 5; grep -ci (2 are warc/1.0)
    "jwat/warc/valid-warcfile-utf8.warc": 1,           # agree
    "node-warc/books.toscrape.warc": 60,               # agree; PROVENANCE: 30 pairs
    "outbackcdx/test1.warc.gz": 5,                     # agree; PROVENANCE lists 5 types
    "outbackcdx/test2.warc.gz": 5,                     # agree
    "pywb/warcs/bad.arc": 4,                           # warcio; pywb include_all gold: 3 + filedesc
    "pywb/warcs/dupes.warc.gz": 25,                    # agree; PROVENANCE: 25
    "pywb/warcs/example-bad.warc.gz.bad": 6,           # grep 6 (warcio refuses whole-file gzip)
    "pywb/warcs/example-extra.warc": 6,                # agree
    "pywb/warcs/example-url-agnostic-orig.warc.gz": 2,  # agree
    "pywb/warcs/example-url-agnostic-revisit.warc.gz": 2,  # agree
    "pywb/warcs/example-wget-1-14.warc.gz": 6,         # agree; PROVENANCE: 6
    "pywb/warcs/example-wpull.warc.gz": 4,             # agree; PROVENANCE: 4
    "pywb/warcs/example.arc": 2,                       # warcio gold index: 2 lines
    "pywb/warcs/example.arc.gz": 2,                    # warcio gold index: 2 lines
    "pywb/warcs/example.warc": 6,                      # agree
    "pywb/warcs/example.warc.gz": 6,                   # agree; pywb include_all gold: 5 + warcinfo
    "pywb/warcs/example2.warc.gz": 3,                  # agree; PROVENANCE: 3
    "pywb/warcs/httpbin-resource.warc.gz": 1,          # agree
    "pywb/warcs/iana.warc.gz": 343,                    # agree; PROVENANCE: 343
    "pywb/warcs/missing-status-text.warc": 1,          # warcio; PROVENANCE: single response
    "pywb/warcs/post-test.warc.gz": 6,                 # agree; PROVENANCE: 3 pairs
    "resiliparse/block-sized-records.warc": 3,         # agree; fastwarc tests: 3 offsets
    "resiliparse/block-sized-records.warc.gz": 3,      # agree
    "resiliparse/clipped.warc.gz": 1,                  # agree; PROVENANCE: single clipped record
    "resiliparse/clueweb-quirk.warc.gz": 30,           # agree; PROVENANCE: 29 responses + warcinfo
    "resiliparse/warcfile.warc": 50,                   # agree; PROVENANCE: 50
    "resiliparse/warcfile.warc.gz": 50,                # agree; PROVENANCE: 50
    "warcio/example-bad-non-chunked.warc.gz": 6,       # grep 6; PROVENANCE: 6 records
    "warcio/example-digest.warc": 4,                   # agree; PROVENANCE: 4
    "warcio/example-iana.org-chunked.warc": 3,         # agree
    "warcio/example-resource.warc.gz": 3,              # agree
    "warcio/example-space-in-target-uri.warc.gz": 2,   # agree
    "warcio/example-space-in-url.arc": 2,              # warcio
    "warcio/example-trunc.warc": 4,                    # agree
    "warcio/example-wget-bad-target-uri.warc.gz": 6,   # agree
    "warcio/example-wrong-chunks.warc.gz": 2,          # grep 2; PROVENANCE: response + request
    "warcio/example.warc": 6,                          # agree; warcio gold index: 6
    "warcio/example.warc.gz": 6,                       # agree; warcio gold index: 6
    "warcio-js/example-bad-length.warc": 6,            # agree
    "warcio-js/redirect.warc": 2,                      # agree
    "webarchive-commons/link-extraction-test.warc": 8,  # grep 8 (warcio stops at a bad length)
    "webarchive-commons/multiple-headers.warc": 1,     # agree
    "webarchive-discovery/ip-host-testcase.warc.gz": 6,  # agree
    "webarchive-discovery/transfer_compression_brotli.warc": 5,  # agree; 5 types listed
    "webarchive-discovery/transfer_compression_brotli.warc.gz": 5,  # agree
    "webarchive-discovery/transfer_compression_gzip.warc": 5,  # agree
    "webarchive-discovery/transfer_compression_none.warc": 5,  # agree
    "webarchive-discovery/truncated_datetime.warc": 5,  # agree
}

# Record types by count, from the PROVENANCE descriptions.
EXPECTED_TYPES: dict[str, dict[str, int]] = {
    "pywb/warcs/iana.warc.gz": {"warcinfo": 1, "response": 48, "revisit": 123, "request": 171},
    "jwat/warc/IAH-20080430204825-00000-blackbook.warc.gz":
        {"warcinfo": 1, "response": 299, "request": 261, "metadata": 261},
    "resiliparse/warcfile.warc.gz":
        {"warcinfo": 1, "request": 17, "response": 16, "metadata": 16},
    "pywb/warcs/dupes.warc.gz": {"warcinfo": 1, "response": 3, "request": 12, "revisit": 9},
    "resiliparse/clueweb-quirk.warc.gz": {"warcinfo": 1, "response": 29},
    "warcio/example.warc": {"warcinfo": 2, "response": 1, "request": 2, "revisit": 1},
    "warcio/example-bad-non-chunked.warc.gz":
        {"warcinfo": 2, "response": 1, "request": 2, "revisit": 1},
    "jwat/warc/invalid-warcfile-contenttype-recommended.warc": {
        "warcinfo": 1, "request": 1, "response": 1, "metadata": 1, "resource": 1,
        "conversion": 1, "revisit": 1},
}
# fmt: on

GLOBS = ("**/*.warc", "**/*.warc.gz", "**/*.arc", "**/*.arc.gz", "**/*.bad", "jwat/gzip/*.gz")
ARC_FILES = {name for name in EXPECTED_RECORDS if ".arc" in name}


def _read(path: Path, careful: bool) -> tuple[list[WarcRecord], ArchiveReader]:
    reader = ArchiveReader(path, careful=careful)
    return list(reader), reader


def _key(rec: WarcRecord) -> tuple[int, int, str, str | None]:
    return (rec.offset, rec.length, rec.type, rec.target_uri)


def test_table_covers_every_archive_in_the_corpus(corpus: Path) -> None:
    found = {p.relative_to(corpus).as_posix() for g in GLOBS for p in corpus.glob(g)}
    assert found == set(EXPECTED_RECORDS)


@pytest.mark.parametrize("careful", [False, True], ids=["fast", "careful"])
@pytest.mark.parametrize("name", sorted(EXPECTED_RECORDS))
def test_every_file_is_read_with_the_expected_record_count(
    corpus: Path, name: str, careful: bool
) -> None:
    records, reader = _read(corpus / name, careful)
    assert len(records) == EXPECTED_RECORDS[name]
    assert reader.records_read == len(records)
    offsets = [r.offset for r in records]
    assert offsets == sorted(offsets)
    for rec in records:
        assert rec.path == str(corpus / name)
        if rec.block.size != rec.headers.content_length:
            # only a record cut short may have fewer bytes than it declares
            assert "truncated-record" in [p.code for p in rec.forgiven]
        # every problem names the file and, for a record, lies at or before it
        for p in rec.forgiven:
            assert p.path == str(corpus / name)
    if name in EXPECTED_TYPES:
        assert collections.Counter(r.type for r in records) == EXPECTED_TYPES[name]


@pytest.mark.parametrize(
    "name", sorted(n for n in EXPECTED_RECORDS if n not in ARC_FILES and EXPECTED_RECORDS[n])
)
def test_fast_and_careful_modes_agree(corpus: Path, name: str) -> None:
    fast, _ = _read(corpus / name, careful=False)
    slow, _ = _read(corpus / name, careful=True)
    assert [_key(r) for r in fast] == [_key(r) for r in slow]
    for a, b in zip(fast, slow, strict=True):
        assert a.headers == b.headers
        assert a.version == b.version
        assert (
            hashlib.sha1(a.block.read_all()).digest() == hashlib.sha1(b.block.read_all()).digest()
        )


def test_content_decides_the_format_not_the_name(corpus: Path) -> None:
    # post-test-more.warc is per-record gzip although named .warc
    reader = ArchiveReader(corpus / "cdxj-indexer/data/post-test-more.warc")
    records = list(reader)
    assert reader.compression == "gzip"
    assert [r.offset for r in records] == [0, 688, 1227, 1882, 2338, 2966]
    arc = ArchiveReader(corpus / "pywb/warcs/example.arc.gz")
    assert [r.type for r in arc] == ["warcinfo", "response"]
    assert arc.format == "arc" and arc.compression == "gzip"


# -- offsets and lengths against gold indexes -----------------------------------------


def _warcio_gold(corpus: Path) -> list[tuple[str, list[dict[str, str]]]]:
    index = json.loads((corpus / "warcio/expected-index/INDEX.json").read_text())
    out = []
    for item in index["files"]:
        src = item["input"].split(" ")[0]
        lines = (corpus / "warcio/expected-index" / item["file"]).read_text().splitlines()
        out.append((src, [json.loads(line) for line in lines if line.strip()]))
    return out


@pytest.mark.parametrize("careful", [False, True], ids=["fast", "careful"])
def test_offsets_and_lengths_match_warcio_index_gold(corpus: Path, careful: bool) -> None:
    gold = _warcio_gold(corpus)
    assert len(gold) == 5
    for src, rows in gold:
        records, _ = _read(corpus / src, careful)
        assert len(records) == len(rows), src
        for rec, row in zip(records, rows, strict=True):
            assert (rec.offset, rec.length) == (int(row["offset"]), int(row["length"])), src
            assert rec.type == row["warc-type"], src
            if "warc-target-uri" in row:
                assert rec.target_uri == row["warc-target-uri"]
            if "warc-filename" in row:
                assert rec.headers.filename == row["warc-filename"]
            if "http:status" in row:
                assert rec.http_status == int(row["http:status"])


def test_warcio_conventions_for_lengths(corpus: Path) -> None:
    # uncompressed: the length leaves out the CRLF CRLF after the block, so the next
    # record starts 4 bytes after offset + length; gzip: the member length, no gap
    plain, _ = _read(corpus / "warcio/example.warc", careful=False)
    for a, b in itertools.pairwise(plain):
        assert b.offset == a.offset + a.length + 4
    gz, _ = _read(corpus / "warcio/example.warc.gz", careful=False)
    for a, b in itertools.pairwise(gz):
        assert b.offset == a.offset + a.length
    assert gz[-1].offset + gz[-1].length == (corpus / "warcio/example.warc.gz").stat().st_size


@pytest.mark.parametrize("careful", [False, True], ids=["fast", "careful"])
@pytest.mark.parametrize(
    ("name", "offsets"),
    [
        ("resiliparse/block-sized-records.warc", [0, 16386, 32772]),
        ("resiliparse/block-sized-records.warc.gz", [0, 204, 409]),
        ("warcio/example.warc.gz", [0, 353, 784, 2012, 2621, 3207]),
    ],
)
def test_record_offsets_from_upstream_tests(
    corpus: Path, name: str, offsets: list[int], careful: bool
) -> None:
    records, _ = _read(corpus / name, careful)
    assert [r.offset for r in records] == offsets


def _cdx_pairs(path: Path) -> list[tuple[int, int | None]]:
    """(offset, length) of every line of a CDX11/CDX9/CDXJ file that has an offset."""
    lines = [line for line in path.read_text().splitlines() if line.strip()]
    out: list[tuple[int, int | None]] = []
    if lines and lines[0].startswith(" CDX"):
        names = lines[0].split()[1:]
        for line in lines[1:]:
            row = dict(zip(names, line.split(" "), strict=True))
            out.append((int(row["V"]), int(row["S"]) if "S" in row else None))
        return out
    for line in lines:
        js = json.loads(line[line.index("{") :])
        if "offset" in js:
            out.append((int(js["offset"]), int(js["length"]) if "length" in js else None))
    return out


def _gold_indexes(corpus: Path) -> list[tuple[Path, Path]]:
    """(index file, WARC) pairs: transcribed pywb / cdxj-indexer outputs and the
    byte-exact pywb CDX files (PROVENANCE "Gold standards")."""
    pairs: list[tuple[Path, Path]] = []
    for project, data in (("pywb", "warcs"), ("cdxj-indexer", "data")):
        index = json.loads((corpus / project / "expected-index/INDEX.json").read_text())
        for item in index if isinstance(index, list) else index["files"]:
            warc = corpus / project / data / item["input_warc"]
            if not warc.exists():  # identical blobs stored once, under pywb/warcs
                warc = corpus / "pywb/warcs" / item["input_warc"]
            pairs.append((corpus / project / "expected-index" / item["file"], warc))
    for cdx, warc in (
        ("pywb/cdx/example.cdx", "pywb/warcs/example.warc.gz"),
        ("pywb/cdx/dupes.cdx", "pywb/warcs/dupes.warc.gz"),
        ("pywb/cdx/iana.cdx", "pywb/warcs/iana.warc.gz"),
        ("outbackcdx/test1.cdx", "outbackcdx/test1.warc.gz"),
        ("outbackcdx/test2.cdx", "outbackcdx/test2.warc.gz"),
    ):
        pairs.append((corpus / cdx, corpus / warc))
    return pairs


@pytest.mark.parametrize("careful", [False, True], ids=["fast", "careful"])
def test_offsets_and_lengths_match_pywb_and_cdxj_indexer_gold(corpus: Path, careful: bool) -> None:
    pairs = _gold_indexes(corpus)
    assert len(pairs) >= 45
    checked = 0
    cache: dict[Path, dict[int, int]] = {}
    for index, warc in pairs:
        if warc not in cache:
            cache[warc] = {r.offset: r.length for r in _read(warc, careful)[0]}
        ours = cache[warc]
        for offset, length in _cdx_pairs(index):
            assert offset in ours, (index.name, offset)
            if length is not None:
                assert ours[offset] == length, (index.name, offset)
            checked += 1
    # iana.cdx alone has 171 lines; 295 lines with an offset in all
    assert checked == 295


@pytest.mark.parametrize("careful", [False, True], ids=["fast", "careful"])
def test_url_agnostic_records_after_a_bad_record_end(corpus: Path, careful: bool) -> None:
    # pywb/cdxj/url-agnost-example.cdxj: the second record of each file. The warcinfo
    # before it has no CRLF CRLF inside its gzip member (its Content-Length swallows it):
    # the careful reader used to skip the record after it while resynchronising.
    for name, offset, length in (
        ("example-url-agnostic-orig.warc.gz", 353, 1001),
        ("example-url-agnostic-revisit.warc.gz", 355, 591),
    ):
        records, reader = _read(corpus / "pywb/warcs" / name, careful)
        assert [(r.offset, r.length) for r in records][1] == (offset, length)
        if careful:
            assert [(p.code, p.offset) for p in reader.problems] == [("missing-record-end", 0)]


# -- read_record_at ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "name",
    [
        "pywb/warcs/iana.warc.gz",
        "warcio/example.warc",
        "warcio/example.warc.gz",
        "resiliparse/warcfile.warc",
        "resiliparse/block-sized-records.warc.gz",
        "pywb/warcs/example.warc",  # with a record 3 bytes short
        "node-warc/books.toscrape.warc",
        "warcio/example-wrong-chunks.warc.gz",
        "pywb/warcs/example.arc.gz",
        "jwat/arc/small_BNF.arc",
    ],
)
def test_read_record_at_returns_the_record_iteration_returns(corpus: Path, name: str) -> None:
    records, _ = _read(corpus / name, careful=False)
    assert records
    for rec in records:
        again = read_record_at(corpus / name, rec.offset)
        assert again.offset == rec.offset
        assert again.length == rec.length
        assert again.version == rec.version
        assert again.headers == rec.headers
        assert again.block.read_all() == rec.block.read_all()


def test_read_record_at_a_place_without_a_record_raises(corpus: Path) -> None:
    with pytest.raises(FormatError) as e:
        read_record_at(corpus / "warcio/example.warc.gz", 100)
    assert e.value.offset == 100
    with pytest.raises(FormatError):
        read_record_at(corpus / "warcio/example.warc", 5)
