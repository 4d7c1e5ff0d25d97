"""Crawl statistics: counters the controller updates per crawl.log line, and the
read-only :class:`StatsSnapshot` reports and the progress line are fed.

The counters are those of Heritrix 3's ``StatisticsTracker`` / ``CrawlStatSnapshot``
(URIs processed / succeeded / failed, bytes, novel and duplicate bytes, per host, per
MIME type, per status code, per seed and source tag).
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any
from urllib.parse import urlsplit

from webark.crawl.frontier import FrontierStats

__all__ = ["CrawlStats", "HostStats", "StatsSnapshot"]


@dataclass
class HostStats:
    """Per-host counts (Heritrix hosts report): URIs, bytes, robots-excluded, errors,
    duplicates (revisits) and their bytes."""

    urls: int = 0
    bytes: int = 0
    robots_excluded: int = 0
    errors: int = 0
    duplicates: int = 0
    duplicate_bytes: int = 0


@dataclass(frozen=True)
class StatsSnapshot:
    """A read-only view of the crawl at one moment (times: wall-clock seconds since the
    epoch; sizes: bytes). Mappings are read-only proxies over copies."""

    job_name: str
    started: float
    now: float
    ended: float | None
    processed: int
    succeeded: int
    failed: int
    robots_excluded: int
    bytes: int
    novel_bytes: int
    duplicates: int
    duplicate_bytes: int
    statuses: MappingProxyType[int, int]
    mimes: MappingProxyType[str, tuple[int, int]]
    hosts: MappingProxyType[str, HostStats]
    seeds: MappingProxyType[str, tuple[int | None, str | None]]
    source_tags: MappingProxyType[str, int]
    frontier: FrontierStats | None = None
    stop_reason: str | None = None

    @property
    def elapsed(self) -> float:
        """Seconds from start to end (or now)."""
        return max(0.0, (self.ended or self.now) - self.started)

    @property
    def uris_per_second(self) -> float:
        return self.processed / self.elapsed if self.elapsed > 0 else 0.0

    @property
    def kib_per_second(self) -> float:
        return self.bytes / 1024 / self.elapsed if self.elapsed > 0 else 0.0

    @property
    def queued(self) -> int:
        return self.frontier.queued if self.frontier else 0


@dataclass
class CrawlStats:
    """Mutable counters, owned by the controller (one asyncio loop: no locking)."""

    job_name: str = "crawl"
    started: float = field(default_factory=time.time)
    ended: float | None = None
    processed: int = 0
    succeeded: int = 0
    failed: int = 0
    robots_excluded: int = 0
    bytes: int = 0
    novel_bytes: int = 0
    duplicates: int = 0
    duplicate_bytes: int = 0
    statuses: Counter[int] = field(default_factory=Counter)
    mimes: dict[str, list[int]] = field(default_factory=dict)
    hosts: dict[str, HostStats] = field(default_factory=dict)
    seeds: dict[str, tuple[int | None, str | None]] = field(default_factory=dict)
    source_tags: Counter[str] = field(default_factory=Counter)
    stop_reason: str | None = None

    def add_seed(self, uri: str) -> None:
        self.seeds.setdefault(uri, (None, None))

    def record(
        self,
        uri: str,
        status: int,
        size: int,
        mime: str | None,
        *,
        seed: bool = False,
        source: str | None = None,
        duplicate: bool = False,
        redirect: str | None = None,
    ) -> None:
        """Count one final crawl.log line."""
        self.processed += 1
        self.statuses[status] += 1
        host = (urlsplit(uri).hostname or "-") if not uri.startswith("dns:") else uri[4:]
        h = self.hosts.setdefault(host, HostStats())
        h.urls += 1
        if status == -9998:
            self.robots_excluded += 1
            h.robots_excluded += 1
        elif status > 0:
            self.succeeded += 1
            self.bytes += size
            h.bytes += size
            m = self.mimes.setdefault(mime or "no-type", [0, 0])
            m[0] += 1
            m[1] += size
            if duplicate:
                self.duplicates += 1
                self.duplicate_bytes += size
                h.duplicates += 1
                h.duplicate_bytes += size
            else:
                self.novel_bytes += size
        else:
            self.failed += 1
            h.errors += 1
        if source:
            self.source_tags[source] += 1
        if seed or uri in self.seeds:
            self.seeds[uri] = (status, redirect)

    def snapshot(
        self, frontier: FrontierStats | None = None, now: float | None = None
    ) -> StatsSnapshot:
        """A read-only copy for reports and the progress line."""
        return StatsSnapshot(
            job_name=self.job_name,
            started=self.started,
            now=time.time() if now is None else now,
            ended=self.ended,
            processed=self.processed,
            succeeded=self.succeeded,
            failed=self.failed,
            robots_excluded=self.robots_excluded,
            bytes=self.bytes,
            novel_bytes=self.novel_bytes,
            duplicates=self.duplicates,
            duplicate_bytes=self.duplicate_bytes,
            statuses=MappingProxyType(dict(self.statuses)),
            mimes=MappingProxyType({k: (v[0], v[1]) for k, v in self.mimes.items()}),
            hosts=MappingProxyType({k: HostStats(**vars(v)) for k, v in self.hosts.items()}),
            seeds=MappingProxyType(dict(self.seeds)),
            source_tags=MappingProxyType(dict(self.source_tags)),
            frontier=frontier,
            stop_reason=self.stop_reason,
        )

    def to_json(self) -> dict[str, Any]:
        """Plain data for ``state/stats.json`` (so a resumed crawl keeps its totals)."""
        return {
            "job_name": self.job_name,
            "started": self.started,
            "processed": self.processed,
            "succeeded": self.succeeded,
            "failed": self.failed,
            "robots_excluded": self.robots_excluded,
            "bytes": self.bytes,
            "novel_bytes": self.novel_bytes,
            "duplicates": self.duplicates,
            "duplicate_bytes": self.duplicate_bytes,
            "statuses": {str(k): v for k, v in self.statuses.items()},
            "mimes": self.mimes,
            "hosts": {k: vars(v) for k, v in self.hosts.items()},
            "seeds": {k: list(v) for k, v in self.seeds.items()},
            "source_tags": dict(self.source_tags),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> CrawlStats:
        s = cls(job_name=data.get("job_name", "crawl"), started=data.get("started", time.time()))
        for k in (
            "processed",
            "succeeded",
            "failed",
            "robots_excluded",
            "bytes",
            "novel_bytes",
            "duplicates",
            "duplicate_bytes",
        ):
            setattr(s, k, int(data.get(k, 0)))
        s.statuses = Counter({int(k): v for k, v in data.get("statuses", {}).items()})
        s.mimes = {k: list(v) for k, v in data.get("mimes", {}).items()}
        s.hosts = {k: HostStats(**v) for k, v in data.get("hosts", {}).items()}
        s.seeds = {k: (v[0], v[1]) for k, v in data.get("seeds", {}).items()}
        s.source_tags = Counter(data.get("source_tags", {}))
        return s
