"""The write-gathering transport of webark serve: the writes of one event-loop step leave
as one write, in order; close flushes first, abort drops; other calls pass through."""

from __future__ import annotations

import asyncio
from typing import Any

from webark.apps.http_protocol import CoalescingTransport, http_protocol


class FakeTransport:
    def __init__(self) -> None:
        self.writes: list[bytes] = []
        self.closed = False
        self.aborted = False
        self.extra = {"peername": ("127.0.0.1", 1234)}

    def write(self, data: bytes) -> None:
        self.writes.append(data)

    def is_closing(self) -> bool:
        return self.closed

    def close(self) -> None:
        self.closed = True

    def abort(self) -> None:
        self.aborted = True

    def get_write_buffer_size(self) -> int:
        return 0

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return self.extra.get(name, default)


def test_writes_of_one_step_are_one_write() -> None:
    async def go() -> FakeTransport:
        t = FakeTransport()
        c = CoalescingTransport(t, asyncio.get_running_loop())  # type: ignore[arg-type]
        c.write(b"HTTP/1.1 200 OK\r\n\r\n")
        c.write(b"")
        c.write(b"body")
        assert t.writes == [] and c.get_write_buffer_size() == 23
        await asyncio.sleep(0)
        assert t.writes == [b"HTTP/1.1 200 OK\r\n\r\nbody"]
        c.write(b"next")  # a later step: a write of its own
        await asyncio.sleep(0)
        assert c.get_extra_info("peername") == ("127.0.0.1", 1234)  # passed through
        return t

    t = asyncio.run(go())
    assert t.writes == [b"HTTP/1.1 200 OK\r\n\r\nbody", b"next"]


def test_close_flushes_and_abort_drops() -> None:
    async def go() -> tuple[FakeTransport, FakeTransport]:
        loop = asyncio.get_running_loop()
        a, b = FakeTransport(), FakeTransport()
        ca = CoalescingTransport(a, loop)  # type: ignore[arg-type]
        ca.write(b"last words")
        ca.close()
        cb = CoalescingTransport(b, loop)  # type: ignore[arg-type]
        cb.write(b"never sent")
        cb.abort()
        await asyncio.sleep(0)
        return a, b

    a, b = asyncio.run(go())
    assert a.writes == [b"last words"] and a.closed
    assert b.writes == [] and b.aborted


def test_protocol_class_for_uvicorn() -> None:
    cls = http_protocol()
    assert cls != "auto" and cls.__name__ == "CoalescingHttpToolsProtocol"
