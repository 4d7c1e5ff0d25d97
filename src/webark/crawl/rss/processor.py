"""``rssFeeds``: the processor that reads a site's feeds (CrawlRSS's ``RssExtractor``),
in the disposition chain after ``warcWriter`` (the capture is on disk) and before
``candidates``.

For a fetched feed of a round in progress (:meth:`RssScheduler.reading`):

* a ``304`` (a conditional request: the server says not modified), or a payload digest
  equal to the feed's ``last_digest`` — the last fetch that was read — is **unchanged**:
  no entries, no implied pages. The capture back end has written it as a revisit
  (``server-not-modified``, or ``identical-payload-digest`` through its dedup index);
  webark decides "unchanged" on the feed's own digest, not on the dedup index, so a
  capture whose entries were not read before a crash is read when fetched again;
* any other ``2xx`` is parsed with feedparser; the new entries
  (:func:`~webark.crawl.rss.entries.new_entries`) and, when there is one, the feed's
  implied pages join the round; the feed's memory and digest are saved (one
  transaction, :meth:`RssStore.record_feed`);
* other statuses are left to the scheduler, which marks the feed done when the frontier
  finishes it (a ``503`` is retried first).

In every case a feed's own outlinks are dropped: a round follows its new entries only.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from webark.crawl.processing import UriProcessing
from webark.crawl.rss.entries import new_entries, parse_feed
from webark.crawl.stats import WorkerBoard
from webark.fetch.body import decoded_body
from webark.warc.payload import MAX_DECODED_BYTES

if TYPE_CHECKING:
    from webark.crawl.rss.scheduler import RssScheduler

__all__ = ["RssFeedsProcessor"]


class RssFeedsProcessor:
    """The ``rssFeeds`` processor (module docstring)."""

    name = "rssFeeds"

    def __init__(self, scheduler: RssScheduler, board: WorkerBoard) -> None:
        self.scheduler = scheduler
        self.board = board

    def should_process(self, p: UriProcessing) -> bool:
        return p.fetched and self.scheduler.is_feed(p.curi)

    async def process(self, p: UriProcessing) -> None:
        p.links = []  # a feed's own links are not followed, only its new entries
        sched = self.scheduler
        feed = sched.reading(p.curi)
        ex = p.exchange
        assert ex is not None
        status = ex.http_status or p.status
        if feed is None or not (status == 304 or 200 <= status < 300):
            return
        store, site, uri = sched.store, p.curi.source or feed.site, feed.uri
        known = sched.feed_states.get(uri)
        digest = ex.payload_digest
        unchanged = status == 304 or (
            digest is not None and known is not None and digest == known.last_digest
        )
        if unchanged:
            store.record_feed(site, uri, now=sched.now(), status=status, digest=None,
                              unchanged=True, memory=None)  # fmt: skip
        else:
            body = decoded_body(ex, MAX_DECODED_BYTES).data
            parsed = await asyncio.to_thread(parse_feed, body, uri, ex.content_type)
            if sched.reading(p.curi) is None:  # the round moved on meanwhile (operator)
                return
            now = sched.now()
            found = new_entries(parsed, store.feed_memory(uri), now)
            implied = feed.implied_pages if found.entries else ()
            store.record_feed(
                site, uri, now=now, status=status, digest=digest, unchanged=False,
                memory=found.memory, entries=found.entries, implied=implied,
                error=parsed.error if not parsed.entries else None,
            )  # fmt: skip
            self.board.add_items(self.name, len(found.entries))
        sched.feed_read(site, uri)
