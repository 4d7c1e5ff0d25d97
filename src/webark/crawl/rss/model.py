"""The records of continuous crawling: sites, feeds and their state (frozen values read
from :class:`~webark.crawl.rss.store.RssStore`).

Names follow CrawlRSS (``Site``, ``Feed``, ``ImpliedPage``; ``minWaitInterval``,
``lastFeedUpdate``, ``mostRecentlySeen``, ``lastContentDigest``).
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass

from webark.core.errors import ConfigError
from webark.url import InvalidURLError, normalize

__all__ = [
    "DEFAULT_MIN_WAIT",
    "FeedConfig",
    "FeedState",
    "Phase",
    "RssConfigError",
    "SiteConfig",
    "SiteState",
    "check_site_name",
    "check_url",
]

DEFAULT_MIN_WAIT = 60.0
"""Seconds between two rounds of a site unless it says otherwise (CrawlRSS: 60 s)."""

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


class RssConfigError(ConfigError):
    """A site, feed or implied page that cannot be added or changed (the message says
    what to write instead)."""


def check_site_name(name: str) -> str:
    """``name`` when it can name a site (1–64 of ``A-Z a-z 0-9 . _ -``, starting with a
    letter or digit: it is the crawl.log source tag of the site's URIs).

    Raises:
        RssConfigError: any other name.
    """
    if not isinstance(name, str) or not _NAME.match(name):
        raise RssConfigError(
            f"site name {name!r}: use 1-64 letters, digits, '.', '_' or '-' (it becomes "
            "the source tag of the site's URIs in crawl.log)"
        )
    return name


def check_url(url: str, what: str) -> str:
    """``url`` normalized (:func:`webark.url.normalize`) when it is an absolute http(s)
    URL.

    Raises:
        RssConfigError: anything else (``what`` names it in the message).
    """
    text = str(url).strip()
    if not text.lower().startswith(("http://", "https://")):
        raise RssConfigError(f"{what} {url!r}: not an absolute http(s) URL")
    try:
        return normalize(text)
    except InvalidURLError as e:
        raise RssConfigError(f"{what} {url!r}: {e}") from None


class Phase(enum.StrEnum):
    """Where a site is in its round (CrawlRSS has WAITING and CRAWLING; webark splits
    CRAWLING in two so that a resumed crawl knows what is left)."""

    WAITING = "WAITING"
    """No round in progress; the next starts once the minimum wait has passed."""
    FEEDS = "FEEDS"
    """The round's feeds are emitted; the new entries are collected as they finish."""
    ITEMS = "ITEMS"
    """The new entries and implied pages are emitted; the round ends when every URI of
    the site (these, their embeds, redirects) is finished."""

    @property
    def report_state(self) -> str:
        """CrawlRSS's state name: ``WAITING`` or ``CRAWLING``."""
        return "WAITING" if self is Phase.WAITING else "CRAWLING"


@dataclass(frozen=True, slots=True)
class SiteConfig:
    """A site: its ``name``, the minimum wait between two rounds (``min_wait``,
    seconds) and whether it is crawled (``active``)."""

    name: str
    min_wait: float = DEFAULT_MIN_WAIT
    active: bool = True


@dataclass(frozen=True, slots=True)
class FeedConfig:
    """A feed of a site: its URI (normalized), whether it is emitted with the site
    (``active``) and its implied pages (URIs enqueued when it has a new entry)."""

    uri: str
    site: str
    active: bool = True
    implied_pages: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class SiteState:
    """Where a site's rounds stand (times: seconds since the epoch).

    Attributes:
        name: the site.
        phase: see :class:`Phase`.
        rounds: rounds started so far.
        last_feed_update: when the feeds of the current (or last) round were emitted
            (CrawlRSS ``lastFeedUpdate``); the next round is due ``min_wait`` after it.
        last_round_end: when the last round ended.
        last_round_duration: seconds from its emission to its end.
        items_found: new entries found in all rounds (each URL once per round).
        last_round_items: new entries of the last round that had any feed processed.
    """

    name: str
    phase: Phase = Phase.WAITING
    rounds: int = 0
    last_feed_update: float | None = None
    last_round_end: float | None = None
    last_round_duration: float | None = None
    items_found: int = 0
    last_round_items: int = 0


@dataclass(frozen=True, slots=True)
class FeedState:
    """What the crawl knows of a feed (times: seconds since the epoch).

    Attributes:
        uri: the feed.
        most_recent: the most recent entry date seen (CrawlRSS ``mostRecentlySeen``).
        last_digest: payload digest of its last fetch that was read
            (``lastContentDigest``): the same digest next time means "unchanged".
        last_fetch: when it was last fetched.
        last_status: the fetch status of that fetch (HTTP status or Heritrix code).
        last_error: why its last document could not be read, if so.
        fetches: fetches processed; unchanged: of which unchanged (revisits).
        entries_found: new entries found in all its fetches.
    """

    uri: str
    most_recent: float | None = None
    last_digest: str | None = None
    last_fetch: float | None = None
    last_status: int | None = None
    last_error: str | None = None
    fetches: int = 0
    unchanged: int = 0
    entries_found: int = 0
