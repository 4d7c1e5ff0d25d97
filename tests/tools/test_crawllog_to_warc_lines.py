"""One crawl.log line → revisit record: digest forms, annotation kinds, dates, the
Heritrix 1.x 11-column layout. Lines are real published ones (reference/crawl-log.md,
the corpus logs); variants change one column of them."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

from webark.crawllog import parse_line
from webark.tools.crawllog_to_warc import records_for_line, wanted_for
from webark.warc.builders import Original
from webark.warc.check import check_file
from webark.warc.record import WarcRecord
from webark.warc.writer import WarcWriter

# reference/crawl-log.md: an old Heritrix 1.x line, unprefixed Base32 digest,
# DeDuplicator origin without file and offset
H1_ORIGIN = (
    "2006-10-17T14:22:29.399Z   200      18803 http://www.bok.hi.is/ X http://bok.hi.is/ "
    "text/html #041 20061017142229087+180 OHCVML7NJ4STPQSRRWY7WWJL6T5H2R6L - "
    'duplicate:"ORIGIN",3t'
)
LABEL = "sha1:OHCVML7NJ4STPQSRRWY7WWJL6T5H2R6L"
HEX = base64.b32decode("OHCVML7NJ4STPQSRRWY7WWJL6T5H2R6L").hex()


def write(tmp_path: Path, line: str, original: Original | None = None) -> list[WarcRecord]:
    with WarcWriter(tmp_path, prefix="T") as w:
        recs = records_for_line(w, parse_line(line), original, source=("x.log", 7))
        written = w.write(*recs)
    assert check_file(w.paths[0]).ok
    return written


@pytest.mark.parametrize("digest", [
    "OHCVML7NJ4STPQSRRWY7WWJL6T5H2R6L", LABEL, f"sha1:{HEX}", HEX,
])
def test_digest_forms_become_sha1_base32(tmp_path: Path, digest: str) -> None:
    line = H1_ORIGIN.replace("OHCVML7NJ4STPQSRRWY7WWJL6T5H2R6L", digest)
    rev, meta = write(tmp_path, line)
    assert rev.headers.payload_digest == LABEL
    assert rev.headers.date_str == "2006-10-17T14:22:29Z"  # fetch began 14:22:29.087
    assert rev.target_uri == "http://www.bok.hi.is/"
    fields = meta.block.read_all().decode()
    assert "crawlLogFile: x.log\r\ncrawlLogLineNumber: 7\r\n" in fields
    assert "hopsFromSeed: X\r\n" in fields and "fetchTimeMs: 180\r\n" in fields


def test_log_time_when_fetch_column_is_empty(tmp_path: Path) -> None:
    line = H1_ORIGIN.replace("20061017142229087+180", "-")
    rev, _ = write(tmp_path, line)
    assert rev.headers.date_str == "2006-10-17T14:22:29Z"
    assert wanted_for(parse_line(line)).timestamp == "20061017142229"  # type: ignore[union-attr]


def test_server_not_modified(tmp_path: Path) -> None:
    line = H1_ORIGIN.replace('duplicate:"ORIGIN",3t', "duplicate:server-not-modified")
    line = line.replace("   200      18803", "   304          0")
    rev, _ = write(tmp_path, line)
    assert rev.headers.profile == "http://netpreserve.org/warc/1.1/revisit/server-not-modified"


def test_refers_to_fields_from_original(tmp_path: Path) -> None:
    orig = Original("http://bok.hi.is/", "2006-09-01T10:00:00Z",
                    "<urn:uuid:6b0e8d0c-0a51-4f4b-9ad0-5b0a3f4a7c11>", LABEL)
    rev, meta = write(tmp_path, H1_ORIGIN, orig)
    assert rev.headers.refers_to == "<urn:uuid:6b0e8d0c-0a51-4f4b-9ad0-5b0a3f4a7c11>"
    assert rev.headers.refers_to_target_uri == "http://bok.hi.is/"
    assert rev.headers.refers_to_date == "2006-09-01T10:00:00Z"
    assert meta.headers.concurrent_to == [rev.record_id]


def test_deduplicator_file_and_offset_are_kept_for_lookup(corpus: Path) -> None:
    first = next(
        ln for ln in (corpus / "crawllog/netarchivesuite/crawl-9.log").read_text().splitlines()
        if "duplicate:" in ln
    )
    w = wanted_for(parse_line(first))
    assert w is not None
    assert (w.filename, w.offset) == ("2-2-20071227104527-00000-kb-test-har-002.kb.dk.arc",
                                      57084)
    assert w.digest == "sha1:LMIW33PQDYKCP74JCOMX5QEPV5BU4YMM"


# --- choosing the original among the index lines of a digest (pywb's iana + dupes) ---

EMPTY = "sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ"  # empty body: iana.js (x16), iana.org
JS = "http://www.iana.org/_js/2013.1/iana.js"
FONT = "http://www.iana.org/_css/2013.1/fonts/Inconsolata.otf"


@pytest.fixture(scope="module")
def iana_cdx(corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    from click.testing import CliRunner

    from webark.cli.main import cli

    out = tmp_path_factory.mktemp("cdx") / "iana.cdxj"
    warcs = [str(corpus / "pywb/warcs" / n) for n in ("iana.warc.gz", "dupes.warc.gz")]
    res = CliRunner().invoke(cli, ["index", "-o", str(out), *warcs])
    assert res.exit_code == 0, res.output
    return out


@pytest.mark.parametrize(("wanted", "expected"), [
    # same URL: the earliest capture not after the duplicate
    ((JS, EMPTY, "20140126201000", None, None), ("iana.warc.gz", 3074)),
    # the DeDuplicator's named file and offset win over the earliest
    ((JS, EMPTY, "20140127000000", "iana.warc.gz", 660937), ("iana.warc.gz", 660937)),
    # no capture of this URL: any URL (digest only), earliest not after
    (("http://example.com/x", EMPTY, "20140126200700", None, None), ("iana.warc.gz", 3074)),
    # revisits are not originals: the one response of the font
    ((FONT, "sha1:LNMEDYOENSOEI5VPADCKL3CB6N3GWXPR", "20140127171300", None, None),
     ("iana.warc.gz", 620049)),
    # nothing captured before: unresolved
    ((JS, EMPTY, "20140101000000", None, None), None),
])
def test_choose_original(iana_cdx: Path, wanted: tuple[str, str, str, str | None, int | None],
                         expected: tuple[str, int] | None) -> None:
    from webark.index.sorted_file import SortedCdxFile
    from webark.tools.crawllog_to_warc_originals import Wanted, choose_original

    w = Wanted(*wanted)
    line = choose_original(list(SortedCdxFile(iana_cdx).by_digest(w.digest)), w)
    if expected is None:
        assert line is None
        return
    assert line is not None and line.mime != "warc/revisit"
    assert (line.filename, line.offset) == expected
