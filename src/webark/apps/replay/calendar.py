"""The capture list of ``/{coll}/*/{url}``: captures counted per year, month and day
(calendar), and for prefix / host / domain searches the list of URLs with their counts.

Pure functions over :class:`~webark.cdx.line.CdxLine` iterables; they read the lines
once and keep only counts plus at most ``max_rows`` rows, so a URL with a million
captures costs one scan and little memory.
"""

from __future__ import annotations

import calendar
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Protocol

MONTH_NAMES = calendar.month_name[1:]


@dataclass
class Month:
    """One month of a calendar: ``days[d]`` = (captures on day ``d``, timestamp of the
    first of them); ``weeks``: the month as weeks of 7 day numbers (0 = not in the
    month), Monday first."""

    year: int
    month: int
    days: dict[int, tuple[int, str]] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return MONTH_NAMES[self.month - 1]

    @property
    def count(self) -> int:
        return sum(n for n, _ in self.days.values())

    @property
    def weeks(self) -> list[list[int]]:
        return calendar.Calendar().monthdayscalendar(self.year, self.month)


@dataclass
class Year:
    """One year: its months that have captures (by month number) and its count."""

    year: int
    months: dict[int, Month] = field(default_factory=dict)

    @property
    def count(self) -> int:
        return sum(m.count for m in self.months.values())


@dataclass(frozen=True, slots=True)
class Row:
    """One capture in the list: 14-digit timestamp, original URL, status, MIME, digest."""

    timestamp: str
    url: str
    status: str
    mime: str
    digest: str


@dataclass
class CaptureCalendar:
    """Captures of one URL: ``years`` (sorted), ``total``, the first ``max_rows``
    ``rows`` (time order) and whether rows were left out."""

    years: list[Year]
    total: int
    rows: list[Row]
    truncated: bool


class _Line(Protocol):
    """What is read of a capture line (:class:`~webark.cdx.line.CdxLine` has it)."""

    @property
    def timestamp(self) -> str: ...
    @property
    def url(self) -> str: ...
    @property
    def status(self) -> str: ...
    @property
    def mime(self) -> str: ...
    @property
    def digest(self) -> str: ...
    @property
    def urlkey(self) -> str: ...


def build_calendar(lines: Iterable[_Line], max_rows: int = 2000) -> CaptureCalendar:
    """Count ``lines`` (captures of one URL, in time order) per year/month/day.

    Lines whose timestamp is not a date (fewer than 8 digits, month 13 …) are counted
    in the total and listed, but not placed in the calendar."""
    years: dict[int, Year] = {}
    rows: list[Row] = []
    total = 0
    for x in lines:
        total += 1
        if len(rows) < max_rows:
            rows.append(Row(x.timestamp, x.url, x.status, x.mime, x.digest))
        ts = x.timestamp
        if len(ts) < 8 or not ts[:8].isdigit():
            continue
        y, m, d = int(ts[:4]), int(ts[4:6]), int(ts[6:8])
        if not (1 <= m <= 12 and 1 <= d <= calendar.monthrange(y, m)[1]) or y < 1:
            continue
        yr = years.setdefault(y, Year(y))
        mo = yr.months.setdefault(m, Month(y, m))
        n, first = mo.days.get(d, (0, ts))
        mo.days[d] = (n + 1, first)
    ordered = [years[y] for y in sorted(years)]
    for yr in ordered:
        yr.months = dict(sorted(yr.months.items()))
    return CaptureCalendar(ordered, total, rows, total > len(rows))


@dataclass
class UrlRow:
    """One URL of a prefix/host search: first original URL seen, captures, first and
    last timestamps, and its CDX URL key."""

    url: str
    count: int
    first: str
    last: str
    key: str = ""


def build_url_list(
    lines: Iterable[_Line], max_urls: int = 1000, key: Callable[[_Line], str] | None = None
) -> tuple[list[UrlRow], bool]:
    """Group ``lines`` (CDX order) by URL key; returns the first ``max_urls`` URLs and
    whether more were left out (the scan stops at the first URL past the limit)."""
    out: list[UrlRow] = []
    cur_key: str | None = None
    for x in lines:
        k = key(x) if key else x.urlkey
        if k != cur_key:
            if len(out) >= max_urls:
                return out, True
            cur_key = k
            out.append(UrlRow(x.url, 0, x.timestamp, x.timestamp, k))
        row = out[-1]
        row.count += 1
        row.first = min(row.first, x.timestamp)
        row.last = max(row.last, x.timestamp)
    return out, False
