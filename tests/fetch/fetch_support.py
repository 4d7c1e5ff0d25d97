"""Test support for the fetcher tests: asyncio servers on 127.0.0.1 that send scripted bytes
and count connections. Nothing here connects anywhere but 127.0.0.1."""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from webark.fetch import FetchLimits, HttpFetcher
from webark.warc.builders import RecordBuilder, WarcinfoFields
from webark.warc.writer import WarcWriter

T = TypeVar("T")

UA = "webark-test/0.1 (+mailto:archive@example.org)"


def run(coro: Coroutine[Any, Any, T]) -> T:
    """Run one test coroutine (no pytest-asyncio needed)."""
    return asyncio.run(coro)


class Peer:
    """The server side of one connection."""

    def __init__(self, server: Server, reader: asyncio.StreamReader, writer: asyncio.StreamWriter):
        self.server = server
        self.reader = reader
        self.writer = writer

    async def read_request(self) -> bytes | None:
        """The next request head (up to the blank line), or None at EOF."""
        try:
            head = await self.reader.readuntil(b"\r\n\r\n")
        except (asyncio.IncompleteReadError, ConnectionError):
            return None
        self.server.requests.append(head)
        return head

    async def send(self, data: bytes, *, pieces: int = 1, delay: float = 0.0) -> None:
        """Send ``data`` (recorded in ``server.sent``), in ``pieces`` writes ``delay`` s
        apart."""
        self.server.sent.append(data)
        step = max(1, -(-len(data) // pieces))
        for i in range(0, len(data), step):
            self.writer.write(data[i : i + step])
            await self.writer.drain()
            if delay:
                await asyncio.sleep(delay)

    def close(self) -> None:
        self.writer.close()


Handler = Callable[[Peer], Awaitable[None]]


@dataclass
class Server:
    """An asyncio server on 127.0.0.1 running ``handler`` once per connection."""

    handler: Handler
    ssl: ssl.SSLContext | None = None
    connections: int = 0
    open_now: int = 0
    max_open: int = 0
    requests: list[bytes] = field(default_factory=list)
    sent: list[bytes] = field(default_factory=list)
    port: int = 0
    _server: asyncio.Server | None = None
    _tasks: set[asyncio.Task[Any]] = field(default_factory=set)

    async def __aenter__(self) -> Server:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0, ssl=self.ssl)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.close()
        for t in list(self._tasks):
            t.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    def url(self, path: str = "/", host: str = "127.0.0.1", scheme: str = "http") -> str:
        return f"{scheme}://{host}:{self.port}{path}"

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        self.open_now += 1
        self.max_open = max(self.max_open, self.open_now)
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        try:
            await self.handler(Peer(self, reader, writer))
        except (ConnectionError, ssl.SSLError, asyncio.CancelledError):
            pass
        finally:
            self._tasks.discard(task)
            self.open_now -= 1
            writer.close()


def keep_alive(response: bytes | Callable[[bytes], bytes], **send: Any) -> Handler:
    """Answer every request on the connection with ``response`` (or ``response(req)``)."""

    async def handler(peer: Peer) -> None:
        while (req := await peer.read_request()) is not None:
            await peer.send(response(req) if callable(response) else response, **send)

    return handler


def one_then_close(response: bytes, **send: Any) -> Handler:
    """Answer one request with ``response``, then close the connection."""

    async def handler(peer: Peer) -> None:
        if await peer.read_request() is not None:
            await peer.send(response, **send)
        peer.close()

    return handler


def fetcher(**kwargs: Any) -> HttpFetcher:
    """A fetcher allowed to talk to 127.0.0.1, with short timeouts."""
    kwargs.setdefault("allow_private", True)
    kwargs.setdefault("limits", FetchLimits(connect_timeout=2, read_timeout=2, total_timeout=5))
    return HttpFetcher(UA, **kwargs)


def warc_writer(directory: Path, builder: RecordBuilder | None = None) -> WarcWriter:
    """A writer that does not look up this machine's name."""
    return WarcWriter(
        directory,
        prefix="TEST",
        warcinfo=WarcinfoFields(hostname="test", operator="tests"),
        host="test",
        builder=builder,
    )
