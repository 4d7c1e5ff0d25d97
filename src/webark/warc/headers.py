"""WARC named fields (WARC 1.1 §4, §5): an ordered, case-insensitive multi-map of
``(name, value)`` strings, with typed access to the standard fields.

Field names keep the spelling found in the file (so records round-trip byte for byte)
while lookups ignore case.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from datetime import datetime

from webark.core.timestamps import parse_w3c_date

REPEATABLE_FIELDS = frozenset({"warc-concurrent-to", "warc-protocol"})
"""Fields that may appear more than once (WARC 1.1 §5.7; WARC-Protocol is the 1.1
extension that repeats by design)."""

STANDARD_FIELDS = (
    "WARC-Type", "WARC-Record-ID", "WARC-Date", "Content-Length", "Content-Type",
    "WARC-Concurrent-To", "WARC-Block-Digest", "WARC-Payload-Digest", "WARC-IP-Address",
    "WARC-Refers-To", "WARC-Refers-To-Target-URI", "WARC-Refers-To-Date",
    "WARC-Target-URI", "WARC-Truncated", "WARC-Warcinfo-ID", "WARC-Filename",
    "WARC-Profile", "WARC-Identified-Payload-Type", "WARC-Segment-Number",
    "WARC-Segment-Origin-ID", "WARC-Segment-Total-Length",
)
"""WARC 1.1 §5 field names in their canonical spelling."""

_CANONICAL = {n.lower(): n for n in STANDARD_FIELDS}

_ESCAPED_BYTE = re.compile("[\udc80-\udcff]")
"""A byte that was not UTF-8, kept by ``surrogateescape`` decoding."""


def _percent_encode(m: re.Match[str]) -> str:
    return f"%{ord(m.group()) - 0xDC00:02X}"


def canonical_name(name: str) -> str:
    """``"warc-target-uri"`` → ``"WARC-Target-URI"``; unknown names are returned as given."""
    return _CANONICAL.get(name.lower(), name)


class WarcHeaders:
    """Ordered WARC named fields.

    >>> h = WarcHeaders([("WARC-Type", "response"), ("Content-Length", "0")])
    >>> h["warc-type"], h.content_length
    ('response', 0)
    """

    __slots__ = ("_index", "fields")

    def __init__(self, fields: Iterable[tuple[str, str]] = ()):
        self.fields: list[tuple[str, str]] = list(fields)
        self._index: dict[str, str] | None = None

    # -- mapping access -------------------------------------------------------------
    def _idx(self) -> dict[str, str]:
        idx = self._index
        if idx is None:
            # lowercased name → first value (the last write wins, so go backwards)
            idx = self._index = {name.lower(): value for name, value in reversed(self.fields)}
        return idx

    def get(self, name: str, default: str | None = None) -> str | None:
        """First value of ``name`` (case-insensitive), or ``default``.

        Lowercase names (what the indexer passes) are looked up without a ``lower()``."""
        idx = self._index
        if idx is None:
            idx = self._idx()
        v = idx.get(name)
        if v is None:
            if name.islower():
                return default
            v = idx.get(name.lower())
            if v is None:
                return default
        return v

    def __getitem__(self, name: str) -> str:
        v = self._idx().get(name.lower())
        if v is None:
            raise KeyError(name)
        return v

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name.lower() in self._idx()

    def get_all(self, name: str) -> list[str]:
        """Every value of ``name`` in file order (e.g. WARC-Concurrent-To)."""
        low = name.lower()
        return [v for n, v in self.fields if n.lower() == low]

    def __iter__(self) -> Iterator[tuple[str, str]]:
        return iter(self.fields)

    def __len__(self) -> int:
        return len(self.fields)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, WarcHeaders) and self.fields == other.fields

    def __repr__(self) -> str:
        return f"WarcHeaders({self.fields!r})"

    # -- mutation (used by writers before a record is frozen) -----------------------
    def add(self, name: str, value: str) -> None:
        """Append a field (no check for repetition: see :meth:`set`)."""
        self.fields.append((name, value))
        self._index = None

    def set(self, name: str, value: str) -> None:
        """Replace every occurrence of ``name`` by one field, kept at the first position."""
        low = name.lower()
        out: list[tuple[str, str]] = []
        done = False
        for n, v in self.fields:
            if n.lower() == low:
                if not done:
                    out.append((n, value))
                    done = True
            else:
                out.append((n, v))
        if not done:
            out.append((canonical_name(name), value))
        self.fields = out
        self._index = None

    def remove(self, name: str) -> None:
        low = name.lower()
        self.fields = [(n, v) for n, v in self.fields if n.lower() != low]
        self._index = None

    def copy(self) -> WarcHeaders:
        return WarcHeaders(self.fields)

    def to_bytes(self, version: str = "WARC/1.1") -> bytes:
        """Serialize as version line + fields + empty line, CRLF endings (WARC 1.1 §4).

        Text is written as UTF-8; bytes that were not UTF-8 in the file they were read
        from (kept by the reader as surrogate escapes) are written back unchanged."""
        lines = [version] + [f"{n}: {v}" for n, v in self.fields]
        return ("\r\n".join(lines) + "\r\n\r\n").encode("utf-8", "surrogateescape")

    # -- typed standard fields ------------------------------------------------------
    @property
    def record_type(self) -> str | None:
        v = self.get("warc-type")
        return v.strip().lower() if v is not None else None

    @property
    def record_id(self) -> str | None:
        return self.get("warc-record-id")

    @property
    def target_uri(self) -> str | None:
        """WARC-Target-URI with the ``<…>`` that wget 1.14–1.19 wrote stripped, and bytes
        that are not UTF-8 (surrogate escapes, see :meth:`to_bytes`) percent-encoded:
        ``caf\\xe9`` → ``caf%E9``, the URI a browser would have sent for them."""
        v = self.get("warc-target-uri")
        if v is None:
            return None
        v = v.strip()
        if len(v) > 1 and v[0] == "<" and v[-1] == ">":
            v = v[1:-1]
        if not v.isascii():
            v = _ESCAPED_BYTE.sub(_percent_encode, v)
        return v

    @property
    def date_str(self) -> str | None:
        return self.get("warc-date")

    @property
    def date(self) -> datetime | None:
        """WARC-Date as an aware UTC datetime, or None when absent or unparseable."""
        v = self.get("warc-date")
        if v is None:
            return None
        try:
            return parse_w3c_date(v)
        except ValueError:
            return None

    @property
    def content_length(self) -> int | None:
        v = self.get("Content-Length")
        try:
            return int(v.strip()) if v is not None else None
        except ValueError:
            return None

    @property
    def content_type(self) -> str | None:
        return self.get("Content-Type")

    @property
    def block_digest(self) -> str | None:
        return self.get("WARC-Block-Digest")

    @property
    def payload_digest(self) -> str | None:
        return self.get("WARC-Payload-Digest")

    @property
    def concurrent_to(self) -> list[str]:
        return self.get_all("WARC-Concurrent-To")

    @property
    def refers_to(self) -> str | None:
        return self.get("WARC-Refers-To")

    @property
    def refers_to_target_uri(self) -> str | None:
        return self.get("WARC-Refers-To-Target-URI")

    @property
    def refers_to_date(self) -> str | None:
        return self.get("WARC-Refers-To-Date")

    @property
    def profile(self) -> str | None:
        return self.get("WARC-Profile")

    @property
    def ip_address(self) -> str | None:
        return self.get("WARC-IP-Address")

    @property
    def truncated(self) -> str | None:
        return self.get("WARC-Truncated")

    @property
    def warcinfo_id(self) -> str | None:
        return self.get("WARC-Warcinfo-ID")

    @property
    def filename(self) -> str | None:
        return self.get("WARC-Filename")
