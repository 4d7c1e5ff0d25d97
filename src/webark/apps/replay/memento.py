"""Memento (RFC 7089) headers of the replay app: ``Accept-Datetime`` in, ``Link`` and
``Memento-Datetime`` out.

* TimeGate (``/{coll}/{url}``, §4.1.1 pattern 2.1 "302-style"): reads ``Accept-Datetime``
  (an RFC 1123 date, §2.1.1), answers ``302`` to the memento with ``Vary:
  accept-datetime`` and a ``Link`` naming the original resource, the TimeMap and the
  chosen memento.
* Memento (``/{coll}/{ts}{mod}/{url}``, §2.1.2): ``Memento-Datetime`` (RFC 1123, the
  capture time in GMT) and a ``Link`` with ``original``, ``timegate``, ``timemap`` and,
  when known, ``first``/``prev``/``next``/``last memento`` (the same URI with several
  relations is written once with the relations space-separated, §2.2.1).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import formatdate, parsedate_to_datetime

from webark.apps.replay.paths import archival_url, url_for_path
from webark.core.errors import RequestError
from webark.core.timestamps import from_timestamp14, to_timestamp14

_RFC1123 = re.compile(
    r"^\s*(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun),\s+\d{1,2}\s+"
    r"(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)\s+\d{4}\s+"
    r"\d{2}:\d{2}:\d{2}\s+(?:GMT|UTC|UT|\+0000|Z)\s*$",
    re.I,
)


_YEAR = re.compile(r"\s(\d{4})\s")


class BadAcceptDatetime(RequestError):
    """``Accept-Datetime`` is not an RFC 1123 date (the TimeGate answers 400)."""


def parse_accept_datetime(value: str) -> str:
    """``Accept-Datetime: Thu, 30 Jan 2014 20:06:24 GMT`` → ``"20140130200624"``
    (14 digits, UTC).

    Raises:
        BadAcceptDatetime: not of the RFC 1123 form (``Day, DD Mon YYYY hh:mm:ss GMT``)
            or not a real date.
    """
    if not _RFC1123.match(value):
        raise BadAcceptDatetime(
            f"Accept-Datetime: {value!r} is not an RFC 1123 date "
            "(e.g. 'Thu, 30 Jan 2014 20:06:24 GMT')"
        )
    try:
        dt = parsedate_to_datetime(value.strip().replace("UTC", "GMT"))
    except (TypeError, ValueError) as exc:
        raise BadAcceptDatetime(f"Accept-Datetime: {value!r} is not a date: {exc}") from exc
    year = _YEAR.search(value)
    if year is None or int(year.group(1)) != dt.year:  # email.utils reads 0000 as 2000
        raise BadAcceptDatetime(f"Accept-Datetime: {value!r}: year out of range")
    return to_timestamp14(dt.astimezone(UTC) if dt.tzinfo else dt.replace(tzinfo=UTC))


def http_date(ts: str) -> str:
    """1–14 digit timestamp → RFC 1123 date in GMT (``Thu, 30 Jan 2014 20:06:24 GMT``);
    an unreadable timestamp gives the epoch (never raises)."""
    try:
        return formatdate(from_timestamp14(ts).timestamp(), usegmt=True)
    except (ValueError, OverflowError):
        return formatdate(0, usegmt=True)


def display_date(ts: str) -> str:
    """1–14 digit timestamp → ``2014-01-30 20:06:24 UTC`` for pages and the banner."""
    try:
        return from_timestamp14(ts).strftime("%Y-%m-%d %H:%M:%S UTC")
    except ValueError:
        return ts


def now14() -> str:
    """The current time as a 14-digit UTC timestamp."""
    return to_timestamp14(datetime.now(UTC))


@dataclass(frozen=True, slots=True)
class MementoLinks:
    """What a ``Link`` header of a memento or TimeGate names.

    Attributes:
        url: the original resource (URI-R). prefix: ``http://host/coll/``.
        memento: timestamp of this memento (or the one a TimeGate redirects to).
        modifier: modifier of the archival URLs written.
        first, prev, next, last: timestamps of those mementos, None when unknown.
    """

    url: str
    prefix: str
    memento: str | None = None
    modifier: str = ""
    first: str | None = None
    prev: str | None = None
    next: str | None = None
    last: str | None = None

    def header(self) -> str:
        """The ``Link`` header value (RFC 8288 syntax)."""
        url = url_for_path(self.url)
        parts = [
            f'<{url}>; rel="original"',
            f'<{self.prefix}{url}>; rel="timegate"',
            f'<{self.prefix}timemap/link/{url}>; rel="timemap"; type="application/link-format"',
        ]
        rels: dict[str, list[str]] = {}
        for rel, ts in (
            ("first", self.first), ("prev", self.prev), ("next", self.next),
            ("last", self.last), ("", self.memento),
        ):  # fmt: skip
            if ts:
                rels.setdefault(ts, [])
                if rel:
                    rels[ts].append(rel)
        for ts in sorted(rels):
            rel = " ".join([*rels[ts], "memento"])
            uri = archival_url(self.prefix, ts, self.url, self.modifier)
            parts.append(f'<{uri}>; rel="{rel}"; datetime="{http_date(ts)}"')
        return ", ".join(parts)
