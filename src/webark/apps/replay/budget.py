"""A per-process budget of payload bytes being rewritten or sent, for replay.

Rewriting a large page holds several times its size in memory (the payload, its text,
the rewritten output) until the response has been sent; forty clients asking for the
same 10 MB page at once would otherwise hold forty such copies. :class:`ByteBudget` is
a weighted semaphore: a request for a large rewrite waits, in the event loop (no worker
thread is taken while it waits), until its payload size fits in the budget, and keeps
its :class:`Lease` until its response has been sent. Small pages never take a lease,
so they are not held up behind large ones.

Rules (the usual weighted-semaphore ones, as in Go's ``semaphore.Weighted``):

* first come, first served: a waiter is admitted only after every earlier waiter, so a
  large payload is not starved by a stream of smaller ones;
* a payload larger than the whole budget is admitted when nothing else is in flight
  (it runs alone rather than never);
* a lease can :meth:`~Lease.grow` without waiting (a compressed payload's decoded size
  is known only once it has been decoded): the total may then pass the budget for a
  while, and later requests wait until it is back under it.

Waiting and releasing happen in the event loop; :meth:`Lease.grow` may be called from a
worker thread. :attr:`ByteBudget.peak` and :attr:`ByteBudget.granted` record what was
admitted (for tests and benchmarks).
"""

from __future__ import annotations

import asyncio
import threading
from collections import deque

__all__ = ["ByteBudget", "Lease"]


class Lease:
    """Bytes held from a :class:`ByteBudget` until :meth:`release` (idempotent).

    Attributes:
        weight: bytes held now (the amount acquired plus any :meth:`grow`).
    """

    def __init__(self, budget: ByteBudget, weight: int):
        self._budget = budget
        self.weight = weight
        self._released = False

    def grow(self, extra: int) -> None:
        """Hold ``extra`` more bytes, without waiting (module docstring). Thread-safe.

        Raises:
            ValueError: ``extra`` is negative.
            RuntimeError: the lease was released.
        """
        if extra < 0:
            raise ValueError("extra must be >= 0")
        if self._released:
            raise RuntimeError("lease already released")
        self._budget._add(extra)
        self.weight += extra

    def release(self) -> None:
        """Give the bytes back and admit the waiters that now fit (call it in the event
        loop); later calls do nothing."""
        if not self._released:
            self._released = True
            self._budget._give(self.weight)


class ByteBudget:
    """At most ``limit`` bytes in flight (see the module docstring).

    Args:
        limit: the budget in bytes (> 0).

    Attributes:
        limit: the budget. in_flight: bytes held by leases now. peak: the largest
        ``in_flight`` seen. granted: leases given so far. waiting: requests waiting.

    Raises:
        ValueError: ``limit`` is not positive.
    """

    def __init__(self, limit: int):
        if limit <= 0:
            raise ValueError("limit must be > 0")
        self.limit = limit
        self.in_flight = 0
        self.peak = 0
        self.granted = 0
        self._lock = threading.Lock()  # in_flight is also changed by Lease.grow (a thread)
        self._waiters: deque[tuple[int, asyncio.Future[None]]] = deque()

    @property
    def waiting(self) -> int:
        return sum(1 for _, f in self._waiters if not f.done())

    async def acquire(self, weight: int) -> Lease:
        """A lease of ``weight`` bytes, once they fit (FIFO; see the module docstring).

        Raises:
            ValueError: ``weight`` is negative.
            asyncio.CancelledError: cancelled while waiting (nothing is held then).
        """
        if weight < 0:
            raise ValueError("weight must be >= 0")
        with self._lock:
            if not self._waiters and self._fits(weight):
                self._take(weight)
                return Lease(self, weight)
            fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self._waiters.append((weight, fut))
        try:
            await fut
        except asyncio.CancelledError:
            if fut.done() and not fut.cancelled():  # admitted, then cancelled: give back
                self._give(weight)
            else:
                with self._lock:
                    self._waiters = deque(w for w in self._waiters if w[1] is not fut)
                self._wake()  # it may have been the head holding others back
            raise
        return Lease(self, weight)

    # -- internals (called with or without the lock as noted) ---------------------------
    def _fits(self, weight: int) -> bool:  # lock held
        return self.in_flight == 0 or self.in_flight + weight <= self.limit

    def _take(self, weight: int) -> None:  # lock held
        self.in_flight += weight
        self.granted += 1
        self.peak = max(self.peak, self.in_flight)

    def _add(self, extra: int) -> None:
        with self._lock:
            self.in_flight += extra
            self.peak = max(self.peak, self.in_flight)

    def _give(self, weight: int) -> None:
        with self._lock:
            self.in_flight -= weight
        self._wake()

    def _wake(self) -> None:
        """Admit waiters from the head of the queue while they fit (event loop)."""
        with self._lock:
            while self._waiters:
                weight, fut = self._waiters[0]
                if fut.done():  # cancelled while waiting
                    self._waiters.popleft()
                    continue
                if not self._fits(weight):
                    return
                self._waiters.popleft()
                self._take(weight)
                fut.set_result(None)
