"""Writing crawl.log lines exactly as Heritrix 3's ``UriProcessingFormatter`` does."""

from __future__ import annotations

from datetime import UTC, datetime

from webark.crawllog.annotations import join_annotations
from webark.crawllog.line import CrawlLogLine


def format_log_timestamp(dt: datetime) -> str:
    """Column 1: ``2018-11-26T14:27:46.376Z`` (UTC, milliseconds; Heritrix
    ``ArchiveUtils.getLog17Date``). Naive datetimes are taken as UTC. Every field has
    its fixed width, the year four digits also before 1000 (``strftime("%Y")`` does
    not pad it on glibc: the year 6 came out as ``6-…``, which no parser reads)."""
    dt = _utc(dt)
    return (f"{dt.year:04d}-{dt.month:02d}-{dt.day:02d}T{dt.hour:02d}:{dt.minute:02d}:"
            f"{dt.second:02d}.{dt.microsecond // 1000:03d}Z")  # fmt: skip


def format_fetch_timestamp(dt: datetime) -> str:
    """The 17-digit ``yyyyMMddHHmmssSSS`` fetch-begin time of column 9 (UTC), zero-padded
    field by field (the year 6 is ``0006…``; issue 20 item 16)."""
    dt = _utc(dt)
    return (f"{dt.year:04d}{dt.month:02d}{dt.day:02d}{dt.hour:02d}{dt.minute:02d}"
            f"{dt.second:02d}{dt.microsecond // 1000:03d}")  # fmt: skip


def _utc(dt: datetime) -> datetime:
    """``dt`` in UTC; naive datetimes are taken as UTC."""
    if dt.tzinfo is None:
        return dt.replace(tzinfo=UTC)
    return dt.astimezone(UTC)


def format_line(line: CrawlLogLine) -> str:
    """The crawl.log line for ``line``, without a line ending.

    Layout (Heritrix 3 ``UriProcessingFormatter``): single spaces between columns; the
    status right-aligned in 5 characters and the size in 10 (``ArchiveUtils.padTo``:
    longer values are not cut); ``-`` for every empty column; the worker thread as
    ``#`` + at least 3 digits; the fetch column as ``yyyyMMddHHmmssSSS+durationMs``;
    annotations comma-joined; the JSON extra info, when present, after one more space.

    Lines parsed from early Heritrix 1.x logs (11 columns, no source tag) are written in
    the 12-column layout, with ``-`` as source tag.

    >>> from webark.crawllog import parse_line
    >>> s = ("2017-08-03T21:45:24.496Z   200       2189 https://a.gov/robots.txt P "
    ...      "https://a.gov/ text/plain #001 20170803214523617+365 "
    ...      "sha1:PBS2CEF7B4OSEXZZF3QE2XN2VHYCPNPX https://a.gov/ duplicate:digest")
    >>> format_line(parse_line(s)) == s
    True
    """
    if line.fetch_began is None:
        fetch = "-"
    else:
        duration = "" if line.fetch_duration_ms is None else str(line.fetch_duration_ms)
        fetch = f"{format_fetch_timestamp(line.fetch_began)}+{duration}"
    parts = [
        format_log_timestamp(line.timestamp),
        f"{line.status:>5}",
        f"{'-' if line.size is None else line.size:>10}",
        line.uri,
        line.hop_path or "-",
        line.via or "-",
        line.mime_type or "-",
        f"#{line.thread:03d}",
        fetch,
        line.digest or "-",
        line.source_tag or "-",
        join_annotations(line.annotations),
    ]
    if line.extra_info is not None:
        parts.append(line.extra_info)
    return " ".join(parts)
