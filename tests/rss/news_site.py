"""A small simulated news site for the continuous-crawling tests and ``bench/rss.py``.

Each :class:`NewsSite` is one host (a :class:`~sites.TestSite` on its own 127.0.0.x):
a front page, a page per section, a feed per section (RSS 2.0 with ``pubDate`` or Atom
with ``updated``), a "top stories" feed that repeats the newest articles of all sections
(so two feeds of the site name the same entry in one round), optionally a feed of
undated briefs, articles with an image and a shared style sheet (whose background
image is an embed of an embed), related-article links and daily archive pages (which a
snapshot crawl follows and a round must not).

Articles appear on a simulated clock (:class:`SimClock`): publication times are on it,
pages show what is published at its "now", so a test can run 30 simulated minutes in a
few real seconds. Everything a page shows depends only on what is published, so an
unchanged feed is byte-identical (a revisit) and every front page that changed differs.

Every feed request is logged with the entry links it listed (:attr:`NewsSite.served`),
for the tests' expected values.
"""

from __future__ import annotations

import bisect
import hashlib
import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import format_datetime
from html import escape

from sites import CSS, HTML, PNG, TEXT, Page, TestSite

__all__ = ["Article", "NewsSite", "Served", "SimClock"]

RSS_TYPE = (("Content-Type", "application/rss+xml; charset=utf-8"),)
ATOM_TYPE = (("Content-Type", "application/atom+xml; charset=utf-8"),)


class SimClock:
    """Simulated seconds since the epoch: ``start + (monotonic() - t0) × speed``, or a
    frozen instant (:meth:`freeze`). Thread-safe."""

    def __init__(self, start: float | None = None, speed: float = 1.0) -> None:
        self._lock = threading.Lock()
        self._start = time.time() if start is None else start
        self._t0 = time.monotonic()
        self.speed = speed
        self._frozen: float | None = None

    def now(self) -> float:
        with self._lock:
            if self._frozen is not None:
                return self._frozen
            return self._start + (time.monotonic() - self._t0) * self.speed

    def freeze(self, at: float | None = None) -> None:
        """Stop the clock (at ``at``, default now)."""
        t = self.now() if at is None else at
        with self._lock:
            self._frozen = t

    def run(self, speed: float | None = None) -> None:
        """Let the clock run again from where it is (at ``speed``)."""
        t = self.now()
        with self._lock:
            self._frozen = None
            self._start, self._t0 = t, time.monotonic()
            if speed is not None:
                self.speed = speed


@dataclass(frozen=True, slots=True)
class Article:
    """One article: its section, number within the site, publication time (sim)."""

    section: str
    n: int
    published: float

    @property
    def path(self) -> str:
        return f"/{self.section}/{self.n}.html"

    @property
    def image(self) -> str:
        return f"/img/{self.n}.png"

    @property
    def thumb(self) -> str:
        return f"/img/{self.n}-t.png"

    @property
    def title(self) -> str:
        return f"{self.section.title()} story {self.n}"


@dataclass(frozen=True, slots=True)
class Served:
    """A feed as served: its path, when (monotonic), the entry links it listed and a
    digest of its body."""

    path: str
    at: float
    links: tuple[str, ...]
    digest: str


def _png(seed: int, size: int) -> bytes:
    body = hashlib.sha256(str(seed).encode()).digest() * (size // 32 + 1)
    return b"\x89PNG\r\n\x1a\n" + body[: max(0, size - 8)]


class NewsSite:
    """One simulated news site (module docstring).

    Args:
        name: the site's host name (mapped to ``ip`` by the crawl's ``resolve``).
        ip: its loopback address.
        clock: the simulated clock.
        sections: section names; sections at odd positions have Atom feeds.
        per_feed: entries a feed lists (the newest).
        briefs: add ``/rss/briefs.xml``, whose entries have no date.
        article_kb: kilobytes of text per article.
        image_kb: kilobytes per article image.
        delay: seconds the server takes per request.
    """

    def __init__(
        self,
        name: str,
        ip: str,
        clock: SimClock,
        *,
        sections: Sequence[str] = ("news", "sport", "culture"),
        per_feed: int = 8,
        briefs: bool = False,
        article_kb: int = 4,
        image_kb: int = 6,
        delay: float = 0.0,
    ) -> None:
        self.name = name
        self.clock = clock
        self.sections = tuple(sections)
        self.per_feed = per_feed
        self.briefs = briefs
        self.article_kb = article_kb
        self.image_kb = image_kb
        self._lock = threading.Lock()
        self._articles: list[Article] = []
        self._times: list[float] = []
        self._briefs: list[tuple[float, int]] = []
        self.served: list[Served] = []
        self.server = TestSite({}, host=ip, handler=self._handle, delay=delay)

    # -- running -----------------------------------------------------------------------
    def start(self) -> NewsSite:
        self.server.start()
        return self

    def stop(self) -> None:
        self.server.stop()

    @property
    def origin(self) -> str:
        return f"http://{self.name}:{self.server.port}"

    def url(self, path: str) -> str:
        return self.origin + path

    # -- publishing --------------------------------------------------------------------
    def publish(self, section: str, at: float | None = None) -> Article:
        """Publish an article in ``section`` at sim time ``at`` (default now)."""
        t = self.clock.now() if at is None else at
        with self._lock:
            a = Article(section, len(self._articles) + 1, t)
            i = bisect.bisect_right(self._times, t)
            self._times.insert(i, t)
            self._articles.insert(i, a)
        return a

    def publish_brief(self, at: float | None = None) -> int:
        t = self.clock.now() if at is None else at
        with self._lock:
            n = len(self._briefs) + 1
            self._briefs.append((t, n))
        return n

    def schedule(self, items: Iterable[tuple[float, str]]) -> None:
        """Publish ``(sim time, section)`` items (in the future: they appear then)."""
        for t, section in items:
            self.publish(section, t)

    def published(self, now: float | None = None) -> list[Article]:
        """Articles published up to ``now`` (sim), oldest first."""
        t = self.clock.now() if now is None else now
        with self._lock:
            return self._articles[: bisect.bisect_right(self._times, t)]

    # -- feeds -------------------------------------------------------------------------
    def feed_paths(self) -> dict[str, tuple[str, ...]]:
        """Feed path → its implied pages' paths."""
        out: dict[str, tuple[str, ...]] = {}
        for i, s in enumerate(self.sections):
            out[self.feed_path(i, s)] = (f"/{s}/", "/")
        out["/rss/top.xml"] = ("/",)
        if self.briefs:
            out["/rss/briefs.xml"] = ()
        return out

    @staticmethod
    def feed_path(i: int, section: str) -> str:
        return f"/atom/{section}.xml" if i % 2 else f"/rss/{section}.xml"

    def _rss(self, title: str, items: list[Article]) -> bytes:
        out = [f'<?xml version="1.0" encoding="utf-8"?>\n<rss version="2.0"><channel>'
               f"<title>{escape(title)}</title><link>{self.origin}/</link>"
               f"<description>{escape(self.name)}</description>"]  # fmt: skip
        for a in items:
            date = format_datetime(datetime.fromtimestamp(int(a.published), UTC), usegmt=True)
            out.append(f"<item><title>{escape(a.title)}</title><link>{self.origin}{a.path}</link>"
                       f"<guid>{self.origin}{a.path}</guid><pubDate>{date}</pubDate>"
                       f'<enclosure url="{self.origin}{a.thumb}" type="image/png" length="1"/>'
                       "</item>")  # fmt: skip
        out.append("</channel></rss>\n")
        return "".join(out).encode()

    def _atom(self, section: str, items: list[Article]) -> bytes:
        newest = items[-1].published if items else 0
        out = ['<?xml version="1.0" encoding="utf-8"?>\n'
               '<feed xmlns="http://www.w3.org/2005/Atom">'
               f"<title>{escape(section)}</title><id>urn:{self.name}:{section}</id>"
               f"<updated>{_iso(newest)}</updated>"
               f'<link rel="self" href="{self.origin}/atom/{section}.xml"/>']  # fmt: skip
        for a in items:
            out.append(f"<entry><title>{escape(a.title)}</title><id>urn:{self.name}:{a.n}</id>"
                       f'<link rel="alternate" href="{a.path}"/>'
                       f"<updated>{_iso(a.published)}</updated></entry>")  # fmt: skip
        out.append("</feed>\n")
        return "".join(out).encode()

    def _briefs_feed(self, now: float) -> bytes:
        items = [n for t, n in self._briefs if t <= now][-self.per_feed:]
        out = ['<?xml version="1.0"?><rss version="2.0"><channel><title>briefs</title>']
        for n in reversed(items):
            out.append(f"<item><title>brief {n}</title><link>{self.origin}/briefs/{n}.html"
                       f"</link><guid>brief-{n}</guid></item>")  # fmt: skip
        out.append("</channel></rss>\n")
        return "".join(out).encode()

    # -- pages -------------------------------------------------------------------------
    def _page(self, title: str, body: str) -> bytes:
        return (f'<!doctype html><html><head><title>{escape(title)}</title>'
                f'<link rel="stylesheet" href="/static/site.css"></head><body>'
                f'<nav><a href="/">{escape(self.name)}</a> '
                + " ".join(f'<a href="/{s}/">{s}</a>' for s in self.sections)
                + f"</nav>{body}</body></html>").encode()  # fmt: skip

    def _listing(self, articles: list[Article]) -> str:
        return "".join(f'<li><img src="{a.thumb}"><a href="{a.path}">{escape(a.title)}</a></li>'
                       for a in reversed(articles))  # fmt: skip

    def _handle(self, path: str, headers: Mapping[str, str]) -> Page | None:
        now = self.clock.now()
        path = path.split("?", 1)[0]
        pub = self.published(now)
        if path == "/robots.txt":
            return (200, TEXT, b"User-agent: *\nDisallow: /private/\n")
        if path == "/static/site.css":
            return (200, CSS, b"body{background:url(/static/bg.png)}")
        if path == "/static/bg.png":
            return (200, PNG, _png(0, 2048))
        if path.startswith("/img/"):
            stem = path[5:].removesuffix(".png")
            thumb = stem.endswith("-t")
            n = stem.removesuffix("-t")
            if not n.isdigit() or int(n) > len(pub) + 1000:
                return None
            return (200, PNG, _png(int(n) * 2 + thumb, 600 if thumb else self.image_kb * 1024))
        feeds = {self.feed_path(i, s): s for i, s in enumerate(self.sections)}
        if path in feeds:
            section = feeds[path]
            items = [a for a in pub if a.section == section][-self.per_feed:]
            body = self._atom(section, items) if path.startswith("/atom/") else \
                self._rss(section, list(reversed(items)))  # fmt: skip
            return self._served(path, [self.origin + a.path for a in items], body,
                                ATOM_TYPE if path.startswith("/atom/") else RSS_TYPE)
        if path == "/rss/top.xml":
            items = pub[-max(3, self.per_feed // 2):]
            return self._served(path, [self.origin + a.path for a in items],
                                self._rss("top stories", list(reversed(items))), RSS_TYPE)
        if path == "/rss/briefs.xml" and self.briefs:
            body = self._briefs_feed(now)
            with self._lock:
                links = [f"{self.origin}/briefs/{n}.html" for t, n in self._briefs if t <= now]
            return self._served(path, links[-self.per_feed:], body, RSS_TYPE)
        if path.startswith("/briefs/") and path.endswith(".html"):
            return (200, HTML, self._page("brief", f"<p>{escape(path)}</p>"))
        if path == "/":
            days = sorted({_day(a.published) for a in pub})[-7:]
            archive = "".join(f'<a href="/archive/{d}.html">{d}</a> ' for d in days)
            return (200, HTML, self._page(f"{self.name} front page",
                                          f"<ul>{self._listing(pub[-15:])}</ul>{archive}"))
        for s in self.sections:
            if path == f"/{s}/":
                mine = [a for a in pub if a.section == s]
                return (200, HTML, self._page(f"{s}", f"<ul>{self._listing(mine[-15:])}</ul>"))
        if path.startswith("/archive/") and path.endswith(".html"):
            day = path[9:-5]
            mine = [a for a in pub if _day(a.published) == day]
            return (200, HTML, self._page(f"archive {day}", f"<ul>{self._listing(mine)}</ul>"))
        by_path = {a.path: a for a in pub}
        a = by_path.get(path)
        if a is not None:
            older = [b for b in pub if b.section == a.section and b.n < a.n][-3:]
            related = "".join(f'<a href="{b.path}">{escape(b.title)}</a>' for b in older)
            text = (f"<p>{escape(a.title)} text. </p>" * (self.article_kb * 1024 // 30))
            return (200, HTML, self._page(a.title, f'<h1>{escape(a.title)}</h1>'
                                          f'<img src="{a.image}">{text}{related}'
                                          f'<a href="/private/{a.n}.html">comments</a>'))
        return None

    def _served(self, path: str, links: list[str], body: bytes,
                headers: tuple[tuple[str, str], ...]) -> Page:  # fmt: skip
        with self._lock:
            self.served.append(Served(path, time.monotonic(), tuple(links),
                                      hashlib.sha1(body).hexdigest()))  # fmt: skip
        return (200, headers, body)


def _iso(t: float) -> str:
    return datetime.fromtimestamp(int(t), UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _day(t: float) -> str:
    return datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%d")
