"""Heritrix's ``progress-statistics.log``: one line of crawl totals and rates per
interval, under a legend, with crawl state events between them. Sans-IO: format and
parse lines; :mod:`webark.crawl.progress_log` writes the file.

The layout is Heritrix's (``StatisticsTracker.progressStatisticsLegend`` and
``CrawlStatSnapshot.getProgressStatisticsLine``, the same since Heritrix 1.12): each
value right-aligned so that it *ends* at a fixed column (``PaddingStringBuffer.raAppend``),
which :data:`COLUMN_ENDS` lists; a value wider than its column pushes the rest right,
so :func:`parse_progress_line` splits on whitespace, as Heritrix log tools do::

               timestamp  discovered      queued   downloaded       doc/s(avg)  KB/s(avg) …
    2008-06-02T16:58:47Z         243          33          211       4.35(5.28)     27(92) …
    20080602165807 CRAWL RESUMED - Running

Columns: ``discovered`` (URIs queued, in flight or finished, the ``dns:`` and robots.txt
prerequisites included: Heritrix's ``discoveredUriCount``, never below ``downloaded``),
``queued``, ``downloaded`` (fetched successfully), ``doc/s(avg)`` (documents per second
over the last interval, and over the crawl), ``KB/s(avg)`` (KiB per second, same),
``dl-failures``, ``busy-thread``, ``mem-use-KB``, ``heap-size-KB`` (the JVM's memory;
webark writes the process's resident set and its peak), ``congestion`` (active queues
over those in flight or snoozed: how many more workers could be used), ``max-depth``
(URIs in the largest queue) and ``avg-depth`` (URIs per non-empty queue).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from datetime import UTC, datetime

__all__ = [
    "COLUMN_ENDS",
    "LEGEND",
    "ProgressEvent",
    "ProgressLine",
    "format_event",
    "format_progress_line",
    "parse_progress_line",
]

LEGEND = (
    "           timestamp  discovered      queued   downloaded       doc/s(avg)  KB/s(avg) "
    "  dl-failures   busy-thread   mem-use-KB  heap-size-KB   congestion   max-depth   avg-depth"
)
"""The legend line, byte for byte Heritrix's."""

COLUMN_ENDS: tuple[int, ...] = (32, 44, 57, 74, 85, 99, 113, 126, 140, 153, 165, 177)
"""Where each value after the timestamp ends (Heritrix ``raAppend`` columns)."""


@dataclass(frozen=True, slots=True)
class ProgressLine:
    """One statistics line (counts are URIs; rates per second; memory in KiB).

    ``when`` is UTC (second precision is written). ``congestion`` is NaN when no queue
    is in flight or snoozed (Heritrix divides by zero there too).
    """

    when: datetime
    discovered: int
    queued: int
    downloaded: int
    docs_per_s: float
    docs_per_s_avg: float
    kib_per_s: int
    kib_per_s_avg: int
    failures: int
    busy_threads: int
    mem_kib: int
    heap_kib: int
    congestion: float
    max_depth: int
    avg_depth: int


@dataclass(frozen=True, slots=True)
class ProgressEvent:
    """A crawl state line: ``20130522082951 CRAWL RESUMED - Running``."""

    when: datetime
    state: str
    message: str


def _number(x: float) -> str:
    """Heritrix ``ArchiveUtils.doubleToString(x, 2)``: at most two decimals, trailing
    zeros dropped (``4.35``, ``6.2``, ``1``)."""
    if math.isnan(x):
        return "NaN"
    text = f"{x:.2f}".rstrip("0").rstrip(".")
    return "0" if text in ("", "-0") else text


def _iso(when: datetime) -> str:
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def format_progress_line(p: ProgressLine) -> str:
    """The line of ``p`` in Heritrix's layout (no newline)."""
    values = (
        str(p.discovered), str(p.queued), str(p.downloaded),
        f"{_number(p.docs_per_s)}({_number(p.docs_per_s_avg)})",
        f"{p.kib_per_s}({p.kib_per_s_avg})", str(p.failures), str(p.busy_threads),
        str(p.mem_kib), str(p.heap_kib), _number(p.congestion), str(p.max_depth),
        str(p.avg_depth),
    )  # fmt: skip
    out = _iso(p.when)
    for end, value in zip(COLUMN_ENDS, values, strict=True):
        out += " " * max(1, end - len(out) - len(value)) + value
    return out


def format_event(e: ProgressEvent) -> str:
    """``yyyyMMddHHmmss CRAWL STATE - message`` (no newline)."""
    return f"{e.when.astimezone(UTC):%Y%m%d%H%M%S} CRAWL {e.state} - {e.message}"


_RATE = re.compile(r"^(-?[\d.]+|NaN|\S+)\((-?[\d.]+|NaN|\S+)\)$")
_EVENT = re.compile(r"^(\d{14}) CRAWL (\S+) - (.*)$")


def _float(text: str) -> float:
    try:
        return float(text)
    except ValueError:  # Heritrix 1 wrote U+FFFD for NaN
        return math.nan


def parse_progress_line(line: str) -> ProgressLine | ProgressEvent | None:
    """Read one line of a ``progress-statistics.log`` (Heritrix's or webark's).

    Returns:
        A :class:`ProgressLine`, a :class:`ProgressEvent`, or None for the legend and
        blank lines.

    Raises:
        ValueError: a line that is none of those (the message quotes it). Lines of
            Heritrix 1.x without the last three columns are accepted (those read 0/NaN).
    """
    text = line.rstrip("\r\n")
    if not text.strip() or text.split() == LEGEND.split():
        return None
    m = _EVENT.match(text)
    if m:
        when = datetime.strptime(m.group(1), "%Y%m%d%H%M%S").replace(tzinfo=UTC)
        return ProgressEvent(when, m.group(2), m.group(3))
    f = text.split()
    try:
        when = datetime.strptime(f[0], "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
        if len(f) not in (10, 13):
            raise ValueError(f"{len(f)} fields")
        docs, kib = _RATE.match(f[4]), _RATE.match(f[5])
        if docs is None or kib is None:
            raise ValueError("rates are not N(avg)")
        rest = f[10:] if len(f) == 13 else ["NaN", "0", "0"]
        return ProgressLine(
            when, int(f[1]), int(f[2]), int(f[3]), _float(docs.group(1)),
            _float(docs.group(2)), int(_float(kib.group(1))), int(_float(kib.group(2))),
            int(f[6]), int(f[7]), int(f[8]), int(f[9]), _float(rest[0]), int(rest[1]),
            int(rest[2]),
        )  # fmt: skip
    except (ValueError, IndexError) as e:
        raise ValueError(f"not a progress-statistics line ({e}): {text!r}") from None
