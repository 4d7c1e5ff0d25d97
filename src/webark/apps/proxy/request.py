"""What the archiving proxy (:mod:`webark.apps.proxy.server`) reads from a client: its
settings (:class:`ProxyConfig`), one request read whole with h11 (RFC 9112: head bounded,
body bounded, ``Expect: 100-continue`` answered), and the errors answered for a request
it cannot read."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

import h11

from webark.apps.proxy.headers import connection_tokens
from webark.core.errors import RequestError
from webark.fetch.limits import FetchLimits

__all__ = ["READ_SIZE", "ClientRequest", "ProxyConfig", "ProxyRequestError", "read_request"]

READ_SIZE = 64 * 1024
"""Bytes read from a client socket at a time."""


@dataclass(frozen=True, slots=True)
class ProxyConfig:
    """Settings of an :class:`ArchivingProxy`.

    Attributes:
        host, port: where to listen (port 0: a free one; see
            :attr:`ArchivingProxy.port`).
        limits: upstream timeouts and sizes (the total timeout is an hour by default:
            a big download is not cut at Heritrix's 20 minutes).
        max_request_body: bytes of request body accepted (held in memory; more → 413).
        max_head_size: bytes of a request head (more → 431).
        idle_timeout: seconds a kept-alive client connection may wait for its next
            request.
        stall_timeout: seconds a client may stop reading a response before it is
            dropped (the capture goes on).
        status_token: the bearer token of ``GET /status``; None: no status page.
    """

    host: str = "127.0.0.1"
    port: int = 8000
    limits: FetchLimits = field(
        default_factory=lambda: FetchLimits(read_timeout=60.0, total_timeout=3600.0)
    )
    max_request_body: int = 64 * 1024 * 1024
    max_head_size: int = 64 * 1024
    idle_timeout: float = 120.0
    stall_timeout: float = 60.0
    status_token: str | None = None


@dataclass(frozen=True, slots=True)
class ClientRequest:
    """One request as the client sent it.

    Attributes:
        method: e.g. ``"GET"``.
        target: the request target as sent (absolute-form ``http://h/p``, origin-form
            ``/p``, authority-form ``h:443`` for CONNECT).
        headers: ``(name, value)`` with the client's case and order (ISO-8859-1).
        body: the body, de-chunked.
        http_version: ``"1.1"`` or ``"1.0"``.
    """

    method: str
    target: str
    headers: tuple[tuple[str, str], ...]
    body: bytes
    http_version: str

    def header(self, name: str) -> str | None:
        """The first value of field ``name`` (case-insensitive), or None."""
        low = name.lower()
        return next((v for n, v in self.headers if n.lower() == low), None)

    @property
    def wants_close(self) -> bool:
        """The client asks for the connection to close after the response (``Connection:
        close``, or HTTP/1.0 without ``keep-alive``)."""
        tokens = connection_tokens(self.headers)
        if self.http_version == "1.0":
            return "keep-alive" not in tokens
        return "close" in tokens


class ProxyRequestError(RequestError):
    """A request the proxy cannot read: ``status`` and a message for the client."""

    def __init__(self, status: int, reason: str, message: str):
        super().__init__(message)
        self.status = status
        self.reason = reason


async def read_request(
    reader: asyncio.StreamReader,
    writer: asyncio.StreamWriter,
    leftover: bytes,
    config: ProxyConfig,
) -> tuple[ClientRequest, bytes] | None:
    """Read one request (head and whole body) from a client.

    Args:
        leftover: bytes of the connection read past the previous request.

    Returns:
        The request and the bytes read past it, or None when the client closed the
        connection (or stayed idle for ``config.idle_timeout``) before a request.

    Raises:
        ProxyRequestError: a malformed request (400), a head over ``max_head_size`` (431),
            a body over ``max_request_body`` (413).
    """
    conn = h11.Connection(h11.SERVER, max_incomplete_event_size=config.max_head_size)
    if leftover:  # (b"" would tell h11 the connection closed)
        conn.receive_data(leftover)
    request: h11.Request | None = None
    body = bytearray()
    while True:
        try:
            event = conn.next_event()
        except h11.RemoteProtocolError as e:
            if request is None and e.error_status_hint == 431:
                raise ProxyRequestError(431, "Request Header Fields Too Large", str(e)) from e
            raise ProxyRequestError(400, "Bad Request", f"malformed request: {e}") from e
        if event is h11.NEED_DATA:
            if conn.they_are_waiting_for_100_continue:
                writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")
            try:
                wait = config.idle_timeout if request is None else config.stall_timeout
                async with asyncio.timeout(wait):
                    data = await reader.read(READ_SIZE)
            except (TimeoutError, OSError):
                if request is None:
                    return None
                raise ProxyRequestError(408, "Request Timeout",
                                        "request body not received") from None
            if not data and request is None and not conn.trailing_data[0]:
                return None
            conn.receive_data(data)
            continue
        if isinstance(event, h11.Request):
            # h11 bounds only a head still incomplete in its buffer: one read can bring a
            # whole head over the limit, so measure the head itself
            if _head_size(event) > config.max_head_size:
                raise ProxyRequestError(431, "Request Header Fields Too Large",
                                        f"request head over {config.max_head_size} bytes")
            request = event
        elif isinstance(event, h11.Data):
            body += event.data
            if len(body) > config.max_request_body:
                too_big = f"request body over {config.max_request_body} bytes"
                raise ProxyRequestError(413, "Content Too Large", too_big)
        elif isinstance(event, h11.EndOfMessage):
            assert request is not None
            req = ClientRequest(
                method=request.method.decode("ascii"),
                target=request.target.decode("iso-8859-1"),
                headers=tuple((n.decode("iso-8859-1"), v.decode("iso-8859-1"))
                              for n, v in request.headers.raw_items()),
                body=bytes(body),
                http_version=request.http_version.decode("ascii"),
            )  # fmt: skip
            return req, conn.trailing_data[0]
        elif isinstance(event, h11.ConnectionClosed):
            return None
        else:  # pragma: no cover - h11.PAUSED cannot come before EndOfMessage
            raise ProxyRequestError(400, "Bad Request", "unexpected request framing")


def _head_size(request: h11.Request) -> int:
    """Bytes of a request head as sent: request line, fields (``name: value`` + CRLF)
    and the blank line."""
    line = len(request.method) + len(request.target) + len(request.http_version) + 8
    fields = sum(len(n) + len(v) + 4 for n, v in request.headers.raw_items())
    return line + fields + 2
