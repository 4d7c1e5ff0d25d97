"""A graceful stop with a grace period: in-flight fetches may finish for ``stop_grace``
seconds, then they are aborted (a slowloris host or an endless body would otherwise hold
the end of the crawl for the whole ``total_timeout``, 20 minutes by default).

An aborted fetch raises :class:`FetchAborted` out of the fetch chain; the pipeline
(:meth:`webark.crawl.pipeline.UriPipeline.process`) then leaves the URI *in flight* in
the frontier, with no crawl.log line and nothing written, so ``--resume`` fetches it
again, as after a ``kill -9`` or a full disk. Heritrix's ``terminate`` likewise
interrupts the toe threads and leaves their URIs in the frontier's checkpointed state.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import TypeVar

from webark.core.errors import WebarkError

__all__ = ["FetchAborted", "InFlightFetches"]

T = TypeVar("T")


class FetchAborted(WebarkError):
    """A fetch was aborted because the crawl is stopping and its grace period ended
    (the URI stays queued for ``--resume``)."""


class InFlightFetches:
    """The fetches (and robots.txt prerequisites) under way, which :meth:`abort` cancels.

    Every network wait of the fetch chain goes through :meth:`run`; after :meth:`abort`
    a new one is refused at once.
    """

    def __init__(self) -> None:
        self._tasks: set[asyncio.Task[object]] = set()
        self.aborted = False

    def __len__(self) -> int:
        return len(self._tasks)

    async def run(self, work: Awaitable[T]) -> T:
        """Await ``work`` (a fetch) unless the crawl aborts it.

        Raises:
            FetchAborted: :meth:`abort` was called before or while it ran.
        """
        if self.aborted:
            if asyncio.iscoroutine(work):
                work.close()
            raise FetchAborted("the crawl is stopping: fetch not started")
        task: asyncio.Task[T] = asyncio.ensure_future(work)
        self._tasks.add(task)
        try:
            return await task
        except asyncio.CancelledError:
            me = asyncio.current_task()
            if self.aborted and task.cancelled() and (me is None or not me.cancelling()):
                raise FetchAborted("the crawl is stopping: fetch aborted after the grace "
                                   "period") from None  # fmt: skip
            raise
        finally:
            self._tasks.discard(task)

    def abort(self) -> int:
        """Cancel every fetch under way and refuse new ones; returns how many were
        cancelled."""
        self.aborted = True
        tasks = [t for t in self._tasks if not t.done()]
        for t in tasks:
            t.cancel()
        return len(tasks)
