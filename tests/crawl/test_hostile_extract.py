"""Hostile documents against link extraction: documents that keep a worker busy for
long or kill it must not stop the crawl (no in-process re-run of the poison document),
and the pool keeps working afterwards."""

from __future__ import annotations

import asyncio
import os
import signal

import pytest

from webark.crawl.extract import MAX_OUTLINKS, Link
from webark.crawl.extract.pool import ExtractPool, default_processes

CSS = [("Content-Type", "text/css")]


def slow_css(n: int) -> bytes:
    """A style sheet of ``n`` distinct ``url()`` (about 20 µs each to extract)."""
    return b"".join(b"a{background:url(/u%d.png)}\n" % i for i in range(n))


def test_stuck_worker_killed_and_pool_restarted() -> None:
    pool = ExtractPool(1, timeout=0.5)
    try:
        assert pool.processes == 1
        worker_pids = set(pool._pool._processes) if pool._pool else set()

        async def main() -> tuple[list[Link], list[Link]]:
            stuck = await pool.extract("http://example.org/s.css", "text/css",
                                       slow_css(1_000_000), CSS)  # fmt: skip
            after = await pool.extract(
                "http://example.org/t.css", "text/css", b"a{background:url(/ok.png)}", CSS
            )
            return list(stuck), list(after)

        stuck, after = asyncio.run(main())
        # the document that stuck the worker gets no links; it is not re-run in-process
        assert stuck == []
        assert pool.restarts == 1 and pool.processes == 1
        # the stuck worker was killed, a new one does the next document
        assert [lk.url for lk in after] == ["http://example.org/ok.png"]
        for pid in worker_pids:
            assert not _alive(pid)
    finally:
        pool.close()


def test_dead_worker_replaced_and_document_retried() -> None:
    pool = ExtractPool(1, timeout=60.0)
    try:
        (pid,) = pool._pool._processes  # type: ignore[union-attr]

        async def main() -> list[Link]:
            task = asyncio.create_task(
                pool.extract("http://example.org/s.css", "text/css", slow_css(100_000), CSS)
            )
            await asyncio.sleep(0.3)
            os.kill(pid, signal.SIGKILL)  # e.g. the kernel's OOM killer
            return list(await task)

        links = asyncio.run(main())
        assert pool.restarts == 1 and pool.processes == 1
        assert len(links) == MAX_OUTLINKS  # retried once in the new pool
        assert not _alive(pid)
    finally:
        pool.close()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie not reaped yet counts as dead
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(") ", 1)[1][0] != "Z"
    except OSError:
        return False


def test_one_cpu_still_isolates_extraction(monkeypatch: pytest.MonkeyPatch) -> None:
    # in-process extraction cannot be stopped: a document that keeps lexbor busy for
    # hours (quadratic tree building) would stall the crawl; one worker can be killed
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0}, raising=False)
    assert default_processes() == 1
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1, 2, 3}, raising=False)
    assert default_processes() == 2
