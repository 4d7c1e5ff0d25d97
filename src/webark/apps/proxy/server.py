"""The archiving proxy: an HTTP/1.1 forward proxy (RFC 9110 §7.6, RFC 9112 §3.2.2
absolute-form targets) that records every exchange it relays through the capture back
end, as warcprox does for Brozzler and browsers.

For each request read from a client (h11, one request at a time per connection, kept
alive as the client asks):

1. the request is read whole (its body up to ``max_request_body`` bytes, answering
   ``Expect: 100-continue`` itself), its hop-by-hop fields removed
   (:mod:`webark.apps.proxy.headers`);
2. the fetcher (:class:`~webark.fetch.HttpFetcher`: kept-alive upstream connections,
   exact wire bytes, TLS unverified as Heritrix's ``open`` trust level) sends it and
   reads the response, which :class:`~webark.apps.proxy.relay.ClientRelay` passes on to
   the client as it arrives, the recording spooled to disk past 16 MiB;
3. a response received (any HTTP status) is archived by
   :meth:`~webark.capture.WarcCaptureBackend.archive` (response or revisit + request
   records in one write) and its crawl.log line written (Heritrix format, as warcprox);
4. an upstream that fails before a response head answers **502** (connection refused,
   reset, bad response) or **504** (connect or read timeout), with no record written
   (warcprox does the same); one that fails after the head has been relayed closes the
   client connection (the client sees a short body).

HTTPS: a ``CONNECT host:port`` is answered 200, the client's TLS is taken with a
certificate for ``host`` signed by the proxy's CA
(:class:`~webark.apps.proxy.ca.CertAuthority`, man-in-the-middle as warcprox does), and
the requests inside are proxied as ``https://host:port/…`` like any other, the upstream
TLS not verified (archives want expired and self-signed sites too). Their records carry
``WARC-Protocol`` and ``WARC-Cipher-Suite`` (:mod:`webark.fetch.tls_names`).

A crawl's browser pages (issue 13) go through a proxy given a
:class:`~webark.capture.gate.RequestGate`: each request is admitted by it before the
upstream fetch (a refusal, e.g. out of scope, is answered as it says, nothing fetched)
and holds its host's politeness slot until the response is read; the page context in
``Warcprox-Meta`` ``metadata`` (:class:`~webark.capture.gate.PageContext`) gives the
capture its hop path and via; the gate is told of each capture and may write the
crawl.log line itself (the page's own).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import hmac
import json
import logging
import ssl
from pathlib import Path
from urllib.parse import urlsplit

from webark import __version__
from webark.apps.proxy.ca import CertAuthority
from webark.apps.proxy.headers import message, request_fields
from webark.apps.proxy.meta import (
    HEADER,
    WarcproxMeta,
    WarcproxMetaError,
    parse_header,
    response_field,
)
from webark.apps.proxy.relay import ClientRelay
from webark.apps.proxy.request import (
    READ_SIZE,
    ClientRequest,
    ProxyConfig,
    ProxyRequestError,
    read_request,
)
from webark.capture import (
    BadWarcPrefix,
    CaptureMeta,
    CaptureResult,
    WarcCaptureBackend,
    capture_line,
)
from webark.capture.gate import PageContext, Refusal, RequestGate
from webark.core.errors import InvalidRecordError
from webark.crawllog import CrawlLogLine
from webark.dedup.buckets import Bucketed
from webark.dedup.sqlite_dedup import SqliteDedupIndex, open_index
from webark.fetch import HttpFetcher
from webark.fetch.codes import S_BLOCKED_BY_USER, S_TIMEOUT
from webark.fetch.exchange import Exchange

__all__ = ["ArchivingProxy", "ClientRequest", "ProxyConfig", "failure_status", "read_request"]

log = logging.getLogger(__name__)

WRITE_RECORD = "WARCPROX_WRITE_RECORD"
"""warcprox's HTTP method for writing a record the client built."""


def failure_status(ex: Exchange) -> tuple[int, str]:
    """The HTTP status and reason answered for a failed upstream fetch (warcprox's):
    504 Gateway Timeout for a timeout, 403 Forbidden for an address the fetcher
    refuses (private or loopback without ``allow_private``), else 502 Bad Gateway."""
    if ex.status == S_TIMEOUT:
        return 504, "Gateway Timeout"
    if ex.status == S_BLOCKED_BY_USER:
        return 403, "Forbidden"
    return 502, "Bad Gateway"


class ArchivingProxy:
    """The archiving proxy server (module docstring).

    Args:
        backend: where captures are archived (the proxy does not close it).
        fetcher: the upstream client (the proxy does not close it).
        config: listening address and limits.
        ca: the certificate authority of HTTPS man-in-the-middle; without one,
            ``CONNECT`` is refused (501).
        buckets_dir: where the dedup indexes of ``dedup-buckets`` are kept
            (``NAME.sqlite3``); None: the header's buckets are ignored (dedup off).
        gate: a crawl's policy for its browser pages' requests (module docstring);
            None: every request is let through.

    Use ``await proxy.start()``, then ``await proxy.aclose()``; or ``async with``.
    """

    def __init__(self, backend: WarcCaptureBackend, fetcher: HttpFetcher,
                 config: ProxyConfig | None = None,
                 ca: CertAuthority | None = None,
                 buckets_dir: Path | None = None,
                 gate: RequestGate | None = None) -> None:  # fmt: skip
        self.backend = backend
        self.gate = gate
        self.buckets_dir = buckets_dir
        self._buckets: dict[str, SqliteDedupIndex] = {}
        self.fetcher = fetcher
        self.config = config or ProxyConfig()
        self.ca = ca
        self._server: asyncio.Server | None = None
        self._clients: set[asyncio.Task[None]] = set()
        self._archiving: set[asyncio.Task[object]] = set()
        self.requests = 0
        self.failures = 0

    @property
    def port(self) -> int:
        """The port listened on (after :meth:`start`)."""
        assert self._server is not None, "not started"
        return int(self._server.sockets[0].getsockname()[1])

    async def start(self) -> None:
        """Listen on ``config.host:config.port``."""
        self._server = await asyncio.start_server(
            self._client, self.config.host, self.config.port, limit=READ_SIZE
        )

    async def serve_forever(self) -> None:
        """Serve until cancelled."""
        assert self._server is not None, "not started"
        await self._server.serve_forever()

    async def aclose(self) -> None:
        """Stop listening and drop the clients' connections; captures being archived
        are finished first."""
        if self._server is not None:
            self._server.close()
        for t in list(self._clients):
            t.cancel()
        for t in list(self._clients):
            with contextlib.suppress(BaseException):
                await t
        for a in list(self._archiving):
            with contextlib.suppress(BaseException):
                await a
        for index in self._buckets.values():
            index.close()
        self._buckets.clear()
        if self._server is not None:
            with contextlib.suppress(Exception):
                await self._server.wait_closed()

    async def __aenter__(self) -> ArchivingProxy:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    # -- one client connection --------------------------------------------------------
    async def _client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._clients.add(task)
        try:
            await self._serve(reader, writer, None)
        except (OSError, asyncio.IncompleteReadError) as e:
            log.debug("client connection ended: %s", e)
        except asyncio.CancelledError:  # aclose(): end quietly (asyncio logs a re-raise)
            pass
        except Exception:  # a bug: log it, keep serving the other clients
            log.exception("error serving a proxy client")
        finally:
            self._clients.discard(task)
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                     origin: str | None) -> None:  # fmt: skip
        """Serve requests of one connection; ``origin`` (``https://host:port``) when it
        is a tunnel that was opened by CONNECT."""
        leftover = b""
        while True:
            try:
                got = await read_request(reader, writer, leftover, self.config)
            except ProxyRequestError as e:
                writer.write(message(e.status, e.reason, f"{e}\n", close=True))
                await writer.drain()
                return
            if got is None:
                return
            req, leftover = got
            self.requests += 1
            keep = await self._request(req, reader, writer, origin)
            if not keep:
                return

    async def _request(self, req: ClientRequest, reader: asyncio.StreamReader,
                       writer: asyncio.StreamWriter, origin: str | None) -> bool:  # fmt: skip
        """Answer one request; False when the connection must close."""
        if req.method == "CONNECT" and origin is None:
            await self._tunnel(req, reader, writer)
            return False
        if req.method == WRITE_RECORD:
            writer.write(await self._write_record(req))
            await writer.drain()
            return not req.wants_close
        url = self._url(req, origin)
        if url is None and origin is None and req.target.split("?")[0] == "/status":
            writer.write(self._status(req))
            await writer.drain()
            return not req.wants_close
        if url is None:
            writer.write(message(400, "Bad Request",
                                 f"not a proxy request: {req.method} {req.target}\n"))  # fmt: skip
            await writer.drain()
            return not req.wants_close
        return await self._proxy(req, url, writer)

    async def _tunnel(self, req: ClientRequest, reader: asyncio.StreamReader,
                      writer: asyncio.StreamWriter) -> None:  # fmt: skip
        """``CONNECT host:port``: answer 200, take the client's TLS with a certificate
        for ``host`` signed by the proxy's CA, and serve the requests inside as
        ``https://host:port/…`` (RFC 9110 §9.3.6)."""
        host, _, port_s = req.target.rpartition(":")
        host = host.strip("[]")
        if self.ca is None or not host or not port_s.isdigit():
            why = "HTTPS needs the proxy's CA" if self.ca is None else "bad CONNECT target"
            writer.write(message(501 if self.ca is None else 400,
                                 "Not Implemented" if self.ca is None else "Bad Request",
                                 f"{why}: {req.target}\n", close=True))  # fmt: skip
            await writer.drain()
            return
        port = int(port_s)
        ctx = await asyncio.to_thread(self.ca.server_context, host)
        # no byte of the client's TLS hello may reach the plain stream reader: reading
        # stops before the 200 goes out, start_tls takes over the socket
        transport = writer.transport
        assert isinstance(transport, asyncio.ReadTransport)
        transport.pause_reading()
        writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
        try:
            async with asyncio.timeout(self.config.idle_timeout):
                await writer.start_tls(ctx)
        except (ssl.SSLError, OSError, TimeoutError) as e:
            log.info("TLS with the client for %s failed: %s", req.target, e)
            return
        shown = f"[{host}]" if ":" in host else host
        origin = f"https://{shown}" if port == 443 else f"https://{shown}:{port}"
        await self._serve(reader, writer, origin)

    async def _write_record(self, req: ClientRequest) -> bytes:
        """warcprox's ``WARCPROX_WRITE_RECORD`` method: a record the client built
        (Brozzler's screenshots), written through the same writer. The target is the
        record's WARC-Target-URI (e.g. ``screenshot:https://example.org/``), the body its
        block, ``Content-Type`` its type; ``WARC-Type: resource`` is the one type
        accepted. ``Warcprox-Meta`` (``warc-prefix``, ``metadata``) applies. 204 when
        written, 400 otherwise."""
        try:
            wm = parse_header(req.header(HEADER))
        except WarcproxMetaError as e:
            return message(400, "Bad Request", f"{e}\n", close=req.wants_close)
        wtype = (req.header("WARC-Type") or "").strip()
        ctype = req.header("Content-Type")
        missing = [what for what, bad in (
            (f"WARC-Type: resource (got {wtype!r})", wtype != "resource"),
            ("a Content-Type", not ctype),
            ("a Content-Length", req.header("Content-Length") is None),
        ) if bad]  # fmt: skip
        if missing:
            return message(400, "Bad Request",
                           f"{WRITE_RECORD} needs {', '.join(missing)}\n",
                           close=req.wants_close)  # fmt: skip
        assert ctype  # (in `missing` otherwise)
        record = self.backend.series.builder.resource(req.target, req.body, ctype)
        meta = CaptureMeta(warc_prefix=wm.warc_prefix, warcinfo=wm.warcinfo)
        try:
            await self.backend.write_record(record, meta=meta)
        except (InvalidRecordError, BadWarcPrefix) as e:
            return message(400, "Bad Request", f"{e}\n", close=req.wants_close)
        return b"HTTP/1.1 204 No Content\r\n" + (b"Connection: close\r\n"
                                                    if req.wants_close else b"") + b"\r\n"

    def _status(self, req: ClientRequest) -> bytes:
        """``GET /status`` with ``Authorization: Bearer TOKEN`` (as the crawl control
        API): JSON with the proxy's counters, WARC bytes written and the capture
        statistics by bucket (warcprox's ``/status`` and its stats). 401 without the
        token, 404 when the proxy has none."""
        token = self.config.status_token
        if token is None:
            return message(404, "Not Found", "no status page (no token)\n", close=req.wants_close)
        scheme, _, given = (req.header("Authorization") or "").partition(" ")
        if scheme.lower() != "bearer" or not hmac.compare_digest(given.strip().encode(),
                                                                  token.encode()):  # fmt: skip
            return message(401, "Unauthorized", "a bearer token is needed\n",
                           [("WWW-Authenticate", 'Bearer realm="webark proxy"')],
                           close=req.wants_close)  # fmt: skip
        body = {
            "role": "webark-proxy", "version": __version__, "port": self.port,
            "requests": self.requests, "failures": self.failures,
            "active_connections": len(self._clients),
            "warc_bytes_written": self.backend.warc_bytes(),
            **self.backend.stats.to_json(),
        }  # fmt: skip
        return message(200, "OK", json.dumps(body, indent=1) + "\n",
                       [("Content-Type", "application/json")], close=req.wants_close)  # fmt: skip

    @staticmethod
    def _url(req: ClientRequest, origin: str | None) -> str | None:
        """The URL a request is for: its absolute-form target, or the tunnel's origin
        plus an origin-form target; None for a request to the proxy itself."""
        if origin is not None and req.target.startswith("/"):
            return origin + req.target
        parts = urlsplit(req.target)
        if parts.scheme.lower() in ("http", "https") and parts.netloc:
            return req.target
        return None

    @staticmethod
    def capture_meta(wm: WarcproxMeta, url: str = "",
                     page: PageContext | None = None) -> CaptureMeta:  # fmt: skip
        """The :class:`CaptureMeta` of a proxied capture of ``url``: prefix, source tag,
        stats buckets, dedup-ok, dedup policy and warcinfo metadata from
        ``Warcprox-Meta``; the hop path, via and worker of a crawl's page context
        (then a metadata record is written, as the crawler's), none otherwise. The back
        end adds ``WARC-Protocol`` and ``WARC-Cipher-Suite`` to a capture over TLS."""
        hops, via = page.hops_of(url) if page is not None else ("", None)
        return CaptureMeta(
            metadata_record=False, hop_path=hops, via=via,
            worker=page.worker if page is not None else 0,
            warc_prefix=wm.warc_prefix, source_tag=wm.source_tag,
            stats_buckets=wm.stats_buckets, dedup_ok=wm.dedup_ok, warcinfo=wm.warcinfo,
            dedup_policy=wm.dedup_policy,
        )  # fmt: skip

    def _refusal(self, wm: WarcproxMeta, url: str, close: bool) -> bytes | None:
        """The 403 / 420 / 430 answer of a request ``Warcprox-Meta`` refuses (blocks,
        limits, soft limits, in that order, as warcprox), None when it may go on."""
        rule = wm.blocked_by(url)
        if rule is not None:
            return message(403, "Forbidden",
                           f"blocked by rule found in Warcprox-Meta header: {rule}\n",
                           [response_field({"blocked-by-rule": rule})], close=close)  # fmt: skip
        for soft, status, reason, what in ((False, 420, "Reached limit", "reached-limit"),
                                           (True, 430, "Reached soft limit",
                                            "reached-soft-limit")):  # fmt: skip
            hit = wm.reached(self.backend.stats, soft=soft)
            if hit is not None:
                key, limit = hit
                bucket = key.split("/")[0]
                stats = self.backend.stats.buckets[bucket].to_json()
                info = {"stats": {bucket: stats}, what: {key: limit}}
                return message(status, reason, f"{reason.lower()}: {key} = {limit}\n",
                               [response_field(info)], close=close)  # fmt: skip
        return None

    async def _proxy(self, req: ClientRequest, url: str, writer: asyncio.StreamWriter) -> bool:
        try:
            wm = parse_header(req.header(HEADER))
        except WarcproxMetaError as e:
            writer.write(message(400, "Bad Request", f"{e}\n", close=req.wants_close))
            await writer.drain()
            return not req.wants_close
        refused = self._refusal(wm, url, req.wants_close)
        if refused is not None:
            writer.write(refused)
            await writer.drain()
            return not req.wants_close
        extra: list[tuple[str, str]] = []
        began = None
        if "capture-metadata" in wm.accept and wm.archive:
            began = self.fetcher.clock()
            stamp = self.backend.series.builder.format_date(began)
            extra.append(response_field({"capture-metadata": {"timestamp": stamp}}))
        relay = ClientRelay(writer, req.method, close=req.wants_close, extra_fields=extra,
                            stall_timeout=self.config.stall_timeout,
                            http10=req.http_version == "1.0")  # fmt: skip
        page = PageContext.from_metadata(wm.metadata)
        async with self._admitted(url, page) as refusal:
            if refusal is not None:
                writer.write(message(refusal.status, refusal.reason, refusal.text,
                                     close=req.wants_close))  # fmt: skip
                await writer.drain()
                return not req.wants_close
            ex = await self.fetcher.fetch(
                url, method=req.method, headers=request_fields(req.headers), body=req.body,
                limits=self.config.limits, relay=relay,
            )  # fmt: skip
        if began is not None:  # the capture is dated as the client was told
            ex = dataclasses.replace(ex, started=began)
        meta = self.capture_meta(wm, url, page)
        if ex.ok:
            await relay.flush()
        if not ex.ok:
            self.failures += 1
            self._log(capture_line(url, ex.status, meta, exchange=ex))
            if relay.started:  # the head went out: only a short body can tell
                return False
            writer.write(self._failure_message(ex, req.wants_close))
            await writer.drain()
            return not req.wants_close
        if wm.archive:
            # shielded: a client that goes (or a shutdown) does not cut the capture short
            task = asyncio.ensure_future(self._archive(url, ex, meta, self.dedup_for(wm), page))
            self._archiving.add(task)
            task.add_done_callback(self._archiving.discard)
            await asyncio.shield(task)
        return not (relay.close_after or relay.gone or ex.truncated)

    def dedup_for(self, wm: WarcproxMeta) -> Bucketed | None:
        """The dedup index of a request's ``dedup-buckets`` (each bucket an SQLite
        dedup index in ``buckets_dir``, opened on first use), None for the back end's
        own."""
        if not wm.dedup_buckets or self.buckets_dir is None:
            return None
        stores = []
        for name, writable in wm.dedup_buckets:
            index = self._buckets.get(name)
            if index is None:
                self.buckets_dir.mkdir(parents=True, exist_ok=True)
                index = open_index(self.buckets_dir / f"{name}.sqlite3", commit_every=1)
                self._buckets[name] = index
            stores.append((index, writable))
        return Bucketed(stores)

    def _admitted(self, url: str, page: PageContext | None
                  ) -> contextlib.AbstractAsyncContextManager[Refusal | None]:  # fmt: skip
        """The gate's admission of a request (:meth:`RequestGate.admit`), or None (go
        on) without a gate."""
        if self.gate is None:
            return contextlib.nullcontext(None)
        return self.gate.admit(url, page)

    async def _archive(self, url: str, ex: Exchange, meta: CaptureMeta,
                       dedup: Bucketed | None, page: PageContext | None = None
                       ) -> CaptureResult:  # fmt: skip
        """Archive one capture and write its crawl.log line (unless the gate writes
        it: :meth:`RequestGate.captured`)."""
        result = await self.backend.archive(ex, meta, dedup=dedup)
        if self.gate is None or not self.gate.captured(url, ex, result, page):
            self._log(capture_line(url, ex.status, meta, exchange=ex, result=result))
        return result

    @staticmethod
    def _failure_message(ex: Exchange, close: bool) -> bytes:
        """The :func:`failure_status` answer; the body says why."""
        status, reason = failure_status(ex)
        return message(status, reason, f"{ex.url}: {ex.error}\n", close=close)

    def _log(self, line: CrawlLogLine) -> None:
        if self.backend.config.crawl_log is not None:
            self.backend.log(line)
