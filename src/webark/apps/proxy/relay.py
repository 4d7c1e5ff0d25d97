"""Passing an upstream response on to the proxy's client while it is recorded.

:class:`ClientRelay` is the :class:`~webark.fetch.transport.Relay` of one proxied
request: the fetcher's read loop gives it the response head (sent on with the hop-by-hop
fields removed, :func:`~webark.apps.proxy.headers.response_fields`) and then the body
bytes exactly as they arrived (chunk framing kept), awaiting the client's socket before
it reads more from upstream: a 1 GB download goes through with one read buffer in
memory (the recording is spooled to a temporary file by the fetcher).

A client that hangs up (or stops reading for ``stall_timeout`` seconds) is dropped; the
capture goes on to the end of the response, so the WARC still gets all of it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence

from webark.apps.proxy.headers import head_bytes, response_fields
from webark.fetch.transport import Response

__all__ = ["ClientRelay", "Dechunker", "body_is_delimited"]

log = logging.getLogger(__name__)


def body_is_delimited(status: int, method: str, fields: Sequence[tuple[str, str]]) -> bool:
    """True when the client can tell where the response ends without the connection
    closing (RFC 9112 §6.3): no body (HEAD, 1xx, 204, 304), a chunked
    ``Transfer-Encoding`` or a ``Content-Length``."""
    if method.upper() == "HEAD" or status < 200 or status in (204, 304):
        return True
    return _is_chunked(fields) or any(n.lower() == "content-length" for n, _ in fields)


def _is_chunked(fields: Sequence[tuple[str, str]]) -> bool:
    return any(n.lower() == "transfer-encoding" and "chunked" in v.lower() for n, v in fields)


class Dechunker:
    """An incremental decoder of the chunked transfer coding (RFC 9112 §7.1): framed
    bytes in, body bytes out, chunk extensions and trailer fields dropped. For an
    HTTP/1.0 client, which does not know the coding (RFC 9112 §7.1: a server must not
    send it chunked)."""

    def __init__(self) -> None:
        self._buf = bytearray()
        self._left = 0
        self._state = "size"
        self.done = False

    def feed(self, data: bytes) -> bytes:
        """The body bytes that ``data`` completes.

        Raises:
            ValueError: a chunk size that is not hexadecimal.
        """
        buf = self._buf
        buf += data
        out = bytearray()
        while not self.done:
            if self._state == "data":
                n = min(self._left, len(buf))
                if n == 0:
                    break
                out += buf[:n]
                del buf[:n]
                self._left -= n
                if self._left == 0:
                    self._state = "crlf"
                continue
            if self._state == "crlf":
                if len(buf) < 2:
                    break
                del buf[:2]
                self._state = "size"
                continue
            i = buf.find(b"\r\n")
            if i < 0:
                break
            line = bytes(buf[:i])
            del buf[: i + 2]
            if self._state == "trailer":
                self.done = not line
            else:
                size = int(line.split(b";", 1)[0].strip(), 16)
                self._state, self._left = ("data", size) if size else ("trailer", 0)
        return bytes(out)


class ClientRelay:
    """Relays one response to the client ``writer`` (module docstring).

    Args:
        writer: the client's stream.
        method: the request method (a HEAD response has no body).
        close: the client asked for the connection to close after this response.
        extra_fields: fields added to the head sent to the client (``Warcprox-Meta``).
        stall_timeout: seconds a write to the client may wait for it to read.
        http10: the client speaks HTTP/1.0: a chunked body is passed on de-chunked,
            delimited by the connection closing.

    Attributes:
        started: the head was sent (an error response can no longer be given); it is
            held back until the first body bytes or :meth:`flush`.
        gone: the client hung up or stalled; nothing more is sent.
        close_after: the client connection must close after this response (asked by
            the client, or a body delimited by the connection closing).
        sent: bytes sent to the client.
    """

    def __init__(self, writer: asyncio.StreamWriter, method: str, *, close: bool = False,
                 extra_fields: Sequence[tuple[str, str]] = (),
                 stall_timeout: float = 60.0, http10: bool = False) -> None:  # fmt: skip
        self.writer = writer
        self.http10 = http10
        self._dechunk: Dechunker | None = None
        self.method = method
        self.close_after = close
        self.extra_fields = tuple(extra_fields)
        self.stall_timeout = stall_timeout
        self.started = False
        self._head: bytes | None = None
        self.gone = False
        self.sent = 0

    async def head(self, resp: Response, raw: bytes) -> None:
        """See :meth:`webark.fetch.transport.Relay.head`."""
        status_line = raw.split(b"\r\n", 1)[0].rstrip(b"\n")
        fields = response_fields(resp.headers)
        if self.http10 and _is_chunked(resp.headers):
            self._dechunk = Dechunker()
            fields = [(n, v) for n, v in fields if n.lower() != "transfer-encoding"]
            self.close_after = True
        fields += self.extra_fields
        if not body_is_delimited(resp.status or 0, self.method, resp.headers):
            self.close_after = True
        if self.close_after:
            fields.append(("Connection", "close"))
        self._head = head_bytes(status_line, fields)

    async def body(self, data: bytes) -> None:
        """See :meth:`webark.fetch.transport.Relay.body`: the head goes out with the
        first body bytes, in one write (one system call, one segment: on loopback a
        third of the proxy's time per small response went into ``send``)."""
        if self._dechunk is not None:
            try:
                data = self._dechunk.feed(data)
            except ValueError:  # (h11 read it: only a mended response could get here)
                self.gone = True
                return
        await self._send(data)

    async def flush(self) -> None:
        """Send a head still held back (a response without body bytes); call when the
        fetch has returned successfully."""
        await self._send(b"")

    async def _send(self, data: bytes) -> None:
        if self._head is not None:
            data, self._head = self._head + data, None
            self.started = True
        if self.gone or not data:
            return
        try:
            self.writer.write(data)
            async with asyncio.timeout(self.stall_timeout):
                await self.writer.drain()
        except (OSError, TimeoutError) as e:
            log.debug("client gone while relaying: %s", e)
            self.gone = True
            return
        self.sent += len(data)
