"""Record mode, the manual crawler (pywb's ``/{coll}/record/{url}``, ``wayback --record``).

``webark serve --record`` answers ``/{coll}/record/{modifier}/{url}`` by fetching the live
URL, archiving the exchange through the same capture back end the archiving proxy uses
(:func:`webark.apps.proxy.run.open_backend`: WARCs in ``COLL/warcs/``, crawl.log under
``COLL/proxy/``, each capture indexed into the collection as soon as it is written by
:class:`~webark.capture.collection_sink.CollectionSink`), and then serving the capture
just written as replay would, except that rewritten URLs point to
``/{coll}/record/{modifier}/{url}`` (no timestamp, as pywb's record URLs): every
subresource and link of the page comes back here and is recorded too. ``/{coll}/{url}``
replays it afterwards.

Safety: off unless asked for; private and loopback addresses are refused (403) unless
``allow_private`` (the crawler's and the proxy's rule, enforced by
:class:`~webark.fetch.HttpFetcher`); ``resolve`` / ``resolve_only`` as ``webark proxy``.
Only ``GET`` and ``HEAD`` are recorded (a HEAD is fetched as GET, so that what is
archived can be replayed); the browser's cookies for the replay server are never sent
upstream (see :func:`upstream_headers`).

``Recorder-Skip: 1`` (pywb's request header, its recorder's ``skip`` check): the URL is
fetched live and served, rewritten as a recorded capture would be, but nothing is
written — no WARC record, no crawl.log line, nothing indexed (:meth:`Recorder.live`;
only a Python ``logging`` INFO line names the URL). The response is built as an
in-memory WARC response record (:meth:`webark.fetch.exchange.Exchange.to_records`)
that is served and dropped, so that its rewriting is the recorded capture's exactly.

What is written: every capture in full (pywb's ``dedup_policy: keep``, "index at once
for instant replay"), response + request records, ``WARC-Protocol`` /
``WARC-Cipher-Suite`` over TLS; an upstream failure writes nothing and answers 502 /
504 / 403 (:func:`~webark.apps.proxy.server.failure_status`).
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from webark import __version__
from webark.apps.proxy.run import ProxySettings, open_backend
from webark.apps.proxy.server import failure_status
from webark.capture import CaptureMeta, CaptureResult, WarcCaptureBackend, capture_line
from webark.capture.collection_sink import CollectionSink
from webark.cdx.line import CdxLine
from webark.core.timestamps import to_timestamp14
from webark.fetch import HttpFetcher
from webark.fetch.dns import OverrideResolver
from webark.fetch.exchange import Exchange
from webark.fetch.limits import FetchLimits
from webark.index.capture_select import exact_key
from webark.index.resolved import ResolvedCapture, resolve_record
from webark.warc.builders import RecordBuilder

__all__ = ["SKIP_HEADER", "RecordFailure", "RecordSettings", "Recorder", "skipped",
           "upstream_headers"]

#: pywb's request header that asks record mode not to record this request (value ``1``).
SKIP_HEADER = "recorder-skip"


def skipped(headers: Iterable[tuple[str, str]]) -> bool:
    """True when the request's fields carry ``Recorder-Skip: 1`` (pywb: the value
    ``1``, name case-insensitive)."""
    return any(n.lower() == SKIP_HEADER and v.strip() == "1" for n, v in headers)

log = logging.getLogger(__name__)

USER_AGENT = f"webark-record/{__version__}"
"""The User-Agent sent upstream when the browser sent none."""

#: Request fields of the browser passed on to the live site (lowercase). Cookies,
#: ``Authorization`` and the rest belong to the replay server, not to the live site;
#: ``Range`` is dropped so that the whole resource is archived.
PASSED = frozenset({"user-agent", "accept", "accept-language", "accept-encoding"})
#: Content codings the replay side can undo (:func:`webark.warc.payload.decode_content`).
CODINGS = ("gzip", "deflate", "br", "identity")


@dataclass(frozen=True, slots=True)
class RecordSettings:
    """What ``webark serve --record`` was asked for.

    Attributes:
        allow_private: allow fetching private and loopback addresses.
        resolve: host → address overrides (curl's ``--resolve``).
        resolve_only: no name goes to the system resolver (hosts not in ``resolve``
            fail: 502).
        prefix: the WARC file prefix.
        limits: upstream timeouts and sizes.
    """

    allow_private: bool = False
    resolve: dict[str, str] = field(default_factory=dict)
    resolve_only: bool = False
    prefix: str = "WEBARK-REC"
    limits: FetchLimits = field(
        default_factory=lambda: FetchLimits(read_timeout=60.0, total_timeout=600.0)
    )


@dataclass(frozen=True, slots=True)
class RecordFailure:
    """A URL that could not be recorded: the HTTP ``status`` and ``reason`` to answer
    and a ``message`` for the person browsing."""

    status: int
    reason: str
    message: str


def upstream_headers(headers: Iterable[tuple[str, str]],
                     record_prefix: str) -> list[tuple[str, str]]:  # fmt: skip
    """The browser's request fields to send to the live site: those of :data:`PASSED`
    (``Accept-Encoding`` narrowed to :data:`CODINGS`), and a ``Referer`` that was a
    record-mode URL (``…{record_prefix}{modifier}/{url}``) turned back into ``{url}``
    (pywb does the same); a referer from anywhere else is dropped.

    Args:
        headers: ``(name, value)`` as received.
        record_prefix: the path of record URLs of the collection (``/coll/record/``).
    """
    out: list[tuple[str, str]] = []
    for name, value in headers:
        low = name.lower()
        if low == "accept-encoding":
            kept = [t.strip() for t in value.split(",")
                    if t.split(";")[0].strip().lower() in CODINGS]  # fmt: skip
            if kept:
                out.append((name, ", ".join(kept)))
        elif low in PASSED:
            out.append((name, value))
        elif low == "referer":
            original = _original_of(value, record_prefix)
            if original is not None:
                out.append((name, original))
    return out


def _original_of(referer: str, record_prefix: str) -> str | None:
    path = urlsplit(referer).path
    at = referer.find(record_prefix) if path.startswith(record_prefix) else -1
    if at < 0:
        return None
    rest = referer[at + len(record_prefix) :]
    head, sep, tail = rest.partition("/")
    if sep and len(head) == 3 and head.endswith("_"):
        rest = tail
    return rest if rest.lower().startswith(("http://", "https://")) else None


class Recorder:
    """Fetches and archives for record mode (module docstring): one capture back end
    per collection, opened on first use, and one upstream fetcher, made in the event
    loop of the server. Use from that loop only; :meth:`aclose` at shutdown closes
    the WARCs (renamed from ``.open``) and marks them completely indexed.

    Args:
        settings: safety and upstream settings.
    """

    def __init__(self, settings: RecordSettings | None = None) -> None:
        self.settings = settings or RecordSettings()
        self._fetcher: HttpFetcher | None = None
        self._backends: dict[Path, tuple[WarcCaptureBackend, CollectionSink | None]] = {}
        self._archiving: set[asyncio.Task[CaptureResult]] = set()

    def fetcher(self) -> HttpFetcher:
        """The upstream fetcher (made on first use)."""
        if self._fetcher is None:
            s = self.settings
            self._fetcher = HttpFetcher(
                USER_AGENT, allow_private=s.allow_private, limits=s.limits,
                max_connections_per_host=6,
                resolve=None if s.resolve_only else s.resolve or None,
                resolver=OverrideResolver(s.resolve, None) if s.resolve_only else None,
            )  # fmt: skip
        return self._fetcher

    def backend(self, folder: Path) -> WarcCaptureBackend:
        """The capture back end of collection ``folder`` (opened on first use).

        Raises:
            CollectionError: not a collection. ValueError: a cdxj-store collection
                (it cannot be indexed while written).
        """
        folder = folder.resolve()
        got = self._backends.get(folder)
        if got is None:
            settings = ProxySettings(collection=folder, prefix=self.settings.prefix,
                                     dedup=False)  # fmt: skip
            got = open_backend(settings)
            self._backends[folder] = got
        return got[0]

    def refusal(self, url: str) -> RecordFailure | None:
        """400 for a target that is no web URL, before any lookup: a scheme other than
        http/https, no host, or a host that is neither a dotted name, an IP literal,
        ``localhost`` nor a ``--resolve`` name (``/record/notaurl`` is a typo, not an
        intranet host); None when it may be fetched."""
        try:
            parts = urlsplit(url)
            host = (parts.hostname or "").lower()
        except ValueError as e:
            return RecordFailure(400, "Bad Request", f"{url}: not a URL ({e})")
        if parts.scheme.lower() not in ("http", "https"):
            return RecordFailure(400, "Bad Request",
                                 f"{url}: only http and https URLs can be recorded")  # fmt: skip
        try:
            ipaddress.ip_address(host)
            literal = True
        except ValueError:
            literal = False
        if not host or not (literal or "." in host.strip(".") or host == "localhost"
                            or host in self.settings.resolve):  # fmt: skip
            return RecordFailure(400, "Bad Request", f"{url}: no host name to record from")
        return None

    async def record(self, folder: Path, url: str, headers: Iterable[tuple[str, str]],
                     record_prefix: str) -> str | RecordFailure:  # fmt: skip
        """Fetch ``url`` (GET) and archive it into the collection at ``folder``.

        Args:
            headers: the browser's request fields (:func:`upstream_headers`).
            record_prefix: the path of the collection's record URLs.

        Returns:
            The 14-digit timestamp of the capture written (indexed when this returns),
            or why nothing was written.

        Raises:
            CollectionError / ValueError: see :meth:`backend`. OSError: the WARC could
                not be written.
        """
        refused = self.refusal(url)
        if refused is not None:
            return refused
        backend = self.backend(folder)
        ex = await self.fetcher().fetch(url, headers=upstream_headers(headers, record_prefix),
                                        limits=self.settings.limits)  # fmt: skip
        meta = CaptureMeta(metadata_record=False)  # the back end adds WARC-Protocol
        if not ex.ok:
            backend.log(capture_line(url, ex.status, meta, exchange=ex))
            status, reason = failure_status(ex)
            return RecordFailure(status, reason, f"{url}: {ex.error}")
        # shielded: a browser that goes away does not cut the capture short
        task = asyncio.ensure_future(self._archive(backend, url, ex, meta))
        self._archiving.add(task)
        task.add_done_callback(self._archiving.discard)
        await asyncio.shield(task)
        return to_timestamp14(ex.started)

    async def live(self, url: str, headers: Iterable[tuple[str, str]],
                   record_prefix: str) -> ResolvedCapture | RecordFailure:  # fmt: skip
        """Fetch ``url`` (GET) for a ``Recorder-Skip`` request: the exchange as a
        capture to serve (its line: ``url``, the fetch's 14-digit start, its media
        type and status; its record: the response record never written), or why it
        could not be fetched. Writes nothing; the collection need not be writable.

        Args:
            headers: the browser's request fields (:func:`upstream_headers`).
            record_prefix: the path of the collection's record URLs.
        """
        refused = self.refusal(url)
        if refused is not None:
            return refused
        ex = await self.fetcher().fetch(url, headers=upstream_headers(headers, record_prefix),
                                        limits=self.settings.limits)  # fmt: skip
        if not ex.ok:
            status, reason = failure_status(ex)
            return RecordFailure(status, reason, f"{url}: {ex.error}")
        log.info("record mode: %s fetched live, not recorded (Recorder-Skip)", url)
        response = ex.to_records(RecordBuilder())[0]
        mime = (ex.header("content-type") or "-").split(";")[0].strip().lower() or "-"
        line = CdxLine(exact_key(url), to_timestamp14(ex.started), url, mime, str(ex.status))
        return resolve_record(line, response)

    @staticmethod
    async def _archive(backend: WarcCaptureBackend, url: str, ex: Exchange,
                       meta: CaptureMeta) -> CaptureResult:  # fmt: skip
        result = await backend.archive(ex, meta)
        backend.log(capture_line(url, ex.status, meta, exchange=ex, result=result))
        return result

    async def aclose(self) -> None:
        """Finish captures being archived, close the fetcher and the back ends."""
        for task in list(self._archiving):
            try:
                await task
            except Exception:
                log.exception("record mode: a capture could not be archived")
        if self._fetcher is not None:
            await self._fetcher.aclose()
            self._fetcher = None
        for backend, sink in self._backends.values():
            await backend.aclose()
            if sink is not None:
                sink.close()
        self._backends.clear()
