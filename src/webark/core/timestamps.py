"""Timestamps: WARC-Date (W3C-DTF, WARC 1.1 §5.4), 14-digit CDX timestamps, ARC dates.

All datetimes handled here are timezone-aware and in UTC.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

_W3C_RE = re.compile(
    r"^\s*(\d{4})(?:-(\d{2})(?:-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?"
    r"\s*(Z|z|[+-]\d{2}:?\d{2})?)?)?)?\s*$"
)


def parse_w3c_date(value: str) -> datetime:
    """Parse a W3C-DTF date (``2017-03-06T04:03:48Z``, ``2020-04-12T18:42:50.696509Z``,
    ``2019-08-15T01:02``, ``2008-10-29T05:21:46-0700``) into an aware UTC datetime.

    Precision below the second is kept up to microseconds (nanoseconds are truncated).
    A missing time zone is read as UTC (lenient: wget's truncated dates).

    Raises:
        ValueError: the string is not a W3C-DTF date.
    """
    m = _W3C_RE.match(value)
    if not m:
        raise ValueError(f"not a W3C-DTF date: {value!r}")
    year, month, day, hh, mm, ss, frac, tz = m.groups()
    micro = int((frac or "0")[:6].ljust(6, "0"))
    dt = datetime(
        int(year), int(month or 1), int(day or 1), int(hh or 0), int(mm or 0), int(ss or 0),
        micro, tzinfo=UTC,
    )
    if tz and tz not in ("Z", "z"):
        sign = 1 if tz[0] == "+" else -1
        digits = tz[1:].replace(":", "")
        dt -= sign * timedelta(hours=int(digits[:2]), minutes=int(digits[2:]))
    return dt


def format_w3c_date(dt: datetime, precision: int = 0) -> str:
    """Format an aware datetime as a WARC-Date in UTC.

    Args:
        dt: the moment; naive datetimes are taken as UTC.
        precision: digits of fractional seconds, 0 (WARC 1.0 compatible) to 6.

    Returns:
        e.g. ``"2026-11-30T02:57:10Z"`` or, with ``precision=3``, ``"…:10.123Z"``.
    """
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    dt = dt.astimezone(UTC)
    base = dt.strftime("%Y-%m-%dT%H:%M:%S")
    if precision > 0:
        base += "." + f"{dt.microsecond:06d}"[: min(precision, 6)]
    return base + "Z"


def to_timestamp14(dt: datetime) -> str:
    """Return the 14-digit CDX/Wayback timestamp ``YYYYMMDDhhmmss`` (UTC) of ``dt``."""
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return dt.astimezone(UTC).strftime("%Y%m%d%H%M%S")


def from_timestamp14(ts: str) -> datetime:
    """Parse a 1–14 digit timestamp (ARC dates and CDX timestamps; missing parts are the
    earliest value, longer ARC dates such as 18 digits are cut to 14) into UTC.

    Raises:
        ValueError: not digits, or not a valid date.
    """
    if not ts.isdigit() or not ts:
        raise ValueError(f"not a digit timestamp: {ts!r}")
    ts = ts[:14]
    padded = ts + "00000101000000"[len(ts):]
    return datetime.strptime(padded, "%Y%m%d%H%M%S").replace(tzinfo=UTC)


def w3c_to_timestamp14(value: str) -> str:
    """``"2017-03-06T04:03:48Z"`` → ``"20170306040348"`` (UTC)."""
    return to_timestamp14(parse_w3c_date(value))
