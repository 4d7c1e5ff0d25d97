"""The HTTP fetcher: one URL in, one :class:`~webark.fetch.exchange.Exchange` out.

What it does (RFC 9112 over asyncio streams, via h11):

- resolves the host (resolve overrides first, then the system resolver; answers cached
  for ``dns_cache_seconds``, Heritrix's ``ipValidityDurationSeconds``, 6 h) and refuses
  private, loopback and link-local addresses unless ``allow_private=True``;
- sends ``Host``, ``User-Agent`` (required), the default headers and the caller's headers
  (e.g. ``If-None-Match`` / ``If-Modified-Since`` for conditional requests), a caller's
  header replacing a default one of the same name;
- reuses kept-alive connections per ``(scheme, host, port)``, at most
  ``max_connections_per_host`` in use at once (politeness itself is the crawler's job),
  and retries a GET/HEAD/OPTIONS once on a new connection when a reused one turns out
  to have been closed by the server;
- TLS with SNI; by default certificates are *not* verified, as Heritrix's default trust
  level (``open``): an archive wants the site even when its certificate is expired or
  self-signed. Pass ``ssl_context`` to verify. The certificates the server sent on a
  new TLS connection are kept in ``Exchange.tls_chain`` (:mod:`webark.fetch.certificates`);
- does not follow redirects: a 3xx is returned like any response (the crawler turns
  ``Location`` into a new URI with an ``R`` hop);
- never raises for network trouble: a failed fetch is an Exchange with a negative
  Heritrix status (:mod:`webark.fetch.codes`).
"""

from __future__ import annotations

import asyncio
import logging
import ssl
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from types import TracebackType
from typing import Protocol
from urllib.parse import urlsplit

import h11

from webark.core.digests import Hasher
from webark.core.ids import utc_now
from webark.fetch.certificates import peer_chain
from webark.fetch.codes import (
    S_BLOCKED_BY_USER,
    S_CONNECT_LOST,
    S_DOMAIN_PREREQUISITE_FAILURE,
    S_RUNTIME_EXCEPTION,
    S_UNFETCHABLE_URI,
    FetchError,
    FetchFailure,
)
from webark.fetch.dns import (
    DEFAULT_TTL,
    DnsAnswer,
    OverrideResolver,
    Resolver,
    SystemResolver,
    ip_literal,
    normalize_host,
    refusal,
)
from webark.fetch.exchange import Exchange
from webark.fetch.limits import FetchLimits
from webark.fetch.transport import (
    Connection,
    ConnectionPool,
    PoolKey,
    Relay,
    StaleConnection,
    open_connection,
)
from webark.warc.record import Block

log = logging.getLogger(__name__)

DEFAULT_PORTS = {"http": 80, "https": 443}
_RETRYABLE = frozenset({"GET", "HEAD", "OPTIONS"})


class Fetcher(Protocol):
    """What the crawler needs of a fetcher (DESIGN.md extension points)."""

    async def fetch(
        self,
        url: str,
        *,
        method: str = "GET",
        headers: Sequence[tuple[str, str]] = (),
        body: bytes = b"",
        limits: FetchLimits | None = None,
    ) -> Exchange: ...


def unverified_context() -> ssl.SSLContext:
    """A client TLS context that accepts any certificate (Heritrix's ``open`` trust
    level) and offers ``http/1.1`` by ALPN."""
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    ctx.set_alpn_protocols(["http/1.1"])
    return ctx


class _Target:
    __slots__ = ("host", "host_header", "key", "literal", "target")

    def __init__(self, url: str):
        """Raises ValueError with a message for a URL the fetcher cannot fetch."""
        parts = urlsplit(url)
        scheme = parts.scheme.lower()
        if scheme not in DEFAULT_PORTS:
            raise ValueError(f"scheme {parts.scheme!r} is not http or https")
        if not parts.hostname:
            raise ValueError("no host")
        port = parts.port or DEFAULT_PORTS[scheme]  # ValueError for a bad port
        self.literal = ip_literal(parts.hostname)
        self.host = self.literal or normalize_host(parts.hostname)
        shown = f"[{self.host}]" if ":" in self.host else self.host
        self.host_header = shown if port == DEFAULT_PORTS[scheme] else f"{shown}:{port}"
        target = parts.path or "/"
        if parts.query or url.split("#", 1)[0].endswith("?"):
            target += "?" + parts.query
        if not target.isascii():
            raise ValueError("non-ASCII request target (normalize the URL first)")
        self.target = target
        self.key: PoolKey = (scheme, self.host, port)


class HttpFetcher:
    """An asyncio HTTP/1.1 fetcher that records the exact bytes exchanged.

    Usage::

        async with HttpFetcher("ExampleBot/1.0 (+https://example.org/bot; bot@example.org)",
                               resolve={"example.com": "93.184.215.14"}) as f:
            ex = await f.fetch("http://example.com/")
            if ex.ok:
                await writer.write(*ex.to_records(writer.builder))

    Args:
        user_agent: the User-Agent sent (who runs the crawler and how to reach them).
        limits: default timeouts and sizes (:class:`FetchLimits`); ``fetch`` may
            override them per call.
        resolve: resolve overrides, host → address(es), like curl's ``--resolve``.
        resolver: the resolver for other hosts (default: :class:`SystemResolver`).
        allow_private: allow connections to private, loopback, link-local and other
            non-public addresses (refused by default, status -5001).
        ssl_context: TLS client context; default :func:`unverified_context`.
        max_connections_per_host: connections in use at once per scheme/host/port.
        keep_alive: reuse connections; False sends ``Connection: close``.
        keepalive_expiry: seconds an idle connection is kept for reuse.
        max_idle_connections: idle connections kept over all hosts.
        default_headers: headers sent with every request after Host and User-Agent,
            e.g. ``[("From", "bot@example.org"), ("Accept", "*/*")]``.
        digest_algorithm: algorithm of :attr:`Exchange.payload_digest`; use the WARC
            writer's (``"sha1"`` by default).
        clock: source of fetch start times (aware UTC datetimes).
        dns_cache_seconds: how long a successful lookup is reused.
        dns_ttl: TTL (seconds) written in ``dns:`` records of override and system
            answers (their real TTL is unknown).

    Raises:
        FetchError: an empty User-Agent.
    """

    def __init__(
        self,
        user_agent: str,
        *,
        limits: FetchLimits | None = None,
        resolve: Mapping[str, str | Sequence[str]] | None = None,
        resolver: Resolver | None = None,
        allow_private: bool = False,
        ssl_context: ssl.SSLContext | None = None,
        max_connections_per_host: int = 1,
        keep_alive: bool = True,
        keepalive_expiry: float = 15.0,
        max_idle_connections: int = 64,
        default_headers: Sequence[tuple[str, str]] = (),
        digest_algorithm: str = "sha1",
        clock: Callable[[], datetime] = utc_now,
        dns_cache_seconds: float = 21600.0,
        dns_ttl: int = DEFAULT_TTL,
    ):
        if not user_agent or not user_agent.strip():
            raise FetchError("a User-Agent is required (name the crawler and a contact)")
        Hasher(digest_algorithm)  # DigestError for an unknown algorithm
        self.user_agent = user_agent
        self.limits = limits or FetchLimits()
        base = resolver or SystemResolver(ttl=dns_ttl, clock=clock)
        self.resolver: Resolver = (
            OverrideResolver(resolve, base, ttl=dns_ttl, clock=clock) if resolve else base
        )
        self.allow_private = allow_private
        self.ssl_context = ssl_context or unverified_context()
        self.keep_alive = keep_alive
        self.default_headers = tuple(default_headers)
        self.digest_algorithm = digest_algorithm
        self.clock = clock
        self.dns_cache_seconds = dns_cache_seconds
        self.pool = ConnectionPool(
            max_connections_per_host, keepalive_expiry, max_idle_connections if keep_alive else 0
        )
        self._dns: dict[str, tuple[DnsAnswer, float]] = {}
        self.fetches = 0
        """Fetches made (for statistics)."""
        self.connections_opened = 0
        """Connections opened (for statistics: fetches / connections = reuse)."""

    # -- DNS ------------------------------------------------------------------------
    async def lookup(self, host: str, *, fresh: bool = False) -> DnsAnswer:
        """Resolve ``host`` (overrides, then the resolver), reusing a cached answer
        unless ``fresh``. The answer makes the ``dns:`` record
        (:meth:`DnsAnswer.to_record`); a failed one has status -1 and is not cached.

        Raises:
            ValueError: a host name that cannot be IDNA-encoded.
        """
        literal = ip_literal(host)
        if literal is not None:
            return DnsAnswer(literal, (literal,), self.clock(), source="literal")
        name = normalize_host(host)
        loop = asyncio.get_running_loop()
        if not fresh:
            cached = self._dns.get(name)
            if cached is not None and cached[1] > loop.time():
                return cached[0]
        answer = await self.resolver.resolve(name)
        if answer.ok:
            self._dns[name] = (answer, loop.time() + self.dns_cache_seconds)
        else:
            self._dns.pop(name, None)
        return answer

    def forget(self, host: str) -> None:
        """Drop the cached answer for ``host`` (e.g. after connection failures)."""
        self._dns.pop(normalize_host(host), None)

    # -- fetching -------------------------------------------------------------------
    def request_headers(
        self, host_header: str, headers: Sequence[tuple[str, str]] = ()
    ) -> list[tuple[str, str]]:
        """The header fields of a request: Host, User-Agent, the defaults, ``Connection:
        close`` without keep-alive, then ``headers``; a later field replaces earlier
        ones of the same name (case-insensitive)."""
        out: list[tuple[str, str]] = [("Host", host_header), ("User-Agent", self.user_agent)]
        extra = list(self.default_headers)
        if not self.keep_alive:
            extra.append(("Connection", "close"))
        for name, value in [*extra, *headers]:
            low = name.lower()
            out = [(n, v) for n, v in out if n.lower() != low]
            out.append((name, value))
        return out

    async def fetch(
        self,
        url: str,
        *,
        method: str = "GET",
        headers: Sequence[tuple[str, str]] = (),
        body: bytes = b"",
        limits: FetchLimits | None = None,
        relay: Relay | None = None,
    ) -> Exchange:
        """Fetch ``url`` once (no redirects followed).

        Args:
            url: an absolute http(s) URL, normalized (``webark.url.normalize``): the
                request target is sent as written.
            method: the request method.
            headers: extra request headers, e.g. ``[("If-None-Match", '"abc"')]``;
                a ``User-Agent`` here replaces the fetcher's for this request.
            body: request body (a Content-Length is added unless given).
            limits: limits of this fetch (default: the fetcher's).
            relay: passed the response head and body as they arrive (an archiving
                proxy's client; :class:`~webark.fetch.transport.Relay`).

        Returns:
            The exchange: ``ok`` with the response (maybe ``truncated``), or failed
            with a negative ``status``: -2 connect failed, -3 connection broken,
            -4 timeout, -5 unexpected error, -6 host not resolved, -7 URL not
            fetchable, -5001 address refused by the private-address guard.

        Raises:
            asyncio.CancelledError: when cancelled (the connection is closed).
        """
        started = self.clock()
        loop = asyncio.get_running_loop()
        t0 = loop.time()
        self.fetches += 1
        lim = limits or self.limits
        try:
            return await self._fetch(url, method, headers, body, lim, started, t0, relay)
        except Exception as e:  # a bug: keep crawling, log it (Heritrix -5)
            log.exception("unexpected error fetching %s", url)
            failure = FetchFailure(S_RUNTIME_EXCEPTION, type(e).__name__, str(e))
            return self._failed(url, None, b"", started, t0, failure)

    def _failed(
        self,
        url: str,
        ip: str | None,
        request: bytes,
        started: datetime,
        t0: float,
        failure: FetchFailure,
        block: Block | None = None,
        http_status: int | None = None,
    ) -> Exchange:
        return Exchange(
            url=url,
            ip_address=ip,
            request=request,
            response=block or Block(),
            status=failure.code,
            started=started,
            duration_ms=self._elapsed_ms(t0),
            http_status=http_status,
            error=failure,
        )

    @staticmethod
    def _elapsed_ms(t0: float) -> int:
        return max(0, round((asyncio.get_running_loop().time() - t0) * 1000))

    async def _fetch(
        self,
        url: str,
        method: str,
        headers: Sequence[tuple[str, str]],
        body: bytes,
        lim: FetchLimits,
        started: datetime,
        t0: float,
        relay: Relay | None = None,
    ) -> Exchange:
        try:
            t = _Target(url)
        except ValueError as e:
            failure = FetchFailure(S_UNFETCHABLE_URI, "InvalidURL", f"cannot fetch {url!r}: {e}")
            return self._failed(url, None, b"", started, t0, failure)

        if t.literal is not None:
            ip = t.literal
        else:
            answer = await self.lookup(t.host)
            if not answer.ok or not answer.addresses:
                failure = FetchFailure(
                    S_DOMAIN_PREREQUISITE_FAILURE,
                    "DomainUnresolvable",
                    f"cannot resolve {t.host}: {answer.error or 'no address'}",
                )
                return self._failed(url, None, b"", started, t0, failure)
            ip = answer.addresses[0]
        refused = refusal(ip, self.allow_private)
        if refused is not None:
            failure = FetchFailure(S_BLOCKED_BY_USER, "PrivateAddress", f"{url}: {refused}")
            return self._failed(url, ip, b"", started, t0, failure)

        fields = self.request_headers(t.host_header, headers)
        if body and not any(
            n.lower() in ("content-length", "transfer-encoding") for n, _ in fields
        ):
            fields.append(("Content-Length", str(len(body))))
        try:
            request = h11.Request(method=method, target=t.target, headers=fields)
        except h11.LocalProtocolError as e:
            failure = FetchFailure(S_UNFETCHABLE_URI, "LocalProtocolError", f"bad request: {e}")
            return self._failed(url, ip, b"", started, t0, failure)

        deadline = t0 + lim.total_timeout
        retry = method.upper() in _RETRYABLE
        data = b""
        for attempt in (0, 1):
            async with self.pool.slot(t.key):
                conn = self.pool.take(t.key, ip) if self.keep_alive else None
                reused = conn is not None
                if conn is None:
                    opened = await open_connection(t.key, ip, self.ssl_context, lim, deadline)
                    if isinstance(opened, FetchFailure):
                        return self._failed(url, ip, b"", started, t0, opened)
                    conn = opened
                    self.connections_opened += 1
                try:
                    data = conn.request_bytes(request, body)
                    resp = await conn.roundtrip(data, lim, deadline, self.digest_algorithm,
                                                relay)  # fmt: skip
                except StaleConnection as e:
                    conn.close()
                    if retry and attempt == 0:
                        log.debug("retrying %s on a new connection: %s", url, e)
                        continue
                    failure = FetchFailure(S_CONNECT_LOST, "ConnectionClosed", str(e))
                    return self._failed(url, ip, data, started, t0, failure)
                except BaseException:
                    conn.close()
                    raise
                tls = conn.writer.get_extra_info("ssl_object")
                self._finish(conn, resp.reusable)
            if resp.failure is not None:
                return self._failed(
                    url, ip, data, started, t0, resp.failure, resp.block, resp.status
                )
            assert resp.status is not None
            return Exchange(
                url=url,
                ip_address=ip,
                request=data,
                response=resp.block,
                status=resp.status,
                started=started,
                duration_ms=self._elapsed_ms(t0),
                http_status=resp.status,
                reason=resp.reason,
                http_version=resp.http_version,
                headers=resp.headers,
                head_length=resp.head_length,
                payload_digest=resp.payload_digest,
                payload_size=resp.payload_size,
                truncated=resp.truncated,
                informational=resp.informational,
                connection_reused=reused,
                tls_version=tls.version() if tls is not None else None,
                cipher=tls.cipher()[0] if tls is not None and tls.cipher() else None,
                tls_chain=() if reused else peer_chain(tls),
            )
        raise AssertionError("unreachable")  # pragma: no cover

    def _finish(self, conn: Connection, reusable: bool) -> None:
        if reusable and self.keep_alive:
            self.pool.put(conn)
        else:
            conn.close()

    async def aclose(self) -> None:
        """Close the kept-alive connections."""
        await self.pool.aclose()

    async def __aenter__(self) -> HttpFetcher:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()
