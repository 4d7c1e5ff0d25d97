"""The ``rss:`` section of a crawl job: continuous crawling from feeds.

.. code-block:: yaml

    rss:
      hops_regex: '.R?((E{0,2})|XE?)'   # scope of what a round derives (CrawlRSS's)
      scope: {reject_regex: ['/video/']}  # more scope options for those URIs
      poll_interval: 1                   # seconds between looks at the database
      database: state/rss.sqlite         # relative to the job folder (default)
      sites:                             # added to the database when missing
        - name: example-news
          min_wait: 10m                  # [N]d[N]h[N]m[N]s or seconds (default 60 s)
          feeds:
            - uri: https://news.example/rss/front.xml
              implied_pages: [https://news.example/]
            - https://news.example/rss/sport.xml     # a feed without implied pages

A job with an ``rss:`` section runs until it is stopped (Heritrix ``runWhileEmpty``);
its ``seeds`` may be empty. It needs dedup (an unchanged feed is a revisit), which is
therefore on unless the job says ``dedup: false`` (an error).
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from webark.core.errors import KeyedConfigError
from webark.crawl.rss.interval import IntervalError, parse_interval
from webark.crawl.rss.model import DEFAULT_MIN_WAIT, RssConfigError, check_site_name, check_url

__all__ = [
    "DEFAULT_HOPS_REGEX",
    "RSS_KEYS",
    "FeedSpec",
    "RssSettings",
    "RssSettingsError",
    "SiteSpec",
    "rss_settings",
]

DEFAULT_HOPS_REGEX = ".R?((E{0,2})|XE?)"
"""CrawlRSS's scope of derived URIs: the entry or implied page (one hop from the feed),
an optional redirect, then up to two embeds of which only the first may be speculative."""

RSS_KEYS: dict[str, str] = {
    "sites": "list of {name, min_wait, active, feeds: [{uri, implied_pages, active}]}; "
    "added to the database when missing",
    "hops_regex": f"regex of the hop paths a round may follow (default {DEFAULT_HOPS_REGEX})",
    "scope": "mapping of more scope options for the URIs a round derives "
    "(webark.crawl.scope.SCOPE_KEYS)",
    "poll_interval": "seconds between looks at the database for changes (1)",
    "database": "SQLite file of sites, feeds and their state (state/rss.sqlite; relative "
    "to the job folder)",
}

_SITE_KEYS = ("name", "min_wait", "active", "feeds")
_FEED_KEYS = ("uri", "implied_pages", "active")


class RssSettingsError(KeyedConfigError):
    """An ``rss:`` section that cannot be used (every mistake: ``problems``)."""

    label = "rss"


@dataclass(frozen=True, slots=True)
class FeedSpec:
    """A feed as the job file gives it."""

    uri: str
    implied_pages: tuple[str, ...] = ()
    active: bool = True


@dataclass(frozen=True, slots=True)
class SiteSpec:
    """A site as the job file gives it."""

    name: str
    min_wait: float = DEFAULT_MIN_WAIT
    active: bool = True
    feeds: tuple[FeedSpec, ...] = ()


@dataclass(frozen=True)
class RssSettings:
    """The validated ``rss:`` section (:data:`RSS_KEYS`)."""

    sites: tuple[SiteSpec, ...] = ()
    hops_regex: str = DEFAULT_HOPS_REGEX
    scope: Mapping[str, Any] | None = None
    poll_interval: float = 1.0
    database: str | None = None

    def database_path(self, job_dir: Path) -> Path:
        """The database file of a job in ``job_dir``."""
        if self.database is None:
            return job_dir / "state" / "rss.sqlite"
        path = Path(self.database)
        return path if path.is_absolute() else job_dir / path

    def scope_options(self) -> dict[str, Any]:
        """The scope options of derived URIs for :func:`webark.crawl.scope.build_scope`:
        reject everything but the hop paths of :attr:`hops_regex` (no seed prefixes, no
        transclusion), then :attr:`scope`'s options."""
        return {"seeds_as_surt_prefixes": False, "max_trans_hops": 0,
                "accept_hops_regex": self.hops_regex, **(self.scope or {})}  # fmt: skip


class _Problems:
    def __init__(self) -> None:
        self.found: list[tuple[str, str]] = []

    def note(self, key: str, reason: str) -> None:
        self.found.append((key, reason))


def _feed(raw: Any, key: str, p: _Problems) -> FeedSpec | None:
    if isinstance(raw, str):
        raw = {"uri": raw}
    if not isinstance(raw, Mapping):
        p.note(key, "expected a feed URL or a mapping {uri, implied_pages, active}")
        return None
    for k in raw:
        if k not in _FEED_KEYS:
            p.note(f"{key}.{k}", f"unknown key; feed keys: {', '.join(_FEED_KEYS)}")
    try:
        uri = check_url(raw.get("uri", ""), "feed")
    except RssConfigError as e:
        p.note(f"{key}.uri", str(e))
        return None
    pages = raw.get("implied_pages") or []
    if isinstance(pages, str):
        pages = [pages]
    implied: list[str] = []
    if not isinstance(pages, Sequence):
        p.note(f"{key}.implied_pages", "expected a list of URLs")
        pages = []
    for i, page in enumerate(pages):
        try:
            implied.append(check_url(page, "implied page"))
        except RssConfigError as e:
            p.note(f"{key}.implied_pages[{i}]", str(e))
    active = raw.get("active", True)
    if not isinstance(active, bool):
        p.note(f"{key}.active", f"expected true or false, got {active!r}")
        active = True
    return FeedSpec(uri, tuple(implied), active)


def _site(raw: Any, key: str, p: _Problems) -> SiteSpec | None:
    if not isinstance(raw, Mapping):
        p.note(key, "expected a mapping {name, min_wait, active, feeds}")
        return None
    for k in raw:
        if k not in _SITE_KEYS:
            close = difflib.get_close_matches(str(k), _SITE_KEYS, n=1)
            hint = f"did you mean '{close[0]}'? " if close else ""
            p.note(f"{key}.{k}", f"unknown key; {hint}site keys: {', '.join(_SITE_KEYS)}")
    try:
        name = check_site_name(raw.get("name", ""))
    except RssConfigError as e:
        p.note(f"{key}.name", str(e))
        name = ""
    min_wait = DEFAULT_MIN_WAIT
    if raw.get("min_wait") is not None:
        try:
            min_wait = parse_interval(raw["min_wait"])
        except IntervalError as e:
            p.note(f"{key}.min_wait", str(e))
    active = raw.get("active", True)
    if not isinstance(active, bool):
        p.note(f"{key}.active", f"expected true or false, got {active!r}")
        active = True
    feeds_raw = raw.get("feeds") or []
    if not isinstance(feeds_raw, Sequence) or isinstance(feeds_raw, str):
        p.note(f"{key}.feeds", "expected a list of feeds")
        feeds_raw = []
    feeds = [_feed(f, f"{key}.feeds[{i}]", p) for i, f in enumerate(feeds_raw)]
    if not name:
        return None
    return SiteSpec(name, min_wait, active, tuple(f for f in feeds if f is not None))


def rss_settings(section: Any) -> RssSettings:
    """Validate an ``rss:`` section (``None`` or ``{}``: all defaults, sites from the
    database only).

    Raises:
        RssSettingsError: unknown keys, bad URLs, names, waits, regexes or scope options
            (every problem found, keys like ``sites[0].feeds[1].uri``).
    """
    if section is None:
        section = {}
    if not isinstance(section, Mapping):
        raise RssSettingsError("rss", "expected a mapping (sites, hops_regex, scope, …)")
    p = _Problems()
    for k in section:
        if k not in RSS_KEYS:
            close = difflib.get_close_matches(str(k), RSS_KEYS, n=1)
            hint = f"did you mean '{close[0]}'? " if close else ""
            p.note(str(k), f"unknown key; {hint}keys: {', '.join(RSS_KEYS)}")
    sites_raw = section.get("sites") or []
    if not isinstance(sites_raw, Sequence) or isinstance(sites_raw, str):
        p.note("sites", "expected a list of sites")
        sites_raw = []
    sites = [_site(s, f"sites[{i}]", p) for i, s in enumerate(sites_raw)]
    names = [s.name for s in sites if s is not None]
    for dup in sorted({n for n in names if names.count(n) > 1}):
        p.note("sites", f"site {dup!r} is given twice")
    feed_sites: dict[str, str] = {}
    for s in (s for s in sites if s is not None):
        for f in s.feeds:
            if feed_sites.setdefault(f.uri, s.name) != s.name:
                p.note("sites", f"feed {f.uri} belongs to two sites")
    hops = section.get("hops_regex", DEFAULT_HOPS_REGEX)
    if not isinstance(hops, str) or not hops:
        p.note("hops_regex", f"expected a regex string, got {hops!r}")
        hops = DEFAULT_HOPS_REGEX
    scope = section.get("scope")
    if scope is not None and not isinstance(scope, Mapping):
        p.note("scope", "expected a mapping of scope options")
        scope = None
    poll = section.get("poll_interval", 1.0)
    if isinstance(poll, bool) or not isinstance(poll, int | float) or not 0.05 <= poll <= 60:
        p.note("poll_interval", f"expected seconds between 0.05 and 60, got {poll!r}")
        poll = 1.0
    database = section.get("database")
    if database is not None and (not isinstance(database, str) or not database):
        p.note("database", f"expected a file path, got {database!r}")
        database = None
    settings = RssSettings(tuple(s for s in sites if s is not None), hops,
                           dict(scope) if scope else None, float(poll), database)  # fmt: skip
    from webark.crawl.scope import ScopeConfigError, build_scope

    try:
        build_scope(settings.scope_options(), ())
    except ScopeConfigError as e:
        key = "hops_regex" if e.key == "accept_hops_regex" else f"scope.{e.key}"
        p.note(key, e.reason)
    if p.found:
        raise RssSettingsError(*p.found[0], tuple(p.found))
    return settings
