"""The hybrid crawl: URIs the bulk crawler delegates to the browser pool, as a crawl
extension (:mod:`webark.crawl.extension`, like continuous crawling's scheduler) that a
``browser:`` section enables (issue 13).

Where it hooks in (:class:`BrowserDelegation`):

* **fetch chain**, ``browserPage`` (before ``fetchHttp``): a URI that a ``regex`` or
  ``hosts`` rule names (:meth:`~webark.crawl.browser.rules.DelegationRules.before_fetch`)
  is loaded by a browser page through the archiving proxy, which captures it and every
  subresource (one capture each); the page's own exchange and capture become the URI's,
  so ``fetchHttp`` and ``warcWriter`` leave it alone and ``extractors`` reads it as any
  fetch. When the browser did not get the page (it failed, or timed out before the
  response), the bulk crawler fetches it as usual;
* **extract chain**, ``browserRender`` (after ``extractors``): a fetched 2xx HTML page
  that the ``troublesome`` heuristic picks
  (:meth:`~webark.crawl.browser.rules.DelegationRules.after_fetch`) is rendered from
  the fetched document (:class:`~webark.crawl.browser.visit.PrefetchedDocument`: the
  site is not asked for it twice, Heritrix 3.4 ExtractorChrome's way);
* **disposition chain**, ``browserOutlinks`` (after ``warcWriter``): the visit's links
  join the static ones before ``candidates`` puts them through the scope into the same
  frontier: ``a``/``area`` hrefs of every frame and ``window.open`` targets, both as hop
  ``L`` (a navigation to another document, never something the page itself embeds;
  Brozzler reports both as outlinks); the screenshots are written as ``resource`` records
  through the same back end — ``urn:view:{url}`` (viewport PNG, ``image/png``) and
  ``urn:thumbnail:{url}`` (JPEG, ``image/jpeg``), Browsertrix's names, each with
  ``WARC-Concurrent-To`` the page's response (or revisit) record.

The delegated URI stays in flight in its queue until the disposition chain finished it
(:attr:`~webark.crawl.context.CrawlContext.hold_queues`): one page at a time per host,
and the job's delay after it. Its crawl.log line is the crawl's, with the UKWA
annotation ``WrenderedURL``; the subresources' lines are the proxy's (hop path ``…E``,
via the page). Per-page metadata travels in ``Warcprox-Meta`` (``metadata``: ``page``,
``hop-path``, ``via``, ``seed``, ``worker``; :class:`~webark.capture.gate.PageContext`),
set as extra request headers of the page, as Brozzler does with
``Network.setExtraHTTPHeaders``.

The proxy and the pool start in :meth:`BrowserDelegation.run` (the crawl's event loop,
the crawl's capture back end and fetcher): the proxy through a :class:`ProxyLauncher`
that ``webark.cli`` supplies (the proxy is L6), the pool as
:class:`~webark.crawl.browser.pool.BrowserPool`. A pool that cannot start
(:class:`~webark.core.errors.BrowserUnavailableError`) stops the crawl with its message.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections import Counter
from collections.abc import Callable, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Protocol
from urllib.parse import urlsplit, urlunsplit

from webark.capture import CaptureMeta, WarcCaptureBackend
from webark.capture.gate import PageContext, RequestGate
from webark.crawl.browser.config import BrowserSettings, browser_settings
from webark.crawl.browser.gate import BrowserTraffic, CrawlGate, HostSlots, PageCaptures
from webark.crawl.browser.pool import BrowserPool
from webark.crawl.browser.report import BrowserCounts, BrowserReport, BrowserSnapshot
from webark.crawl.browser.rules import DelegationRules
from webark.crawl.browser.titles import TITLES_FILE, append_title
from webark.crawl.browser.visit import PageVisit, PrefetchedDocument, Viewport
from webark.crawl.extract import Link
from webark.crawl.processing import UriProcessing
from webark.fetch import HttpFetcher
from webark.fetch.body import decoded_body

if TYPE_CHECKING:
    from webark.crawl.context import CrawlContext
    from webark.crawl.job import CrawlJob
    from webark.crawl.processing import Processor
    from webark.crawl.reports import Report

__all__ = ["RENDERED", "THUMB", "VIEW", "BrowserDelegation", "ProxyEndpoint", "ProxyLauncher"]

log = logging.getLogger(__name__)

RENDERED = "WrenderedURL"
"""crawl.log annotation of a URI the browser rendered (UKWA's)."""
VIEW = "urn:view:"
"""WARC-Target-URI prefix of a page's viewport screenshot (Browsertrix's)."""
THUMB = "urn:thumbnail:"
"""WARC-Target-URI prefix of a page's thumbnail (Browsertrix's)."""

PoolFactory = Callable[["ProxyEndpoint"], BrowserPool]
"""Makes the browser pool for the proxy endpoint (tests, the benchmark)."""

_DOC_DROPPED = frozenset({"content-encoding", "transfer-encoding", "content-length"})


@dataclass(frozen=True, slots=True)
class ProxyEndpoint:
    """Where the crawl's archiving proxy listens: ``url`` (``http://127.0.0.1:PORT``)
    and the PEM file of its CA for HTTPS (None: no HTTPS man-in-the-middle)."""

    url: str
    ca_file: str | None = None


class ProxyLauncher(Protocol):
    """Starts the crawl's archiving proxy on loopback and stops it on exit
    (``webark.cli`` supplies :func:`webark.cli.crawl_browser.launch_proxy`)."""

    def __call__(self, backend: WarcCaptureBackend, fetcher: HttpFetcher,
                 gate: RequestGate) -> AbstractAsyncContextManager[ProxyEndpoint]:  # fmt: skip
        """A proxy archiving through ``backend``, fetching with ``fetcher`` and
        applying ``gate`` to every request, while the context is entered."""
        ...


@dataclass
class _Rendered:
    """A visit waiting for the disposition chain."""

    visit: PageVisit
    captures: PageCaptures
    reason: str


class BrowserDelegation:
    """The hybrid crawl's extension (module docstring).

    Args:
        job: the crawl job (its ``browser:`` section).
        launch: starts the archiving proxy (:class:`ProxyLauncher`).
        settings: the section, validated (default: read from ``job``).
        pool_factory: makes the pool from the proxy endpoint (default:
            :class:`~webark.crawl.browser.pool.BrowserPool` with the section's settings).
    """

    name = "browser"

    def __init__(self, job: CrawlJob, launch: ProxyLauncher,
                 settings: BrowserSettings | None = None,
                 pool_factory: PoolFactory | None = None) -> None:  # fmt: skip
        self.job = job
        self.settings = settings or browser_settings(job.browser)
        self.rules = DelegationRules(self.settings)
        self.launch = launch
        self.pool_factory = pool_factory or self._pool
        self.counts = BrowserCounts()
        self.titles: dict[str, str] = {}
        """Page URI → the browser's document title (pages/pages.jsonl)."""
        self.reports: tuple[Report, ...] = (BrowserReport(),)
        self.gate: CrawlGate | None = None
        self._ctx: CrawlContext | None = None
        self._pool_ready: asyncio.Future[BrowserPool] | None = None
        self._pending: dict[str, _Rendered] = {}

    # -- the extension ---------------------------------------------------------------
    def open(self, ctx: CrawlContext, wake: Callable[[], None]) -> Sequence[Processor]:
        """Hook into ``ctx``: the fetch and extract processors, the shared host slots,
        queues held while a page renders, the report's snapshot."""
        self._ctx = ctx
        ctx.fetch_processors.append(BrowserPage(self))
        ctx.extract_processors.append(BrowserRender(self))
        ctx.hold_queues = True
        ctx.host_slots = HostSlots(ctx)
        ctx.stats.extension_snapshots[self.name] = self.snapshot
        self._pool_ready = asyncio.get_running_loop().create_future()
        return [BrowserOutlinks(self)]

    async def run(self) -> None:
        """Start the proxy (with the crawl's gate) and the pool; hold them until the
        crawl cancels this task, then stop both."""
        ctx = self._ctx
        assert ctx is not None and ctx.backend is not None and ctx.fetcher is not None
        assert ctx.robots is not None and isinstance(ctx.host_slots, HostSlots)
        assert self._pool_ready is not None
        self.gate = CrawlGate(ctx, ctx.host_slots, ctx.robots)
        try:
            async with contextlib.AsyncExitStack() as stack:
                endpoint = await stack.enter_async_context(
                    self.launch(ctx.backend, ctx.fetcher, self.gate))
                pool = await stack.enter_async_context(self.pool_factory(endpoint))
                log.info("browser pool: %d pages through the proxy at %s", pool.size,
                         endpoint.url)  # fmt: skip
                self._pool_ready.set_result(pool)
                await asyncio.Event().wait()  # until the crawl is over
        except BaseException as e:
            if not self._pool_ready.done():
                failed = e if isinstance(e, Exception) else RuntimeError("browser pool stopped")
                self._pool_ready.set_exception(failed)
            raise
        finally:
            if not self._pool_ready.done():
                self._pool_ready.set_exception(RuntimeError("the browser pool is closed"))
            with contextlib.suppress(BaseException):
                self._pool_ready.exception()  # retrieved: no "never retrieved" warning

    def close(self) -> None:
        """Nothing held beyond :meth:`run` (the pool and proxy stop with it)."""

    def _pool(self, endpoint: ProxyEndpoint) -> BrowserPool:
        s = self.settings
        kwargs: dict[str, Any] = {}
        if s.executable_path is not None:
            kwargs["executable_path"] = s.executable_path
        return BrowserPool(endpoint.url, ca_file=endpoint.ca_file, size=s.pool_size,
                           viewport=Viewport(*s.viewport), **kwargs)  # fmt: skip

    # -- visits ----------------------------------------------------------------------
    async def visit(self, p: UriProcessing, document: PrefetchedDocument | None,
                    reason: str) -> _Rendered:  # fmt: skip
        """Render ``p``'s URI in a page of the pool (``document``: the fetched page, or
        None to load it through the proxy), its captures collected by the gate.

        Raises:
            BrowserUnavailableError, BrowserClosedError: no pool (it failed to start,
                or Chromium went away).
        """
        assert self._pool_ready is not None
        pool = await asyncio.shield(self._pool_ready)
        assert self.gate is not None
        curi = p.curi
        page = PageContext(curi.uri, curi.hops, curi.via, curi.source, p.worker)
        headers = {"Warcprox-Meta": json.dumps({"metadata": page.to_metadata()},
                                               separators=(",", ":"))}  # fmt: skip
        self.gate.watch(curi.uri, logs_own=document is None)
        try:
            visit = await pool.visit(curi.uri, extra_headers=headers, document=document,
                                     behavior_timeout=self.settings.behavior_timeout,
                                     load_timeout=self.settings.load_timeout)  # fmt: skip
        finally:
            captures = self.gate.unwatch(curi.uri)
        c = self.counts
        c.pages += 1
        c.by_reason[reason.split(":")[0]] += 1
        c.page_requests += visit.requests.total
        c.proxied += visit.requests.proxied
        c.errors += bool(visit.errors)
        if visit.title:
            self.titles[curi.uri] = visit.title
            append_title(self.job.state_dir / TITLES_FILE, curi.uri, visit.title)
        for e in visit.errors[:5]:
            log.info("browser: %s: %s", curi.uri, e)
        return _Rendered(visit, captures, reason)

    def hold(self, p: UriProcessing, rendered: _Rendered) -> None:
        """Keep a visit for ``p``'s disposition chain (``browserOutlinks``)."""
        p.annotations.append(RENDERED)
        self._pending[p.curi.uri] = rendered

    def take(self, p: UriProcessing) -> _Rendered | None:
        """The visit kept for ``p``, removed."""
        return self._pending.pop(p.curi.uri, None)

    def is_pending(self, p: UriProcessing) -> bool:
        return p.curi.uri in self._pending

    def snapshot(self) -> BrowserSnapshot:
        """A read-only view for the browser report (copies of the counts)."""
        c = self.counts
        traffic = self.gate.traffic if self.gate is not None else BrowserTraffic()
        return BrowserSnapshot(replace(c, by_reason=Counter(c.by_reason)), replace(traffic))


def prefetched(p: UriProcessing) -> PrefetchedDocument:
    """The fetched page of ``p`` as the browser gets it: status, header fields (codings
    and length dropped: the body is given decoded) and the decoded body."""
    ex = p.exchange
    assert ex is not None
    body = decoded_body(ex).data
    headers = [(n, v) for n, v in ex.headers if n.lower() not in _DOC_DROPPED]
    return PrefetchedDocument(ex.http_status or p.status, headers, body)


class BrowserPage:
    """``browserPage`` (fetch chain): a URI delegated before the fetch (module
    docstring)."""

    name = "browserPage"

    def __init__(self, ext: BrowserDelegation) -> None:
        self.ext = ext

    def should_process(self, p: UriProcessing) -> bool:
        rule = self.ext.rules.before_fetch(p.curi.uri, p.curi.last_hop)
        return p.exchange is None and not p.skipping and rule is not None

    async def process(self, p: UriProcessing) -> None:
        reason = self.ext.rules.before_fetch(p.curi.uri, p.curi.last_hop) or ""
        rendered = await self.ext.visit(p, None, reason)
        own = rendered.captures.own
        if own is None:  # the browser did not get the page: the bulk crawler fetches it
            self.ext.counts.fell_back += 1
            log.warning("browser: %s not loaded (%s); fetching it", p.curi.uri,
                        "; ".join(rendered.visit.errors) or "no response")  # fmt: skip
            return
        p.exchange, p.capture = own
        p.status = own[0].status
        self.ext.hold(p, rendered)


class BrowserRender:
    """``browserRender`` (extract chain): a fetched page the heuristic picks (module
    docstring)."""

    name = "browserRender"

    def __init__(self, ext: BrowserDelegation) -> None:
        self.ext = ext

    def should_process(self, p: UriProcessing) -> bool:
        ex = p.exchange
        return (p.fetched and ex is not None and p.capture is None
                and not self.ext.is_pending(p) and 200 <= p.status < 300
                and (self.ext.settings.troublesome is not None
                     or (p.curi.last_hop == "X" and bool(self.ext.settings.regex
                                                         or self.ext.settings.hosts)))
                and (ex.mime or "") in ("text/html", "application/xhtml+xml"))  # fmt: skip

    async def process(self, p: UriProcessing) -> None:
        doc = prefetched(p)
        reason = self.ext.rules.after_fetch(p.status, p.exchange.mime if p.exchange else None,
                                            doc.body, [lk.hop for lk in p.links],
                                            p.curi.last_hop, p.curi.uri)  # fmt: skip
        if reason is None:
            return
        self.ext.hold(p, await self.ext.visit(p, doc, reason))


def _absolute(url: str) -> str | None:
    """``url`` without its fragment when it is http(s), else None."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return None
    if parts.scheme.lower() not in ("http", "https") or not parts.netloc:
        return None
    return urlunsplit(parts._replace(fragment=""))


class BrowserOutlinks:
    """``browserOutlinks`` (disposition chain, after ``warcWriter``): the visit's links
    and screenshots (module docstring)."""

    name = "browserOutlinks"

    def __init__(self, ext: BrowserDelegation) -> None:
        self.ext = ext

    def should_process(self, p: UriProcessing) -> bool:
        return self.ext.is_pending(p)

    async def process(self, p: UriProcessing) -> None:
        rendered = self.ext.take(p)
        if rendered is None:
            return
        visit = rendered.visit
        known = {lk.url for lk in p.links}
        added = 0
        for urls, context in ((visit.outlinks, "browser a/@href"),
                              (visit.window_open, "browser window.open")):  # fmt: skip
            for raw in urls:
                url = _absolute(raw)
                if url is not None and url not in known and url != p.curi.uri:
                    known.add(url)
                    p.links.append(Link(url, "L", context))
                    added += 1
        self.ext.counts.outlinks_added += added
        await self._screenshots(p, visit)

    async def _screenshots(self, p: UriProcessing, visit: PageVisit) -> None:
        ctx = self.ext._ctx
        if not self.ext.settings.screenshots or ctx is None or ctx.backend is None:
            return
        if p.capture is None:
            return
        page_id = p.capture.first.record_id
        builder = ctx.backend.series.builder
        records = []
        for prefix, data, mime in ((VIEW, visit.screenshot_png, "image/png"),
                                   (THUMB, visit.thumbnail_jpeg, "image/jpeg")):  # fmt: skip
            if data:
                records.append(builder.resource(prefix + p.curi.uri, data, mime,
                                                concurrent_to=[page_id] if page_id else []))
        if records:
            await ctx.backend.write_record(*records, meta=CaptureMeta(metadata_record=False))
            self.ext.counts.screenshots += len(records)
