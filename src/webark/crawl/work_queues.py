"""The frontier's work queues: queue state, adding URIs (seen filter, queue quotas) and
scheduling (which ready queue serves next).

:class:`WorkQueues` is the base of :class:`webark.crawl.frontier.Frontier` (Heritrix's
``WorkQueueFrontier``): it holds the database connection, the clock and the in-memory
counters the other parts of the frontier share (:mod:`webark.crawl.frontier_in_flight`,
:mod:`webark.crawl.frontier_operator`, :mod:`webark.crawl.frontier_reports`).
"""

from __future__ import annotations

import contextlib
import logging
import sqlite3
from collections.abc import Iterable, Iterator

from webark.crawl.curi import CrawlURI
from webark.crawl.frontier_store import (
    FINISHED,
    IN_FLIGHT,
    QUEUED,
    READY,
    fingerprint,
)
from webark.crawl.politeness import Clock, FrontierConfig
from webark.crawllog.status import S_BLOCKED_BY_QUOTA

log = logging.getLogger("webark.crawl.frontier")

__all__ = ["WorkQueues"]


class WorkQueues:
    """Queue state in the frontier database: adds and scheduling. Not used alone: see
    :class:`webark.crawl.frontier.Frontier`."""

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
            if row[1] != FINISHED:
                return False
            self._db.execute(
                "UPDATE uris SET qid=?, priority=?, retries=?, uri=?, hops=?, via=?, seed=?,"
                f" source=?, state={QUEUED:d}, status=NULL WHERE id=?",
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
            f" fp, state, status) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, {FINISHED:d}, ?)",
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
            f"SELECT qid, key FROM queues WHERE {READY} AND due <= ? ORDER BY due, seq LIMIT 1",
            (t,),
        ).fetchone()
        if q is None:
            return None
        qid, key = q
        with self._transaction():
            u = db.execute(
                "SELECT id, uri, hops, via, seed, source, retries, priority FROM uris "
                f"WHERE qid = ? AND state = {QUEUED:d} ORDER BY priority, id LIMIT 1",
                (qid,),
            ).fetchone()
            if u is None:  # counter out of step: repair (committed), then look again
                db.execute("UPDATE queues SET queued = 0 WHERE qid = ?", (qid,))
            else:
                db.execute(f"UPDATE uris SET state = {IN_FLIGHT:d} WHERE id = ?", (u[0],))
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
            f"SELECT due FROM queues WHERE {READY} ORDER BY due, seq LIMIT 1"
        ).fetchone()
        return None if row is None else float(row[0])

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
            f" WHERE qid = ? AND state = {QUEUED:d} ORDER BY priority, id", (qid,)
        ).fetchall()
        self._db.execute(
            f"UPDATE uris SET state = {FINISHED:d}, status = ?"
            f" WHERE qid = ? AND state = {QUEUED:d}",
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

