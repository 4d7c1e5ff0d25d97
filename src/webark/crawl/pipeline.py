"""Pipelining: fetches overlap link extraction, while URIs still finish in fetch order.

When a fetch got a final answer (not one the frontier would retry) and its queue has no
politeness delay to wait (``min_delay`` 0 and a delay factor × fetch time of 0, no
Crawl-delay), the worker calls :meth:`~webark.crawl.frontier.Frontier.release` right
after the fetch: the queue may serve its next URI at once, so the next fetch from the
host overlaps the extraction of this one (still one request at a time per host). A queue
with a delay is held until the URI is finished, as in Heritrix (its delay counts from
there); extraction still runs in the pool, so other hosts' work goes on meanwhile. The
disposition chain of each fetched URI then runs once its links are back, one URI at a
time and in the order the fetches ended (:class:`FinishOrder`); the URI stays *in
flight* in the frontier until then, so a ``kill -9`` before puts it back in its queue
("no URI lost, none fetched twice except those in flight" still holds, with up to
``2 × extract_processes`` more URIs in flight than workers).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from webark.capture import capture_line, is_disk_full
from webark.crawl.chains import CrawlChains
from webark.crawl.context import CrawlContext, capture_meta
from webark.crawl.error_logs import RuntimeErrorsLog
from webark.crawl.extract.pool import ExtractPool
from webark.crawl.processing import UriProcessing
from webark.crawl.stopping import FetchAborted
from webark.crawllog.status import S_RUNTIME_EXCEPTION

__all__ = ["FinishOrder", "UriPipeline"]

log = logging.getLogger(__name__)


class FinishOrder:
    """Tickets that let fetched URIs run their finishing steps (WARC write, dedup,
    outlinks, crawl.log, frontier) one at a time, in the order their fetches ended,
    while their link extractions run in parallel. A ticket abandoned (error,
    cancellation) through :meth:`done` never blocks the ones after it."""

    def __init__(self) -> None:
        self._next = 0
        self._turn = 0
        self._done: set[int] = set()
        self._waiters: dict[int, asyncio.Future[None]] = {}

    def ticket(self) -> int:
        """The next ticket (0, 1, 2 …)."""
        t = self._next
        self._next += 1
        return t

    async def turn(self, ticket: int) -> None:
        """Wait until every earlier ticket is :meth:`done`."""
        if self._turn == ticket:
            return
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters[ticket] = fut
        try:
            await fut
        finally:
            self._waiters.pop(ticket, None)

    def done(self, ticket: int) -> None:
        """``ticket`` is finished (or abandoned): let the next one go."""
        self._done.add(ticket)
        while self._turn in self._done:
            self._done.discard(self._turn)
            self._turn += 1
        fut = self._waiters.get(self._turn)
        if fut is not None and not fut.done():
            fut.set_result(None)


class UriPipeline:
    """Runs the chains for the URIs the workers take (module docstring).

    Args:
        ctx: the crawl.
        chains: its processor chains.
        pool: the extraction worker processes (a queue is released only when there are
            some).
        wake: called when a queue may have become ready (the controller wakes a worker).
        disk_full: called with a reason once a write failed for lack of space (the
            controller stops the crawl).
    """

    def __init__(self, ctx: CrawlContext, chains: CrawlChains, pool: ExtractPool,
                 wake: Callable[[], None], disk_full: Callable[[str], None]) -> None:  # fmt: skip
        self.ctx = ctx
        self.chains = chains
        self.pool = pool
        self._wake = wake
        self._disk_full = disk_full
        self._order = FinishOrder()
        self._slots = asyncio.Semaphore(max(1, 2 * pool.processes))
        self.pending: set[asyncio.Task[None]] = set()
        """Background tasks of released URIs (awaited before the crawl closes)."""
        self.runtime_errors = RuntimeErrorsLog(ctx.job.logs_dir / "runtime-errors.log")

    async def process(self, p: UriProcessing) -> None:
        """The chains for one URI; a released queue's URI completes in a background
        task. A bug is logged and the URI finished as -5 (:meth:`failed`); a fetch the
        stop aborted (:mod:`webark.crawl.stopping`) leaves the URI in flight, for
        ``--resume``."""
        try:
            await self._process(p)
        except asyncio.CancelledError:
            raise
        except FetchAborted:
            log.info("stopping: the fetch of %s was aborted; --resume fetches it", p.curi.uri)
        except Exception as e:  # a bug must not stop the crawl: log it as -5
            self.failed(p, e)

    async def _process(self, p: UriProcessing) -> None:
        chains, frontier = self.chains, self.ctx.frontier
        assert frontier is not None
        await chains.fetch.run(p)
        if p.requeue_after is not None:  # its robots.txt was fetched: wait in the queue
            frontier.requeue(p.curi, p.requeue_after, crawl_delay=p.crawl_delay)
            p.done = True
            return
        ex = p.exchange
        if ex is None:  # decided before any fetch: straight to the disposition chain
            await chains.disposition.run(p)
            return
        ticket = self._order.ticket()
        try:
            if ex.ok and self.pool.processes and not self.ctx.hold_queues:
                await self._slots.acquire()
                try:
                    released = frontier.release(
                        p.curi, p.status, ex.duration_ms / 1000.0, crawl_delay=p.crawl_delay,
                        size=ex.payload_size,
                    )  # fmt: skip
                except BaseException:
                    self._slots.release()
                    raise
                if released:
                    p.live = False  # the worker moves on; its slot no longer follows p
                    task = asyncio.create_task(self._complete_released(p, ticket))
                    self.pending.add(task)
                    task.add_done_callback(self.pending.discard)
                    return
                self._slots.release()
        except BaseException:
            self._order.done(ticket)  # never block the URIs fetched after this one
            raise
        await self._complete(p, ticket)

    async def _complete_released(self, p: UriProcessing, ticket: int) -> None:
        """The rest of the chains for a URI whose queue was released (background)."""
        try:
            await self._complete(p, ticket)
        except asyncio.CancelledError:
            raise
        except Exception as e:  # a bug must not stop the crawl: log it as -5
            self.failed(p, e)
        finally:
            self._slots.release()

    async def _complete(self, p: UriProcessing, ticket: int) -> None:
        """Extract chain, then — in turn (:class:`FinishOrder`) — the disposition chain.
        After a full disk nothing more is written: the URI stays in flight."""
        try:
            await self.chains.extract.run(p)
            await self._order.turn(ticket)
            if not self.ctx.disk_full:
                await self.chains.disposition.run(p)
        finally:
            self._order.done(ticket)
            self._wake()  # outlinks queued, the URI finished

    def failed(self, p: UriProcessing, e: Exception) -> None:
        """A bug while processing ``p``: log it as -5 and finish it. A full disk is no
        bug: the crawl stops (:func:`~webark.capture.is_disk_full`), the URI stays in
        flight, and ``--resume`` fetches it again once there is room."""
        if is_disk_full(e):
            if not self.ctx.disk_full:
                log.error("%s while writing the capture of %s", e, p.curi.uri)
            self.ctx.disk_full = True
            self._disk_full(str(e))
            return
        log.exception("error processing %s", p.curi.uri, exc_info=e)
        if p.done:
            return
        failed = UriProcessing(p.curi, p.worker, crawl_delay=p.crawl_delay)
        note = f"err={type(e).__name__}"
        failed.skip_to_disposition(S_RUNTIME_EXCEPTION, note)
        self.chains.finisher.finish(failed)
        line = capture_line(p.curi.uri, S_RUNTIME_EXCEPTION, capture_meta(p.curi, p.worker),
                            annotations=(note,))  # fmt: skip
        self.runtime_errors.write(line, e)  # Heritrix runtime-errors.log

    async def drain(self) -> None:
        """Wait for the background tasks of released URIs."""
        while self.pending:
            await asyncio.gather(*list(self.pending))

    async def cancel(self) -> None:
        """Cancel the background tasks (the crawl is aborted; their URIs stay in
        flight for ``--resume``)."""
        for task in list(self.pending):
            task.cancel()
        if self.pending:
            await asyncio.gather(*self.pending, return_exceptions=True)
