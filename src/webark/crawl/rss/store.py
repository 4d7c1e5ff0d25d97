"""The continuous crawl's database (SQLite, ``JOBDIR/state/rss.sqlite`` by default):
configuration — sites, feeds, implied pages — which operators change while the crawl
runs, and the state of each site's rounds and each feed.

CrawlRSS reads its configuration from a database too (tables ``Site``, ``Feed``,
``ImpliedPage``, ``FeedPage``) and re-reads it every 10 seconds. Here a running crawl
notices a change by SQLite's ``PRAGMA data_version``, which moves whenever *another*
connection commits (``webark rss …`` or the control API), and reloads; it polls that
every second or so. The crawl itself writes only the state columns and tables.

Crash safety: every method that writes is one transaction (WAL, ``synchronous=NORMAL``:
a committed transaction survives ``kill -9``). What the scheduler writes here and what
it adds to the frontier are kept consistent by the order of the two writes and by
making the frontier step repeatable (:mod:`webark.crawl.rss.scheduler`).

Tables::

    sites(name, min_wait, active | phase, rounds, last_feed_update, last_round_end,
          last_round_duration, items_found, last_round_items)
    feeds(uri, site, active | most_recent, keys_at_most_recent, last_digest, last_fetch,
          last_status, last_error, fetches, unchanged, entries_found)
    implied_pages(feed, uri)        -- an implied page of a feed (CrawlRSS FeedPage)
    undated_seen(feed, key, last_seen)   -- keys of undated entries (see .entries)
    site_entries(site, link, date, last_seen)   -- entry pages a site has emitted
    round_feeds(site, uri, done)    -- the current round's feeds
    round_items(site, uri, kind, feed)   -- its new entries ('item') and implied pages
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
from collections.abc import Iterable, Iterator
from pathlib import Path
from types import MappingProxyType
from typing import Any

from webark.core.errors import StorageError
from webark.crawl.rss.entries import FORGET_AFTER, Entry, FeedMemory
from webark.crawl.rss.model import (
    DEFAULT_MIN_WAIT,
    FeedConfig,
    FeedState,
    Phase,
    RssConfigError,
    SiteConfig,
    SiteState,
    check_site_name,
    check_url,
)
from webark.crawl.sqlite_schema import create_schema

__all__ = ["RssStore", "RssStoreError"]

_SCHEMA_VERSION = 1
_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS meta (k TEXT PRIMARY KEY, v) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS sites (
    name TEXT PRIMARY KEY,
    min_wait REAL NOT NULL DEFAULT {DEFAULT_MIN_WAIT},
    active INTEGER NOT NULL DEFAULT 1,
    phase TEXT NOT NULL DEFAULT 'WAITING',
    rounds INTEGER NOT NULL DEFAULT 0,
    last_feed_update REAL,
    last_round_end REAL,
    last_round_duration REAL,
    items_found INTEGER NOT NULL DEFAULT 0,
    last_round_items INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS feeds (
    uri TEXT PRIMARY KEY,
    site TEXT NOT NULL REFERENCES sites (name),
    active INTEGER NOT NULL DEFAULT 1,
    most_recent REAL,
    keys_at_most_recent TEXT NOT NULL DEFAULT '[]',
    last_digest TEXT,
    last_fetch REAL,
    last_status INTEGER,
    last_error TEXT,
    fetches INTEGER NOT NULL DEFAULT 0,
    unchanged INTEGER NOT NULL DEFAULT 0,
    entries_found INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS feeds_site ON feeds (site);
CREATE TABLE IF NOT EXISTS implied_pages (
    feed TEXT NOT NULL, uri TEXT NOT NULL, PRIMARY KEY (feed, uri)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS undated_seen (
    feed TEXT NOT NULL, key TEXT NOT NULL, last_seen REAL NOT NULL, PRIMARY KEY (feed, key)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS site_entries (
    site TEXT NOT NULL, link TEXT NOT NULL, date REAL, last_seen REAL NOT NULL,
    PRIMARY KEY (site, link)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS round_feeds (
    site TEXT NOT NULL, uri TEXT NOT NULL, done INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (site, uri)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS round_items (
    site TEXT NOT NULL, uri TEXT NOT NULL, kind TEXT NOT NULL, feed TEXT NOT NULL,
    PRIMARY KEY (site, uri)
) WITHOUT ROWID;
"""


class RssStoreError(StorageError):
    """The database cannot be used (not a webark RSS database, another schema)."""


class RssStore:
    """The continuous crawl's database (module docstring). Open with :meth:`open`; one
    object per thread (SQLite connections are not shared).

    Args (of :meth:`open`):
        path: the database file (created with its tables if missing).
        timeout: seconds to wait for a lock held by another connection.
    """

    def __init__(self, conn: sqlite3.Connection, path: Path) -> None:
        """Use :meth:`open`."""
        self._db = conn
        self.path = path

    @classmethod
    def open(cls, path: str | Path, *, timeout: float = 10.0) -> RssStore:
        """Open (or create) the database at ``path``.

        Raises:
            RssStoreError: the file is not a database, or one of another schema.
        """
        path = Path(path)
        try:
            conn = sqlite3.connect(str(path), isolation_level=None, timeout=timeout)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute("BEGIN IMMEDIATE")
            other = create_schema(conn, _SCHEMA, _SCHEMA_VERSION)
            if other is not None:
                raise RssStoreError(f"{path}: RSS database schema {other}, need "
                                    f"{_SCHEMA_VERSION}")  # fmt: skip
            conn.execute("COMMIT")
        except sqlite3.DatabaseError as e:
            raise RssStoreError(f"{path}: not a usable RSS database ({e})") from e
        return cls(conn, path)

    def close(self) -> None:
        """Close the connection (idempotent)."""
        if self._db is not None:
            with contextlib.suppress(sqlite3.Error):
                self._db.execute("PRAGMA wal_checkpoint(PASSIVE)")
            self._db.close()
            self._db = None  # type: ignore[assignment]

    def __enter__(self) -> RssStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextlib.contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        db = self._db
        db.execute("BEGIN IMMEDIATE")
        try:
            yield db
            db.execute("COMMIT")
        except BaseException:
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise

    def data_version(self) -> int:
        """SQLite's ``PRAGMA data_version``: changes when another connection commits."""
        return int(self._db.execute("PRAGMA data_version").fetchone()[0])

    # -- configuration (operators: webark rss, the control API, the job file) ------------
    def add_site(self, name: str, *, min_wait: float = DEFAULT_MIN_WAIT,
                 active: bool = True) -> SiteConfig:  # fmt: skip
        """Add a site.

        Raises:
            RssConfigError: a bad name, a negative wait, or a site of that name exists.
        """
        check_site_name(name)
        _check_wait(min_wait)
        with self._tx() as db:
            if db.execute("SELECT 1 FROM sites WHERE name = ?", (name,)).fetchone():
                raise RssConfigError(f"site {name!r} exists; change it with "
                                     "'webark rss site change'")  # fmt: skip
            db.execute("INSERT INTO sites (name, min_wait, active) VALUES (?, ?, ?)",
                       (name, float(min_wait), int(active)))  # fmt: skip
        return SiteConfig(name, float(min_wait), active)

    def change_site(self, name: str, *, min_wait: float | None = None,
                    active: bool | None = None) -> SiteConfig:  # fmt: skip
        """Change a site's minimum wait and/or whether it is active.

        Raises:
            RssConfigError: no such site, or a negative wait.
        """
        if min_wait is not None:
            _check_wait(min_wait)
        with self._tx() as db:
            self._need_site(db, name)
            if min_wait is not None:
                db.execute("UPDATE sites SET min_wait = ? WHERE name = ?", (float(min_wait), name))
            if active is not None:
                db.execute("UPDATE sites SET active = ? WHERE name = ?", (int(active), name))
        return self.site(name)

    def add_feed(self, site: str, uri: str, *, implied_pages: Iterable[str] = (),
                 active: bool = True) -> FeedConfig:  # fmt: skip
        """Add a feed to ``site``, with its implied pages.

        Raises:
            RssConfigError: no such site, a URI that is not http(s), or the feed exists.
        """
        feed = check_url(uri, "feed")
        pages = [check_url(p, "implied page") for p in implied_pages]
        with self._tx() as db:
            self._need_site(db, site)
            row = db.execute("SELECT site FROM feeds WHERE uri = ?", (feed,)).fetchone()
            if row is not None:
                raise RssConfigError(f"feed {feed} exists (site {row[0]!r}); change it with "
                                     "'webark rss feed change'")  # fmt: skip
            db.execute("INSERT INTO feeds (uri, site, active) VALUES (?, ?, ?)",
                       (feed, site, int(active)))  # fmt: skip
            db.executemany("INSERT OR IGNORE INTO implied_pages VALUES (?, ?)",
                           [(feed, p) for p in pages])  # fmt: skip
        return self.feed(feed)

    def change_feed(self, uri: str, *, active: bool | None = None) -> FeedConfig:
        """Activate or deactivate a feed.

        Raises:
            RssConfigError: no such feed.
        """
        feed = check_url(uri, "feed")
        with self._tx() as db:
            self._need_feed(db, feed)
            if active is not None:
                db.execute("UPDATE feeds SET active = ? WHERE uri = ?", (int(active), feed))
        return self.feed(feed)

    def add_implied_page(self, feed_uri: str, page: str) -> FeedConfig:
        """Add an implied page to a feed (no change when it is there already).

        Raises:
            RssConfigError: no such feed, or a page that is not an http(s) URL.
        """
        feed, url = check_url(feed_uri, "feed"), check_url(page, "implied page")
        with self._tx() as db:
            self._need_feed(db, feed)
            db.execute("INSERT OR IGNORE INTO implied_pages VALUES (?, ?)", (feed, url))
        return self.feed(feed)

    def remove_implied_page(self, feed_uri: str, page: str) -> FeedConfig:
        """Remove an implied page from a feed.

        Raises:
            RssConfigError: no such feed, or the page is not one of its implied pages.
        """
        feed, url = check_url(feed_uri, "feed"), check_url(page, "implied page")
        with self._tx() as db:
            self._need_feed(db, feed)
            cur = db.execute("DELETE FROM implied_pages WHERE feed = ? AND uri = ?", (feed, url))
            if cur.rowcount == 0:
                raise RssConfigError(f"{url} is not an implied page of {feed}")
        return self.feed(feed)

    @staticmethod
    def _need_site(db: sqlite3.Connection, name: str) -> None:
        if db.execute("SELECT 1 FROM sites WHERE name = ?", (name,)).fetchone() is None:
            raise RssConfigError(f"no site {name!r}; add it with 'webark rss site add'")

    @staticmethod
    def _need_feed(db: sqlite3.Connection, uri: str) -> None:
        if db.execute("SELECT 1 FROM feeds WHERE uri = ?", (uri,)).fetchone() is None:
            raise RssConfigError(f"no feed {uri}; add it with 'webark rss feed add'")

    # -- reading the configuration ---------------------------------------------------
    def site(self, name: str) -> SiteConfig:
        """One site. Raises RssConfigError when there is none of that name."""
        row = self._db.execute("SELECT name, min_wait, active FROM sites WHERE name = ?",
                               (name,)).fetchone()  # fmt: skip
        if row is None:
            raise RssConfigError(f"no site {name!r}")
        return SiteConfig(row[0], row[1], bool(row[2]))

    def sites(self) -> list[SiteConfig]:
        """Every site, by name."""
        rows = self._db.execute("SELECT name, min_wait, active FROM sites ORDER BY name")
        return [SiteConfig(r[0], r[1], bool(r[2])) for r in rows]

    def feed(self, uri: str) -> FeedConfig:
        """One feed. Raises RssConfigError when there is none."""
        for f in self.feeds():
            if f.uri == uri:
                return f
        raise RssConfigError(f"no feed {uri}")

    def feeds(self) -> list[FeedConfig]:
        """Every feed with its implied pages, by site then URI."""
        implied: dict[str, list[str]] = {}
        for feed, page in self._db.execute("SELECT feed, uri FROM implied_pages ORDER BY 1, 2"):
            implied.setdefault(feed, []).append(page)
        rows = self._db.execute("SELECT uri, site, active FROM feeds ORDER BY site, uri")
        return [FeedConfig(r[0], r[1], bool(r[2]), tuple(implied.get(r[0], ()))) for r in rows]

    # -- state (the crawl) -----------------------------------------------------------
    def site_states(self) -> dict[str, SiteState]:
        """The round state of every site."""
        rows = self._db.execute(
            "SELECT name, phase, rounds, last_feed_update, last_round_end, last_round_duration,"
            " items_found, last_round_items FROM sites"
        )
        return {r[0]: SiteState(r[0], Phase(r[1]), *r[2:]) for r in rows}

    def feed_states(self) -> dict[str, FeedState]:
        """The state of every feed."""
        rows = self._db.execute(
            "SELECT uri, most_recent, last_digest, last_fetch, last_status, last_error,"
            " fetches, unchanged, entries_found FROM feeds"
        )
        return {r[0]: FeedState(*r) for r in rows}

    def feed_memory(self, uri: str) -> FeedMemory:
        """What the feed remembers of the entries it has seen (:mod:`.entries`)."""
        row = self._db.execute("SELECT most_recent, keys_at_most_recent FROM feeds WHERE uri = ?",
                               (uri,)).fetchone()  # fmt: skip
        if row is None:
            return FeedMemory()
        undated = dict(self._db.execute("SELECT key, last_seen FROM undated_seen WHERE feed = ?",
                                        (uri,)).fetchall())  # fmt: skip
        return FeedMemory(row[0], frozenset(json.loads(row[1] or "[]")),
                          MappingProxyType(undated))  # fmt: skip

    def start_round(self, site: str, feeds: Iterable[str], now: float) -> None:
        """Site ``site`` emits ``feeds`` at ``now``: phase FEEDS, one more round."""
        with self._tx() as db:
            db.execute("DELETE FROM round_feeds WHERE site = ?", (site,))
            db.execute("DELETE FROM round_items WHERE site = ?", (site,))
            db.executemany("INSERT OR IGNORE INTO round_feeds (site, uri) VALUES (?, ?)",
                           [(site, f) for f in feeds])  # fmt: skip
            db.execute("UPDATE sites SET phase = ?, rounds = rounds + 1, last_feed_update = ?,"
                       " last_round_items = 0 WHERE name = ?",
                       (Phase.FEEDS.value, now, site))  # fmt: skip

    def record_feed(
        self,
        site: str,
        uri: str,
        *,
        now: float,
        status: int,
        digest: str | None,
        unchanged: bool,
        memory: FeedMemory | None,
        entries: Iterable[Entry] = (),
        implied: Iterable[str] = (),
        error: str | None = None,
    ) -> int:
        """A fetched feed of the current round was read (one transaction): its state
        (``memory`` None: keep the one it has), the feed done, its implied pages for the
        round, and its new ``entries`` — those the site has not emitted before with the
        same date or a later one (another feed of the site may have had the entry in an
        earlier round: its page is not fetched twice; an entry with a newer date, an
        updated article, is). Returns how many entry pages joined the round."""
        entries = list(entries)
        with self._tx() as db:
            db.execute(
                "UPDATE feeds SET last_fetch = ?, last_status = ?, last_error = ?,"
                " fetches = fetches + 1, unchanged = unchanged + ?,"
                " entries_found = entries_found + ?,"
                " last_digest = COALESCE(?, last_digest) WHERE uri = ?",
                (now, status, error, int(unchanged), len(entries), digest, uri),
            )
            if memory is not None:
                keys = json.dumps(sorted(memory.keys_at_most_recent))
                db.execute("UPDATE feeds SET most_recent = ?, keys_at_most_recent = ?"
                           " WHERE uri = ?", (memory.most_recent, keys, uri))  # fmt: skip
                db.execute("DELETE FROM undated_seen WHERE feed = ?", (uri,))
                db.executemany("INSERT INTO undated_seen VALUES (?, ?, ?)",
                               [(uri, k, t) for k, t in memory.undated.items()])  # fmt: skip
            added = 0
            for e in entries:
                row = db.execute("SELECT date FROM site_entries WHERE site = ? AND link = ?",
                                 (site, e.link)).fetchone()  # fmt: skip
                if row is not None and _not_newer(e.date, row[0]):
                    db.execute("UPDATE site_entries SET last_seen = ? WHERE site = ? AND link = ?",
                               (now, site, e.link))  # fmt: skip
                    continue
                db.execute("INSERT OR REPLACE INTO site_entries VALUES (?, ?, ?, ?)",
                           (site, e.link, e.date, now))  # fmt: skip
                added += db.execute("INSERT OR IGNORE INTO round_items VALUES (?, ?, 'item', ?)",
                                    (site, e.link, uri)).rowcount  # fmt: skip
            db.executemany("INSERT OR IGNORE INTO round_items VALUES (?, ?, 'implied', ?)",
                           [(site, p, uri) for p in implied])  # fmt: skip
            db.execute("UPDATE sites SET items_found = items_found + ?,"
                       " last_round_items = last_round_items + ? WHERE name = ?",
                       (added, added, site))  # fmt: skip
            db.execute("UPDATE round_feeds SET done = 1 WHERE site = ? AND uri = ?", (site, uri))
        return added

    def feed_failed(self, site: str, uri: str, *, now: float, status: int) -> None:
        """A feed of the current round finished without being read (fetch failed,
        robots.txt, not 2xx): its last fetch and status noted, the feed done."""
        with self._tx() as db:
            db.execute("UPDATE feeds SET last_fetch = ?, last_status = ?, fetches = fetches + 1"
                       " WHERE uri = ?", (now, status, uri))  # fmt: skip
            db.execute("UPDATE round_feeds SET done = 1 WHERE site = ? AND uri = ?", (site, uri))

    def round_feeds(self, site: str) -> dict[str, bool]:
        """The current round's feeds of ``site`` and whether each is done."""
        rows = self._db.execute("SELECT uri, done FROM round_feeds WHERE site = ?", (site,))
        return {r[0]: bool(r[1]) for r in rows}

    def round_items(self, site: str) -> list[tuple[str, str, str]]:
        """The current round's ``(uri, kind, feed)`` of ``site`` (kind ``item`` or
        ``implied``), by URI."""
        rows = self._db.execute("SELECT uri, kind, feed FROM round_items WHERE site = ?", (site,))
        return [(r[0], r[1], r[2]) for r in rows]

    def set_phase(self, site: str, phase: Phase) -> None:
        """Move ``site`` to ``phase`` (FEEDS → ITEMS once its items are in the frontier)."""
        with self._tx() as db:
            db.execute("UPDATE sites SET phase = ? WHERE name = ?", (phase.value, site))

    def end_round(self, site: str, now: float) -> None:
        """The round of ``site`` is over at ``now``: phase WAITING, its duration kept,
        the round's tables emptied."""
        with self._tx() as db:
            db.execute(
                "UPDATE sites SET phase = ?, last_round_end = ?,"
                " last_round_duration = ? - COALESCE(last_feed_update, ?) WHERE name = ?",
                (Phase.WAITING.value, now, now, now, site),
            )
            db.execute("DELETE FROM round_feeds WHERE site = ?", (site,))
            db.execute("DELETE FROM round_items WHERE site = ?", (site,))
            db.execute("DELETE FROM site_entries WHERE site = ? AND last_seen < ?",
                       (site, now - FORGET_AFTER))  # fmt: skip

    # -- listing ---------------------------------------------------------------------
    def listing(self) -> list[dict[str, Any]]:
        """Every site with its configuration, state and feeds (plain data, for
        ``webark rss list --json`` and the control API)."""
        states = self.site_states()
        fstates = self.feed_states()
        feeds: dict[str, list[dict[str, Any]]] = {}
        for f in self.feeds():
            st = fstates.get(f.uri, FeedState(f.uri))
            feeds.setdefault(f.site, []).append({
                "uri": f.uri, "active": f.active, "implied_pages": list(f.implied_pages),
                "most_recent": st.most_recent, "last_fetch": st.last_fetch,
                "last_status": st.last_status, "fetches": st.fetches,
                "unchanged": st.unchanged, "entries_found": st.entries_found,
            })  # fmt: skip
        out = []
        for s in self.sites():
            site = states.get(s.name, SiteState(s.name))
            out.append({
                "name": s.name, "min_wait": s.min_wait, "active": s.active,
                "state": site.phase.report_state, "phase": site.phase.value,
                "rounds": site.rounds, "last_feed_update": site.last_feed_update,
                "items_found": site.items_found,
                "feeds": feeds.get(s.name, []),
            })  # fmt: skip
        return out


def _not_newer(date: float | None, emitted: float | None) -> bool:
    """An entry dated ``date`` adds nothing to the same link emitted dated ``emitted``."""
    return date is None or (emitted is not None and date <= emitted)


def _check_wait(min_wait: float) -> None:
    if isinstance(min_wait, bool) or not isinstance(min_wait, int | float) or not (
        0 <= float(min_wait) < float("inf")
    ):
        raise RssConfigError(f"minimum wait {min_wait!r}: a number of seconds >= 0")
