"""webark.crawllog on every crawl.log of the corpus (Heritrix 1.x from NetarchiveSuite,
Heritrix 3 from UKWA): line counts, byte-exact round trip, known values, bad lines."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

import pytest

from corpus_location import CORPUS
from webark.crawllog import (
    CrawlLogError,
    CrawlLogLine,
    DuplicateKind,
    format_line,
    iter_crawl_log,
    parse_line,
    read_crawl_log,
)

LOGS = CORPUS / "crawllog"

# file -> (lines in the file, good lines, bad lines)
EXPECTED_COUNTS = {
    "netarchivesuite/crawl-9.log": (219, 219, 0),
    # first line is the ARC record header of the metadata ARC it came from (skipped)
    "netarchivesuite/idna-crawl.log": (1548, 1547, 0),
    "netarchivesuite/invalid-crawl.log": (4, 1, 3),
    "netarchivesuite/oldjob-11-crawl.log": (1988, 1988, 0),
    "netarchivesuite/stop-reason-crawl.log": (5, 5, 0),
    "ukwa/fragment-of-a-crawl-with-dead-seeds.log": (22, 22, 0),
    "ukwa/h3-crawl.log": (76, 76, 0),
}


def _results(name: str) -> list[tuple[int, CrawlLogLine | CrawlLogError]]:
    return list(iter_crawl_log(LOGS / name))


def _lines(name: str) -> list[CrawlLogLine]:
    return [x for _, x in _results(name) if isinstance(x, CrawlLogLine)]


def test_every_corpus_log_is_covered(corpus: Path) -> None:
    found = {str(p.relative_to(corpus / "crawllog")) for p in (corpus / "crawllog").rglob("*.log")}
    assert found == set(EXPECTED_COUNTS)


@pytest.mark.parametrize("name", sorted(EXPECTED_COUNTS))
def test_line_counts(name: str) -> None:
    total, good, bad = EXPECTED_COUNTS[name]
    raw = (LOGS / name).read_bytes()
    assert len(raw.splitlines()) == total
    results = _results(name)
    assert sum(isinstance(x, CrawlLogLine) for _, x in results) == good
    assert sum(isinstance(x, CrawlLogError) for _, x in results) == bad
    numbers = [n for n, _ in results]
    assert numbers == sorted(numbers)
    assert all(1 <= n <= total for n in numbers)


@pytest.mark.parametrize(
    "name",
    [
        "ukwa/h3-crawl.log",
        "ukwa/fragment-of-a-crawl-with-dead-seeds.log",
        # Heritrix 1.x logs with the 12-column layout round-trip as well
        "netarchivesuite/crawl-9.log",
        "netarchivesuite/idna-crawl.log",
        "netarchivesuite/oldjob-11-crawl.log",
        "netarchivesuite/stop-reason-crawl.log",
    ],
)
def test_round_trip_byte_for_byte(name: str) -> None:
    data = (LOGS / name).read_bytes()
    lines = data.decode("utf-8").split("\n")
    if name.endswith("idna-crawl.log"):
        lines = lines[1:]  # ARC record header
    checked = 0
    for text in lines:
        if not text:
            continue
        assert format_line(parse_line(text)) == text
        checked += 1
    assert checked == EXPECTED_COUNTS[name][1]


def test_h3_round_trip_whole_file() -> None:
    path = LOGS / "ukwa/h3-crawl.log"
    rebuilt = "".join(format_line(line) + "\n" for line in read_crawl_log(path))
    assert rebuilt.encode("utf-8") == path.read_bytes()


# ---- Heritrix 3 (UKWA) -----------------------------------------------------------------


def test_h3_first_line_fields() -> None:
    line = _lines("ukwa/h3-crawl.log")[0]
    assert line.timestamp == datetime(2018, 11, 26, 14, 27, 46, 376000, tzinfo=UTC)
    assert line.status == 1
    assert line.status_meaning == "DNS lookup succeeded"
    assert line.size == 70
    assert line.uri == "dns:crawl-test-site.webarchive.org.uk"
    assert line.hop_path == "P"
    assert line.last_hop == "P"
    assert line.via == "http://crawl-test-site.webarchive.org.uk/"
    assert line.mime_type == "text/dns"
    assert line.thread == 1
    assert line.fetch_began == datetime(2018, 11, 26, 14, 27, 45, 781000, tzinfo=UTC)
    assert line.fetch_duration_ms == 41
    assert line.digest == "sha1:FKVNHP52F5J3X75WPYVEX5HNYXEENSVA"
    assert line.source_tag is None
    assert line.annotations == ()
    assert line.extra == {
        "warcFilename": "BL-NPLD-TEST-20181126142746308-00001-15396~h3w~8443.warc.gz",
        "warcFileOffset": 530,
        "scopeDecision": "ACCEPT by rule #14 PrerequisiteAcceptDecideRule",
        "warcFileRecordLength": 252,
    }
    assert not line.is_failure and not line.is_duplicate


def test_h3_robots_excluded_line() -> None:
    (line,) = [x for x in _lines("ukwa/h3-crawl.log") if x.status == -9998]
    assert line.uri == "http://crawl-test-site.webarchive.org.uk/disallowed-by-robots-txt/"
    assert line.status_name == "S_ROBOTS_PRECLUDED"
    assert line.status_meaning == "excluded by robots.txt"
    assert line.is_failure and line.is_disregarded
    assert line.size is None and line.digest is None
    assert line.fetch_began is None and line.fetch_duration_ms is None
    assert line.mime_type == "unknown"
    assert line.extra == {"scopeDecision": "ACCEPT by rule #1 WatchedFileSurtPrefixedDecideRule"}


def test_h3_status_histogram() -> None:
    counts = Counter(x.status for x in _lines("ukwa/h3-crawl.log"))
    assert counts == {200: 54, 404: 8, 1: 6, 302: 4, -5002: 2, -9998: 1, -5000: 1}


def test_h3_annotation_with_spaces_and_attempts() -> None:
    lines = _lines("ukwa/h3-crawl.log")
    (virus,) = [x for x in lines if x.uri.endswith("eicar.com.txt")]
    assert virus.annotations == ("ip:172.19.0.3", "1: stream: Eicar-Test-Signature FOUND")
    assert virus.ip == "172.19.0.3"
    assert virus.extra["warcFilename"].startswith("BL-NPLD-TEST-VIRAL-")
    rendered = [x for x in lines if x.status == -5002]
    assert [x.annotations for x in rendered] == [("WrenderedStatus:200", "WrenderedURL", "3t")] * 2
    assert all(x.attempts == 3 for x in rendered)
    assert all(x.is_seed and x.hop_count == 0 for x in rendered)


def test_dead_seeds_fragment() -> None:
    lines = _lines("ukwa/fragment-of-a-crawl-with-dead-seeds.log")
    errs = [x for x in lines if x.status == -5]
    assert len(errs) == 2
    assert all(x.error == "java.lang.NullPointerException" for x in errs)
    assert all(x.status_meaning == "unexpected runtime exception" for x in errs)
    assert all(x.extra_info is None for x in lines)
    (amqp,) = [x for x in lines if "receivedFromAMQP" in x.annotations]
    assert amqp.attempts == 3 and amqp.uri == "http://annarosedance.co.uk/"


# ---- Heritrix 1.x (NetarchiveSuite) ------------------------------------------------------


def test_crawl9_deduplicator_annotations() -> None:
    lines = _lines("netarchivesuite/crawl-9.log")
    dups = [x for x in lines if x.is_duplicate]
    assert len(dups) == 122
    first = dups[0]
    assert first.uri == "http://netarkivet.dk/netarchive_alm/billeder/netarkivet_guidelines_05.gif"
    dup = first.duplicate_of
    assert dup is not None
    assert dup.kind is DuplicateKind.ORIGIN
    assert dup.filename == "2-2-20071227104527-00000-kb-test-har-002.kb.dk.arc"
    assert dup.offset == 57084
    assert first.annotations == (
        'duplicate:"2-2-20071227104527-00000-kb-test-har-002.kb.dk.arc,57084"',
        "content-size:491",
    )
    assert all(x.digest is not None and x.digest.startswith("sha1:") for x in lines)
    assert Counter(x.status for x in lines) == {200: 183, 404: 21, 1: 7, 302: 4, 301: 4}


def test_idna_quota_lines_counted() -> None:
    lines = _lines("netarchivesuite/idna-crawl.log")
    quota = [x for x in lines if x.status == -5003]
    assert len(quota) == 1130
    assert {x.quota for x in quota} == {"group-max-fetch-successes"}
    assert all(x.status_name == "S_BLOCKED_BY_QUOTA" and x.is_failure for x in quota)
    assert all(x.mime_type == "no-type" and x.size is None for x in quota)
    assert sum(x.status == -63 for x in lines) == 8
    assert sum(x.is_duplicate for x in lines) == 90
    assert lines[0].uri == "dns:www.xn--lejr-fra.dk"
    assert lines[0].source_tag == "http://www.xn--lejr-fra.dk/"


def test_idna_arc_header_can_be_kept_as_an_error() -> None:
    results = list(iter_crawl_log(LOGS / "netarchivesuite/idna-crawl.log", skip_arc_header=False))
    number, first = results[0]
    assert number == 1
    assert isinstance(first, CrawlLogError)
    assert first.line_number == 1


def test_oldjob_unprefixed_digests_and_statuses() -> None:
    lines = _lines("netarchivesuite/oldjob-11-crawl.log")
    digests = [x.digest for x in lines if x.digest]
    assert digests and not any(d.startswith("sha1:") for d in digests)
    with_digest = next(x for x in lines if x.digest)
    assert with_digest.digest_label == "sha1:" + with_digest.digest
    counts = Counter(x.status for x in lines)
    assert counts[-5003] == 1160
    assert counts[-61] == 1 and counts[-5] == 1 and counts[-2] == 1 and counts[500] == 3
    assert {x.quota for x in lines if x.status == -5003} == {"group-max-all-kb"}
    (le,) = [x for x in lines if any(a.startswith("le:") for a in x.annotations)]
    assert le.status == -2 and le.attempts == 3
    (npe,) = [x for x in lines if x.error]
    assert npe.error == "java.lang.NullPointerException" and npe.uri == "http:/"


def test_stop_reason_log() -> None:
    lines = _lines("netarchivesuite/stop-reason-crawl.log")
    quota = [x for x in lines if x.status == -5003]
    assert [x.quota for x in quota] == ["group-max-all-kb", "group-max-fetch-successes"]
    assert all(x.fetch_began is None and x.digest is None for x in quota)


def test_invalid_lines_reported_with_numbers_and_fields() -> None:
    path = LOGS / "netarchivesuite/invalid-crawl.log"
    results = list(iter_crawl_log(path))
    assert [n for n, _ in results] == [1, 2, 3, 4]
    good = results[0][1]
    assert isinstance(good, CrawlLogLine)
    # earliest Heritrix 1.x layout: 11 columns, no source tag
    assert good.uri == "dns:www.kb.dk" and good.source_tag is None and good.annotations == ()
    errors = [e for _, e in results[1:]]
    assert all(isinstance(e, CrawlLogError) for e in errors)
    e2, e3, e4 = errors
    assert isinstance(e2, CrawlLogError)
    assert isinstance(e3, CrawlLogError)
    assert isinstance(e4, CrawlLogError)
    assert (e2.line_number, e2.field, e2.field_number) == (2, "size", 3)
    assert "'xyz'" in str(e2) and str(path) in str(e2) and ":2:" in str(e2)
    assert e2.text.split()[2] == "xyz"
    assert e2.column is not None and e2.text[e2.column - 1 :].startswith("xyz")
    assert (e3.line_number, e3.field) == (3, "uri")
    assert "000nourl000" in str(e3)
    assert (e4.line_number, e4.field) == (4, "hop path")
    assert "4 fields" in e4.reason
    # byte offsets point at the start of each bad line
    data = path.read_bytes()
    for e in errors:
        assert isinstance(e, CrawlLogError) and e.offset is not None
        assert data[e.offset :].startswith(e.text.encode())


def test_read_crawl_log_skips_bad_lines(caplog: pytest.LogCaptureFixture) -> None:
    lines = read_crawl_log(LOGS / "netarchivesuite/invalid-crawl.log")
    assert len(lines) == 1
    assert sum("invalid-crawl.log" in r.getMessage() for r in caplog.records) == 3
