"""The frontier: which URI to fetch next, and when; persisted in SQLite.

Behaviour follows Heritrix 3's ``BdbFrontier`` / ``WorkQueueFrontier`` / ``WorkQueue``
(reference/heritrix-behaviour.md):

* **One queue per politeness key** (:attr:`CrawlURI.key`, host[:port] by default), at
  most **one URI in flight per queue**. Each queue has a *due* time; a queue is *ready*
  when it has queued URIs, nothing in flight, is not blocked by a quota and its due time
  has come. Ready queues are served in order of due time, then of the order in which they
  became due, which is Heritrix's ready-queue FIFO: a queue goes to the back of the line
  after each fetch, so hosts are served round-robin.
* Within a queue: by :attr:`CrawlURI.priority` (lower first), then first-in first-out.
* **Early release** (:meth:`Frontier.release`): once a fetch is over, its queue may
  serve its next URI while the caller still processes the fetched one (link
  extraction); the fetched URI stays in flight until :meth:`Frontier.finished`.
* **Politeness delay** after each fetch: :func:`politeness_delay` (delay factor × fetch
  duration clamped to [min, max], raised to the robots.txt Crawl-delay up to a cap).
* **Back-off** on 429 and 5xx: the queue is *snoozed* for
  ``max(politeness, backoff_base × 2^(errors−1) capped at backoff_max, Retry-After)``
  where *errors* counts consecutive 429/5xx answers of the queue (reset by any other
  answer); 429/500/502/503/504 are retried up to ``max_http_retries`` times.
* **Retries** of network failures (negative fetch status codes in
  :attr:`FrontierConfig.retry_codes`): the URI stays at the head of its queue and the
  queue is snoozed ``retry_delay`` seconds (Heritrix: ``maxRetries`` 30,
  ``retryDelaySeconds`` 900); after ``max_retries`` retries the URI is finished with
  its last failure code.
* **Quotas** (Heritrix ``QuotaEnforcer`` / ``maxDocumentsDownload`` / ``maxBytesDownload``):
  per queue and per crawl, successful fetches (status > 0) and bytes (every fetch). A
  queue over its quota is blocked: its queued URIs are finished at once with
  :data:`S_BLOCKED_BY_QUOTA` (-5003) and later adds to it are refused. When the crawl
  quota is reached :meth:`Frontier.next_ready` returns nothing more (the crawl ends).
* **Seen filter** (Heritrix ``BdbUriUniqFilter``): a 64-bit fingerprint of
  :func:`webark.url.normalize` of the URI, unique in the database. A URI that is queued,
  in flight or finished is not queued again (unless ``add(..., force=True)``).

Persistence and crashes
-----------------------
Everything lives in one SQLite database in WAL mode; Python memory holds only a few
counters and a bounded cache of queue ids, never the URIs. Every public method that
changes state is one transaction. After a ``kill -9`` at any moment, :meth:`Frontier.open`
puts the URIs that were in flight back at the head of their queues (they will be fetched
again: "no URI is fetched twice except those in flight"), nothing queued is lost and
finished URIs stay finished. A caller that records a URI's end elsewhere before
:meth:`Frontier.finished` (the crawler writes its crawl.log line first) finds those URIs
in :attr:`Frontier.recovered_uris` and can :meth:`Frontier.settle` the one whose end it
did record.

``synchronous=NORMAL`` is the default: in WAL mode a committed transaction survives a
crash of the *process* (the WAL pages are in the OS cache), which is what ``kill -9``
does; only a power loss or kernel crash can lose the last transactions, and since WAL
keeps them in order the database then holds a consistent earlier state. Callers must
**add the outlinks of a URI before calling finished() for it**: then an earlier state
never loses a URI, it can only refetch some. ``FULL`` (an fsync per transaction, ~10×
slower on disks without a write cache) is available for crawls that cannot refetch.

Clock
-----
Due times are persisted, so they are on the *wall clock* (seconds since the epoch).
After a restart hours later every past due time simply means "ready now", and a snooze
still running (a 10-minute back-off) is honoured; a monotonic clock alone would be
meaningless after a reboot. Within a run, the default clock (:func:`anchored_clock`) is
the wall clock read once at :meth:`Frontier.open` and advanced by :func:`time.monotonic`,
so NTP steps and leap seconds do not make snoozed queues ready early or late. Against a
wall clock that was stepped back between runs, :meth:`Frontier.open` caps every due time
at now + the longest delay the configuration can produce. Tests inject a fake clock.

Not thread-safe: use one :class:`Frontier` from one thread (the crawler's asyncio loop),
one process per database.
"""

from __future__ import annotations

import contextlib
import enum
import hashlib
import logging
import sqlite3
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from webark.core.errors import WebarkError
from webark.crawl.curi import CrawlURI
from webark.crawl.politeness import (
    Clock,
    FrontierConfig,
    Outcome,
    anchored_clock,
    backoff_delay,
    disposition,
    is_backoff_status,
    parse_retry_after,
    politeness_delay,
)
from webark.crawllog.status import S_BLOCKED_BY_QUOTA
from webark.url import InvalidURLError, normalize

log = logging.getLogger(__name__)

__all__ = [
    "S_BLOCKED_BY_QUOTA",
    "Clock",
    "Disposition",
    "Frontier",
    "FrontierConfig",
    "FrontierError",
    "FrontierStats",
    "Outcome",
    "QueueStats",
    "UriState",
    "anchored_clock",
    "backoff_delay",
    "disposition",
    "fingerprint",
    "is_backoff_status",
    "parse_retry_after",
    "politeness_delay",
]

class UriState(enum.IntEnum):
    """The state of a URI in the frontier (the ``uris.state`` column)."""

    QUEUED = 0
    """Waiting in its queue."""
    IN_FLIGHT = 1
    """Handed out by :meth:`Frontier.next_ready`, not yet finished (put back on open)."""
    FINISHED = 2
    """Done for good (its final status is kept; the seen filter remembers it)."""


_QUEUED, _IN_FLIGHT, _FINISHED = UriState.QUEUED, UriState.IN_FLIGHT, UriState.FINISHED
_SCHEMA_VERSION = 1


class FrontierError(WebarkError):
    """Misuse of the frontier (e.g. ``finished()`` for a URI that is not in flight)."""


# --- pure functions ---------------------------------------------------------------------


def fingerprint(uri: str) -> int:
    """The seen-filter key of ``uri``: a signed 64-bit BLAKE2b fingerprint of
    :func:`webark.url.normalize` (of the raw string when it is not a valid URL).

    Heritrix's ``BdbUriUniqFilter`` also keeps 64-bit fingerprints; with 10^8 URIs the
    chance of one false "seen" is ~3×10^-4.
    """
    try:
        canon = normalize(uri)
    except InvalidURLError:
        canon = uri
    digest = hashlib.blake2b(canon.encode("utf-8", "surrogatepass"), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


# --- results and stats ------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Disposition:
    """Result of :meth:`Frontier.finished`.

    Attributes:
        outcome: :attr:`Outcome.FINISHED` or :attr:`Outcome.RETRY`.
        status: the status recorded (the one given).
        delay_s: how long the queue now waits (seconds).
        due: when the queue is next ready (wall clock, seconds since the epoch).
        snoozed: True when the wait is a back-off or retry delay, not plain politeness.
        blocked: how many URIs of the queue were finished with :data:`S_BLOCKED_BY_QUOTA`
            now because this fetch reached a queue quota.
        blocked_uris: those URIs (each needs its crawl.log line).
    """

    outcome: Outcome
    status: int
    delay_s: float
    due: float
    snoozed: bool = False
    blocked: int = 0
    blocked_uris: tuple[CrawlURI, ...] = ()


@dataclass(frozen=True, slots=True)
class QueueStats:
    """One queue in :class:`FrontierStats` (``due`` is wall-clock seconds)."""

    key: str
    queued: int
    in_flight: bool
    finished: int
    succeeded: int
    bytes: int
    due: float
    errors: int
    blocked: bool


@dataclass(frozen=True, slots=True)
class FrontierStats:
    """A read-only snapshot for reports (Heritrix "frontier summary").

    Attributes:
        queued: URIs waiting. in_flight: URIs handed out and not finished.
        finished: URIs done (including failures and those blocked by a quota);
        succeeded: finished with status > 0; blocked_by_quota: finished with -5003.
        bytes: bytes fetched (sum of ``size``). queues: queues known.
        ready_queues: queues that could be served now; snoozed_queues: queues with URIs
        waiting for their due time; in_flight_queues; blocked_queues (over quota).
        quota_reached: a crawl quota was reached. top_queues: the queues with most
        queued URIs (at most ``top`` of them).
    """

    queued: int
    in_flight: int
    finished: int
    succeeded: int
    blocked_by_quota: int
    bytes: int
    queues: int
    ready_queues: int
    snoozed_queues: int
    in_flight_queues: int
    blocked_queues: int
    quota_reached: bool
    top_queues: tuple[QueueStats, ...] = field(default=())


# --- the frontier -----------------------------------------------------------------------

_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS meta (k TEXT PRIMARY KEY, v) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS queues (
    qid INTEGER PRIMARY KEY,
    key TEXT NOT NULL UNIQUE,
    queued INTEGER NOT NULL DEFAULT 0,
    inflight INTEGER,                   -- uris.id in flight, NULL when none
    due REAL NOT NULL DEFAULT 0,        -- wall clock: ready from then on
    seq INTEGER NOT NULL DEFAULT 0,     -- order of becoming due (round robin)
    errors INTEGER NOT NULL DEFAULT 0,  -- consecutive 429/5xx
    crawl_delay REAL,
    finished INTEGER NOT NULL DEFAULT 0,
    succeeded INTEGER NOT NULL DEFAULT 0,
    bytes INTEGER NOT NULL DEFAULT 0,
    blocked INTEGER NOT NULL DEFAULT 0, -- over a quota
    blocked_uris INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS queues_ready ON queues (due, seq)
    WHERE queued > 0 AND inflight IS NULL AND blocked = 0;
CREATE TABLE IF NOT EXISTS uris (
    id INTEGER PRIMARY KEY,
    fp INTEGER NOT NULL UNIQUE,
    qid INTEGER NOT NULL,
    state INTEGER NOT NULL,             -- UriState: 0 queued, 1 in flight, 2 finished
    priority INTEGER NOT NULL,
    retries INTEGER NOT NULL DEFAULT 0,
    status INTEGER,
    uri TEXT NOT NULL,
    hops TEXT NOT NULL,
    via TEXT,
    seed INTEGER NOT NULL,
    source TEXT
);
CREATE INDEX IF NOT EXISTS uris_queued ON uris (qid, priority, id)
    WHERE state = {UriState.QUEUED:d};
CREATE INDEX IF NOT EXISTS uris_active ON uris (qid) WHERE state = {UriState.IN_FLIGHT:d};
"""

_READY = "queued > 0 AND inflight IS NULL AND blocked = 0"


class Frontier:
    """The SQLite-backed frontier. Create with :meth:`open`; use as a context manager
    or call :meth:`close`.

    Typical use (one fetch per ready queue; many can be in flight across queues)::

        with Frontier.open("state/frontier.db") as f:
            f.add_many(seeds)
            while True:
                c = f.next_ready()
                if c is not None:
                    start_fetch(c)  # later: f.add_many(outlinks); f.finished(c, status, secs)
                elif f.next_wake() is None and f.in_flight == 0:
                    break  # crawl done (or a crawl quota reached)
                else:
                    wait until next_wake() or until a fetch ends
    """

    def __init__(self, conn: sqlite3.Connection, config: FrontierConfig, clock: Clock) -> None:
        """Use :meth:`open`."""
        self._db = conn
        self.config = config
        self._clock = clock
        self._qids: dict[str, int] = {}
        row = conn.execute(
            "SELECT COALESCE(MAX(seq), 0), COALESCE(SUM(succeeded), 0), "
            "COALESCE(SUM(bytes), 0) FROM queues"
        ).fetchone()
        self._seq: int = row[0]
        self._succeeded: int = row[1]
        self._bytes: int = row[2]
        self._in_flight = 0
        self._released: dict[str, tuple[int, int]] = {}
        """URIs whose queue :meth:`release` freed, not yet finished: uri → (1 when the
        fetch succeeded else 0, bytes). Bounded by the caller's pipeline depth."""
        self._pending_ok = 0
        self._pending_bytes = 0
        self.recovered: int = 0
        """How many in-flight URIs :meth:`open` put back (left by a crash)."""
        self.recovered_uris: tuple[str, ...] = ()
        """Those URIs, for :meth:`settle`."""

    @classmethod
    def open(
        cls,
        path: str | Path,
        config: FrontierConfig | None = None,
        *,
        clock: Clock | None = None,
    ) -> Frontier:
        """Open (or create) the frontier database at ``path``.

        ``clock`` gives "now" in wall-clock seconds for every method called without
        ``now`` (default :func:`anchored_clock`).

        URIs in flight when the database was last used (a crash) are put back at the
        head of their queues (:attr:`recovered` says how many); due times beyond now +
        :attr:`FrontierConfig.horizon` are cut to it (wall clock stepped back).

        Raises:
            sqlite3.Error: the file is not a database or cannot be written.
            FrontierError: the database has another schema version.
        """
        config = config or FrontierConfig()
        clock = clock or anchored_clock()
        conn = sqlite3.connect(str(path), isolation_level=None)
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute(f"PRAGMA synchronous={config.synchronous.upper()}")
            conn.execute(f"PRAGMA cache_size=-{int(config.cache_mb) * 1024}")
            conn.execute("PRAGMA temp_store=MEMORY")
            conn.execute("BEGIN IMMEDIATE")
            for stmt in _SCHEMA.split(";"):
                if stmt.strip():
                    conn.execute(stmt)
            ver = conn.execute("SELECT v FROM meta WHERE k='schema'").fetchone()
            if ver is None:
                conn.execute("INSERT INTO meta VALUES ('schema', ?)", (_SCHEMA_VERSION,))
            elif ver[0] != _SCHEMA_VERSION:
                raise FrontierError(f"{path}: frontier schema {ver[0]}, need {_SCHEMA_VERSION}")
            # in flight: the URI its queue is fetching, and URIs released by
            # release() whose processing had not finished
            active = conn.execute(
                f"SELECT uri, qid FROM uris WHERE state = {_IN_FLIGHT:d}"
            ).fetchall()
            put_back = [str(r[0]) for r in active]
            per_queue: dict[int, int] = {}
            for _, qid in active:
                per_queue[qid] = per_queue.get(qid, 0) + 1
            conn.execute(f"UPDATE uris SET state = {_QUEUED:d} WHERE state = {_IN_FLIGHT:d}")
            recovered = len(active)
            conn.executemany(
                "UPDATE queues SET queued = queued + ? WHERE qid = ?",
                [(n, q) for q, n in per_queue.items()],
            )
            conn.execute("UPDATE queues SET inflight = NULL WHERE inflight IS NOT NULL")
            latest = clock() + config.horizon
            conn.execute("UPDATE queues SET due = ? WHERE due > ?", (latest, latest))
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            conn.close()
            raise
        frontier = cls(conn, config, clock)
        frontier.recovered = recovered
        frontier.recovered_uris = tuple(put_back)
        return frontier

    # -- lifecycle

    def close(self) -> None:
        """Checkpoint the WAL into the database and close it. Idempotent. A checkpoint
        that cannot be made (a full disk) is skipped: the WAL stays beside the database
        and SQLite replays it at the next open, so nothing is lost."""
        if self._db is None:
            return
        try:
            self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        except sqlite3.OperationalError as e:
            log.warning("frontier: WAL checkpoint skipped (%s); it is replayed at the next "
                        "open", e)  # fmt: skip
        finally:
            self._db.close()
            self._db = None  # type: ignore[assignment]

    def __enter__(self) -> Frontier:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def in_flight(self) -> int:
        """Number of URIs handed out by :meth:`next_ready` and not yet finished."""
        return self._in_flight

    @property
    def quota_reached(self) -> bool:
        """True once a crawl quota (``max_uris`` / ``max_bytes``) is reached."""
        c = self.config
        ok = self._succeeded + self._pending_ok
        return (c.max_uris is not None and ok >= c.max_uris) or (
            c.max_bytes is not None and self._bytes + self._pending_bytes >= c.max_bytes
        )

    # -- adding

    def _qid(self, key: str) -> tuple[int, bool]:
        """(queue id, blocked) for ``key``, creating the queue; inside a transaction."""
        row = self._db.execute("SELECT qid, blocked FROM queues WHERE key = ?", (key,)).fetchone()
        if row is None:  # a new queue joins the ready line now, behind those already due
            self._seq += 1
            cur = self._db.execute(
                "INSERT INTO queues (key, due, seq) VALUES (?, ?, ?)",
                (key, self._clock(), self._seq),
            )
            return int(cur.lastrowid or 0), False
        return row[0], bool(row[1])

    def _add(self, curi: CrawlURI, force: bool, counts: dict[int, int],
             blocked_out: list[CrawlURI] | None = None) -> bool:  # fmt: skip
        qid = self._qids.get(curi.key)
        if qid is None:
            qid, blocked = self._qid(curi.key)
            if blocked:
                if blocked_out is not None:
                    self._add_blocked(qid, curi, blocked_out)
                return False
            if len(self._qids) > 50_000:
                self._qids.clear()
            self._qids[curi.key] = qid
        fp = fingerprint(curi.uri)
        values = (
            qid,
            curi.priority,
            curi.retries,
            curi.uri,
            curi.hops,
            curi.via,
            int(curi.seed),
            curi.source,
        )
        cur = self._db.execute(
            "INSERT OR IGNORE INTO uris (qid, priority, retries, uri, hops, via, seed, source,"
            " fp, state) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 0)",
            (*values, fp),
        )
        if cur.rowcount == 0:
            if not force:
                return False
            row = self._db.execute("SELECT id, state, qid FROM uris WHERE fp = ?", (fp,)).fetchone()
            if row[1] != _FINISHED:
                return False
            self._db.execute(
                "UPDATE uris SET qid=?, priority=?, retries=?, uri=?, hops=?, via=?, seed=?,"
                f" source=?, state={_QUEUED:d}, status=NULL WHERE id=?",
                (*values, row[0]),
            )
            self._db.execute("UPDATE queues SET finished = finished - 1 WHERE qid = ?", (row[2],))
        counts[qid] = counts.get(qid, 0) + 1
        return True

    def _add_blocked(self, qid: int, curi: CrawlURI, out: list[CrawlURI]) -> None:
        """Record ``curi``, new to a queue blocked by a quota, as finished with
        :data:`S_BLOCKED_BY_QUOTA` (so it is seen, and logged once by the caller)."""
        cur = self._db.execute(
            "INSERT OR IGNORE INTO uris (qid, priority, retries, uri, hops, via, seed, source,"
            f" fp, state, status) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, {_FINISHED:d}, ?)",
            (qid, curi.priority, curi.retries, curi.uri, curi.hops, curi.via, int(curi.seed),
             curi.source, fingerprint(curi.uri), S_BLOCKED_BY_QUOTA),
        )  # fmt: skip
        if cur.rowcount:
            self._db.execute(
                "UPDATE queues SET finished = finished + 1, blocked_uris = blocked_uris + 1"
                " WHERE qid = ?", (qid,),
            )  # fmt: skip
            out.append(curi)

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[None]:
        """One write transaction (``BEGIN IMMEDIATE``): committed when the block ends,
        rolled back when it raises (whatever it raised, KeyboardInterrupt included)."""
        db = self._db
        db.execute("BEGIN IMMEDIATE")
        try:
            yield
            db.execute("COMMIT")
        except BaseException:
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise

    def _flush_counts(self, counts: dict[int, int]) -> None:
        self._db.executemany(
            "UPDATE queues SET queued = queued + ? WHERE qid = ?",
            [(n, q) for q, n in counts.items()],
        )

    def add(self, curi: CrawlURI, *, force: bool = False) -> bool:
        """Queue ``curi`` at the tail of its queue (by priority).

        Returns False, queuing nothing, when the URI was seen before (queued, in flight or
        finished, compared on :func:`fingerprint`) or its queue is blocked by a quota.
        ``force=True`` queues a *finished* URI again (recrawl, RSS rounds); a queued or
        in-flight one is still not doubled.
        """
        return self.add_many((curi,), force=force) == 1

    def add_many(self, curis: Iterable[CrawlURI], *, force: bool = False,
                 blocked: list[CrawlURI] | None = None) -> int:  # fmt: skip
        """:meth:`add` each URI, all in one transaction; returns how many were queued.
        Much faster than single adds (one commit). Duplicates within ``curis`` count once.

        Args:
            blocked: when given, URIs not seen before whose queue is blocked by a quota
                are recorded as finished with :data:`S_BLOCKED_BY_QUOTA` and appended
                here (Heritrix logs each such URI with -5003); without it they are
                refused silently.
        """
        counts: dict[int, int] = {}
        added = 0
        try:
            with self._transaction():
                for curi in curis:
                    added += self._add(curi, force, counts, blocked)
                self._flush_counts(counts)
        except BaseException:
            self._qids.clear()  # queue ids learnt in the rolled-back transaction
            raise
        return added

    # -- scheduling

    def next_ready(self, now: float | None = None) -> CrawlURI | None:
        """The next URI to fetch, marked in flight, or ``None`` when no queue is ready
        at ``now`` (wall-clock seconds, default the frontier clock) or a crawl quota is
        reached. The URI comes back with its queue's key, retries and priority; pass it
        to :meth:`finished` when the fetch is over.
        """
        if self.quota_reached:
            return None
        t = self._clock() if now is None else now
        db = self._db
        # one connection, one process: what this read finds cannot change before BEGIN
        q = db.execute(
            f"SELECT qid, key FROM queues WHERE {_READY} AND due <= ? ORDER BY due, seq LIMIT 1",
            (t,),
        ).fetchone()
        if q is None:
            return None
        qid, key = q
        with self._transaction():
            u = db.execute(
                "SELECT id, uri, hops, via, seed, source, retries, priority FROM uris "
                f"WHERE qid = ? AND state = {_QUEUED:d} ORDER BY priority, id LIMIT 1",
                (qid,),
            ).fetchone()
            if u is None:  # counter out of step: repair (committed), then look again
                db.execute("UPDATE queues SET queued = 0 WHERE qid = ?", (qid,))
            else:
                db.execute(f"UPDATE uris SET state = {_IN_FLIGHT:d} WHERE id = ?", (u[0],))
                db.execute(
                    "UPDATE queues SET inflight = ?, queued = queued - 1 WHERE qid = ?",
                    (u[0], qid),
                )
        if u is None:
            return self.next_ready(t)
        self._in_flight += 1
        return CrawlURI(
            u[1],
            hops=u[2],
            via=u[3],
            seed=bool(u[4]),
            source=u[5],
            key=key,
            retries=u[6],
            priority=u[7],
        )

    def next_wake(self, now: float | None = None) -> float | None:
        """When the next queue becomes ready (wall-clock seconds; ``<= now`` means a
        queue is ready already), or ``None`` when no queued URI can become ready: all are
        behind in-flight URIs (see :attr:`in_flight`), or none is left, or a crawl quota
        is reached. ``now`` is accepted for symmetry and not needed.
        """
        del now
        if self.quota_reached:
            return None
        row = self._db.execute(
            f"SELECT due FROM queues WHERE {_READY} ORDER BY due, seq LIMIT 1"
        ).fetchone()
        return None if row is None else float(row[0])

    def release(
        self,
        curi: CrawlURI,
        status: int,
        duration_s: float,
        *,
        crawl_delay: float | None = None,
        size: int = 0,
        now: float | None = None,
    ) -> bool:
        """Free the queue of ``curi`` for its next URI once the *fetch* of ``curi`` is
        over, while ``curi`` itself stays in flight until :meth:`finished` (its links
        are still being extracted). Still at most one fetch per queue is in progress.

        Only a final outcome without politeness delay can be released: returns False,
        changing nothing, when the fetch would be retried (``status`` 429, 5xx, a
        retried network failure), when a per-queue quota is configured (it is judged at
        :meth:`finished`), or when :func:`politeness_delay` (``duration_s``,
        ``crawl_delay`` as in :meth:`finished`) is above 0: a polite queue keeps
        Heritrix's rule, its delay counts from the end of the URI's processing. The
        caller then simply calls :meth:`finished` later as usual.

        Crashes: the URI is still in flight in the database (``state`` 1), so a
        ``kill -9`` before :meth:`finished` puts it back in its queue, as any URI in
        flight. A crawl quota counts released URIs as if finished.

        Raises:
            FrontierError: ``curi`` is not the URI in flight in its queue.
        """
        c = self.config.for_queue(curi.key)
        if is_backoff_status(status) or curi.uri in self._released:
            return False
        if disposition(status, curi.retries, c) is Outcome.RETRY:
            return False
        if c.max_uris_per_queue is not None or c.max_bytes_per_queue is not None:
            return False
        t = self._clock() if now is None else now
        db = self._db
        with self._transaction():
            qid, _, known_cd, _, _ = self._in_flight_queue(curi, crawl_delay)
            delay = politeness_delay(duration_s, c, known_cd)
            if delay > 0:  # a polite queue waits from the end of processing, as before
                return False
            due = t + delay
            self._seq += 1
            db.execute(
                "UPDATE queues SET inflight = NULL, due = ?, seq = ?, errors = 0,"
                " crawl_delay = ? WHERE qid = ?",
                (due, self._seq, known_cd, qid),
            )
        ok = 1 if status > 0 else 0
        self._released[curi.uri] = (ok, size)
        self._pending_ok += ok
        self._pending_bytes += size
        return True

    def _finish_released(self, curi: CrawlURI, status: int, t: float) -> Disposition:
        """:meth:`finished` for a URI :meth:`release` freed its queue from."""
        _, size = self._released[curi.uri]
        ok = self._finish_row(curi.uri, _IN_FLIGHT, status, size)
        if ok is None:
            raise FrontierError(f"not in flight: {curi.uri}")
        pok, _ = self._released.pop(curi.uri)
        self._pending_ok -= pok
        self._pending_bytes -= size
        self._in_flight = max(0, self._in_flight - 1)
        self._succeeded += ok
        self._bytes += size
        return Disposition(Outcome.FINISHED, status, 0.0, t, False, 0)

    def finished(
        self,
        curi: CrawlURI,
        status: int,
        duration_s: float,
        *,
        crawl_delay: float | None = None,
        retry_after: float | str | None = None,
        size: int = 0,
        now: float | None = None,
    ) -> Disposition:
        """Report the end of the fetch of ``curi`` (as returned by :meth:`next_ready`).

        For a URI whose queue :meth:`release` already freed, this only marks it
        finished and counts it (the queue's delay was set by :meth:`release`; the
        other arguments but ``status`` are ignored).

        Args:
            status: HTTP status, or a negative Heritrix fetch status code
                (:mod:`webark.fetch.codes`).
            duration_s: fetch duration in seconds (for the politeness delay).
            crawl_delay: robots.txt Crawl-delay of the host in seconds, if known; it is
                remembered for the queue, so later calls may omit it.
            retry_after: the Retry-After header (seconds or HTTP-date) of a 429/5xx.
            size: bytes fetched (for byte quotas and stats).
            now: when the fetch ended (wall clock, default the frontier clock).

        Returns:
            A :class:`Disposition`: whether the URI is finished or will be retried, and
            how long its queue now waits.

        Raises:
            FrontierError: ``curi`` is not the URI in flight in its queue.
        """
        t = self._clock() if now is None else now
        if curi.uri in self._released:
            return self._finish_released(curi, status, t)
        c = self.config.for_queue(curi.key)
        db = self._db
        with self._transaction():
            qid, uid, known_cd, errors, retries = self._in_flight_queue(curi, crawl_delay)
            delay = politeness_delay(duration_s, c, known_cd)
            snoozed = False
            retry = disposition(status, retries, c) is Outcome.RETRY
            if is_backoff_status(status):
                errors += 1
                wait = backoff_delay(errors, c)
                ra = parse_retry_after(retry_after, t)
                if ra is not None:
                    wait = max(wait, min(ra, c.retry_after_cap))
                delay, snoozed = max(delay, wait), True
            else:
                errors = 0
                if retry:
                    delay, snoozed = max(delay, c.retry_delay), True
            due = t + delay
            self._seq += 1
            ok = 0
            if retry:
                db.execute(
                    f"UPDATE uris SET state = {_QUEUED:d}, retries = retries + 1, status = ?"
                    " WHERE id = ?",
                    (status, uid),
                )
                db.execute(
                    "UPDATE queues SET inflight = NULL, queued = queued + 1, due = ?, seq = ?,"
                    " errors = ?, crawl_delay = ?, bytes = bytes + ? WHERE qid = ?",
                    (due, self._seq, errors, known_cd, size, qid),
                )
            else:
                ok = 1 if status > 0 else 0
                db.execute(f"UPDATE uris SET state = {_FINISHED:d}, status = ? WHERE id = ?",
                           (status, uid))  # fmt: skip
                db.execute(
                    "UPDATE queues SET inflight = NULL, due = ?, seq = ?, errors = ?,"
                    " crawl_delay = ?, bytes = bytes + ?, finished = finished + 1,"
                    " succeeded = succeeded + ? WHERE qid = ?",
                    (due, self._seq, errors, known_cd, size, ok, qid),
                )
            blocked = self._enforce_queue_quota(qid, curi.key)
        self._in_flight = max(0, self._in_flight - 1)
        self._succeeded += ok
        self._bytes += size
        return Disposition(
            Outcome.RETRY if retry else Outcome.FINISHED, status, delay, due, snoozed,
            len(blocked), blocked,
        )  # fmt: skip

    def _in_flight_queue(self, curi: CrawlURI, crawl_delay: float | None
                         ) -> tuple[int, int, float | None, int, int]:  # fmt: skip
        """``(qid, uri row id, Crawl-delay, queue errors, URI retries)`` of the queue
        ``curi`` is in flight in (the Crawl-delay given, else the one the queue knows),
        inside a transaction.

        Raises:
            FrontierError: ``curi`` is not the URI in flight in its queue.
        """
        q = self._db.execute(
            "SELECT q.qid, q.inflight, q.crawl_delay, u.uri, q.errors, u.retries"
            " FROM queues AS q LEFT JOIN uris AS u ON u.id = q.inflight WHERE q.key = ?",
            (curi.key,),
        ).fetchone()
        if q is None or q[3] != curi.uri:
            raise FrontierError(f"not in flight: {curi.uri}")
        return q[0], q[1], q[2] if crawl_delay is None else crawl_delay, q[4], q[5]

    def requeue(self, curi: CrawlURI, delay: float, *, crawl_delay: float | None = None,
                now: float | None = None) -> float:
        """Put ``curi`` (in flight, as returned by :meth:`next_ready`) back at the head
        of its queue without fetching it, its retries unchanged and no status set; the
        queue is ready again ``delay`` seconds from ``now``. For a URI whose robots.txt
        prerequisite was just fetched: the politeness delay between the two is waited in
        the frontier rather than by a worker holding the queue (Heritrix likewise puts a
        URI behind its prerequisite back into its queue). Returns the due time.

        Raises:
            FrontierError: ``curi`` is not the URI in flight in its queue.
        """
        t = self._clock() if now is None else now
        db = self._db
        with self._transaction():
            qid, uid, known_cd, _, _ = self._in_flight_queue(curi, crawl_delay)
            due = t + max(0.0, delay)
            self._seq += 1
            db.execute(f"UPDATE uris SET state = {_QUEUED:d} WHERE id = ?", (uid,))
            db.execute(
                "UPDATE queues SET inflight = NULL, queued = queued + 1, due = ?, seq = ?,"
                " crawl_delay = ? WHERE qid = ?",
                (due, self._seq, known_cd, qid),
            )
        self._in_flight = max(0, self._in_flight - 1)
        return due

    def settle(self, uri: str, status: int, *, size: int = 0) -> bool:
        """Finish a *queued* URI without fetching it: one that :meth:`open` put back
        (:attr:`recovered_uris`) although its fetch had ended, because the crash came
        after the caller recorded the end (its crawl.log line) and before
        :meth:`finished`. Counts like :meth:`finished` (finished, succeeded when
        ``status`` > 0, bytes) but leaves the queue's due time and back-off as they are.

        Returns False, changing nothing, when ``uri`` is not queued.
        """
        ok = self._finish_row(uri, _QUEUED, status, size)
        if ok is None:
            return False
        self._succeeded += ok
        self._bytes += size
        return True

    def _finish_row(self, uri: str, state: int, status: int, size: int) -> int | None:
        """Mark ``uri`` (now in ``state``: queued or in flight) finished with ``status``
        and count it in its queue, in one transaction. Returns 1 if it succeeded
        (``status`` > 0), 0 if not, None when ``uri`` is not in that state (nothing
        changed). The queue's in-flight slot and due time are left alone."""
        db = self._db
        with self._transaction():
            row = db.execute(
                "SELECT id, qid FROM uris WHERE fp = ? AND state = ?", (fingerprint(uri), state)
            ).fetchone()
            if row is None:
                return None
            ok = 1 if status > 0 else 0
            db.execute("UPDATE uris SET state = ?, status = ? WHERE id = ?",
                       (_FINISHED, status, row[0]))  # fmt: skip
            db.execute(
                "UPDATE queues SET queued = queued - ?, finished = finished + 1,"
                " succeeded = succeeded + ?, bytes = bytes + ? WHERE qid = ?",
                (1 if state == _QUEUED else 0, ok, size, row[1]),
            )
        return ok

    def _enforce_queue_quota(self, qid: int, key: str) -> tuple[CrawlURI, ...]:
        """Block the queue ``qid`` when it is over a queue quota: its queued URIs are
        finished with :data:`S_BLOCKED_BY_QUOTA` (returned, for their crawl.log lines)
        and later adds to it are refused (:meth:`add_many`'s ``blocked``)."""
        c = self.config.for_queue(key)
        if c.max_uris_per_queue is None and c.max_bytes_per_queue is None:
            return ()
        succeeded, nbytes = self._db.execute(
            "SELECT succeeded, bytes FROM queues WHERE qid = ?", (qid,)
        ).fetchone()
        over = (c.max_uris_per_queue is not None and succeeded >= c.max_uris_per_queue) or (
            c.max_bytes_per_queue is not None and nbytes >= c.max_bytes_per_queue
        )
        if not over:
            return ()
        self._qids.pop(key, None)  # the next add looks the queue up and sees it blocked
        rows = self._db.execute(
            "SELECT uri, hops, via, seed, source, retries, priority FROM uris"
            f" WHERE qid = ? AND state = {_QUEUED:d} ORDER BY priority, id", (qid,)
        ).fetchall()
        self._db.execute(
            f"UPDATE uris SET state = {_FINISHED:d}, status = ?"
            f" WHERE qid = ? AND state = {_QUEUED:d}",
            (S_BLOCKED_BY_QUOTA, qid),
        )
        n = len(rows)
        self._db.execute(
            "UPDATE queues SET blocked = 1, queued = 0, finished = finished + ?,"
            " blocked_uris = blocked_uris + ? WHERE qid = ?",
            (n, n, qid),
        )
        return tuple(CrawlURI(r[0], hops=r[1], via=r[2], seed=bool(r[3]), source=r[4], key=key,
                              retries=r[5], priority=r[6]) for r in rows)  # fmt: skip

    # -- changes by the operator (webark.crawl.live)

    def purge(self, match: Callable[[CrawlURI], bool], status: int,
              *, batch: int = 10_000) -> tuple[CrawlURI, ...]:  # fmt: skip
        """Finish every *queued* URI for which ``match`` is true with ``status``, without
        fetching it (Heritrix ``deleteURIs``, and the out-of-scope recheck of queued URIs
        after a reject rule is added). URIs in flight are left to finish. The queued
        URIs are read ``batch`` at a time (memory stays bounded by the matches), and all
        matches are finished in one transaction: a crash keeps all or none.

        Returns:
            The URIs finished (each needs its crawl.log line), in queue order.
        """
        db = self._db
        hits: list[tuple[int, int, CrawlURI]] = []
        last = -1
        while True:
            rows = db.execute(
                "SELECT u.id, u.qid, q.key, u.uri, u.hops, u.via, u.seed, u.source, u.retries,"
                " u.priority FROM uris AS u JOIN queues AS q ON q.qid = u.qid"
                f" WHERE u.state = {_QUEUED:d} AND u.id > ? ORDER BY u.id LIMIT ?",
                (last, batch),
            ).fetchall()
            if not rows:
                break
            last = rows[-1][0]
            for uid, qid, key, uri, hops, via, seed, source, retries, prio in rows:
                c = CrawlURI(uri, hops=hops, via=via, seed=bool(seed), source=source, key=key,
                             retries=retries, priority=prio)  # fmt: skip
                if match(c):
                    hits.append((uid, qid, c))
        if not hits:
            return ()
        per_queue: dict[int, int] = {}
        for _, qid, _ in hits:
            per_queue[qid] = per_queue.get(qid, 0) + 1
        with self._transaction():
            db.executemany(
                f"UPDATE uris SET state = {_FINISHED:d}, status = ? WHERE id = ? AND state = "
                f"{_QUEUED:d}", [(status, uid) for uid, _, _ in hits],
            )  # fmt: skip
            db.executemany(
                "UPDATE queues SET queued = MAX(queued - ?, 0), finished = finished + ?"
                " WHERE qid = ?", [(n, n, qid) for qid, n in per_queue.items()],
            )  # fmt: skip
        return tuple(c for _, _, c in hits)

    def promote(self, key: str, now: float | None = None) -> bool:
        """Put the queue ``key`` at the front of the ready line when its due time has
        come (a seed added while the crawl runs is fetched next; a queue still waiting
        for its politeness delay keeps it). Returns True when it was moved."""
        t = self._clock() if now is None else now
        with self._transaction():
            first = self._db.execute(
                f"SELECT MIN(due), MIN(seq) FROM queues WHERE {_READY} AND due <= ?", (t,)
            ).fetchone()
            due = t if first[0] is None else min(float(first[0]), t)
            seq = 0 if first[1] is None else int(first[1]) - 1
            cur = self._db.execute(
                "UPDATE queues SET due = MIN(due, ?), seq = ? WHERE key = ? AND due <= ?",
                (due, seq, key, t),
            )
        return cur.rowcount > 0

    def requota(self, key: str) -> tuple[CrawlURI, ...]:
        """Judge the queue ``key`` against its quotas again after :attr:`config` changed:
        over them, it is blocked and its queued URIs are finished with
        :data:`S_BLOCKED_BY_QUOTA` (returned, for their crawl.log lines); under them, a
        blocked queue takes URIs again (those it refused stay finished)."""
        row = self._db.execute("SELECT qid FROM queues WHERE key = ?", (key,)).fetchone()
        if row is None:
            return ()
        with self._transaction():
            self._db.execute("UPDATE queues SET blocked = 0 WHERE qid = ?", (row[0],))
            blocked = self._enforce_queue_quota(row[0], key)
        self._qids.pop(key, None)
        return blocked

    # -- reports

    def stats(self, now: float | None = None, *, top: int = 20) -> FrontierStats:
        """A snapshot of the frontier (counts over all queues; ``top`` largest queues).
        Costs a scan of the queue table: call it for reports, not per fetch."""
        t = self._clock() if now is None else now
        db = self._db
        row = db.execute(
            "SELECT COUNT(*), COALESCE(SUM(queued), 0), COALESCE(SUM(finished), 0),"
            " COALESCE(SUM(succeeded), 0), COALESCE(SUM(blocked_uris), 0),"
            " COALESCE(SUM(bytes), 0), COALESCE(SUM(inflight IS NOT NULL), 0),"
            " COALESCE(SUM(blocked), 0),"
            f" COALESCE(SUM(({_READY}) AND due <= ?), 0),"
            f" COALESCE(SUM(({_READY}) AND due > ?), 0) FROM queues",
            (t, t),
        ).fetchone()
        nq, queued, fin, ok, blocked_uris, nbytes, infl, nblocked, ready, snoozed = row
        infl_uris = infl + len(self._released)
        tops = tuple(
            QueueStats(r[0], r[1], r[2] is not None, r[3], r[4], r[5], r[6], r[7], bool(r[8]))
            for r in db.execute(
                "SELECT key, queued, inflight, finished, succeeded, bytes, due, errors, blocked"
                " FROM queues ORDER BY queued DESC, qid LIMIT ?",
                (top,),
            )
        )
        return FrontierStats(
            queued=queued,
            in_flight=infl_uris,
            finished=fin,
            succeeded=ok,
            blocked_by_quota=blocked_uris,
            bytes=nbytes,
            queues=nq,
            ready_queues=ready,
            snoozed_queues=snoozed,
            in_flight_queues=infl,
            blocked_queues=nblocked,
            quota_reached=self.quota_reached,
            top_queues=tops,
        )

    def unfinished(self, source: str) -> int:
        """How many URIs with source tag ``source`` are queued or in flight (continuous
        crawling: a site's round is over when none is left). Scans the queued and in
        flight URIs (partial indexes): cheap while the frontier holds few, as a
        continuous crawl's does."""
        total = 0
        for state in (_QUEUED, _IN_FLIGHT):  # literal states: the partial indexes apply
            sql = f"SELECT COUNT(*) FROM uris WHERE state = {state:d} AND source = ?"
            total += self._db.execute(sql, (source,)).fetchone()[0]
        return total

    def status_of(self, uri: str) -> tuple[str, int | None] | None:
        """``("queued" | "in flight" | "finished", last status)`` of ``uri`` (looked up by
        :func:`fingerprint`), or ``None`` when it was never added."""
        row = self._db.execute(
            "SELECT state, status FROM uris WHERE fp = ?", (fingerprint(uri),)
        ).fetchone()
        if row is None:
            return None
        return UriState(row[0]).name.lower().replace("_", " "), row[1]
