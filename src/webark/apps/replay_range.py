"""HTTP Range requests on archived payloads (RFC 9110 §14).

Only the ``bytes`` unit and a single range are answered with ``206 Partial Content``;
several ranges are answered with the whole payload (``200``, allowed by §14.2: a server
may ignore ``Range``), as is a syntactically invalid ``Range`` field (§14.2: "ignore").
A range that starts at or after the end of the payload, or a zero-length suffix
``-0``, is unsatisfiable: ``416`` with ``Content-Range: bytes */{length}`` (§15.5.17).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_SPEC = re.compile(r"^\s*(\d*)\s*-\s*(\d*)\s*$")


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


class Unsatisfiable(ValueError):
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
