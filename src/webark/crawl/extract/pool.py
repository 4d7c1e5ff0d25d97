"""Link extraction in worker processes, so that a crawl's fetches, WARC writes and
frontier work (one process, one asyncio loop) overlap with parsing on other cores.

:class:`ExtractPool` runs :func:`webark.crawl.extract.extract_links` in a
:class:`concurrent.futures.ProcessPoolExecutor` (``fork`` start method: the workers
start in milliseconds with every extraction module already imported). A platform
without ``fork`` or a pool that cannot start extracts in the calling process.

A hostile document must not stop the crawl, so the document that broke a worker is
never re-run in the crawler's own process (its event loop would block for as long as
the worker was stuck, or die of the same crash):

* a worker that does not answer within ``timeout`` seconds (e.g. 100,000 nested
  ``<div>``: lexbor's tree builder is quadratic in the depth, 34 s for 1 MB) is killed,
  the pool is started again and the document gets no links (logged as a warning);
* a worker that dies (killed, out of memory, a crash in the parser) is replaced the
  same way; the document is tried once more in the new pool, then gets no links.

Pools started again use the ``spawn`` method (the crawl runs threads by then, and
``fork`` copies only the calling thread).

The workers ignore SIGINT (Ctrl-C stops the crawl in the parent, which then shuts the
pool down), take SIGTERM's default action, and on Linux are killed when the parent dies
(``prctl(PR_SET_PDEATHSIG, SIGKILL)``), so a ``kill -9`` of the crawler leaves no
worker behind.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import ctypes
import logging
import multiprocessing
import os
import signal
import sys
from collections.abc import Iterable
from concurrent.futures.process import BrokenProcessPool

from webark.crawl.extract import MAX_OUTLINKS, Link, Outlinks, extract_links

__all__ = ["ExtractPool", "default_processes"]

log = logging.getLogger(__name__)

_PR_SET_PDEATHSIG = 1


def default_processes() -> int:
    """Worker processes used by default: 2, or 1 on a single CPU. Measured on the
    python-docs crawl (bench/crawl.py, 2 CPUs): the crawl loop keeps ~40 % of the CPU
    work, extraction ~60 %, so two workers let the three processes share both cores
    (more were not measured). On one CPU a worker only adds hand-over costs, but it is
    kept for isolation: lexbor's tree builder is quadratic on some markup (100,000
    nested ``<div>``: 34 s; 50,000 distinct ``<font>``: 26 s; ``<select>`` with 100,000
    ``<option>``: 27 s; hours for 20 MiB of it), and only a worker can be killed when a
    document takes too long (``timeout``); in-process (0) the crawl would wait."""
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return 1 if (cpus or 1) < 2 else 2


def _init_worker() -> None:
    """Worker set-up: signals (see the module docstring) and parent-death kill."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    with contextlib.suppress(ValueError):  # the parent's asyncio wakeup fd is not ours
        signal.set_wakeup_fd(-1)
    if sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        except (OSError, AttributeError):
            pass
        if os.getppid() == 1:  # the parent died before prctl
            os._exit(0)


def _extract(
    url: str, mime: str | None, content: bytes, headers: list[tuple[str, str]], max_links: int
) -> tuple[list[tuple[str, str, str]], int]:
    """:func:`extract_links` in a worker; links go back as plain tuples (cheaper to
    pickle than dataclasses), with the count of those dropped beyond ``max_links``."""
    links = extract_links(url, mime, content, headers, max_links=max_links)
    return [(lk.url, lk.hop, lk.context) for lk in links], links.dropped


class ExtractPool:
    """Link extraction in ``processes`` worker processes (see the module docstring).

    Args:
        processes: worker processes; 0 extracts in the calling process.
        timeout: seconds a worker may take for one document before it is killed and the
            document gets no links.

    Attributes:
        processes: worker processes in use (0: extraction is in-process).
        restarts: times the pool was started again after a stuck or dead worker.

    Create it before the crawl starts threads (``fork`` copies only the calling
    thread); :meth:`close` when done.
    """

    def __init__(self, processes: int, *, timeout: float = 60.0) -> None:
        self.timeout = timeout
        self._pool: concurrent.futures.ProcessPoolExecutor | None = None
        self.processes = 0
        self.restarts = 0
        self._wanted = processes
        if processes <= 0 or "fork" not in multiprocessing.get_all_start_methods():
            return
        self._pool = self._start("fork")
        self.processes = processes if self._pool is not None else 0

    def _start(self, method: str) -> concurrent.futures.ProcessPoolExecutor | None:
        """A pool of ``self._wanted`` workers started with ``method``, or None."""
        try:
            pool = concurrent.futures.ProcessPoolExecutor(
                self._wanted,
                mp_context=multiprocessing.get_context(method),
                initializer=_init_worker,
            )
            pool.submit(int).result(timeout=max(self.timeout, 30.0))  # start the workers now
        except Exception as e:  # no pool: extract in-process
            log.warning("link extraction stays in-process: %s", e)
            return None
        return pool

    def _restart(self) -> None:
        """Kill every worker of the current pool and start a new one (``spawn``); without
        one, extraction goes on in-process."""
        pool, self._pool = self._pool, None
        if pool is not None:
            _kill_workers(pool)
        self.restarts += 1
        self._pool = self._start("spawn")
        self.processes = self._wanted if self._pool is not None else 0

    async def extract(
        self,
        url: str,
        mime: str | None,
        content: bytes,
        headers: Iterable[tuple[str, str]],
        max_links: int = MAX_OUTLINKS,
    ) -> Outlinks:
        """The outlinks of one response, as :func:`extract_links` returns them (at most
        ``max_links``); none when the document stuck or killed the workers (see the
        module docstring).

        Raises:
            Exception: whatever :func:`extract_links` raises for this document.
        """
        hdrs = list(headers)
        for attempt in (1, 2):
            pool = self._pool
            if pool is None:
                break
            try:
                fut = asyncio.wrap_future(
                    pool.submit(_extract, url, mime, content, hdrs, max_links)
                )
                rows, dropped = await asyncio.wait_for(fut, self.timeout)
                out = Outlinks(Link(u, h, c) for u, h, c in rows)
                out.dropped = dropped
                return out
            except TimeoutError:
                log.warning(
                    "link extraction of %s took over %g s: worker killed, no links kept",
                    url, self.timeout,
                )  # fmt: skip
                if self._pool is pool:
                    self._restart()
                return Outlinks()
            except (BrokenProcessPool, OSError) as e:
                log.warning("link extraction of %s broke the worker pool (%r)", url, e)
                if self._pool is pool:
                    self._restart()
                if attempt == 2:
                    return Outlinks()
        return extract_links(url, mime, content, hdrs, max_links=max_links)

    def close(self) -> None:
        """Stop the workers (idempotent)."""
        pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)


def _kill_workers(pool: concurrent.futures.ProcessPoolExecutor) -> None:
    """Kill the worker processes of ``pool`` (a stuck worker ignores ``shutdown``) and
    shut it down. Uses the executor's process table (``_processes``, CPython 3.8-3.13;
    3.14 has ``kill_workers()``)."""
    procs = list((getattr(pool, "_processes", None) or {}).values())
    for proc in procs:
        with contextlib.suppress(Exception):
            proc.kill()
    pool.shutdown(wait=False, cancel_futures=True)
    for proc in procs:
        with contextlib.suppress(Exception):
            proc.join(5.0)
