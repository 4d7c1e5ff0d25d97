"""Threads, byte budget and budget-leased responses of the replay app.

Mementos are built in worker threads (at most :data:`MEMENTO_THREADS` per server
process, :func:`limiters`); a memento whose body is large and rewritten first waits, in
the event loop, for a lease of its weight from the server's
:class:`~webark.apps.replay.budget.ByteBudget` (:class:`Deferred` says how much), is
rendered by the one large-rewrite thread, and is sent as a :class:`LeasedResponse`,
which gives the lease back once it has been sent (or the client stopped reading for
:data:`SEND_TIMEOUT` seconds). See :mod:`webark.apps.replay.app`.
"""

from __future__ import annotations

import asyncio
import logging
import weakref

import anyio
from starlette.responses import Response
from starlette.types import Message, Receive, Scope, Send

from webark.apps.replay.budget import Lease

__all__ = ["LARGE_REWRITE_THREADS", "MEMENTO_THREADS", "REWRITE_BUDGET", "SEND_TIMEOUT",
           "Deferred", "LeasedResponse", "limiters"]

log = logging.getLogger("webark.apps.replay.app")


#: Threads that build mementos at once, per server process. The work is CPU-bound
#: (HTML rewriting holds the GIL), so more threads only fight over the GIL: with 8
#: clients, 40 threads (Starlette's default) gave 80–86 pages/s on the python docs, 2
#: threads 123–127, 1 thread 141–144. Two keep one very large page from stalling
#: every other request of the process.
MEMENTO_THREADS = 2
#: Threads that render large rewritten bodies (beside the memento threads, so that
#: small pages are not queued behind them).
LARGE_REWRITE_THREADS = 1
#: Default budget of bytes of large payloads being rewritten or sent at once, per
#: server process (``WEBARK_REWRITE_BUDGET`` for ``server_from_env``). Rewriting
#: holds ~3-5x the payload; a payload larger than the budget is served alone.
REWRITE_BUDGET = 32 << 20
_LIMITERS: weakref.WeakKeyDictionary[
    asyncio.AbstractEventLoop, tuple[anyio.CapacityLimiter, anyio.CapacityLimiter]
] = weakref.WeakKeyDictionary()


def limiters() -> tuple[anyio.CapacityLimiter, anyio.CapacityLimiter]:
    """(memento, large rewrite) limiters of the running event loop (one pair per loop:
    tests run several)."""
    loop = asyncio.get_running_loop()
    pair = _LIMITERS.get(loop)
    if pair is None:
        pair = _LIMITERS[loop] = (anyio.CapacityLimiter(MEMENTO_THREADS),
                                  anyio.CapacityLimiter(LARGE_REWRITE_THREADS))  # fmt: skip
    return pair


class Deferred:
    """A memento that needs a lease of ``weight`` bytes before it is rendered."""

    __slots__ = ("weight",)

    def __init__(self, weight: int):
        self.weight = weight


SEND_TIMEOUT = 60.0
"""Seconds one piece of a leased response may wait for the client to read before the
connection is dropped (each piece is at most a few hundred kB: a client reading at
more than ~50 kbit/s never meets it)."""


class _ClientStalled(Exception):
    """The client did not read for ``send_timeout`` seconds."""


def _only_stalls(exc: BaseException) -> bool:
    """True for :class:`_ClientStalled`, alone or as the only kind in an exception group
    (Starlette streams a response inside an anyio task group)."""
    if isinstance(exc, _ClientStalled):
        return True
    if isinstance(exc, BaseExceptionGroup):
        match, rest = exc.split(_ClientStalled)
        return match is not None and rest is None
    return False


class LeasedResponse(Response):
    """A response that gives its budget lease back once it has been sent (or the
    sending failed, was cancelled, or the client stopped reading for ``send_timeout``
    seconds: the response is then abandoned and uvicorn closes the connection)."""

    def __init__(self, inner: Response, lease: Lease, send_timeout: float = SEND_TIMEOUT):
        self.inner = inner
        self.lease = lease
        self.send_timeout = send_timeout
        self.status_code = inner.status_code
        self.raw_headers = inner.raw_headers
        self.background = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        timeout = self.send_timeout

        async def timed_send(message: Message) -> None:
            try:
                await asyncio.wait_for(send(message), timeout)
            except TimeoutError:
                raise _ClientStalled from None

        try:
            await self.inner(scope, receive, timed_send)
        except BaseException as exc:
            if not _only_stalls(exc):
                raise
            client = scope.get("client") or ("?", 0)
            log.warning("replay: %s:%s did not read for %g s: response to %s dropped",
                        client[0], client[1], timeout, scope.get("path"))  # fmt: skip
        finally:
            self.lease.release()
