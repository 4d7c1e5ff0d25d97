"""Reports on the frontier: :class:`FrontierStats` (Heritrix's "frontier summary"), the
unfinished URIs of a source, the state of one URI.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from webark.crawl.frontier_store import (
    IN_FLIGHT,
    QUEUED,
    READY,
    UriState,
    fingerprint,
)
from webark.crawl.work_queues import WorkQueues

__all__ = ["FrontierReports", "FrontierStats", "QueueStats"]


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


class FrontierReports(WorkQueues):
    """Read-only views of the frontier. Part of :class:`webark.crawl.frontier.Frontier`."""

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
            f" COALESCE(SUM(({READY}) AND due <= ?), 0),"
            f" COALESCE(SUM(({READY}) AND due > ?), 0) FROM queues",
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
        for state in (QUEUED, IN_FLIGHT):  # literal states: the partial indexes apply
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
