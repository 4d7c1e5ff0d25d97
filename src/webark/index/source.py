"""The query interface every index store implements, and the key-range helpers of the
resolution API (reference/resolution-and-replay.md, "Key ranges per matchType").

An index is a sequence of :class:`~webark.cdx.line.CdxLine` sorted by
``(urlkey, timestamp)`` byte-wise. Every query is a half-open byte range of
``"urlkey timestamp"`` strings, so that ``from``/``to`` of an exact-URL query narrow the
range itself (no post-filtering), and prefix/host/domain queries are one contiguous scan.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal, Protocol, runtime_checkable

from webark.cdx.line import CdxLine

MatchType = Literal["exact", "prefix", "host", "domain", "range"]


@dataclass(frozen=True, slots=True)
class KeyRange:
    """Half-open range ``[start, end)`` over ``"urlkey timestamp"`` strings (byte-wise,
    the CDX sort order). ``end=None`` means unbounded.

    ``from_ts``/``to_ts`` (14 digits, inclusive) are kept for sources that can only
    filter (prefix queries span many URL keys, so timestamps cannot narrow them)."""

    start: str
    end: str | None
    from_ts: str | None = None
    to_ts: str | None = None


class IndexUnavailable(Exception):
    """The index backend cannot answer (file missing, database locked or corrupt): the
    resolution API answers 503, never an empty 200."""


@runtime_checkable
class IndexSource(Protocol):
    """A sorted index that can be scanned by key range and looked up by payload digest."""

    def scan(self, rng: KeyRange, reverse: bool = False) -> Iterator[CdxLine]:
        """Lines with ``start <= "urlkey timestamp" < end`` in CDX order (or reversed),
        with ``from_ts <= timestamp <= to_ts`` when those are set. Streaming: memory
        must not grow with the size of the result.

        Raises:
            IndexUnavailable: the backend cannot be read.
        """
        ...

    def by_digest(self, digest: str) -> Iterator[CdxLine]:
        """Captures whose payload digest equals ``digest`` (any encoding of the same hash;
        with or without ``sha1:``), in CDX order.

        Raises:
            IndexUnavailable: the backend cannot be read.
        """
        ...
