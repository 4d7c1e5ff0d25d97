"""Link extraction in worker processes, so that a crawl's fetches, WARC writes and
frontier work (one process, one asyncio loop) overlap with parsing on other cores.

:class:`ExtractPool` runs :func:`webark.crawl.extract.extract_links` in a
:class:`concurrent.futures.ProcessPoolExecutor` (``fork`` start method: the workers
start in milliseconds with every extraction module already imported). Whatever goes
wrong in the pool (a worker killed, a worker that does not answer within
``timeout`` seconds, a platform without ``fork``) the call falls back to extracting in
the calling process, so a broken pool costs speed, never links.

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

from webark.crawl.extract import Link, extract_links

__all__ = ["ExtractPool", "default_processes"]

log = logging.getLogger(__name__)

_PR_SET_PDEATHSIG = 1


def default_processes() -> int:
    """Worker processes used by default: 0 (extract in-process) on a single CPU, where
    a pipeline only adds hand-over costs; else 2. Measured on the python-docs crawl
    (bench/crawl.py, 2 CPUs): the crawl loop keeps ~40 % of the CPU work, extraction
    ~60 %, so two workers let the three processes share both cores (more were not
    measured)."""
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return 0 if (cpus or 1) < 2 else 2


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
    url: str, mime: str | None, content: bytes, headers: list[tuple[str, str]]
) -> list[tuple[str, str, str]]:
    """:func:`extract_links` in a worker; links go back as plain tuples (cheaper to
    pickle than dataclasses)."""
    return [(lk.url, lk.hop, lk.context) for lk in extract_links(url, mime, content, headers)]


class ExtractPool:
    """Link extraction in ``processes`` worker processes (see the module docstring).

    Args:
        processes: worker processes; 0 extracts in the calling process.
        timeout: seconds to wait for a worker before extracting in-process instead.

    Create it before the crawl starts threads (``fork`` copies only the calling
    thread); :meth:`close` when done.
    """

    def __init__(self, processes: int, *, timeout: float = 60.0) -> None:
        self.timeout = timeout
        self._pool: concurrent.futures.ProcessPoolExecutor | None = None
        self.processes = 0
        if processes <= 0 or "fork" not in multiprocessing.get_all_start_methods():
            return
        try:
            pool = concurrent.futures.ProcessPoolExecutor(
                processes,
                mp_context=multiprocessing.get_context("fork"),
                initializer=_init_worker,
            )
            pool.submit(int).result(timeout=timeout)  # fork all workers now
        except Exception as e:  # no pool: extract in-process
            log.warning("link extraction stays in-process: %s", e)
            return
        self._pool = pool
        self.processes = processes

    async def extract(
        self,
        url: str,
        mime: str | None,
        content: bytes,
        headers: Iterable[tuple[str, str]],
    ) -> list[Link]:
        """The outlinks of one response, as :func:`extract_links` returns them.

        Raises:
            Exception: whatever :func:`extract_links` raises for this document.
        """
        pool = self._pool
        hdrs = list(headers)
        if pool is not None:
            try:
                fut = asyncio.wrap_future(pool.submit(_extract, url, mime, content, hdrs))
                rows = await asyncio.wait_for(fut, self.timeout)
                return [Link(u, h, c) for u, h, c in rows]
            except (TimeoutError, BrokenProcessPool, OSError) as e:
                log.warning("link extraction pool failed (%r); extracting in-process", e)
                self._pool = None
                self.processes = 0
                pool.shutdown(wait=False, cancel_futures=True)
        return extract_links(url, mime, content, hdrs)

    def close(self) -> None:
        """Stop the workers (idempotent)."""
        pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)
