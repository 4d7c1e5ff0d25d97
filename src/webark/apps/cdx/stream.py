"""Streaming a synchronous chunk iterator from one worker thread to the event loop.

Index scans are blocking (file reads, SQLite) and some stores must be consumed in the
thread that started them (``SqliteStore`` keeps one connection per thread and its
cursors cannot move between threads). Starlette's ``StreamingResponse`` over a sync
iterator would run each ``next()`` on whichever thread-pool thread is free, so
:class:`ThreadedBody` instead runs the *whole* iterator in one thread of a dedicated,
bounded executor and hands the chunks over:

* back-pressure: the producer runs at most ``ahead`` chunks ahead of the consumer
  (memory per response ≈ ``(ahead + 1) × chunk size``, 192 KiB by default), and the
  consumer waits for uvicorn's flow control, so a slow client slows the scan;
* cancellation: when the response ends early (client gone), the producer stops at its
  next chunk and closes the iterator *in its own thread* (generator ``finally`` blocks
  close cursors and files where they were opened);
* errors: an exception of the iterator is re-raised in the consumer (before the first
  chunk: the app answers 503; later: the connection is aborted).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Iterable, Iterator
from concurrent.futures import Executor

_END = object()


class _Error:
    __slots__ = ("exc",)

    def __init__(self, exc: BaseException):
        self.exc = exc


class ThreadedBody:
    """Run ``chunks`` in one thread of ``executor``; read them with :meth:`get` or
    :meth:`stream`. Must be created in the event loop's thread."""

    def __init__(self, chunks: Iterable[bytes], executor: Executor, ahead: int = 2):
        self._chunks = chunks
        self._loop = asyncio.get_running_loop()
        self._q: asyncio.Queue[object] = asyncio.Queue()
        self._room = threading.Semaphore(ahead)
        self._stop = threading.Event()
        self.future = executor.submit(self._produce)

    def _put(self, item: object) -> None:
        try:
            self._loop.call_soon_threadsafe(self._q.put_nowait, item)
        except RuntimeError:  # the loop is closed: nobody is listening any more
            self._stop.set()

    def _produce(self) -> None:
        it: Iterator[bytes] = iter(self._chunks)
        try:
            for chunk in it:
                while not self._room.acquire(timeout=0.25):
                    if self._stop.is_set():
                        return
                if self._stop.is_set():
                    return
                self._put(chunk)
            self._put(_END)
        except BaseException as exc:
            self._put(_Error(exc))
        finally:
            close = getattr(it, "close", None)
            if close is not None:
                close()

    async def get(self) -> bytes | None:
        """The next chunk, None at the end.

        Raises:
            Exception: what the iterator raised.
        """
        item = await self._q.get()
        if item is _END:
            return None
        if isinstance(item, _Error):
            raise item.exc
        self._room.release()
        assert isinstance(item, bytes)
        return item

    def cancel(self) -> None:
        """Stop the producer (at its next chunk)."""
        self._stop.set()

    async def stream(self, first: bytes) -> AsyncIterator[bytes]:
        """``first`` then the remaining chunks; stops the producer when the consumer
        stops early (disconnect, cancellation)."""
        try:
            yield first
            while True:
                chunk = await self.get()
                if chunk is None:
                    return
                yield chunk
        finally:
            self.cancel()
