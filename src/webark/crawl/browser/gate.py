"""Politeness and scope for the browser's traffic: the crawl's
:class:`~webark.capture.gate.RequestGate` (:class:`CrawlGate`), which the archiving
proxy applies to every request a delegated page makes, and the per-host slots
(:class:`HostSlots`) that the bulk crawler's fetches take too.

For each request of a browser page, in this order (Heritrix ExtractorChrome sent its
browser's sub-requests through the frontier's scope check the same way):

1. **scope** — the request as a URI discovered from its page (hop path + ``E``, via
   the page, the page's source tag) goes through the crawl's scope
   (:meth:`~webark.crawl.context.CrawlContext.scope_for`); rejected: answered **403**,
   not fetched, counted (``out_of_scope``);
2. **robots.txt** — the crawl's robots policy for the request's origin (fetched first,
   as a prerequisite of hop ``P``, when not known yet); excluded (or robots.txt
   unreachable, RFC 9309 §2.3.1.4): **403**, counted (``robots_excluded``);
3. **politeness** — the request waits for its host's slot (:class:`HostSlots`): never two
   requests at once to one politeness key, the bulk crawler's fetches included, and
   between two of them the job's delay (``clamp(delay_factor × fetch time, min_delay,
   max_delay)``, raised to the host's robots.txt Crawl-delay: Heritrix's rule,
   :func:`~webark.crawl.politeness.politeness_delay`, with the host's own overrides).

Requests without a page context (Chromium's own background traffic, which its flags do
not all silence) are refused (403) before anything else.

A capture the proxy made (:meth:`CrawlGate.captured`) is marked seen in the frontier
(added and at once settled as finished, so the bulk crawler does not fetch it again),
counted in the crawl's statistics, and kept for the page's visit; the page's own capture
(a URI delegated before the fetch) is the crawl's to log (``WrenderedURL``), the others
the proxy logs (hop path ``…E``, via the page).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from webark.capture.gate import PageContext, Refusal
from webark.capture.meta import CaptureResult
from webark.crawl.context import CrawlContext, RobotsRules
from webark.crawl.curi import CrawlURI, politeness_key
from webark.crawl.politeness import politeness_delay
from webark.crawl.scope import Decision
from webark.fetch import Exchange
from webark.robots import RobotsPolicy, RobotsStatus

__all__ = ["BrowserTraffic", "CrawlGate", "HostSlots", "PageCaptures"]

log = logging.getLogger(__name__)


class HostSlots:
    """One request at a time per politeness key, and the job's delay between two
    (module docstring, step 3). Shared by the bulk crawler's ``fetchHttp`` and the
    browser's requests through the proxy.

    Args:
        ctx: the crawl (its frontier settings give the delay of each key).
        clock: monotonic seconds (tests may pass their own).
    """

    def __init__(self, ctx: CrawlContext, clock: Callable[[], float] = time.monotonic) -> None:
        self.ctx = ctx
        self.clock = clock
        self._locks: dict[str, asyncio.Lock] = {}
        self._due: dict[str, float] = {}

    @contextlib.asynccontextmanager
    async def hold(self, key: str, crawl_delay: float | None = None) -> AsyncIterator[None]:
        """Hold the slot of ``key`` (a politeness key, :func:`politeness_key`): wait for
        the request before to end and for its delay to pass, then run the body. The
        next request's delay counts from the end of this one and its duration
        (``crawl_delay``: the host's robots.txt Crawl-delay, seconds)."""
        lock = self._locks.setdefault(key, asyncio.Lock())
        async with lock:
            wait = self._due.get(key, -math.inf) - self.clock()
            if wait > 0:
                await asyncio.sleep(wait)
            began = self.clock()
            try:
                yield
            finally:
                end = self.clock()
                config = self.ctx.frontier_config.for_queue(key)
                self._due[key] = end + politeness_delay(end - began, config, crawl_delay)


@dataclass
class PageCaptures:
    """What the proxy captured for one page while its visit ran.

    Attributes:
        page: the page's URI.
        own: the page's own capture (exchange, result), when the browser fetched it.
        others: URIs of the page's other captures (subresources, in order).
        refused: URIs refused (out of scope or by robots.txt).
    """

    page: str
    own: tuple[Exchange, CaptureResult] | None = None
    others: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)


@dataclass
class BrowserTraffic:
    """Counts of the browser's requests through the gate (the browser report)."""

    admitted: int = 0
    not_a_page: int = 0
    """Requests without a page context (Chromium's own: component updates, sign-in),
    refused."""
    captured: int = 0
    out_of_scope: int = 0
    robots_excluded: int = 0
    marked_seen: int = 0


class CrawlGate:
    """The crawl's :class:`~webark.capture.gate.RequestGate` (module docstring).

    Args:
        ctx: the crawl (scope, frontier, statistics).
        slots: the per-host slots, shared with ``fetchHttp``.
        robots: the crawl's robots.txt rules (the ``preconditions`` processor's).

    Use from the crawl's event loop (the proxy runs in it).
    """

    def __init__(self, ctx: CrawlContext, slots: HostSlots, robots: RobotsRules) -> None:
        self.ctx = ctx
        self.slots = slots
        self.robots = robots
        self.traffic = BrowserTraffic()
        self.pages: dict[str, PageCaptures] = {}
        """Pages whose visit runs now → what was captured for them (:meth:`watch`)."""
        self.logs_own: set[str] = set()
        """Pages whose own capture the crawl logs (delegated before the fetch)."""
        self._robots_locks: dict[str, asyncio.Lock] = {}
        self._robots_known: set[str] = set()

    def watch(self, page: str, *, logs_own: bool) -> PageCaptures:
        """Start collecting the captures of ``page`` (its visit begins); ``logs_own``:
        the crawl writes the page's own crawl.log line."""
        pc = self.pages[page] = PageCaptures(page)
        if logs_own:
            self.logs_own.add(page)
        return pc

    def unwatch(self, page: str) -> PageCaptures:
        """Stop collecting for ``page`` (its visit ended); what was collected."""
        self.logs_own.discard(page)
        return self.pages.pop(page, PageCaptures(page))

    @staticmethod
    def curi_of(url: str, page: PageContext | None) -> CrawlURI:
        """``url`` as a URI discovered from ``page`` (hop path and via of
        :meth:`PageContext.hops_of`), or a URI of its own without a page."""
        if page is None:
            return CrawlURI(url)
        hops, via = page.hops_of(url)
        return CrawlURI(url, hops=hops, via=via, source=page.source)

    def _refuse(self, url: str, page: PageContext | None, why: str) -> Refusal:
        if page is not None and page.page in self.pages:
            self.pages[page.page].refused.append(url)
        log.info("browser request refused (%s): %s", why, url)
        return Refusal(403, "Forbidden", f"{why}: {url}\n")

    @contextlib.asynccontextmanager
    async def admit(self, url: str, page: PageContext | None) -> AsyncIterator[Refusal | None]:
        """See :meth:`~webark.capture.gate.RequestGate.admit` (module docstring)."""
        curi = self.curi_of(url, page)
        if page is None:  # the browser's own traffic (updates, sign-in): no crawl page's
            self.traffic.not_a_page += 1
            yield self._refuse(url, page, "not a request of a crawl's page")
            return
        if urlsplit(url).scheme.lower() not in ("http", "https"):
            yield self._refuse(url, page, "not an http(s) URI")
            return
        own = page is not None and url == page.page  # the page: admitted by the crawl
        if not own and self.ctx.scope_for(curi).decide(curi) is not Decision.ACCEPT:
            self.traffic.out_of_scope += 1
            yield self._refuse(url, page, "out of the crawl's scope")
            return
        crawl_delay = None
        try:
            policy = await self._robots_policy(curi, page.worker if page else 0)
        except Exception as e:  # deferred (network trouble) or stopping: not now
            self.traffic.robots_excluded += 1
            yield self._refuse(url, page, f"robots.txt not available ({type(e).__name__})")
            return
        if policy is not None:
            token = self.ctx.job.robots_token
            crawl_delay = policy.crawl_delay(token)
            if policy.status is RobotsStatus.UNREACHABLE or not policy.allowed(
                url, token, curi.last_hop, mode=self.robots.mode
            ):
                self.traffic.robots_excluded += 1
                yield self._refuse(url, page, "excluded by robots.txt")
                return
        self.traffic.admitted += 1
        async with self.slots.hold(politeness_key(url), crawl_delay):
            yield None

    async def _robots_policy(self, curi: CrawlURI, worker: int) -> RobotsPolicy | None:
        """The robots.txt policy of the URI's origin. The first request of an origin
        looks it up holding the host's slot (robots.txt may be fetched: a request to
        the host like any other); the page's other requests wait for that lookup
        instead of fetching robots.txt each (a browser asks for many at once)."""
        parts = urlsplit(curi.uri)
        origin = f"{parts.scheme.lower()}://{parts.netloc.lower()}"
        if origin in self._robots_known:
            return (await self.robots.policy_for(curi, worker))[0]
        async with self._robots_locks.setdefault(origin, asyncio.Lock()):
            if origin in self._robots_known:
                return (await self.robots.policy_for(curi, worker))[0]
            async with self.slots.hold(curi.key):
                policy, _owed = await self.robots.policy_for(curi, worker)
            self._robots_known.add(origin)
            return policy

    def captured(self, url: str, exchange: Exchange, result: CaptureResult,
                 page: PageContext | None) -> bool:  # fmt: skip
        """See :meth:`~webark.capture.gate.RequestGate.captured` (module docstring)."""
        self.traffic.captured += 1
        pc = self.pages.get(page.page) if page is not None else None
        if page is not None and url == page.page:
            if pc is not None and pc.own is None:
                pc.own = (exchange, result)
            return page.page in self.logs_own
        if pc is not None:
            pc.others.append(url)
        self._mark_seen(self.curi_of(url, page), exchange, result)
        return False

    def _mark_seen(self, curi: CrawlURI, ex: Exchange, result: CaptureResult) -> None:
        """The capture counts in the statistics, and its URI is finished in the frontier
        (added, then settled), so the bulk crawler never fetches it again."""
        ctx = self.ctx
        ctx.stats.record(curi.uri, ex.status, result.payload_size, ex.mime, source=curi.source,
                         duplicate=result.revisit_kind == "digest")  # fmt: skip
        frontier = ctx.frontier
        if frontier is None or curi.uri in ctx.queued:
            return
        frontier.add(curi)  # a no-op when known; then finished if it waits in a queue
        if frontier.settle(curi.uri, ex.status, size=result.payload_size):
            self.traffic.marked_seen += 1
        ctx.queued.add(curi.uri)
