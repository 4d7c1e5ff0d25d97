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

Modules
-------
:class:`Frontier` is put together from one base and three parts, each in its own module:
:mod:`webark.crawl.frontier_store` (the SQLite schema, URI states, fingerprints, opening
with crash recovery), :mod:`webark.crawl.work_queues` (queue state, adds, scheduling,
queue quotas), :mod:`webark.crawl.frontier_in_flight` (the end of a fetch, early release,
requeue, settle), :mod:`webark.crawl.frontier_operator` (purge, promote, requota) and
:mod:`webark.crawl.frontier_reports` (stats, unfinished, status_of). Import the names
from here.

Not thread-safe: use one :class:`Frontier` from one thread (the crawler's asyncio loop),
one process per database.
"""

from __future__ import annotations

from pathlib import Path

from webark.crawl.frontier_in_flight import Disposition, InFlightAccounting
from webark.crawl.frontier_operator import OperatorChanges
from webark.crawl.frontier_reports import FrontierReports, FrontierStats, QueueStats
from webark.crawl.frontier_store import FrontierError, UriState, fingerprint, open_store
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


class Frontier(InFlightAccounting, OperatorChanges, FrontierReports):
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
        conn, put_back = open_store(path, config, clock)
        frontier = cls(conn, config, clock)
        frontier.recovered = len(put_back)
        frontier.recovered_uris = put_back
        return frontier

    def __enter__(self) -> Frontier:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
