"""Dedup across several indexes, as warcprox's ``dedup-buckets``: an ordered list of
dedup indexes, each read-write (``rw``) or read-only (``ro``).

A lookup asks the buckets in order and the first hit wins; an original (and a URL's
last capture) is stored into every bucket that is not read-only (warcprox
``DedupDb``/``CdxServerDedup`` with ``Warcprox-Meta: {"dedup-buckets": {...}}``). So
a crawl can deduplicate against a shared collection's bucket without writing to it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from webark.dedup import DedupHit, DedupIndex, FetchHistory, LastCapture

__all__ = ["BucketStore", "Bucketed"]


class BucketStore(DedupIndex, FetchHistory, Protocol):
    """One bucket: a dedup index that keeps the fetch history too (the SQLite one)."""


class Bucketed:
    """A :class:`DedupIndex` and :class:`FetchHistory` over ``buckets`` (module
    docstring).

    Args:
        buckets: ``(index, writable)`` in lookup order.

    Raises:
        ValueError: no bucket.
    """

    def __init__(self, buckets: Sequence[tuple[BucketStore, bool]]) -> None:
        if not buckets:
            raise ValueError("dedup buckets: at least one")
        self.buckets = tuple(buckets)

    def lookup(self, url: str, digest: str) -> DedupHit | None:
        """See :meth:`DedupIndex.lookup`: the first bucket's hit, in order."""
        for index, _ in self.buckets:
            hit = index.lookup(url, digest)
            if hit is not None:
                return hit
        return None

    def add(self, url: str, digest: str, date: str, record_id: str | None = None,
            warc_filename: str | None = None, offset: int | None = None, *,
            etag: str | None = None, last_modified: str | None = None) -> None:  # fmt: skip
        """See :meth:`DedupIndex.add`: into every writable bucket."""
        for index, writable in self.buckets:
            if writable:
                index.add(url, digest, date, record_id, warc_filename, offset, etag=etag,
                          last_modified=last_modified)  # fmt: skip

    def last_capture(self, url: str) -> LastCapture | None:
        """See :meth:`FetchHistory.last_capture`: the first bucket that has one."""
        for index, _ in self.buckets:
            last = index.last_capture(url)
            if last is not None:
                return last
        return None

    def note_capture(self, url: str, digest: str, date: str, *, etag: str | None = None,
                     last_modified: str | None = None) -> None:  # fmt: skip
        """See :meth:`FetchHistory.note_capture`: into every writable bucket."""
        for index, writable in self.buckets:
            if writable:
                index.note_capture(url, digest, date, etag=etag, last_modified=last_modified)
