"""Outlinks of RSS (0.9x/2.0, 1.0/RDF) and Atom (RFC 4287) feeds.

Heritrix 3 has no feed extractor in its default chain (feeds fall to ``ExtractorXML``'s
speculative scan; CrawlRSS has its own). webark extracts feed links explicitly:

======================================================  ====  ==========================
what                                                    hop   context
======================================================  ====  ==========================
RSS ``<link>`` (channel and items)                      L     ``rss link``
RSS ``<guid>`` unless ``isPermaLink="false"``           L     ``rss guid``
RSS ``<enclosure url>``, ``<media:content url>``        L     ``rss enclosure`` …
RSS ``<image><url>``, ``<media:thumbnail url>``         E     ``rss image`` …
Atom ``<link href>`` rel alternate/none/related/        L     ``atom link/@href``
next/previous/first/last/enclosure
Atom ``<icon>``, ``<logo>``                             E     ``atom icon`` …
======================================================  ====  ==========================

Enclosures are ``L``, not ``E``: a podcast's audio is not needed to render the item, and
an ``E`` would let the transclusion scope rule fetch it from any host. ``rel="self"``
(the feed itself), ``rel="hub"`` and unknown rels are skipped. ``xml:base`` is ignored
(references resolve against the feed URL). The XML is scanned, not parsed: feeds are
often not well-formed, and no entity is ever expanded. The scan is one pass over the
tags with bounded ``str.find`` steps, linear in the feed's size (the regular
expressions it replaced backtracked: a 120 kB hostile feed took 14 s, 600 kB over a
minute; issue 20 item 9). feedparser (used by continuous crawling) is not used here:
the hop and context of each link need the element it came from, which feedparser's
normalized entries do not keep.

Sources: RSS 2.0 specification (rssboard.org); RSS 1.0 (web.resource.org/rss/1.0);
RFC 4287 (Atom) §4.2.7; RFC 5005 (feed paging); Media RSS 1.5.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Iterator

from webark.crawl.extract import Link, decode_text, resolve
from webark.crawl.extract.sitemap import strip_xml_comments

__all__ = ["FEED_TYPES", "FeedExtractor", "feed_links"]

FEED_TYPES = frozenset(
    {"application/rss+xml", "application/atom+xml", "application/rdf+xml",
     "application/xml", "text/xml", "application/x-rss+xml"}
)  # fmt: skip

_ROOT = re.compile(r"<(rss|rdf:RDF|feed)[\s>]")
_NAME = re.compile(r"[^\s/>]+")
_ATTR_NAME = re.compile(r"[\w:\-]+")
_CDATA, _CDATA_END = "<![CDATA[", "]]>"
#: Characters of a CDATA section read as a link at most.
CDATA_MAX = 4096
_RSS_TEXT = {"link": "rss link", "url": "rss image"}  # <url> only occurs in <image>
_RSS_URL_ATTR = {"enclosure": "L", "media:content": "L", "media:thumbnail": "E"}
_ATOM_IMG = frozenset({"icon", "logo"})
_ATOM_FOLLOW = frozenset(
    {"alternate", "related", "next", "previous", "prev", "first", "last", "enclosure"}
)


def _tags(text: str) -> Iterator[tuple[int, str, str, int]]:
    """``(start, name, attribute text, end)`` of each tag, left to right; ``end`` is the
    index after its ``>``. One pass (every ``str.find`` starts where the last one
    stopped), so linear in ``len(text)`` whatever the input: a ``<`` whose tag never
    closes ends the scan, a CDATA section is skipped whole."""
    pos = 0
    while (lt := text.find("<", pos)) >= 0:
        if text.startswith(_CDATA, lt):
            close = text.find(_CDATA_END, lt + len(_CDATA))
            if close < 0:
                return
            pos = close + len(_CDATA_END)
            continue
        m = _NAME.match(text, lt + 1)
        if m is None:
            pos = lt + 1
            continue
        gt = text.find(">", m.end())
        if gt < 0:
            return
        yield lt, m.group(), text[m.end() : gt], gt + 1
        pos = gt + 1


def _element_text(text: str, at: int) -> str | None:
    """The text of an element whose start tag ends at ``at``: a CDATA section (up to
    :data:`CDATA_MAX` characters) or the characters up to the next ``<``; None when no
    ``<`` follows (the element never ends). Bounded scans only."""
    i = at
    n = len(text)
    while i < n and text[i] in " \t\r\n":
        i += 1
    if text.startswith(_CDATA, i):
        body = i + len(_CDATA)
        close = text.find(_CDATA_END, body, body + CDATA_MAX + len(_CDATA_END))
        return text[body:close] if close >= 0 else ""
    lt = text.find("<", at)
    return html.unescape(text[at:lt]) if lt >= 0 else None


def _attrs(text: str) -> dict[str, str]:
    """Quoted attributes (``name="v"`` / ``name='v'``) of a tag's attribute text,
    entities unescaped; a later one of the same name wins. Linear: each step starts
    after the last, and an unclosed quote ends the scan."""
    out: dict[str, str] = {}
    i, n = 0, len(text)
    while (m := _ATTR_NAME.search(text, i)) is not None:
        j = m.end()
        while j < n and text[j].isspace():
            j += 1
        if j >= n or text[j] != "=":
            i = j
            continue
        j += 1
        while j < n and text[j].isspace():
            j += 1
        if j >= n or text[j] not in "\"'":
            i = j
            continue
        close = text.find(text[j], j + 1)
        if close < 0:
            break
        out[m.group().lower()] = html.unescape(text[j + 1 : close])
        i = close + 1
    return out


def feed_links(feed_url: str, text: str) -> Iterator[Link]:
    """Links of a decoded feed document; nothing if it is not RSS/RDF/Atom.

    Time linear in ``len(text)`` (one scan of its tags; issue 20 item 9: the regular
    expressions this replaced took 14 s on a 120 kB hostile feed)."""
    root = _ROOT.search(text[:65536])
    if root is None:
        return
    rss = root.group(1) in ("rss", "rdf:RDF")
    text = strip_xml_comments(text)
    for _, name, attrs, end in _tags(text):
        bare = not attrs.strip()
        spaced = attrs[:1].isspace()
        ref: str | None = None
        hop, context = "L", ""
        if rss and name in _RSS_TEXT and bare:
            ref, context = _element_text(text, end), _RSS_TEXT[name]
            hop = "E" if name == "url" else "L"
        elif rss and name == "guid" and (bare or spaced):
            if _attrs(attrs).get("ispermalink", "true").lower() != "false":
                value = (_element_text(text, end) or "").strip()
                if value.startswith(("http://", "https://")):
                    ref, context = value, "rss guid"
        elif rss and name in _RSS_URL_ATTR and spaced:
            ref, hop, context = _attrs(attrs).get("url"), _RSS_URL_ATTR[name], f"rss {name}"
        elif name in ("link", "atom:link") and spaced:
            # Atom links also appear in RSS (atom:link rel=self/next/hub)
            a = _attrs(attrs)
            if "href" in a and a.get("rel", "alternate").lower() in _ATOM_FOLLOW:
                ref, context = a["href"], "atom link/@href"
        elif not rss and name in _ATOM_IMG and bare:
            ref, hop, context = _element_text(text, end), "E", f"atom {name}"
        url = resolve(feed_url, ref.strip()) if ref else None
        if url is not None:
            yield Link(url, hop, context)


class FeedExtractor:
    """Extractor for RSS/Atom feeds (XML media types; the root element is sniffed)."""

    def handles(self, mime: str, url: str) -> bool:
        """True for the feed and generic XML media types."""
        return mime in FEED_TYPES

    def extract(
        self, base_url: str, content: bytes, mime: str, charset: str | None
    ) -> Iterable[Link]:
        """Links of a feed (decoded per BOM, HTTP charset, ``<?xml encoding?>``)."""
        return list(feed_links(base_url, decode_text(content, charset)))
