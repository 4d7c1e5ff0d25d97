"""Changes by the operator to a running frontier (:mod:`webark.crawl.live`): purge queued
URIs (Heritrix ``deleteURIs``, reject rules), promote a queue (seeds first), judge a queue
again after its quota changed.
"""

from __future__ import annotations

from collections.abc import Callable

from webark.crawl.curi import CrawlURI
from webark.crawl.frontier_store import (
    FINISHED,
    QUEUED,
    READY,
)
from webark.crawl.work_queues import WorkQueues

__all__ = ["OperatorChanges"]


class OperatorChanges(WorkQueues):
    """Live operator changes. Part of :class:`webark.crawl.frontier.Frontier`."""

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
                f" WHERE u.state = {QUEUED:d} AND u.id > ? ORDER BY u.id LIMIT ?",
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
                f"UPDATE uris SET state = {FINISHED:d}, status = ? WHERE id = ? AND state = "
                f"{QUEUED:d}", [(status, uid) for uid, _, _ in hits],
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
                f"SELECT MIN(due), MIN(seq) FROM queues WHERE {READY} AND due <= ?", (t,)
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

