"""webark.crawllog on single lines: published examples, every field's errors, the
annotation and status helpers, building lines for writing."""

from __future__ import annotations

import doctest
import gzip
import importlib
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import pytest

from webark.crawllog import (
    HERITRIX_STATUS,
    CrawlLogError,
    CrawlLogLine,
    DuplicateKind,
    extra_info_json,
    format_line,
    iter_crawl_log,
    parse_duplicate,
    parse_line,
    split_annotations,
    status_meaning,
)

# Lines published in Heritrix documentation / mailing lists (reference/crawl-log.md).
POWELLS = (
    "2011-06-23T17:12:08.802Z   200       1299 http://content-5.powells.com/robots.txt LREP "
    "http://content-5.powells.com/cgi-bin/imageDB.cgi?isbn=9780385518635 text/plain #014 "
    "20110623171208574+225 sha1:YIUOKDGOLGI5JYHDTXRFFQ5FF4N2EJRV - -"
)
BOK_HI_IS = (
    "2006-10-17T14:22:29.399Z   200      18803 http://www.bok.hi.is/ X http://bok.hi.is/ "
    'text/html #041 20061017142229087+180 OHCVML7NJ4STPQSRRWY7WWJL6T5H2R6L - duplicate:"ORIGIN",3t'
)
ARCHIVE_IT = (
    "2017-08-03T21:45:24.496Z   200       2189 https://autismcouncil.wisconsin.gov/robots.txt P "
    "https://autismcouncil.wisconsin.gov/ text/plain #001 20170803214523617+365 "
    "sha1:PBS2CEF7B4OSEXZZF3QE2XN2VHYCPNPX https://autismcouncil.wisconsin.gov/ "
    'duplicate:digest {"warcFileOffset":942,"contentSize":2495,'
    '"warcFilename":"ARCHIVEIT-2159-TEST-JOB319150-20170803214522386-00000.warc.gz"}'
)


@pytest.mark.parametrize("text", [POWELLS, BOK_HI_IS, ARCHIVE_IT])
def test_published_lines_round_trip(text: str) -> None:
    assert format_line(parse_line(text)) == text
    assert format_line(parse_line(text + "\n")) == text
    assert format_line(parse_line(text + "\r\n")) == text


def test_published_line_values() -> None:
    p = parse_line(POWELLS)
    assert (p.hop_path, p.hop_count, p.last_hop, p.thread) == ("LREP", 4, "P", 14)
    assert p.fetch_duration_ms == 225
    b = parse_line(BOK_HI_IS)
    assert b.digest == "OHCVML7NJ4STPQSRRWY7WWJL6T5H2R6L"
    assert b.digest_label == "sha1:OHCVML7NJ4STPQSRRWY7WWJL6T5H2R6L"
    assert b.duplicate_of is not None and b.duplicate_of.kind is DuplicateKind.ORIGIN
    assert b.duplicate_of.value == "ORIGIN" and b.duplicate_of.offset is None
    assert b.attempts == 3
    a = parse_line(ARCHIVE_IT)
    assert a.source_tag == "https://autismcouncil.wisconsin.gov/"
    assert a.is_duplicate and a.duplicate_of is not None
    assert a.duplicate_of.kind is DuplicateKind.DIGEST
    assert a.extra == {
        "warcFileOffset": 942,
        "contentSize": 2495,
        "warcFilename": "ARCHIVEIT-2159-TEST-JOB319150-20170803214522386-00000.warc.gz",
    }


def _line(**changes: object) -> CrawlLogLine:
    base = CrawlLogLine(
        timestamp=datetime(2024, 2, 29, 23, 59, 59, 999000, tzinfo=UTC),
        status=200,
        size=1234,
        uri="https://example.com/a?b=c",
        hop_path="LLE",
        via="https://example.com/",
        mime_type="text/html",
        thread=7,
        fetch_began=datetime(2024, 2, 29, 23, 59, 59, 1000, tzinfo=UTC),
        fetch_duration_ms=998,
        digest="sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ",
        source_tag="https://example.com/",
        annotations=("ip:192.0.2.1", "3t"),
        extra_info=extra_info_json({"warcFilename": "x.warc.gz", "warcFileOffset": 0}),
    )
    return replace(base, **changes)  # type: ignore[arg-type]


def test_format_heritrix3_layout() -> None:
    assert format_line(_line()) == (
        "2024-02-29T23:59:59.999Z   200       1234 https://example.com/a?b=c LLE "
        "https://example.com/ text/html #007 20240229235959001+998 "
        "sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ https://example.com/ ip:192.0.2.1,3t "
        '{"warcFilename":"x.warc.gz","warcFileOffset":0}'
    )


@pytest.mark.parametrize(
    ("changes", "expected_prefix"),
    [
        ({"status": -9998, "size": None}, "2024-02-29T23:59:59.999Z -9998          - "),
        ({"status": -5003}, "2024-02-29T23:59:59.999Z -5003       1234 "),
        ({"status": 1, "size": 12345678901}, "2024-02-29T23:59:59.999Z     1 12345678901 "),
        ({"status": -123456}, "2024-02-29T23:59:59.999Z -123456       1234 "),
    ],
)
def test_status_and_size_padding(changes: dict[str, object], expected_prefix: str) -> None:
    text = format_line(_line(**changes))
    assert text.startswith(expected_prefix)
    assert format_line(parse_line(text)) == text


def test_empty_columns_are_dashes() -> None:
    line = _line(
        hop_path="",
        via=None,
        mime_type=None,
        fetch_began=None,
        fetch_duration_ms=None,
        digest=None,
        source_tag=None,
        annotations=(),
        extra_info=None,
        thread=1234,
    )
    text = format_line(line)
    assert text.endswith(" https://example.com/a?b=c - - - #1234 - - - -")
    assert parse_line(text) == line
    assert line.is_seed


def test_negative_duration_after_clock_step_back() -> None:
    line = _line(fetch_duration_ms=-1000)
    text = format_line(line)
    assert " 20240229235959001+-1000 " in text
    assert parse_line(text) == line


def test_hop_path_with_dropped_hops() -> None:
    line = parse_line(format_line(_line(hop_path="12+LLRLL")))
    assert line.hop_count == 17 and line.last_hop == "L"


@pytest.mark.parametrize(
    ("mutate", "field"),
    [
        (lambda t: t.replace("2024-02-29T23:59:59.999Z", "2024-02-30T23:59:59.999Z"), "timestamp"),
        (lambda t: t.replace("2024-02-29T23:59:59.999Z", "20240229235959"), "timestamp"),
        (lambda t: t.replace("  200 ", "  2x0 "), "status"),
        (lambda t: t.replace(" 1234 ", " 12.4 "), "size"),
        (lambda t: t.replace(" 1234 ", " 12\u00b34 "), "size"),
        (lambda t: t.replace("#007", "#\u0661"), "thread"),
        (lambda t: t.replace("https://example.com/a?b=c", "example.com/a"), "uri"),
        (lambda t: t.replace(" LLE ", " L1E "), "hop path"),
        (lambda t: t.replace(" https://example.com/ text", " /rel text"), "via"),
        (lambda t: t.replace("#007", "007"), "thread"),
        (
            lambda t: t.replace("20240229235959001+998", "20240229235959001"),
            "fetch timestamp+duration",
        ),
        (
            lambda t: t.replace("20240229235959001+998", "20241329235959001+998"),
            "fetch timestamp+duration",
        ),
        (lambda t: t.replace("sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ", "sha1:XYZ"), "digest"),
        (lambda t: t.replace('"warcFileOffset":0}', '"warcFileOffset":}'), "extra info"),
    ],
)
def test_each_bad_field_is_named(mutate: object, field: str) -> None:
    text = mutate(format_line(_line()))  # type: ignore[operator]
    with pytest.raises(CrawlLogError) as info:
        parse_line(text)
    err = info.value
    assert err.field == field
    assert err.column is not None and 1 <= err.column <= len(text) + 1
    assert field in str(err)
    assert isinstance(err, ValueError)


def test_trailing_spaces_after_extra_info() -> None:
    line = _line()
    parsed = parse_line(format_line(line) + "  ")
    assert parsed == line


def test_too_few_fields() -> None:
    with pytest.raises(CrawlLogError, match=r"3 fields.*uri is missing") as info:
        parse_line("2024-02-29T23:59:59.999Z   200 -")
    assert info.value.field == "uri" and info.value.field_number == 4


def test_split_annotations_quotes_and_round_trip() -> None:
    column = 'duplicate:"a.arc,1",content-size:491,3t,,x'
    parts = split_annotations(column)
    assert parts == ('duplicate:"a.arc,1"', "content-size:491", "3t", "", "x")
    assert ",".join(parts) == column
    assert split_annotations("-") == ()


@pytest.mark.parametrize(
    ("annotation", "kind"),
    [
        ("duplicate:digest", DuplicateKind.DIGEST),
        ("duplicate:server-not-modified", DuplicateKind.NOT_MODIFIED),
        ("warcRevisit:digest", DuplicateKind.DIGEST),
        ("warcRevisit:uriAgnosticDigest", DuplicateKind.URI_AGNOSTIC_DIGEST),
        ("warcRevisit:notModified", DuplicateKind.NOT_MODIFIED),
        ('duplicate:"f.warc.gz,12"', DuplicateKind.ORIGIN),
        ('duplicate:"http://x/ 20070101"', DuplicateKind.ORIGIN),
        ("duplicate:something-new", DuplicateKind.OTHER),
        ("unwritten:identicalDigest", DuplicateKind.UNWRITTEN),
    ],
)
def test_duplicate_forms(annotation: str, kind: DuplicateKind) -> None:
    dup = parse_duplicate(annotation)
    assert dup is not None and dup.kind is kind and dup.annotation == annotation


@pytest.mark.parametrize("annotation", ["3t", "ip:1.2.3.4", "Q:group-max-all-kb", "duplicate"])
def test_not_duplicates(annotation: str) -> None:
    assert parse_duplicate(annotation) is None


def test_status_table() -> None:
    assert status_meaning(200) == "OK"
    assert status_meaning(404) == "Not Found"
    assert status_meaning(599) == "HTTP 599"
    assert status_meaning(-1) == "DNS lookup failed"
    assert status_meaning(-5003) == "blocked by a quota"
    assert status_meaning(-42) == "unknown Heritrix status -42"
    for code in (-1, -2, -3, -4, -5, -6, -7, -8, -50, -60, -61, -62, -63, -404):
        assert code in HERITRIX_STATUS
    for code in (-3000, -4000, -4001, -4002, -5000, -5001, -5002, -5003, -5004, -6000):
        assert code in HERITRIX_STATUS
    assert -7000 in HERITRIX_STATUS and -9998 in HERITRIX_STATUS


def test_failure_and_disregarded() -> None:
    assert _line(status=-1).is_failure and not _line(status=-1).is_disregarded
    assert _line(status=-5000).is_failure and _line(status=-5000).is_disregarded
    assert not _line(status=404).is_failure
    assert not _line(status=1).is_failure


def test_iter_crawl_log_gzip_and_blank_lines(tmp_path: Path) -> None:
    body = (format_line(_line()) + "\n\n" + format_line(_line(status=-2)) + "\nbroken\n").encode()
    plain = tmp_path / "crawl.log"
    plain.write_bytes(body)
    packed = tmp_path / "crawl.log.gz"
    packed.write_bytes(gzip.compress(body))
    for path in (plain, packed):
        results = list(iter_crawl_log(path))
        assert [n for n, _ in results] == [1, 3, 4]
        err = results[-1][1]
        assert isinstance(err, CrawlLogError) and err.line_number == 4
        assert err.offset == (None if path is packed else body.index(b"broken"))


def test_latin1_line_is_read(tmp_path: Path) -> None:
    text = format_line(_line(uri="http://example.com/caf\u00e9"))
    path = tmp_path / "crawl.log"
    path.write_bytes(text.encode("latin-1") + b"\n")
    ((_, line),) = list(iter_crawl_log(path))
    assert isinstance(line, CrawlLogLine) and line.uri.endswith("caf\u00e9")


@pytest.mark.parametrize(
    "name",
    ["webark.crawllog.annotations", "webark.crawllog.format", "webark.crawllog.line"],
)
def test_docstring_examples(name: str) -> None:
    result = doctest.testmod(importlib.import_module(name))
    assert result.failed == 0 and result.attempted > 0
