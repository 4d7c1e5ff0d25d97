"""The frontier's in-flight accounting: the end of a fetch (:meth:`~InFlightAccounting.finished`,
with politeness, back-off, retries and queue quotas), early release of a queue, requeue
behind a prerequisite, and settling URIs a crash put back.
"""

from __future__ import annotations

from dataclasses import dataclass

from webark.crawl.curi import CrawlURI
from webark.crawl.frontier_store import (
    FINISHED,
    IN_FLIGHT,
    QUEUED,
    FrontierError,
    fingerprint,
)
from webark.crawl.politeness import (
    Outcome,
    backoff_delay,
    disposition,
    is_backoff_status,
    parse_retry_after,
    politeness_delay,
)
from webark.crawl.work_queues import WorkQueues

__all__ = ["Disposition", "InFlightAccounting"]


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



class InFlightAccounting(WorkQueues):
    """URIs handed out by :meth:`~WorkQueues.next_ready` until they are finished. Part of
    :class:`webark.crawl.frontier.Frontier`."""

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
        ok = self._finish_row(curi.uri, IN_FLIGHT, status, size)
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
                    f"UPDATE uris SET state = {QUEUED:d}, retries = retries + 1, status = ?"
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
                db.execute(f"UPDATE uris SET state = {FINISHED:d}, status = ? WHERE id = ?",
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
            db.execute(f"UPDATE uris SET state = {QUEUED:d} WHERE id = ?", (uid,))
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
        ok = self._finish_row(uri, QUEUED, status, size)
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
                       (FINISHED, status, row[0]))  # fmt: skip
            db.execute(
                "UPDATE queues SET queued = queued - ?, finished = finished + 1,"
                " succeeded = succeeded + ?, bytes = bytes + ? WHERE qid = ?",
                (1 if state == QUEUED else 0, ok, size, row[1]),
            )
        return ok

