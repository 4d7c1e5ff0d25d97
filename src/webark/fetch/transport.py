"""HTTP/1.1 over asyncio streams with h11, keeping the exact bytes on the wire.

h11 (RFC 9112 state machine) parses the response; every byte read from the socket is
also appended, unchanged, to a recorder, so the WARC response block is what the server
sent — header case, order and folding, chunk framing — while h11's events (which
lowercase header names and unfold lines) give the parsed view and the de-chunked
payload. The request bytes are those h11 serialized and we wrote.

:class:`ConnectionPool` keeps idle kept-alive connections per ``(scheme, host, port)``
and limits the connections in use per key (one by default), so a crawler's politeness
can rely on it. It is an internal building block of :class:`webark.fetch.HttpFetcher`.
"""

from __future__ import annotations

import asyncio
import contextlib
import ssl
import tempfile
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import BinaryIO, Protocol

import h11

from webark.core.digests import Hasher
from webark.fetch.codes import S_CONNECT_FAILED, S_CONNECT_LOST, S_TIMEOUT, FetchFailure
from webark.fetch.exchange import Truncation
from webark.fetch.lenient import lenient_fields, mend_heads
from webark.fetch.limits import FetchLimits
from webark.warc.record import Block

READ_SIZE = 64 * 1024
"""Bytes asked of the socket per read."""

MAX_MENDS = 4
"""Times one response's heads may be mended (:mod:`webark.fetch.lenient`) after h11
refused one (each interim 1xx head may need it)."""

PoolKey = tuple[str, str, int]
"""``(scheme, host, port)`` of a connection."""


class Recorder:
    """The bytes received, in arrival order: in memory up to ``threshold`` bytes, then in
    a temporary file."""

    __slots__ = ("_buf", "_file", "size", "threshold")

    def __init__(self, threshold: int):
        self.threshold = threshold
        self._buf = bytearray()
        self._file: BinaryIO | None = None
        self.size = 0

    def write(self, data: bytes) -> None:
        self.size += len(data)
        if self._file is not None:
            self._file.write(data)
            return
        self._buf += data
        if len(self._buf) > self.threshold:
            self._file = tempfile.TemporaryFile(prefix="webark-fetch-")  # noqa: SIM115
            self._file.write(self._buf)
            self._buf = bytearray()

    def prefix(self, n: int) -> bytes:
        """The first ``n`` bytes."""
        if self._file is None:
            return bytes(self._buf[:n])
        self._file.seek(0)
        data = self._file.read(n)
        self._file.seek(0, 2)
        return data

    def block(self, start: int, end: int) -> Block:
        """Bytes ``[start, end)`` as a :class:`Block` (the recorder is spent afterwards)."""
        if self._file is None:
            return Block(bytes(self._buf[start:end]))
        f, self._file = self._file, None
        if start == 0:
            f.truncate(end)
            f.seek(0)
            return Block(file=f, size=end)
        out = tempfile.TemporaryFile(prefix="webark-fetch-")  # noqa: SIM115
        f.seek(start)
        left = end - start
        while left > 0:
            piece = f.read(min(left, 1 << 20))
            if not piece:
                break
            out.write(piece)
            left -= len(piece)
        f.close()
        out.seek(0)
        return Block(file=out, size=end - start)

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


@dataclass
class Response:
    """What :meth:`Connection.roundtrip` read (the fetcher makes an Exchange of it)."""

    block: Block
    status: int | None = None
    reason: str = ""
    http_version: str = ""
    headers: tuple[tuple[str, str], ...] = ()
    head_length: int = 0
    payload_digest: str | None = None
    payload_size: int = 0
    truncated: Truncation | None = None
    failure: FetchFailure | None = None
    informational: bytes = b""
    reusable: bool = False


class Relay(Protocol):
    """Told about a response while :meth:`Connection.roundtrip` reads it, so that an
    archiving proxy can pass it on to its client as it arrives (the recording is not
    changed by it). Interim 1xx responses are not relayed."""

    async def head(self, resp: Response, raw: bytes) -> None:
        """The final response head is complete: ``raw`` is its bytes as received
        (status line, fields, blank line); ``resp`` has status, reason, version and
        the fields parsed."""
        ...

    async def body(self, data: bytes) -> None:
        """The next bytes of the body exactly as received (chunk framing included),
        never past the end of the response."""
        ...


class StaleConnection(Exception):
    """A reused connection was found closed before any response byte arrived: the
    request may be retried on a new connection (RFC 9112 §9.3.1)."""


@dataclass(eq=False)
class Connection:
    """One client connection (plain or TLS) and its h11 state."""

    key: PoolKey
    ip: str
    reader: asyncio.StreamReader
    writer: asyncio.StreamWriter
    max_head_size: int
    state: h11.Connection = field(init=False)
    uses: int = 0
    idle_since: float = 0.0
    _sent: tuple[h11.Request, bytes] | None = None

    def __post_init__(self) -> None:
        self.state = h11.Connection(h11.CLIENT, max_incomplete_event_size=self.max_head_size)

    def _reparse(self, received: bytes, eof: bool) -> bool:
        """Start the h11 state of the current exchange again on ``received`` (the
        response bytes so far, heads mended); False when that is not possible."""
        if self._sent is None:
            return False
        request, body = self._sent
        state = h11.Connection(h11.CLIENT, max_incomplete_event_size=self.max_head_size)
        try:
            state.send(request)
            if body:
                state.send(h11.Data(data=body))
            state.send(h11.EndOfMessage())
            state.receive_data(received)
            if eof:
                state.receive_data(b"")
        except h11.ProtocolError:
            return False
        self.state = state
        return True

    @property
    def usable(self) -> bool:
        """Idle, h11 ready for a new request, and not closed by the peer (as far as the
        event loop has seen)."""
        return (
            self.state.our_state is h11.IDLE
            and self.state.their_state is h11.IDLE
            and not self.reader.at_eof()
            and not self.writer.is_closing()
        )

    def close(self) -> None:
        if not self.writer.is_closing():
            self.writer.close()

    def request_bytes(self, request: h11.Request, body: bytes) -> bytes:
        """Serialize ``request`` (and ``body``) with this connection's h11 state.

        Raises:
            h11.LocalProtocolError: the request cannot be written (bad header, target …).
        """
        out = self.state.send(request) or b""
        if body:
            out += self.state.send(h11.Data(data=body)) or b""
        out += self.state.send(h11.EndOfMessage()) or b""
        self._sent = (request, body)
        return out

    async def roundtrip(
        self,
        data: bytes,
        limits: FetchLimits,
        deadline: float,
        digest_algorithm: str,
        relay: Relay | None = None,
    ) -> Response:
        """Send ``data`` (from :meth:`request_bytes`) and read the response.

        Args:
            data: the request bytes.
            limits: read timeout, max size, spool threshold.
            deadline: event-loop time when the total timeout runs out.
            digest_algorithm: algorithm of the payload digest (e.g. ``"sha1"``).
            relay: given the final response head and then the body bytes as they
                arrive (awaited before the next read, so a slow client slows the
                upstream read rather than filling memory).

        Returns:
            The response read, possibly truncated (``truncated``) or failed
            (``failure``; the bytes that did arrive are in ``block``).

        Raises:
            StaleConnection: the connection had been used before and the peer closed it
                before sending any byte of this response.
        """
        loop = asyncio.get_running_loop()
        reused = self.uses > 0
        self.uses += 1
        conn = self.state
        rec = Recorder(limits.spool_threshold)
        hasher = Hasher(digest_algorithm)
        resp = Response(Block())
        fed = 0  # bytes given to h11 (= recorded)
        start = 0  # offset of the final response (after interim 1xx responses)
        head_seen = False
        cut = False  # max_size reached: stop after h11 has seen what was kept
        max_size = limits.max_size
        mends = 0  # heads mended after h11 refused them (webark.fetch.lenient)
        eof = False
        unsent = bytearray()  # bytes received and not yet relayed (relay only)
        unsent_at = 0  # offset of unsent[0] in the response bytes

        def fail(code: int, kind: str, message: str) -> Response:
            resp.failure = FetchFailure(code, kind, message)
            resp.block = rec.block(start, fed)
            return resp

        try:
            self.writer.write(data)
            async with asyncio.timeout(max(0.0, min(limits.read_timeout, deadline - loop.time()))):
                await self.writer.drain()
        except TimeoutError:
            return fail(S_TIMEOUT, "WriteTimeout", "timed out sending the request")
        except OSError as e:
            if reused:
                raise StaleConnection(str(e)) from e
            return fail(S_CONNECT_LOST, type(e).__name__, f"sending the request failed: {e}")

        while True:
            try:
                event = conn.next_event()
            except h11.RemoteProtocolError as e:
                if reused and fed == 0:
                    raise StaleConnection(str(e)) from e
                if not head_seen and mends < MAX_MENDS:  # a head browsers would read
                    mended = mend_heads(rec.prefix(fed))
                    mends += 1
                    if mended is not None and self._reparse(mended, eof):
                        conn = self.state
                        continue
                return fail(S_CONNECT_LOST, "RemoteProtocolError", f"bad HTTP response: {e}")
            if event is h11.NEED_DATA:
                if relay is not None and head_seen and unsent:
                    await relay.body(bytes(unsent))
                    unsent_at += len(unsent)
                    unsent.clear()
                if cut:
                    resp.truncated = "length"
                    break
                remaining = deadline - loop.time()
                if remaining <= 0:
                    if head_seen:
                        resp.truncated = "time"
                        break
                    return fail(
                        S_TIMEOUT,
                        "TotalTimeout",
                        f"no complete response head within {limits.total_timeout} s",
                    )
                wait = min(limits.read_timeout, remaining)
                try:
                    async with asyncio.timeout(wait):
                        chunk = await self.reader.read(READ_SIZE)
                except TimeoutError:
                    if wait < limits.read_timeout:  # the total timeout ran out
                        if head_seen:
                            resp.truncated = "time"
                            break
                        return fail(
                            S_TIMEOUT,
                            "TotalTimeout",
                            f"no complete response head within {limits.total_timeout} s",
                        )
                    if head_seen:
                        return fail(
                            S_CONNECT_LOST,
                            "ReadTimeout",
                            f"no data for {limits.read_timeout} s after "
                            f"{fed - start} bytes of the response",
                        )
                    return fail(
                        S_TIMEOUT,
                        "ReadTimeout",
                        f"no response head within the read timeout of {limits.read_timeout} s",
                    )
                except OSError as e:
                    if reused and fed == 0:
                        raise StaleConnection(str(e)) from e
                    return fail(S_CONNECT_LOST, type(e).__name__, f"reading the response: {e}")
                if not chunk and reused and fed == 0:
                    raise StaleConnection("connection closed by the server")
                if max_size and chunk and fed - start + len(chunk) > max_size:
                    chunk = chunk[: max(0, max_size - (fed - start))]
                    cut = True
                    if not chunk:
                        resp.truncated = "length"
                        break
                rec.write(chunk)
                if relay is not None:
                    unsent += chunk
                fed += len(chunk)
                eof = eof or not chunk
                conn.receive_data(chunk)
                continue
            if isinstance(event, h11.InformationalResponse):
                start = fed - len(conn.trailing_data[0])
                continue
            if isinstance(event, h11.Response):
                head_seen = True
                resp.head_length = fed - len(conn.trailing_data[0]) - start
                resp.status = event.status_code
                resp.reason = event.reason.decode("iso-8859-1")
                resp.http_version = event.http_version.decode("ascii", "replace")
                if mends:  # the fields as sent, not as mended for h11
                    raw_head = rec.prefix(start + resp.head_length)[start:]
                    resp.headers = lenient_fields(raw_head)
                else:
                    resp.headers = tuple(
                        (n.decode("iso-8859-1"), v.decode("iso-8859-1"))
                        for n, v in event.headers.raw_items()
                    )
                if relay is not None:
                    body_at = start + resp.head_length
                    raw = rec.prefix(body_at)[start:]
                    del unsent[: max(0, body_at - unsent_at)]
                    unsent_at = body_at
                    await relay.head(resp, raw)
                continue
            if isinstance(event, h11.Data):
                hasher.update(event.data)
                resp.payload_size += len(event.data)
                continue
            if isinstance(event, h11.EndOfMessage):
                rest = len(conn.trailing_data[0])
                end = fed - rest
                if relay is not None and unsent and end > unsent_at:
                    await relay.body(bytes(unsent[: end - unsent_at]))
                    unsent.clear()
                resp.informational = rec.prefix(start)
                resp.block = rec.block(start, end)
                digest = hasher.digest()
                resp.payload_digest = digest.label()
                if not any(
                    n.lower() == "transfer-encoding" for n, _ in resp.headers
                ):  # the body was read as is: its digest is the block's from head_length
                    resp.block.seed_digest(digest.algorithm, resp.head_length, digest.raw)
                done = conn.our_state is h11.DONE and conn.their_state is h11.DONE
                if done and not rest and not cut:
                    conn.start_next_cycle()
                    resp.reusable = True
                return resp
            if isinstance(event, h11.ConnectionClosed):  # pragma: no cover - h11 raises first
                return fail(S_CONNECT_LOST, "ConnectionClosed", "connection closed early")
        # truncated: keep what was recorded
        if relay is not None and head_seen and unsent:
            await relay.body(bytes(unsent))
        if not head_seen:  # only max_size can stop the loop before the head is complete
            return fail(
                S_CONNECT_LOST,
                "HeaderTrunc",
                f"max_size of {max_size} bytes reached within the response head",
            )
        resp.informational = rec.prefix(start)
        resp.block = rec.block(start, fed)
        resp.payload_digest = hasher.label()
        return resp


async def open_connection(
    key: PoolKey,
    ip: str,
    ssl_context: ssl.SSLContext | None,
    limits: FetchLimits,
    deadline: float,
) -> Connection | FetchFailure:
    """Connect to ``ip`` for ``key`` (TLS when the scheme is https, with SNI and
    certificate checks for ``key``'s host as ``ssl_context`` says).

    Returns:
        The connection, or the failure: -4 when the connect timeout (or the total
        timeout) ran out, -2 when the connection was refused or the TLS handshake failed.
    """
    scheme, host, port = key
    loop = asyncio.get_running_loop()
    timeout = max(0.0, min(limits.connect_timeout, deadline - loop.time()))
    tls = ssl_context if scheme == "https" else None
    try:
        async with asyncio.timeout(timeout):
            reader, writer = await asyncio.open_connection(
                ip, port, ssl=tls, server_hostname=host if tls else None
            )
    except TimeoutError:
        what = "connect and TLS handshake" if tls else "connect"
        return FetchFailure(
            S_TIMEOUT, "ConnectTimeout", f"{what} to {ip}:{port} took over {timeout:g} s"
        )
    except ssl.SSLError as e:
        return FetchFailure(S_CONNECT_FAILED, type(e).__name__, f"TLS with {host} ({ip}): {e}")
    except OSError as e:
        return FetchFailure(
            S_CONNECT_FAILED, type(e).__name__, f"cannot connect to {ip}:{port}: {e.strerror or e}"
        )
    return Connection(key, ip, reader, writer, limits.max_head_size)


@dataclass
class _Host:
    active: int = 0
    idle: list[Connection] = field(default_factory=list)
    waiters: list[asyncio.Future[None]] = field(default_factory=list)


class ConnectionPool:
    """Kept-alive connections per ``(scheme, host, port)``, and a limit on connections
    in use per key.

    Args:
        max_per_host: connections in use at once per key (further fetches wait).
        keepalive_expiry: seconds an idle connection is kept (servers close theirs
            after 5–15 s; a connection found closed is retried once).
        max_idle: idle connections kept over all keys (the oldest are closed first).
    """

    def __init__(self, max_per_host: int = 1, keepalive_expiry: float = 15.0, max_idle: int = 64):
        if max_per_host < 1:
            raise ValueError("max_per_host must be at least 1")
        self.max_per_host = max_per_host
        self.keepalive_expiry = keepalive_expiry
        self.max_idle = max_idle
        self._hosts: dict[PoolKey, _Host] = {}
        self._idle_count = 0
        self.opened = 0
        """Connections opened so far (for statistics)."""

    @contextlib.asynccontextmanager
    async def slot(self, key: PoolKey) -> AsyncIterator[None]:
        """Hold one of the ``max_per_host`` places of ``key`` for the block."""
        h = self._hosts.setdefault(key, _Host())
        if h.active < self.max_per_host and not h.waiters:
            h.active += 1
        else:
            fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            h.waiters.append(fut)
            try:
                await fut  # the releasing task hands its place over
            except asyncio.CancelledError:
                if fut.done() and not fut.cancelled():
                    self._release(key, h)
                else:
                    h.waiters.remove(fut)
                raise
        try:
            yield
        finally:
            self._release(key, h)

    def _release(self, key: PoolKey, h: _Host) -> None:
        while h.waiters:
            fut = h.waiters.pop(0)
            if not fut.done():
                fut.set_result(None)
                return
        h.active -= 1
        if h.active == 0 and not h.idle:
            self._hosts.pop(key, None)

    def take(self, key: PoolKey, ip: str) -> Connection | None:
        """An idle connection of ``key`` to ``ip`` that still looks usable, or None."""
        h = self._hosts.get(key)
        if h is None:
            return None
        now = asyncio.get_running_loop().time()
        while h.idle:
            conn = h.idle.pop()
            self._idle_count -= 1
            if conn.ip == ip and conn.usable and now - conn.idle_since < self.keepalive_expiry:
                return conn
            conn.close()
        return None

    def put(self, conn: Connection) -> None:
        """Keep ``conn`` for reuse (closing the oldest idle one if there are too many)."""
        if not conn.usable or self.max_idle <= 0:
            conn.close()
            return
        conn.idle_since = asyncio.get_running_loop().time()
        if self._idle_count >= self.max_idle:
            oldest: tuple[float, PoolKey] | None = None
            for k, h in self._hosts.items():
                if h.idle and (oldest is None or h.idle[0].idle_since < oldest[0]):
                    oldest = (h.idle[0].idle_since, k)
            if oldest is not None:
                victim_host = self._hosts[oldest[1]]
                victim_host.idle.pop(0).close()
                self._idle_count -= 1
                if not victim_host.idle and victim_host.active == 0:
                    self._hosts.pop(oldest[1], None)
        self._hosts.setdefault(conn.key, _Host()).idle.append(conn)
        self._idle_count += 1

    @property
    def idle_count(self) -> int:
        return self._idle_count

    async def aclose(self) -> None:
        """Close every idle connection."""
        conns = [c for h in self._hosts.values() for c in h.idle]
        for h in self._hosts.values():
            h.idle.clear()
        self._idle_count = 0
        for c in conns:
            c.close()
        for c in conns:
            with contextlib.suppress(Exception):
                async with asyncio.timeout(1.0):
                    await c.writer.wait_closed()
