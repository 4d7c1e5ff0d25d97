"""The CDX line model shared by the indexer, the index stores and the resolution API.

A :class:`CdxLine` is one capture (or, with ``--all-records``, one record) as the
classic CDX 11-field format names it (`` CDX N b a m s k r M S V g``, see
reference/resolution-and-replay.md): URL key, timestamp, original URL, MIME type,
status, payload digest, redirect, robot flags, length, offset, file name — plus what CDXJ
and the revised format add (WARC record type, full-precision date, request method,
extra JSON fields).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class CdxLine:
    """One index entry.

    Attributes:
        urlkey: the key the index is sorted by: the SURT-form CDX URL key, e.g.
            ``com,example)/path?a=2&b=1`` (with a ``__wb_method=post&…`` query part
            for POST/PUT requests, as pywb does); for lines of the revised ``ng``
            format it is the scope SURT (same as :attr:`surt`).
        timestamp: 14-digit UTC timestamp ``YYYYMMDDhhmmss`` (sort key; CDX ``b``).
        url: original URL (CDX ``a``).
        mime: MIME type (``warc/revisit`` for revisits, ``-`` when unknown).
        status: HTTP status as text (``"200"``), ``"-"`` when none.
        digest: payload digest as written in the index, ``"-"`` when none: as the WARC
            has it (``sha1:BASE32``) from the cdxj-indexer-compatible indexer and in
            CDXJ/ng files, without the ``sha1:`` label from the pywb-compatible
            indexer and in CDX11/CDX9 files (the CDX11 writer drops the label).
        length: bytes of the record as stored (compressed), -1 when unknown.
        offset: byte offset of the record as stored, -1 when unknown.
        filename: WARC file name (relative to the collection's WARC directory).
        redirect: Location of a 3xx response in CDX11 (``-`` otherwise).
        robotflags: CDX ``M`` (``-`` unless a meta robots tag was found).
        record_type: WARC-Type of the record (``response``, ``revisit``, ``resource`` …).
        date: WARC-Date exactly as the record has it (W3C-DTF, any precision).
        method: HTTP method for request-derived keys (``POST``), else None.
        extra: further CDXJ fields in output order (e.g. ``requestBody``, ``method``,
            ``recordDigest``).
        surt: Heritrix scope SURT of the (POST-folded) URL, e.g.
            ``http://(com,example,www,)/path`` — the key of the ``ng`` format; ``""``
            when not computed (added for the ng format; defaults keep old callers).
    """

    urlkey: str
    timestamp: str
    url: str
    mime: str = "-"
    status: str = "-"
    digest: str = "-"
    length: int = -1
    offset: int = -1
    filename: str = "-"
    redirect: str = "-"
    robotflags: str = "-"
    record_type: str = "response"
    date: str = ""
    method: str | None = None
    extra: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)
    surt: str = ""

    def value(self, name: str) -> Any:
        """The value of field ``name`` (CDXJ/CDX spelling: ``urlkey``, ``timestamp``,
        ``url``, ``mime``, ``status``, ``digest``, ``length``, ``offset``, ``filename``,
        ``redirect``, ``robotflags``, ``method``, or any key of :attr:`extra`), or None
        when the line has none: ``-`` or empty text, a negative length/offset, a missing
        extra key. Standard fields are text (numbers as decimal text); extra values keep
        their JSON type."""
        if name in _TEXT_FIELDS:
            v = getattr(self, name)
            return None if v in ("-", "") else v
        if name == "length" or name == "offset":
            n = getattr(self, name)
            return None if n < 0 else str(n)
        if name == "method" and self.method:
            return self.method
        return self.extra.get(name)

    @property
    def sort_key(self) -> tuple[str, str]:
        """``(urlkey, timestamp)``: the order of every CDX file (byte-wise, LC_ALL=C)."""
        return (self.urlkey, self.timestamp)


_TEXT_FIELDS = frozenset(
    {"urlkey", "timestamp", "url", "mime", "status", "digest", "filename", "redirect",
     "robotflags"}
)
