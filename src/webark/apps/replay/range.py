"""HTTP Range requests on archived payloads (RFC 9110 §14) and their ``If-Range``
precondition (§13.1.5).

Only the ``bytes`` unit and a single range are answered with ``206 Partial Content``;
several ranges are answered with the whole payload (``200``, allowed by §14.2: a server
may ignore ``Range``; no ``multipart/byteranges``: browsers and media players ask for
one range, and a list of many small ranges is the denial-of-service pattern §14.2 warns
about), as is a syntactically invalid ``Range`` field (§14.2: "ignore"). A range that
starts at or after the end of the payload, or a zero-length suffix ``-0``, is
unsatisfiable: ``416`` with ``Content-Range: bytes */{length}`` (§15.5.17). Numbers are
ASCII digits only (``[0-9]``, not any Unicode digit); ones too large for any payload
simply select past its end.

``If-Range`` (§13.1.5): the range is served only when the validator the client sends
matches the response's current one — an entity tag by *strong* comparison (a weak tag
``W/"…"`` never matches), or an HTTP-date equal to the ``Last-Modified`` sent and at
least one second in the past (a strong date validator, §8.8.2.2). Otherwise ``Range``
is ignored and the whole payload is sent with ``200``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

from webark.core.errors import RequestError

_SPEC = re.compile(r"^[ \t]*([0-9]*)[ \t]*-[ \t]*([0-9]*)[ \t]*$")


@dataclass(frozen=True, slots=True)
class ByteRange:
    """A satisfiable range: ``start``..``end`` inclusive, of a payload of ``total``
    bytes."""

    start: int
    end: int
    total: int

    @property
    def length(self) -> int:
        """Bytes in the range."""
        return self.end - self.start + 1

    def content_range(self) -> str:
        """``bytes {start}-{end}/{total}`` (RFC 9110 §14.4)."""
        return f"bytes {self.start}-{self.end}/{self.total}"


class Unsatisfiable(RequestError):
    """The range cannot be served (answer 416 with :meth:`content_range`)."""

    def __init__(self, total: int):
        super().__init__(f"range not satisfiable (payload has {total} bytes)")
        self.total = total

    def content_range(self) -> str:
        """``bytes */{total}``."""
        return f"bytes */{self.total}"


def parse_range(value: str | None, total: int) -> ByteRange | None:
    """The range to serve for a ``Range`` header over a payload of ``total`` bytes.

    Returns:
        A :class:`ByteRange`, or None to serve the whole payload (no header, another
        unit, bad syntax, several ranges).

    Raises:
        Unsatisfiable: one range, well formed, that selects no byte of the payload.
    """
    if not value:
        return None
    unit, eq, specs = value.partition("=")
    if not eq or unit.strip().lower() != "bytes":
        return None
    parts = [p for p in specs.split(",") if p.strip()]
    if len(parts) != 1:
        return None
    m = _SPEC.match(parts[0])
    if not m or (not m.group(1) and not m.group(2)):
        return None
    first, last = m.group(1), m.group(2)
    if not first:  # suffix: the last N bytes
        n = int(last)
        if n == 0 or total == 0:
            raise Unsatisfiable(total)
        return ByteRange(max(0, total - n), total - 1, total)
    start = int(first)
    end = int(last) if last else total - 1
    if last and end < start:
        return None  # invalid range-spec: ignore the field
    if start >= total:
        raise Unsatisfiable(total)
    return ByteRange(start, min(end, total - 1), total)


def _http_date(value: str) -> datetime | None:
    try:
        dt = parsedate_to_datetime(value.strip())
    except (TypeError, ValueError, IndexError):
        return None
    return dt if dt.tzinfo else dt.replace(tzinfo=UTC)


def if_range_allows(
    if_range: str | None,
    etag: str | None,
    last_modified: str | None,
    now: datetime | None = None,
) -> bool:
    """Whether ``Range`` may be honoured given the request's ``If-Range`` (RFC 9110
    §13.1.5).

    Args:
        if_range: the ``If-Range`` field value, or None (absent: True).
        etag: the ``ETag`` the response carries (``"…"`` or ``W/"…"``), or None.
        last_modified: the ``Last-Modified`` the response carries, or None.
        now: current time (UTC), for the one-second rule of a strong date validator.

    Returns:
        True when there is no ``If-Range`` or its validator matches; False when the
        whole representation must be sent (``200``) instead of the range.
    """
    if if_range is None:
        return True
    value = if_range.strip()
    if value.startswith(('"', 'W/"')):  # an entity tag: strong comparison (§8.8.3.2)
        return (
            etag is not None
            and not value.startswith("W/")
            and not etag.startswith("W/")
            and value == etag.strip()
        )
    if last_modified is None:
        return False
    asked, have = _http_date(value), _http_date(last_modified)
    if asked is None or have is None or asked != have:
        return False
    return (now or datetime.now(UTC)).timestamp() - have.timestamp() >= 1
