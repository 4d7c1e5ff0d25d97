"""Crawl statistics: counters the controller updates per crawl.log line, and the
read-only :class:`StatsSnapshot` reports and the progress line are fed.

The counters are those of Heritrix 3's ``StatisticsTracker`` / ``CrawlStatSnapshot``
(URIs processed / succeeded / failed, bytes, novel and duplicate bytes, per host, per
MIME type, per status code, per seed and source tag), plus:

* the dedup split of Heritrix's DeDuplicator report: revisits whose original has the
  same URL (``exact-url``), the same canonical URL key (``canonical-url``) or only the
  same payload digest (``digest-only``), and ``server-not-modified`` (304) answers;
* a :class:`WorkerBoard`: what each worker is doing (URI, processor stage, since when:
  Heritrix's ToeThreads report) and the time spent per stage (its processors report).
"""

from __future__ import annotations

import time
from collections import Counter, OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any
from urllib.parse import urlsplit

from webark.crawl.curi import CrawlURI
from webark.crawl.frontier import FrontierStats, anchored_clock
from webark.crawl.waiting import PendingRetries, RetryNote
from webark.crawllog import DISREGARDED_STATUSES
from webark.url import InvalidURLError, cdx_key

__all__ = [
    "DEDUP_KINDS",
    "STAGES",
    "CrawlStats",
    "HostStats",
    "ProcessorStats",
    "StatsSnapshot",
    "WorkerBoard",
    "WorkerState",
    "dedup_kind",
]

STAGES: tuple[str, ...] = (
    "preconditions",
    "fetchHttp",
    "extractors",
    "warcWriter",
    "candidates",
    "disposition",
)
"""The processors of the crawler's chains, in order (:mod:`webark.crawl.chains`; a test
holds the two equal), named after Heritrix 3's: ``preconditions`` covers the scheme, the
``dns:`` lookup and robots.txt; ``fetchHttp`` the fetch and the after-fetch decide rules;
``warcWriter`` the capture back end (dedup lookup, WARC records, index update);
``candidates`` the scope checks and frontier adds; ``disposition`` the crawl.log line
and the politeness delay."""

DEDUP_KINDS: tuple[str, ...] = (
    "exact-url",
    "canonical-url",
    "digest-only",
    "server-not-modified",
    "unknown",
)
"""Kinds of dedup hit counted by :class:`CrawlStats` (``unknown``: a revisit counted
from crawl.log on ``--resume``, whose original URL the log does not say)."""

_NOT_MODIFIED = "duplicate:server-not-modified"


def dedup_kind(uri: str, original_uri: str) -> str:
    """``"exact-url"`` when ``original_uri`` is ``uri``, ``"canonical-url"`` when both
    have the same CDX URL key (:func:`webark.url.cdx_key`), else ``"digest-only"``
    (Heritrix DeDuplicator's split of its hits)."""
    if uri == original_uri:
        return "exact-url"
    try:
        same = cdx_key(uri) == cdx_key(original_uri)
    except (InvalidURLError, ValueError):
        same = False
    return "canonical-url" if same else "digest-only"


@dataclass(frozen=True, slots=True)
class WorkerState:
    """One worker at one moment (Heritrix ToeThread report line).

    Attributes:
        worker: worker number (the crawl.log ``#thread`` field).
        uri: the URI being processed, ``None`` when idle.
        stage: one of :data:`STAGES`, or ``"idle"``.
        since: when the stage began (wall clock, seconds since the epoch).
        started: when the worker took the URI (wall clock), ``None`` when idle.
        hops, via, key, retries: of the URI (``key`` is its queue).
    """

    worker: int
    uri: str | None
    stage: str
    since: float
    started: float | None = None
    hops: str = ""
    via: str | None = None
    key: str = ""
    retries: int = 0


@dataclass(frozen=True, slots=True)
class ProcessorStats:
    """One processor stage (Heritrix processors report): URIs that went through it,
    seconds spent in it (sum over workers, monotonic clock) and the items it handled
    (``candidates``: outlinks checked against the scope; 0 for other stages)."""

    name: str
    handled: int
    seconds: float
    items: int = 0


class _Slot:
    """A worker's current URI and stage (mutable, internal to :class:`WorkerBoard`)."""

    __slots__ = ("hops", "key", "mark", "retries", "stage", "started", "uri", "via")

    def __init__(self) -> None:
        self.uri: str | None = None
        self.hops = ""
        self.via: str | None = None
        self.key = ""
        self.retries = 0
        self.stage = "idle"
        self.mark = 0.0  # monotonic: when the stage began
        self.started: float | None = None  # monotonic: when the URI was taken


class WorkerBoard:
    """What each worker is doing, updated by the controller at each stage change.

    Cheap to call several times per URI (one monotonic clock read and a few attribute
    stores; ~1 µs); :class:`WorkerState` values are only built for snapshots. Wall-clock
    times are the monotonic ones shifted by the offset measured at creation, so a clock
    step during the crawl does not make durations negative. Not thread-safe: the
    controller's workers are asyncio tasks of one loop.

    Args:
        wall: wall clock (seconds since the epoch) for ``since`` fields.
        mono: monotonic clock for stage durations.
        max_keys: how many queues' last-finish times are kept (oldest dropped).
    """

    def __init__(
        self,
        wall: Any = time.time,
        mono: Any = time.monotonic,
        max_keys: int = 100_000,
    ) -> None:
        self._mono = mono
        self._offset = wall() - mono()
        self._max_keys = max_keys
        self._slots: dict[int, _Slot] = {}
        self._handled: dict[str, int] = dict.fromkeys(STAGES, 0)
        self._seconds: dict[str, float] = dict.fromkeys(STAGES, 0.0)
        self._items: dict[str, int] = dict.fromkeys(STAGES, 0)
        self._finished: OrderedDict[str, float] = OrderedDict()

    def _slot(self, n: int) -> _Slot:
        slot = self._slots.get(n)
        if slot is None:
            slot = self._slots[n] = _Slot()
        return slot

    def register(self, workers: Iterable[int]) -> None:
        """List these workers as idle until they take a URI (so reports show every
        worker of the crawl, not only those that have worked)."""
        for n in workers:
            self._slot(n)

    def begin(self, n: int, curi: CrawlURI) -> None:
        """Worker ``n`` took ``curi`` from the frontier (stage ``preconditions``)."""
        slot = self._slot(n)
        now = self._mono()
        if slot.uri is not None:
            self._seconds[slot.stage] = self._seconds.get(slot.stage, 0.0) + now - slot.mark
        slot.uri, slot.hops, slot.via = curi.uri, curi.hops, curi.via
        slot.key, slot.retries = curi.key, curi.retries
        slot.stage, slot.mark, slot.started = STAGES[0], now, now
        self._handled[STAGES[0]] += 1

    def stage(self, n: int, name: str, items: int = 0) -> None:
        """Worker ``n`` enters stage ``name`` (any string; :data:`STAGES` by default)
        with ``items`` to handle there."""
        slot = self._slots.get(n)
        if slot is None or slot.uri is None:
            return
        now = self._mono()
        self._seconds[slot.stage] = self._seconds.get(slot.stage, 0.0) + now - slot.mark
        slot.stage, slot.mark = name, now
        self._handled[name] = self._handled.get(name, 0) + 1
        if items:
            self._items[name] = self._items.get(name, 0) + items

    def count(self, name: str, items: int = 0) -> None:
        """Count one URI through stage ``name`` with ``items`` to handle there, for work
        done outside a worker's slot (the controller's pipelined processing after the
        worker has moved on); no time is attributed."""
        self._handled[name] = self._handled.get(name, 0) + 1
        if items:
            self._items[name] = self._items.get(name, 0) + items

    def add_items(self, name: str, items: int) -> None:
        """Count ``items`` more handled in stage ``name`` (the outlinks ``candidates``
        checked)."""
        if items:
            self._items[name] = self._items.get(name, 0) + items

    def end(self, n: int) -> None:
        """Worker ``n`` is done with its URI (the frontier has set the queue's next
        due time); the worker is idle."""
        slot = self._slot(n)
        now = self._mono()
        if slot.uri is not None:
            self._seconds[slot.stage] = self._seconds.get(slot.stage, 0.0) + now - slot.mark
            if slot.key:
                fin = self._finished
                fin[slot.key] = now + self._offset
                fin.move_to_end(slot.key)
                if len(fin) > self._max_keys:
                    fin.popitem(last=False)
        slot.uri, slot.stage, slot.mark, slot.started = None, "idle", now, None
        slot.hops, slot.via, slot.key, slot.retries = "", None, "", 0

    def last_finished(self, key: str) -> float | None:
        """When the last URI of queue ``key`` was finished (wall clock), if known."""
        return self._finished.get(key)

    def workers(self) -> tuple[WorkerState, ...]:
        """Every worker seen so far, by number (times on the wall clock)."""
        off = self._offset
        return tuple(
            WorkerState(
                n,
                s.uri,
                s.stage,
                s.mark + off,
                None if s.started is None else s.started + off,
                s.hops,
                s.via,
                s.key,
                s.retries,
            )
            for n, s in sorted(self._slots.items())
        )

    def totals(self) -> dict[str, list[float]]:
        """Per-stage ``[handled, seconds, items]`` (plain data, for ``sessions.json``)."""
        names = set(self._handled) | set(self._seconds) | set(self._items)
        return {n: [self._handled.get(n, 0), round(self._seconds.get(n, 0.0), 6),
                    self._items.get(n, 0)] for n in sorted(names)}  # fmt: skip

    def add_totals(self, totals: dict[str, Any]) -> None:
        """Add the :meth:`totals` of earlier runs of the crawl (``--resume``: the
        processors report counts the whole crawl). Malformed entries are skipped."""
        for name, value in totals.items():
            if not isinstance(value, list) or len(value) != 3:
                continue
            handled, seconds, items = value
            if not all(isinstance(x, int | float) for x in value):
                continue
            self._handled[name] = self._handled.get(name, 0) + int(handled)
            self._seconds[name] = self._seconds.get(name, 0.0) + float(seconds)
            self._items[name] = self._items.get(name, 0) + int(items)

    def processors(self) -> tuple[ProcessorStats, ...]:
        """Per-stage totals, in :data:`STAGES` order then others by name."""
        names = [*STAGES, *sorted(set(self._handled) - set(STAGES))]
        return tuple(
            ProcessorStats(n, self._handled.get(n, 0), self._seconds.get(n, 0.0),
                           self._items.get(n, 0))
            for n in names
        )  # fmt: skip


@dataclass
class HostStats:
    """Per-host counts (Heritrix hosts report): URIs, bytes, robots-excluded, errors,
    novel captures (neither a digest revisit nor not-modified) and their bytes,
    duplicates (digest revisits) and their bytes, server-not-modified answers and their
    bytes. ``dns:`` URIs count under the host ``"dns:"``, as in Heritrix."""

    urls: int = 0
    bytes: int = 0
    robots_excluded: int = 0
    errors: int = 0
    duplicates: int = 0
    duplicate_bytes: int = 0
    not_modified: int = 0
    not_modified_bytes: int = 0
    novel_urls: int = 0
    novel_bytes: int = 0


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
    dedup_hits: MappingProxyType[str, int] = field(
        default_factory=lambda: MappingProxyType({})
    )
    dedup_bytes: MappingProxyType[str, int] = field(
        default_factory=lambda: MappingProxyType({})
    )
    disregarded: int = 0
    """URIs dropped on purpose after being queued (scope, hops, operator, quota, processor:
    Heritrix's "disregarded", ``crawllog.DISREGARDED_STATUSES`` but robots.txt), counted
    neither as succeeded nor as failed."""
    not_modified: int = 0
    not_modified_bytes: int = 0
    workers: tuple[WorkerState, ...] = ()
    processors: tuple[ProcessorStats, ...] = ()
    queue_finished: MappingProxyType[str, float] = field(
        default_factory=lambda: MappingProxyType({})
    )
    warc_bytes: int | None = None
    settings: MappingProxyType[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    state: str | None = None
    prior_elapsed: float = 0.0
    """Seconds the crawl ran in earlier sessions (before ``--resume``)."""
    crawl_started: float | None = None
    """When the crawl's first session started (``started`` is this session's)."""
    extensions: MappingProxyType[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    """Read-only snapshots of the crawl's extensions by name (``"rss"``: continuous
    crawling's sites and feeds, :class:`~webark.crawl.rss.report.RssSnapshot`)."""
    next_retry: RetryNote | None = None
    """The retry the frontier holds that is due first (:mod:`webark.crawl.waiting`)."""

    @property
    def elapsed(self) -> float:
        """Seconds the crawl has run: earlier sessions plus this one to its end (or now);
        the time between a stop and its ``--resume`` does not count."""
        return self.prior_elapsed + max(0.0, (self.ended or self.now) - self.started)

    @property
    def uris_per_second(self) -> float:
        return self.processed / self.elapsed if self.elapsed > 0 else 0.0

    @property
    def kib_per_second(self) -> float:
        return self.bytes / 1024 / self.elapsed if self.elapsed > 0 else 0.0

    @property
    def queued(self) -> int:
        return self.frontier.queued if self.frontier else 0

    @property
    def busy_workers(self) -> int:
        """Workers processing a URI now."""
        return sum(1 for w in self.workers if w.uri is not None)


@dataclass
class CrawlStats:
    """Mutable counters, owned by the controller (one asyncio loop: no locking)."""

    job_name: str = "crawl"
    started: float = field(default_factory=time.time)
    ended: float | None = None
    prior_elapsed: float = 0.0
    crawl_started: float | None = None
    processed: int = 0
    succeeded: int = 0
    failed: int = 0
    robots_excluded: int = 0
    disregarded: int = 0
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
    dedup_hits: Counter[str] = field(default_factory=Counter)
    dedup_bytes: Counter[str] = field(default_factory=Counter)
    not_modified: int = 0
    not_modified_bytes: int = 0
    board: WorkerBoard = field(default_factory=WorkerBoard)
    _revisit_kinds: dict[str, str] = field(default_factory=dict)
    pending_retries: PendingRetries = field(default_factory=PendingRetries)
    """The URIs the frontier will retry, and when (the progress line of an idle crawl)."""
    extension_snapshots: dict[str, Callable[[], Any]] = field(default_factory=dict)
    """Name → a function returning a read-only snapshot of a crawl extension, taken
    into every :meth:`snapshot` (its ``extensions``)."""
    clock: Callable[[], float] | None = None
    """The crawl's clock (wall-clock seconds that advance with the monotonic clock:
    :func:`~webark.crawl.frontier.anchored_clock`, the frontier's too), for ``now`` and
    ``ended``: a wall-clock step during the crawl changes no duration nor rate."""

    def __post_init__(self) -> None:
        if self.clock is None:
            self.clock = anchored_clock()

    def now(self) -> float:
        """The crawl clock's time (see :attr:`clock`)."""
        assert self.clock is not None
        return self.clock()

    def note_revisit(self, uri: str, original_uri: str) -> None:
        """The capture of ``uri`` is about to be written as a revisit of
        ``original_uri``; :meth:`record` counts it by :func:`dedup_kind`."""
        self._revisit_kinds[uri] = dedup_kind(uri, original_uri)

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
        annotations: tuple[str, ...] = (),
    ) -> None:
        """Count one final crawl.log line (``size`` in bytes; ``annotations`` as in
        crawl.log: ``duplicate:server-not-modified`` counts a not-modified answer)."""
        not_modified = _NOT_MODIFIED in annotations
        self.pending_retries.forget(uri)
        kind = self._revisit_kinds.pop(uri, None)
        self.processed += 1
        self.statuses[status] += 1
        host = (urlsplit(uri).hostname or "-") if not uri.startswith("dns:") else "dns:"
        h = self.hosts.setdefault(host, HostStats())
        h.urls += 1
        if status == -9998:
            self.robots_excluded += 1
            h.robots_excluded += 1
        elif status in DISREGARDED_STATUSES:  # on purpose: neither ok nor failed (Heritrix)
            self.disregarded += 1
        elif status > 0:
            self.succeeded += 1
            self.bytes += size
            h.bytes += size
            m = self.mimes.setdefault(mime or "no-type", [0, 0])
            m[0] += 1
            m[1] += size
            if not_modified:  # Heritrix counts these apart from duplicate-by-hash
                self.not_modified += 1
                self.not_modified_bytes += size
                h.not_modified += 1
                h.not_modified_bytes += size
                self.dedup_hits["server-not-modified"] += 1
                self.dedup_bytes["server-not-modified"] += size
            elif duplicate:
                kind = kind or "unknown"
                self.dedup_hits[kind] += 1
                self.dedup_bytes[kind] += size
                self.duplicates += 1
                self.duplicate_bytes += size
                h.duplicates += 1
                h.duplicate_bytes += size
            else:
                self.novel_bytes += size
                h.novel_urls += 1
                h.novel_bytes += size
        else:
            self.failed += 1
            h.errors += 1
        if source:
            self.source_tags[source] += 1
        if seed or uri in self.seeds:
            self.seeds[uri] = (status, redirect)

    def snapshot(
        self,
        frontier: FrontierStats | None = None,
        now: float | None = None,
        *,
        warc_bytes: int | None = None,
        settings: dict[str, Any] | None = None,
        state: str | None = None,
    ) -> StatsSnapshot:
        """A read-only copy for reports and the progress line. ``warc_bytes`` (bytes of
        WARC files on disk), ``settings`` (live politeness settings) and ``state``
        (``RUNNING``, ``PAUSED``…) are given by the caller that knows them."""
        queue_finished: dict[str, float] = {}
        if frontier is not None:
            for q in frontier.top_queues:
                t = self.board.last_finished(q.key)
                if t is not None:
                    queue_finished[q.key] = t
        return StatsSnapshot(
            job_name=self.job_name,
            started=self.started,
            now=self.now() if now is None else now,
            ended=self.ended,
            processed=self.processed,
            succeeded=self.succeeded,
            failed=self.failed,
            robots_excluded=self.robots_excluded,
            disregarded=self.disregarded,
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
            dedup_hits=MappingProxyType(dict(self.dedup_hits)),
            dedup_bytes=MappingProxyType(dict(self.dedup_bytes)),
            not_modified=self.not_modified,
            not_modified_bytes=self.not_modified_bytes,
            workers=self.board.workers(),
            processors=self.board.processors(),
            queue_finished=MappingProxyType(queue_finished),
            warc_bytes=warc_bytes,
            settings=MappingProxyType(dict(settings or {})),
            state=state,
            prior_elapsed=self.prior_elapsed,
            crawl_started=self.crawl_started,
            extensions=MappingProxyType({k: f() for k, f in self.extension_snapshots.items()}),
            next_retry=self.pending_retries.next(),
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
            "disregarded": self.disregarded,
            "bytes": self.bytes,
            "novel_bytes": self.novel_bytes,
            "duplicates": self.duplicates,
            "duplicate_bytes": self.duplicate_bytes,
            "statuses": {str(k): v for k, v in self.statuses.items()},
            "mimes": self.mimes,
            "hosts": {k: vars(v) for k, v in self.hosts.items()},
            "seeds": {k: list(v) for k, v in self.seeds.items()},
            "source_tags": dict(self.source_tags),
            "dedup_hits": dict(self.dedup_hits),
            "dedup_bytes": dict(self.dedup_bytes),
            "not_modified": self.not_modified,
            "not_modified_bytes": self.not_modified_bytes,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> CrawlStats:
        s = cls(job_name=data.get("job_name", "crawl"), started=data.get("started", time.time()))
        for k in (
            "processed",
            "succeeded",
            "failed",
            "robots_excluded",
            "disregarded",
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
        s.dedup_hits = Counter(data.get("dedup_hits", {}))
        s.dedup_bytes = Counter(data.get("dedup_bytes", {}))
        s.not_modified = int(data.get("not_modified", 0))
        s.not_modified_bytes = int(data.get("not_modified_bytes", 0))
        return s
