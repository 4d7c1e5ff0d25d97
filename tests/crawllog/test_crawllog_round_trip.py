"""Every field of a crawl.log line survives format → parse, at the edges of its range
(issue 20 item 16: a fetch timestamp in the year 6 was written ``60223100210537+35``,
5 digits short, which the parser then refused). Years below 1000 are zero-padded to
four digits in both timestamps, as Heritrix's ``ArchiveUtils`` pads them."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from webark.crawllog import parse_line
from webark.crawllog.format import format_fetch_timestamp, format_line, format_log_timestamp
from webark.crawllog.line import CrawlLogLine

WHEN = [
    datetime(1, 1, 1, tzinfo=UTC),
    datetime(6, 2, 23, 10, 2, 10, 537_000, tzinfo=UTC),
    datetime(999, 12, 31, 23, 59, 59, 999_000, tzinfo=UTC),
    datetime(1000, 1, 1, tzinfo=UTC),
    datetime(2018, 11, 26, 14, 27, 46, 376_000, tzinfo=UTC),
    datetime(9999, 12, 31, 23, 59, 59, 999_000, tzinfo=UTC),
]


@pytest.mark.parametrize("dt", WHEN, ids=lambda d: str(d.year))
def test_timestamps_have_fixed_width(dt: datetime) -> None:
    assert len(format_fetch_timestamp(dt)) == 17
    assert format_fetch_timestamp(dt)[:4] == f"{dt.year:04d}"
    assert len(format_log_timestamp(dt)) == 24
    assert format_log_timestamp(dt).startswith(f"{dt.year:04d}-")


def test_year_6_fetch_timestamp() -> None:
    dt = datetime(6, 2, 23, 10, 2, 10, 537_000, tzinfo=UTC)
    assert format_fetch_timestamp(dt) == "00060223100210537"  # before: 60223100210537


@pytest.mark.parametrize("dt", WHEN, ids=lambda d: str(d.year))
@pytest.mark.parametrize("variant", ["full", "empty"])
def test_every_field_round_trips(dt: datetime, variant: str) -> None:
    if variant == "full":
        line = CrawlLogLine(
            timestamp=dt, status=-9998, size=12_345_678_901, uri="https://a.test/p?q=1",
            hop_path="51+LLRLE", via="https://a.test/", mime_type="text/html",
            thread=1234, fetch_began=dt, fetch_duration_ms=0,
            digest="sha1:PBS2CEF7B4OSEXZZF3QE2XN2VHYCPNPX", source_tag="https://a.test/",
            annotations=("duplicate:digest", "3t", "dol:5"),
            extra_info='{"warcFilename":"a.warc.gz","warcFileOffset":942}',
        )  # fmt: skip
    else:
        line = CrawlLogLine(
            timestamp=dt, status=200, size=None, uri="dns:a.test", hop_path="", via=None,
            mime_type=None, thread=0, fetch_began=None, fetch_duration_ms=None,
            digest=None, source_tag=None,
        )  # fmt: skip
    text = format_line(line)
    again = parse_line(text)
    assert again == line, (text, again)
    assert format_line(again) == text
