"""crawl.log: every line :func:`format_line` writes parses back to the same
:class:`CrawlLogLine` and the same text; any other text is parsed or refused with
:class:`CrawlLogError`, nothing else (Heritrix 3 ``UriProcessingFormatter`` layout)."""

from __future__ import annotations

import dataclasses
import json
from datetime import UTC, datetime

import pytest
from fuzz_support import FUZZ, TIMEOUT
from hypothesis import example, given
from hypothesis import strategies as st

from webark.crawllog import parse_line
from webark.crawllog.format import format_line
from webark.crawllog.line import CrawlLogLine
from webark.crawllog.parse import CrawlLogError

pytestmark = pytest.mark.timeout(TIMEOUT)

_TOKEN = st.text(st.characters(min_codepoint=0x21, max_codepoint=0x7E, exclude_characters=',"'),
                 min_size=1, max_size=20)  # fmt: skip
_WHEN = st.datetimes(
    min_value=datetime(1, 1, 1),
    max_value=datetime(9999, 12, 31, 23, 59, 59),
    timezones=st.just(UTC),
).map(lambda d: d.replace(microsecond=d.microsecond // 1000 * 1000))
_URI = st.builds(lambda host, path: f"https://{host}.test/{path}",
                 st.from_regex(r"[a-z0-9]{1,12}", fullmatch=True),
                 st.from_regex(r"[A-Za-z0-9._~%/?=&-]{0,30}", fullmatch=True))  # fmt: skip
_DIGEST = st.from_regex(r"sha1:[A-Z2-7]{32}", fullmatch=True)
_HOPS = st.one_of(st.just(""), st.from_regex(r"([0-9]{1,3}\+)?[LREXPIM]{1,10}", fullmatch=True))
_EXTRA = st.dictionaries(
    st.from_regex(r"[a-zA-Z]{1,10}", fullmatch=True),
    st.one_of(st.integers(0, 10**12), st.from_regex(r"[a-z0-9.]{0,12}", fullmatch=True)),
    max_size=3,
).map(lambda d: json.dumps(d, separators=(",", ":")))

def _no_duration_without_start(line: CrawlLogLine) -> CrawlLogLine:
    """A fetch duration is written only after a fetch start (``-`` otherwise)."""
    if line.fetch_began is not None:
        return line
    return dataclasses.replace(line, fetch_duration_ms=None)


LINES = st.builds(
    CrawlLogLine,
    timestamp=_WHEN,
    status=st.integers(-9999, 999),
    size=st.one_of(st.none(), st.integers(0, 10**15)),
    uri=_URI,
    hop_path=_HOPS,
    via=st.one_of(st.none(), _URI),
    mime_type=st.one_of(st.none(), st.from_regex(r"[a-z]{1,10}/[a-z0-9.+-]{1,15}", fullmatch=True)),
    thread=st.integers(0, 99_999),
    fetch_began=st.one_of(st.none(), _WHEN),
    fetch_duration_ms=st.integers(0, 10**9),
    digest=st.one_of(st.none(), _DIGEST),
    source_tag=st.one_of(st.none(), _URI),
    # a lone "-" is the column's own "no annotations": no writer emits it as one
    annotations=st.lists(_TOKEN, max_size=4).map(tuple).filter(lambda a: a != ("-",)),
    extra_info=st.one_of(st.none(), _EXTRA.filter(lambda s: s != "{}")),
).map(_no_duration_without_start)


@FUZZ
@given(LINES)
@example(CrawlLogLine(  # the year 6 (issue 20 item 16: written 60223100210537+35)
    timestamp=datetime(6, 2, 23, 10, 2, 10, 537_000, tzinfo=UTC), status=200, size=1,
    uri="https://a.test/", hop_path="", via=None, mime_type=None, thread=1,
    fetch_began=datetime(6, 2, 23, 10, 2, 10, 537_000, tzinfo=UTC), fetch_duration_ms=35,
    digest=None, source_tag=None))  # fmt: skip
def test_format_parse_round_trip(line: CrawlLogLine) -> None:
    text = format_line(line)
    again = parse_line(text)
    assert again == line, text
    assert format_line(again) == text


@FUZZ
@given(st.one_of(st.text(max_size=300), LINES.map(format_line).flatmap(
    lambda s: st.tuples(st.just(s), st.integers(0, len(s)), st.text(max_size=5)).map(
        lambda t: t[0][: t[1]] + t[2] + t[0][t[1] + 1 :]))))  # fmt: skip
def test_any_text_is_parsed_or_refused_with_crawl_log_error(text: str) -> None:
    try:
        line = parse_line(text)
    except CrawlLogError:
        return
    assert parse_line(format_line(line)) == line
