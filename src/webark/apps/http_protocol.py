"""uvicorn's httptools protocol with one socket write per response (``webark serve``).

uvicorn writes a response's status line and headers as soon as the app sends
``http.response.start`` and the body on ``http.response.body``: two ``send()`` system
calls, two TCP segments. On loopback (and on this VM, where a system call costs
microseconds) each segment also wakes the client once more. Profiled under load, those
writes were ~40 µs of the ~190 µs of server CPU per CDX lookup.

:class:`CoalescingHttpToolsProtocol` gives uvicorn a transport that gathers the writes
made in one event-loop step and hands them to the real transport in one ``write`` at the
end of that step (``loop.call_soon``): a ``Response`` (headers and body sent back to
back) becomes one segment; a streamed body still goes out chunk by chunk, each chunk as
soon as the step that produced it ends. ``close()`` and ``abort()`` flush (or drop)
first, so nothing is reordered or lost. Flow control is unchanged (the real transport
still calls ``pause_writing``/``resume_writing``).

:func:`http_protocol` returns the class for ``uvicorn.Config(http=…)``, or ``"auto"``
when uvicorn or httptools do not have the expected shape (a newer uvicorn), so the
server still runs, only without the coalescing.
"""

from __future__ import annotations

import asyncio
from typing import Any


class CoalescingTransport:
    """A write-gathering proxy of an asyncio transport (see the module docstring)."""

    __slots__ = ("_buf", "_loop", "_scheduled", "_t")

    def __init__(self, transport: asyncio.Transport, loop: asyncio.AbstractEventLoop):
        self._t = transport
        self._loop = loop
        self._buf: list[bytes] = []
        self._scheduled = False

    def write(self, data: bytes | bytearray | memoryview) -> None:
        if not data:
            return
        self._buf.append(bytes(data))
        if not self._scheduled:
            self._scheduled = True
            self._loop.call_soon(self.flush)

    def writelines(self, lines: Any) -> None:
        for x in lines:
            self.write(x)

    def flush(self) -> None:
        """Hand the gathered bytes to the real transport now."""
        self._scheduled = False
        if self._buf:
            data = self._buf[0] if len(self._buf) == 1 else b"".join(self._buf)
            self._buf.clear()
            if not self._t.is_closing():
                self._t.write(data)

    def close(self) -> None:
        self.flush()
        self._t.close()

    def abort(self) -> None:
        self._buf.clear()
        self._t.abort()

    def write_eof(self) -> None:
        self.flush()
        self._t.write_eof()

    def get_write_buffer_size(self) -> int:
        return self._t.get_write_buffer_size() + sum(len(b) for b in self._buf)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._t, name)


def http_protocol() -> Any:
    """The protocol class for ``uvicorn.Config(http=...)``: uvicorn's httptools protocol
    with :class:`CoalescingTransport`, or ``"auto"`` if that cannot be built."""
    try:
        from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
    except ImportError:  # no httptools (or another uvicorn layout): uvicorn's choice
        return "auto"

    class CoalescingHttpToolsProtocol(HttpToolsProtocol):
        """uvicorn's ``HttpToolsProtocol`` writing through a CoalescingTransport."""

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            loop = getattr(self, "loop", None) or asyncio.get_running_loop()
            proxy: Any = CoalescingTransport(transport, loop)
            super().connection_made(proxy)

    return CoalescingHttpToolsProtocol
