"""Which entries of a feed are new: feedparser reads RSS 0.9x/1.0/2.0 and Atom, webark
decides (pure functions, no I/O).

CrawlRSS's rule (``RssExtractor``): an entry's date is its *updated* date, else its
*published* date; only entries newer than the feed's most recent seen date become links,
and the most recent date is remembered. webark keeps that rule and closes three gaps:

* **Entries without a date** (CrawlRSS skips them: a feed without dates yields nothing
  for ever). webark remembers the keys of the undated entries it has seen (the entry's
  ``id``/``guid``, else its link) and emits an undated entry once, the first time its key
  appears; keys are forgotten ``forget_after`` seconds (30 days) after they were last in
  the feed, so the memory stays bounded by what the feed lists.
* **Two entries with the same date**: "newer than the most recent" would miss an entry
  published in the same second as the last one seen; the keys of the entries at the most
  recent date are remembered too, and an entry at that date with another key is new.
* **Dates in the future** (a publisher's clock or time zone gone wrong): an entry dated
  more than ``future_tolerance`` (one day) after the fetch would move the most recent
  date ahead and hide every real entry until then. Such an entry is treated as undated
  (emitted once, by key) and does not move the most recent date.

"New" is per feed: it decides whether the feed's implied pages are due. Whether the
entry's page is fetched is decided per site (:meth:`RssStore.record_feed`): an entry
another feed of the site already had, with the same date, is not fetched again.

An entry without a usable link (none, or not http(s)) is skipped; an entry listed twice
in one document is emitted once. Relative links resolve against the feed's URL.

Security: the document is handed to feedparser as a byte stream (a ``str`` or ``bytes``
argument would make feedparser open a local file or fetch a URL whose name the feed
text spells); its XML parser does not load external entities.
"""

from __future__ import annotations

import calendar
import io
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from webark.crawl.extract import resolve

__all__ = [
    "FORGET_AFTER",
    "FUTURE_TOLERANCE",
    "Entry",
    "FeedMemory",
    "NewEntries",
    "ParsedFeed",
    "new_entries",
    "parse_feed",
]

FORGET_AFTER = 30 * 86400.0
"""Seconds after which the key of an undated entry no longer in the feed is forgotten."""
FUTURE_TOLERANCE = 86400.0
"""Seconds an entry's date may lie after the fetch and still count as a date."""


@dataclass(frozen=True, slots=True)
class Entry:
    """One entry of a feed.

    Attributes:
        link: its absolute http(s) URL, normalized (:func:`webark.crawl.extract.resolve`).
        key: what identifies it among the feed's entries: its ``id`` (RSS ``guid``, Atom
            ``id``), else its link.
        date: its updated date, else its published date, in seconds since the epoch
            (UTC); None when it has neither.
    """

    link: str
    key: str
    date: float | None


@dataclass(frozen=True, slots=True)
class ParsedFeed:
    """What :func:`parse_feed` read.

    Attributes:
        entries: the entries with a usable link, in document order.
        error: why nothing (or not everything) could be read — feedparser's "bozo"
            exception, as text — or None.
        skipped: entries without a usable link.
    """

    entries: tuple[Entry, ...]
    error: str | None = None
    skipped: int = 0


def _date(entry: Mapping[str, Any]) -> float | None:
    for key in ("updated_parsed", "published_parsed"):
        # dict.get: feedparser's own lookup maps a missing updated_parsed to
        # published_parsed with a DeprecationWarning; the order is ours
        value = dict.get(entry, key)  # type: ignore[call-overload]
        if isinstance(value, time.struct_time):
            return float(calendar.timegm(value))
    return None


def parse_feed(body: bytes, feed_url: str, content_type: str | None = None) -> ParsedFeed:
    """The entries of the feed document ``body`` fetched from ``feed_url``
    (``content_type``: the response's Content-Type, for its charset).

    Never raises for bad input: a document feedparser cannot read gives no entries and
    an ``error``.
    """
    import feedparser

    headers = {"content-location": feed_url}
    if content_type:
        headers["content-type"] = content_type
    try:
        parsed = feedparser.parse(io.BytesIO(body), response_headers=headers,
                                  sanitize_html=False, resolve_relative_uris=False)  # fmt: skip
    except Exception as e:  # feedparser is lenient; anything it still raises is input
        return ParsedFeed((), f"{type(e).__name__}: {e}")
    entries: list[Entry] = []
    skipped = 0
    for raw in parsed.get("entries", ()):
        ref = raw.get("link")
        link = resolve(feed_url, ref.strip()) if isinstance(ref, str) and ref.strip() else None
        if link is None:
            skipped += 1
            continue
        ident = raw.get("id")
        key = ident.strip() if isinstance(ident, str) and ident.strip() else link
        entries.append(Entry(link, key, _date(raw)))
    error = None
    if parsed.get("bozo"):
        exc = parsed.get("bozo_exception")
        error = f"{type(exc).__name__}: {exc}" if exc is not None else "not a well-formed feed"
    return ParsedFeed(tuple(entries), error, skipped)


@dataclass(frozen=True)
class FeedMemory:
    """What a feed's state remembers to tell new entries from those seen.

    Attributes:
        most_recent: the most recent entry date seen (seconds since the epoch), None
            before the first fetch that had a dated entry.
        keys_at_most_recent: keys of the entries seen with exactly that date.
        undated: key → when it was last in the feed (seconds), for entries without a
            usable date.
    """

    most_recent: float | None = None
    keys_at_most_recent: frozenset[str] = frozenset()
    undated: Mapping[str, float] = field(default_factory=lambda: MappingProxyType({}))


@dataclass(frozen=True)
class NewEntries:
    """What :func:`new_entries` decided.

    Attributes:
        entries: the new entries, each link once, in document order.
        memory: the feed's memory after this fetch (to be saved with its state).
        dated, undated: how many of the new entries had a date / were taken by key.
        old: entries not new (seen before).
    """

    entries: tuple[Entry, ...]
    memory: FeedMemory
    dated: int = 0
    undated: int = 0
    old: int = 0

    @property
    def links(self) -> tuple[str, ...]:
        """The new entries' links."""
        return tuple(e.link for e in self.entries)


def new_entries(
    feed: ParsedFeed,
    memory: FeedMemory,
    now: float,
    *,
    forget_after: float = FORGET_AFTER,
    future_tolerance: float = FUTURE_TOLERANCE,
) -> NewEntries:
    """The entries of ``feed`` that are new given ``memory`` (module docstring), fetched
    at ``now`` (seconds since the epoch).

    >>> f = ParsedFeed((Entry("http://a/1", "1", 100.0), Entry("http://a/2", "2", 200.0)))
    >>> first = new_entries(f, FeedMemory(), now=1000.0)
    >>> first.links, first.memory.most_recent
    (('http://a/1', 'http://a/2'), 200.0)
    >>> new_entries(f, first.memory, now=1000.0).links
    ()
    """
    latest = memory.most_recent
    at_latest = set(memory.keys_at_most_recent)
    undated = {k: t for k, t in memory.undated.items() if t >= now - forget_after}
    found: list[Entry] = []
    emitted: set[str] = set()
    dated_new = undated_new = old = 0
    horizon = now + future_tolerance
    for e in feed.entries:
        date = e.date if e.date is not None and e.date <= horizon else None
        if date is None:
            is_new = e.key not in undated
            undated[e.key] = now
        else:
            ref = memory.most_recent
            is_new = ref is None or date > ref or (
                date == ref and e.key not in memory.keys_at_most_recent
            )
            if latest is None or date > latest:
                latest, at_latest = date, {e.key}
            elif date == latest:
                at_latest.add(e.key)
        if not is_new:
            old += 1
            continue
        if e.link in emitted:
            continue
        emitted.add(e.link)
        found.append(Entry(e.link, e.key, date))
        if date is None:
            undated_new += 1
        else:
            dated_new += 1
    mem = FeedMemory(latest, frozenset(at_latest), MappingProxyType(undated))
    return NewEntries(tuple(found), mem, dated_new, undated_new, old)
