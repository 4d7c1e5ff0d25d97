"""Capture statistics of a back end, as warcprox keeps them: per bucket, ``new``
(written in full), ``revisit`` and ``total`` captures, each with ``urls`` and
``wire_bytes`` (the bytes of the HTTP response as received). Every capture counts in
the bucket ``__all__`` and in the buckets its :class:`~webark.capture.meta.CaptureMeta`
names (warcprox's ``Warcprox-Meta: {"stats": {"buckets": [...]}}``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

__all__ = ["ALL", "BucketStats", "CaptureStats"]

ALL = "__all__"
"""The bucket every capture counts in."""


@dataclass(slots=True)
class BucketStats:
    """Counters of one bucket (mutable; snapshots are :meth:`to_json` copies)."""

    new_urls: int = 0
    new_bytes: int = 0
    revisit_urls: int = 0
    revisit_bytes: int = 0

    def to_json(self) -> dict[str, dict[str, int]]:
        """warcprox's shape: ``{"new": {"urls", "wire_bytes"}, "revisit": {...},
        "total": {...}}``."""
        return {
            "new": {"urls": self.new_urls, "wire_bytes": self.new_bytes},
            "revisit": {"urls": self.revisit_urls, "wire_bytes": self.revisit_bytes},
            "total": {"urls": self.new_urls + self.revisit_urls,
                      "wire_bytes": self.new_bytes + self.revisit_bytes},
        }  # fmt: skip


@dataclass(slots=True)
class CaptureStats:
    """All buckets of one back end, and the records and files it wrote.

    Attributes:
        buckets: bucket name → counters.
        records: WARC records written (warcinfo records excluded).
    """

    buckets: dict[str, BucketStats] = field(default_factory=lambda: {ALL: BucketStats()})
    records: int = 0

    def count(self, wire_bytes: int, revisit: bool, names: Iterable[str] = ()) -> None:
        """Count one capture of ``wire_bytes`` bytes in ``__all__`` and ``names``."""
        for name in (ALL, *names):
            b = self.buckets.get(name)
            if b is None:
                b = self.buckets[name] = BucketStats()
            if revisit:
                b.revisit_urls += 1
                b.revisit_bytes += wire_bytes
            else:
                b.new_urls += 1
                b.new_bytes += wire_bytes

    def to_json(self) -> dict[str, object]:
        """``{"records": n, "buckets": {name: {...}}}`` (JSON-serializable copy)."""
        return {"records": self.records,
                "buckets": {k: v.to_json() for k, v in self.buckets.items()}}  # fmt: skip
