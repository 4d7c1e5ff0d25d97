"""The crawl's workers (Heritrix's toe threads, ``ToePool`` / ``ToeThread``, as asyncio
tasks): each takes a ready URI from the frontier and runs it through the
:class:`~webark.crawl.pipeline.UriPipeline`; an idle worker waits until it is woken
(one at a time, baton-style) or the next queue is due.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
from collections.abc import Callable

from webark.crawl.context import CrawlContext
from webark.crawl.pipeline import UriPipeline
from webark.crawl.processing import UriProcessing
from webark.crawl.resume import Sessions

__all__ = ["ToeThreads"]


class ToeThreads:
    """The workers of one crawl and the idle ones' wake-ups.

    Args:
        ctx: the crawl's context (frontier, stats, ``run_while_empty``).
        unpaused: cleared while the crawl is paused (no new URI is taken).
        stopping: true once the crawl is stopping (workers end).
        sessions: ``sessions.json``, saved soon after each URI.
    """

    def __init__(self, ctx: CrawlContext, unpaused: asyncio.Event,
                 stopping: Callable[[], bool], sessions: Sessions) -> None:  # fmt: skip
        self.ctx = ctx
        self.unpaused = unpaused
        self._stopping = stopping
        self._sessions = sessions
        self._idle_workers: collections.deque[asyncio.Future[None]] = collections.deque()
        self.pipeline: UriPipeline | None = None
        """Set once the crawl is open, before :meth:`worker` runs."""

    async def worker(self, n: int) -> None:
        """Worker ``n`` (1-based, its line in the threads report): take ready URIs
        until the crawl stops or nothing is queued or in flight."""
        frontier, pipeline = self.ctx.frontier, self.pipeline
        assert frontier is not None and pipeline is not None
        board = self.ctx.stats.board
        while not self._stopping():
            if not self.unpaused.is_set():  # paused: nothing new is taken
                await self.unpaused.wait()
                continue
            curi = frontier.next_ready()
            if curi is None:
                wake = frontier.next_wake()
                if wake is None and frontier.in_flight == 0:
                    if self.ctx.run_while_empty and not frontier.quota_reached:
                        await self.idle(1.0)  # continuous crawling adds URIs and wakes us
                        continue
                    self.wake_one()  # pass the news on: another worker ends too
                    return  # nothing queued that can become ready, nothing in flight
                wait = 0.02 if wake is None else min(max(wake - self.ctx.stats.now(), 0.002), 0.25)
                await self.idle(wait)
                continue
            self.wake_one()  # there may be more ready queues: let one more worker look
            board.begin(n, curi)
            await pipeline.process(UriProcessing(curi, n))
            board.end(n)
            self._sessions.save_soon()  # the processors' counts, should a kill come
            self.wake_one()  # its queue was finished or released

    async def idle(self, timeout: float) -> None:
        """Wait until :meth:`wake_one` picks this worker or ``timeout`` seconds pass
        (the time the next queue becomes due; a frontier change comes sooner)."""
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._idle_workers.append(fut)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(fut, timeout)

    def wake_one(self) -> None:
        """Wake one idle worker (if any) to look at the frontier again: called when a
        queue may have become ready (a URI finished, a queue released, outlinks added)
        and, baton-style, by a worker that found work. Waking one rather than all keeps
        ten idle workers from querying the frontier at every change."""
        waiters = self._idle_workers
        while waiters:
            fut = waiters.popleft()
            if not fut.done():
                fut.set_result(None)
                return

    def wake_all(self) -> None:
        """Wake every idle worker (the crawl is stopping)."""
        for fut in self._idle_workers:
            if not fut.done():
                fut.set_result(None)
