"""The continuous crawl's scheduler: rounds of each site (CrawlRSS's ``RssCrawlController``
and ``RssSite``), as a crawl extension (:mod:`webark.crawl.extension`).

A round of a site, and where each step is kept so that ``kill -9`` loses nothing:

1. **Emission** (site WAITING, active, ``now >= last_feed_update + min_wait``): the site
   goes to phase FEEDS with the list of its active feeds in the database, *then* the
   feeds are added to the frontier (``force``: they were fetched before). Hop path
   empty, source tag = the site's name, which every URI derived from them inherits.
2. **Feeds**: each fetched feed is read by the ``rssFeeds`` processor
   (:mod:`webark.crawl.rss.processor`): its new entries and (when it had any) its
   implied pages go to the round's list, its state (most recent date, digest) is saved
   and it is marked done, in one transaction, before the feed is finished in the
   frontier. A feed that failed (network, robots.txt, a status other than 2xx/304) is
   marked done when the frontier finishes it (:meth:`RssScheduler.uri_finished`).
3. **Items**: once every feed of the round is done, the round's list — each URL once,
   however many feeds named it — is added to the frontier (``force``: entries and
   implied pages bypass the already-seen filter), *then* the site goes to phase ITEMS.
   Their outlinks go through the candidates processor with the round's scope (hop path
   ``.R?((E{0,2})|XE?)``), so embeds are fetched and links beyond are not; an embed the
   seen filter drops (a style sheet fetched before) or the scope rejects is finished
   at once.
4. **End**: the round is over when the frontier holds no unfinished URI with the
   site's source tag (:meth:`~webark.crawl.frontier.Frontier.unfinished`), which counts
   everything derived from the round, dropped duplicates being none of it. The site
   goes back to WAITING; its next round is due ``min_wait`` after this round's
   emission, so the period is ``max(min_wait, time to crawl a round)`` (CrawlRSS).

Resume (:meth:`RssScheduler.open`): a site in FEEDS adds its feeds not yet done again
(``force`` re-queues only a finished one: at worst a feed is fetched once more, and an
unchanged feed gives nothing); a site in FEEDS whose feeds are all done makes step 3
(adding what is already queued changes nothing); a site in ITEMS only waits for its
URIs, which the frontier kept. A feed fetched again after its round moved on is
captured but not read (its entries are read in the next round), so no entry is
captured twice and none is lost.

Configuration changes (``webark rss …``, the control API) are seen within
``poll_interval`` seconds through the database's ``data_version``: a new minimum wait
counts from the last emission; a new or re-activated feed joins the site's next round;
a deactivated site finishes its round and starts no other.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from webark.crawl.curi import CrawlURI
from webark.crawl.jobdir import CrawlSetupError
from webark.crawl.rss.model import FeedConfig, FeedState, Phase, SiteConfig, SiteState
from webark.crawl.rss.report import FeedReport, RssReport, RssSnapshot, SiteReport
from webark.crawl.rss.settings import RssSettings, rss_settings
from webark.crawl.rss.store import RssStore, RssStoreError
from webark.crawl.scope import DecideRuleSequence, build_scope

if TYPE_CHECKING:
    from webark.crawl.context import CrawlContext
    from webark.crawl.frontier import Frontier
    from webark.crawl.job import CrawlJob
    from webark.crawl.processing import Processor
    from webark.crawl.reports import Report

__all__ = ["RssScheduler"]

log = logging.getLogger(__name__)


class RssScheduler:
    """Continuous crawling of the sites in the job's RSS database (module docstring).

    A :class:`~webark.crawl.extension.CrawlExtension` and a
    :class:`~webark.crawl.context.UriListener`. Use from the crawl's event loop only.

    Args:
        job: the crawl job (its ``rss:`` section, its folder).
        settings: the section, already validated (default: read from ``job``).
    """

    name = "rss"

    def __init__(self, job: CrawlJob, settings: RssSettings | None = None) -> None:
        self.settings = settings or rss_settings(job.rss)
        self.database = self.settings.database_path(job.job_dir)
        self.scope: DecideRuleSequence = build_scope(self.settings.scope_options(), ())
        """The scope of what rounds derive (CrawlRSS's hop-path rule)."""
        self.reports: tuple[Report, ...] = (RssReport(),)
        self._store: RssStore | None = None
        self._ctx: CrawlContext | None = None
        self._wake_workers: Callable[[], None] = lambda: None
        self._event = asyncio.Event()
        self._version = -1
        self.sites: dict[str, SiteConfig] = {}
        self.feeds: dict[str, FeedConfig] = {}
        self.states: dict[str, SiteState] = {}
        self.feed_states: dict[str, FeedState] = {}
        self.round_feeds: dict[str, dict[str, bool]] = {}
        """Site → its current round's feeds → done (a copy of the database's)."""
        self.in_progress: dict[str, int] = {}
        """Site → unfinished URIs of its round, as last counted."""
        self._dirty: set[str] = set()

    # -- the extension -----------------------------------------------------------------
    @property
    def store(self) -> RssStore:
        """The database (once open)."""
        assert self._store is not None, "the scheduler is not open"
        return self._store

    @property
    def frontier(self) -> Frontier:
        assert self._ctx is not None and self._ctx.frontier is not None
        return self._ctx.frontier

    def now(self) -> float:
        """The crawl's clock (wall-clock seconds, advanced by the monotonic clock)."""
        assert self._ctx is not None
        return self._ctx.stats.now()

    def open(self, ctx: CrawlContext, wake: Callable[[], None]) -> Sequence[Processor]:
        """Open the database (adding the job file's sites that it lacks), hook into
        ``ctx`` and finish what a killed run left (module docstring).

        Raises:
            CrawlSetupError: the database cannot be used.
        """
        from webark.crawl.rss.processor import RssFeedsProcessor

        self._ctx, self._wake_workers = ctx, wake
        try:
            self.database.parent.mkdir(parents=True, exist_ok=True)
            self._store = RssStore.open(self.database)
        except (RssStoreError, OSError) as e:
            raise CrawlSetupError(f"continuous crawling: {e}") from e
        self._import_job_sites()
        self._reload()
        ctx.listeners.append(self)
        ctx.run_while_empty = True
        ctx.stats.extension_snapshots[self.name] = self.snapshot
        for name, state in self.states.items():
            if state.phase is Phase.FEEDS:
                self._add_feeds(name, [u for u, done in self.round_feeds[name].items() if not done])
                self._dirty.add(name)
            elif state.phase is Phase.ITEMS:
                self._dirty.add(name)
        self._settle()
        return [RssFeedsProcessor(self, ctx.stats.board)]

    def close(self) -> None:
        """Close the database."""
        if self._store is not None:
            self._store.close()
            self._store = None

    async def run(self) -> None:
        """Start rounds when sites are due, end them when their URIs are finished, and
        reload the configuration when it changed; until cancelled."""
        poll = self.settings.poll_interval
        while True:
            if self.store.data_version() != self._version:
                self._reload()
            self._settle()
            self._start_due_rounds()
            wait = poll
            due = self.next_due()
            if due is not None:
                wait = min(poll, max(0.0, due - self.now()))
            try:  # (not wait_for: Python 3.11's can swallow the crawl's cancellation)
                async with asyncio.timeout(wait):
                    await self._event.wait()
            except TimeoutError:  # a quiet moment: look at every round in progress
                self._dirty.update(n for n, st in self.states.items()
                                   if st.phase is not Phase.WAITING)  # fmt: skip
            self._event.clear()

    def config_changed(self) -> None:
        """Look at the database now (the control API changed it)."""
        self._version = -1
        self._event.set()

    # -- the listener --------------------------------------------------------------------
    def uri_finished(self, curi: CrawlURI, status: int) -> None:
        """Account a finished URI of a site's round: a feed that failed is done; any
        URI of the site may end its round (checked by :meth:`run`)."""
        site = curi.source
        if site is None or site not in self.round_feeds:
            return
        feeds = self.round_feeds[site]
        if curi.hops == "" and feeds.get(curi.uri) is False:
            self.store.feed_failed(site, curi.uri, now=self.now(), status=status)
            feeds[curi.uri] = True
            self._refresh_feed(curi.uri)
        self._dirty.add(site)
        self._event.set()

    # -- what the rssFeeds processor asks -------------------------------------------------
    def reading(self, curi: CrawlURI) -> FeedConfig | None:
        """The feed ``curi`` is when it is to be read now: a feed of a site's round in
        phase FEEDS, not done yet. None otherwise (not a feed, or fetched again after
        its round moved on)."""
        site = curi.source
        if curi.hops or site is None:
            return None
        if self.round_feeds.get(site, {}).get(curi.uri) is False:
            return self.feeds.get(curi.uri) or FeedConfig(curi.uri, site)
        return None

    def is_feed(self, curi: CrawlURI) -> bool:
        """True when ``curi`` is a feed emitted by a site (its own links are never
        followed)."""
        return not curi.hops and curi.source in self.sites and curi.uri in self.feeds

    def feed_read(self, site: str, uri: str) -> None:
        """The processor saved a read feed (done)."""
        self.round_feeds.get(site, {})[uri] = True
        self._refresh_feed(uri)
        self._dirty.add(site)

    # -- rounds --------------------------------------------------------------------------
    def next_due(self) -> float | None:
        """When the next waiting active site is due (wall-clock seconds), or None."""
        due = [self._due(s) for s in self.sites.values()]
        return min((d for d in due if d is not None), default=None)

    def _due(self, site: SiteConfig) -> float | None:
        state = self.states.get(site.name)
        if not site.active or state is None or state.phase is not Phase.WAITING:
            return None
        if not any(f.active for f in self.feeds.values() if f.site == site.name):
            return None
        last = state.last_feed_update
        return 0.0 if last is None else last + site.min_wait

    def _start_due_rounds(self) -> None:
        now = self.now()
        for site in self.sites.values():
            due = self._due(site)
            if due is not None and due <= now:
                self._start_round(site.name, now)

    def _start_round(self, site: str, now: float) -> None:
        feeds = sorted(f.uri for f in self.feeds.values() if f.site == site and f.active)
        self.store.start_round(site, feeds, now)  # first in the database, then the frontier
        self.round_feeds[site] = dict.fromkeys(feeds, False)
        self._refresh_site(site)
        self._add_feeds(site, feeds)
        log.info("rss: site %s: round %d, %d feeds emitted at %.6f", site,
                 self.states[site].rounds, len(feeds), now)  # fmt: skip

    def _add_feeds(self, site: str, feeds: list[str]) -> None:
        if feeds:
            self.frontier.add_many([CrawlURI(f, source=site) for f in feeds], force=True)
            self._wake_workers()

    def _settle(self) -> None:
        """Move the sites whose URIs finished on: FEEDS → ITEMS once every feed is
        done, ITEMS → WAITING once nothing of the site is left in the frontier."""
        dirty, self._dirty = self._dirty, set()
        for site in dirty:
            state = self.states.get(site)
            if state is None:
                continue
            if state.phase is Phase.FEEDS and all(self.round_feeds.get(site, {}).values()):
                self._emit_items(site)
                state = self.states[site]
            n = self.in_progress[site] = self.frontier.unfinished(site)
            if state.phase is Phase.ITEMS and n == 0:
                self.store.end_round(site, self.now())
                self.round_feeds.pop(site, None)
                self._refresh_site(site)
                self._event.set()  # the site may be due already

    def _emit_items(self, site: str) -> None:
        curis = [CrawlURI(uri, hops="L", via=feed, source=site)
                 for uri, _, feed in self.store.round_items(site)]  # fmt: skip
        if curis:  # first the frontier, then the database (repeatable: see the docstring)
            self.frontier.add_many(curis, force=True)
            self._wake_workers()
        self.store.set_phase(site, Phase.ITEMS)
        self._refresh_site(site)

    # -- configuration -------------------------------------------------------------------
    def _import_job_sites(self) -> None:
        store = self.store
        known = {s.name for s in store.sites()}
        feeds = {f.uri for f in store.feeds()}
        for spec in self.settings.sites:
            if spec.name not in known:
                store.add_site(spec.name, min_wait=spec.min_wait, active=spec.active)
            for f in spec.feeds:
                if f.uri not in feeds:
                    store.add_feed(spec.name, f.uri, implied_pages=f.implied_pages,
                                   active=f.active)  # fmt: skip

    def _reload(self) -> None:
        """Read the configuration and state again (they changed)."""
        store = self.store
        self._version = store.data_version()
        self.sites = {s.name: s for s in store.sites()}
        self.feeds = {f.uri: f for f in store.feeds()}
        self.states = store.site_states()
        self.feed_states = store.feed_states()
        for name, state in self.states.items():
            if state.phase is Phase.WAITING:
                self.round_feeds.pop(name, None)
            elif name not in self.round_feeds:
                self.round_feeds[name] = store.round_feeds(name)
        assert self._ctx is not None
        for name in self.sites:
            self._ctx.source_scopes[name] = self.scope
        self._event.set()

    def _refresh_site(self, site: str) -> None:
        states = self.store.site_states()
        if site in states:
            self.states[site] = states[site]

    def _refresh_feed(self, uri: str) -> None:
        states = self.store.feed_states()
        if uri in states:
            self.feed_states[uri] = states[uri]

    # -- the report ----------------------------------------------------------------------
    def snapshot(self) -> RssSnapshot:
        """A read-only view of every site and feed (the RSS report's input)."""
        now = self.now() if self._ctx is not None else 0.0
        sites = []
        for name, cfg in sorted(self.sites.items()):
            state = self.states.get(name, SiteState(name))
            feeds = tuple(
                FeedReport(f.uri, f.active, f.implied_pages,
                           self.feed_states.get(f.uri, FeedState(f.uri)))
                for f in sorted(self.feeds.values(), key=lambda f: f.uri) if f.site == name
            )  # fmt: skip
            last = state.last_feed_update
            next_due = None if not cfg.active else (now if last is None else last + cfg.min_wait)
            sites.append(SiteReport(
                config=cfg, state=state, feeds=feeds, next_eligible=next_due,
                in_progress=self.in_progress.get(name, 0) if state.phase is not Phase.WAITING
                else 0,
            ))  # fmt: skip
        return RssSnapshot(now, tuple(sites), self.settings.hops_regex)
