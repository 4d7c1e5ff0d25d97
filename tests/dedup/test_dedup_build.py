"""Building a dedup index from the corpus: Heritrix 1/3 crawl.logs, WARC/ARC files and
CDX/CDXJ files; the revisits of pywb's sample WARCs find their originals."""

from __future__ import annotations

import base64
import hashlib
from pathlib import Path

import pytest

from webark.dedup.build import Candidate, Skip, crawl_log_originals, load, warc_originals
from webark.dedup.policy import DedupPolicy
from webark.dedup.sqlite_dedup import SqliteDedupIndex, open_index
from webark.warc.reader import ArchiveReader

# (file, originals loaded, skipped per reason) — counted independently with awk:
#   $2==200 && $10!="-" && $12 !~ /duplicate|warcRevisit|unwritten/ && not the empty sha1
CRAWL_LOGS = [
    ("netarchivesuite/crawl-9.log", 61, {"duplicate": 122, "status": 36}),
    ("netarchivesuite/idna-crawl.log", 296, {"duplicate": 90, "status": 1161}),
    ("netarchivesuite/invalid-crawl.log", 0, {"error": 3, "status": 1}),
    ("netarchivesuite/oldjob-11-crawl.log", 739, {"status": 1249}),
    ("netarchivesuite/stop-reason-crawl.log", 0, {"status": 5}),
    ("ukwa/fragment-of-a-crawl-with-dead-seeds.log", 6, {"status": 16}),
    ("ukwa/h3-crawl.log", 52, {"empty": 2, "status": 22}),
]


@pytest.fixture
def idx(tmp_path: Path) -> SqliteDedupIndex:
    return open_index(tmp_path / "dedup.sqlite")


@pytest.mark.parametrize(("name", "loaded", "skipped"), CRAWL_LOGS)
def test_crawl_log_counts(
    corpus: Path, idx: SqliteDedupIndex, name: str, loaded: int, skipped: dict[str, int]
) -> None:
    report = load(idx, "crawl-log", corpus / "crawllog" / name)
    assert report.loaded == loaded
    assert dict(report.skipped) == skipped
    assert report.errors == len(report.problems) == skipped.get("error", 0)


def test_crawl_log_errors_name_file_and_line(corpus: Path, idx: SqliteDedupIndex) -> None:
    report = load(idx, "crawl-log", corpus / "crawllog/netarchivesuite/invalid-crawl.log")
    where = [report.where(p) for p in report.problems]
    assert [w.rsplit(":", 1)[1] for w in where] == ["2", "3", "4"]
    assert all(w.startswith(str(corpus)) for w in where)
    assert "size" in report.problems[0].message
    assert report.problems[0].offset is not None  # byte offset of the line, plain file


def test_h3_crawl_log_keeps_warc_filename_and_offset(corpus: Path, idx: SqliteDedupIndex) -> None:
    path = corpus / "crawllog/ukwa/h3-crawl.log"
    load(idx, "crawl-log", path)
    line = next(
        ln
        for ln in path.read_text().splitlines()
        if " http://crawl-test-site.webarchive.org.uk/about/ " in ln
    )
    fields = line.split()
    hit = idx.lookup("http://crawl-test-site.webarchive.org.uk/about/", fields[9])
    assert hit is not None and hit.exact_url
    assert hit.warc_filename is not None and hit.warc_filename.endswith(".warc.gz")
    assert f'"warcFilename":"{hit.warc_filename}"' in line
    assert f'"warcFileOffset":{hit.offset}' in line
    # the date is the fetch-begin time (column 9), which Heritrix writes as WARC-Date
    assert hit.original.date == "2018-11-26T14:27:58Z"
    assert hit.original.record_id is None


def test_heritrix1_unprefixed_digests_are_labelled(corpus: Path) -> None:
    items = list(
        crawl_log_originals(
            corpus / "crawllog/netarchivesuite/stop-reason-crawl.log",
            DedupPolicy(statuses=frozenset({302})),
        )
    )
    cands = [i for i in items if isinstance(i, Candidate)]
    assert cands and all(c.digest == "sha1:ESVJLA2FRUB6UDKGUQWRMONKMVJQR325" for c in cands)
    assert cands[0].warc_filename is None and cands[0].offset is None


def test_duplicates_are_not_originals(corpus: Path) -> None:
    items = list(crawl_log_originals(corpus / "crawllog/netarchivesuite/crawl-9.log"))
    dups = [i for i in items if isinstance(i, Skip) and i.reason == "duplicate"]
    assert len(dups) == 122
    text = (corpus / "crawllog/netarchivesuite/crawl-9.log").read_text().splitlines()
    assert all("duplicate:" in text[d.line - 1] for d in dups if d.line is not None)


def test_policy_applies_to_build(corpus: Path, idx: SqliteDedupIndex) -> None:
    path = corpus / "crawllog/ukwa/h3-crawl.log"
    report = load(
        idx, "crawl-log", path, DedupPolicy(skip_mime_types=("text/html",), min_size=1000)
    )
    assert report.loaded + report.skipped["mime"] + report.skipped["size"] == 52
    assert report.skipped["mime"] > 0 and report.skipped["size"] > 0


# -- WARC and CDX -------------------------------------------------------------------------
WARCS = Path("pywb/warcs")


def _revisits(path: Path) -> list[tuple[str, str | None, str]]:
    return [
        (
            r.target_uri or "",
            r.headers.get("WARC-Refers-To-Target-URI"),
            r.headers.payload_digest or "",
        )
        for r in ArchiveReader(path)
        if r.type == "revisit"
    ]


def test_warc_counts(corpus: Path, idx: SqliteDedupIndex) -> None:
    dupes = load(idx, "warc", corpus / WARCS / "dupes.warc.gz")
    assert dupes.loaded == 1
    assert dict(dupes.skipped) == {"not-a-capture": 13, "revisit": 9, "status": 1, "empty": 1}
    iana = load(idx, "warc", corpus / WARCS / "iana.warc.gz")
    assert iana.loaded == 28
    assert dict(iana.skipped) == {"not-a-capture": 172, "revisit": 123, "status": 4, "empty": 16}


@pytest.mark.parametrize("kind", ["warc", "cdx", "cdxj"])
def test_dupes_revisits_find_their_originals(
    corpus: Path, idx: SqliteDedupIndex, kind: str
) -> None:
    pywb = corpus / "pywb"
    for name in ("dupes", "iana"):
        if kind == "warc":
            load(idx, "warc", pywb / "warcs" / f"{name}.warc.gz")
        else:
            load(idx, "cdx", pywb / kind / f"{name}.{kind}")
    revisits = _revisits(pywb / "warcs/dupes.warc.gz")
    assert len(revisits) == 9
    for url, refers_to, digest in revisits:
        hit = idx.lookup(refers_to or url, digest)
        assert hit is not None, url
        assert hit.original.payload_digest == digest
        assert hit.exact_url, url  # every one of them was captured at the same URL
        assert hit.warc_filename in ("dupes.warc.gz", "iana.warc.gz")
        if kind == "warc":
            assert hit.original.record_id is not None
    # the original of http://example.com is in dupes.warc.gz itself
    hit = idx.lookup("http://example.com", "sha1:B2LTWWPUOYAH7UIPQ7ZUPQ4VMBSVC36A")
    assert hit is not None
    assert (hit.warc_filename, hit.offset, hit.original.date) == (
        "dupes.warc.gz",
        334,
        "2014-01-27T17:12:00Z",
    )


def test_iana_revisits_find_their_originals(corpus: Path, idx: SqliteDedupIndex) -> None:
    load(idx, "warc", corpus / WARCS / "iana.warc.gz")
    revisits = _revisits(corpus / WARCS / "iana.warc.gz")
    assert len(revisits) == 123
    for url, refers_to, digest in revisits:
        hit = idx.lookup(refers_to or url, digest)
        assert hit is not None and hit.original.payload_digest == digest, url


def test_warc_originals_carry_record_id_and_offset(corpus: Path, idx: SqliteDedupIndex) -> None:
    load(idx, "warc", corpus / WARCS / "iana.warc.gz")
    hit = idx.lookup("http://www.iana.org/", "sha1:OSSAPWJ23L56IYVRW3GFEAR4MCJMGPTB")
    assert hit is not None and hit.exact_url
    assert hit.original.record_id == "<urn:uuid:4eec4942-a541-410a-99f4-50de39b62118>"
    assert (hit.warc_filename, hit.offset) == ("iana.warc.gz", 334)
    assert hit.original.date == "2014-01-26T20:06:24Z"


@pytest.mark.parametrize("source", ["warc", "cdx", "cdxj"])
def test_url_agnostic_revisit(corpus: Path, idx: SqliteDedupIndex, source: str) -> None:
    if source == "warc":
        report = load(idx, "warc", corpus / WARCS / "example-url-agnostic-orig.warc.gz")
        assert report.loaded == 1
    else:
        report = load(idx, "cdx", corpus / "pywb" / source / f"url-agnost-example.{source}")
        assert (report.loaded, dict(report.skipped)) == (1, {"revisit": 1})
    [(url, refers_to, digest)] = _revisits(corpus / WARCS / "example-url-agnostic-revisit.warc.gz")
    assert url == "http://test@example.com/" and refers_to == "http://example.iana.org/"
    hit = idx.lookup(url, digest)
    assert hit is not None
    assert not hit.exact_url
    assert hit.original.target_uri == "http://example.iana.org/"
    assert hit.original.date == "2013-07-02T19:54:02Z"
    assert hit.original.payload_digest == digest
    if source == "warc":  # the revisit's WARC-Refers-To names this very record
        refers = next(
            r.headers.get("WARC-Refers-To")
            for r in ArchiveReader(corpus / WARCS / "example-url-agnostic-revisit.warc.gz")
            if r.type == "revisit"
        )
        assert hit.original.record_id == refers
    exact = idx.lookup(refers_to, digest)
    assert exact is not None and exact.exact_url


def test_arc_files_get_a_computed_digest(corpus: Path) -> None:
    cands = [i for i in warc_originals(corpus / WARCS / "example.arc") if isinstance(i, Candidate)]
    assert len(cands) == 1
    assert cands[0].digest.startswith("sha1:") and cands[0].record_id is None


def test_broken_records_reported_with_offsets(corpus: Path, idx: SqliteDedupIndex) -> None:
    report = load(idx, "warc", corpus / WARCS / "bad.arc")
    assert report.errors == 2
    assert [report.where(p) for p in report.problems] == [
        f"{corpus / WARCS / 'bad.arc'} @ 134",
        f"{corpus / WARCS / 'bad.arc'} @ 262",
    ]


def test_cdx_bad_lines_reported(tmp_path: Path, idx: SqliteDedupIndex) -> None:
    cdx = tmp_path / "x.cdxj"
    cdx.write_text(
        'com,example)/ 20140127171200 {"url": "http://example.com", "mime": "text/html",'
        ' "status": "200", "digest": "B2LTWWPUOYAH7UIPQ7ZUPQ4VMBSVC36A", "offset": "1",'
        ' "filename": "a.warc.gz"}\n'
        "com,example)/ 20140127171200 {broken\n"
        "\n"
        'com,example)/ 2014 {"url": "http://example.com/x", "status": "200",'
        ' "digest": "OSSAPWJ23L56IYVRW3GFEAR4MCJMGPTB"}\n'
        'com,example)/ 2014 {"url": "http://example.com/y", "status": "200",'
        ' "digest": "sha1:NOT-A-DIGEST"}\n'
    )
    report = load(idx, "cdx", cdx)
    assert report.loaded == 2
    assert [report.where(p) for p in report.problems] == [f"{cdx}:2", f"{cdx}:5"]
    assert "http://example.com/y" in report.problems[1].message
    hit = idx.lookup("http://example.com/x", "OSSAPWJ23L56IYVRW3GFEAR4MCJMGPTB")
    assert hit is not None and hit.original.date == "2014-01-01T00:00:00Z"


def test_gzipped_cdx(corpus: Path, idx: SqliteDedupIndex) -> None:
    report = load(idx, "cdx", corpus / "pywb/cdxj/example.cdx.gz")
    assert report.loaded == 1 and report.errors == 0


def test_sources_agree(corpus: Path, tmp_path: Path) -> None:
    """The same captures give the same index from the WARC, its CDX and its CDXJ."""
    rows = []
    for kind, path in [
        ("warc", corpus / WARCS / "iana.warc.gz"),
        ("cdx", corpus / "pywb/cdx/iana.cdx"),
        ("cdx", corpus / "pywb/cdxj/iana.cdxj"),
    ]:
        with open_index(tmp_path / f"{path.name}.sqlite") as idx:
            load(idx, kind, path)  # type: ignore[arg-type]
            rows.append(
                sorted(
                    idx._db.execute("SELECT urlkey, hex(digest), ts, offset FROM by_url").fetchall()
                )
            )
    assert rows[0] == rows[1] == rows[2]
    assert len(rows[0]) == 28


def _warc_record(uri: str, digest: str, body: bytes = b"hello") -> bytes:
    http = b'HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nETag: "e1"\r\n\r\n' + body
    head = (
        "WARC/1.1\r\nWARC-Type: response\r\n"
        "WARC-Record-ID: <urn:uuid:12345678-1234-4234-8234-123456789abc>\r\n"
        f"WARC-Date: 2024-05-01T10:00:00Z\r\nWARC-Target-URI: {uri}\r\n"
        f"WARC-Payload-Digest: {digest}\r\n"
        "Content-Type: application/http;msgtype=response\r\n"
        f"Content-Length: {len(http)}\r\n\r\n"
    )
    return head.encode() + http + b"\r\n\r\n"


def test_warc_record_with_bad_digest_is_an_error_not_a_crash(
    tmp_path: Path, idx: SqliteDedupIndex
) -> None:
    good = "sha1:" + base64.b32encode(hashlib.sha1(b"hello").digest()).decode()
    bad = _warc_record("http://example.com/bad", "sha1:NOT-A-DIGEST")
    warc = tmp_path / "t.warc"
    warc.write_bytes(bad + _warc_record("http://example.com/good", good))
    report = load(idx, "warc", warc)
    assert report.loaded == 1
    assert [report.where(p) for p in report.problems] == [f"{warc} @ 0"]
    hit = idx.lookup("http://example.com/good", good)
    assert hit is not None and (hit.warc_filename, hit.offset) == ("t.warc", len(bad))
    last = idx.last_capture("http://example.com/good")
    assert last is not None and last.etag == '"e1"' and last.date == "2024-05-01T10:00:00Z"
