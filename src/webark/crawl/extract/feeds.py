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
(references resolve against the feed URL). The XML is scanned with regular expressions:
feeds are often not well-formed, and no entity is ever expanded.

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
_TEXT = r"\s*(?:<!\[CDATA\[(.{0,4096}?)\]\]>|([^<]*))\s*<"
_RSS_LINK = re.compile(r"<link\s*>" + _TEXT, re.DOTALL)
_GUID = re.compile(r"<guid(\s[^>]*)?>" + _TEXT, re.DOTALL)
# In RSS, <url> occurs only inside <image> (the channel logo).
_IMAGE_URL = re.compile(r"<url\s*>" + _TEXT, re.DOTALL)
_URL_ATTR_TAG = re.compile(r"<(enclosure|media:content|media:thumbnail)\s([^>]*)>")
_ATOM_LINK = re.compile(r"<(?:atom:)?link\s([^>]*)>")
_ATOM_IMG = re.compile(r"<(icon|logo)\s*>" + _TEXT, re.DOTALL)
_ATTR = re.compile(r"""([\w:\-]+)\s*=\s*(?:"([^"]*)"|'([^']*)')""")
_ATOM_FOLLOW = frozenset(
    {"alternate", "related", "next", "previous", "prev", "first", "last", "enclosure"}
)


def _attrs(text: str) -> dict[str, str]:
    return {
        m.group(1).lower(): html.unescape(m.group(2) if m.group(2) is not None else m.group(3))
        for m in _ATTR.finditer(text)
    }


def _text(m: re.Match[str], first: int) -> str:
    cdata, plain = m.group(first), m.group(first + 1)
    return cdata if cdata is not None else html.unescape(plain or "")


def feed_links(feed_url: str, text: str) -> Iterator[Link]:
    """Links of a decoded feed document; nothing if it is not RSS/RDF/Atom."""
    root = _ROOT.search(text[:65536])
    if root is None:
        return
    text = strip_xml_comments(text)
    found: list[tuple[int, str | None, str, str]] = []
    if root.group(1) in ("rss", "rdf:RDF"):
        for m in _RSS_LINK.finditer(text):
            found.append((m.start(), _text(m, 1), "L", "rss link"))
        for m in _GUID.finditer(text):
            if _attrs(m.group(1) or "").get("ispermalink", "true").lower() != "false":
                value = _text(m, 2).strip()
                if value.startswith(("http://", "https://")):
                    found.append((m.start(), value, "L", "rss guid"))
        for m in _IMAGE_URL.finditer(text):
            found.append((m.start(), _text(m, 1), "E", "rss image"))
        for m in _URL_ATTR_TAG.finditer(text):
            tag = m.group(1)
            hop = "E" if tag == "media:thumbnail" else "L"
            found.append((m.start(), _attrs(m.group(2)).get("url"), hop, f"rss {tag}"))
    # Atom links also appear in RSS (atom:link rel=self/next/hub).
    for m in _ATOM_LINK.finditer(text):
        attrs = _attrs(m.group(1))
        rel = attrs.get("rel", "alternate").lower()
        if "href" in attrs and rel in _ATOM_FOLLOW:
            found.append((m.start(), attrs["href"], "L", "atom link/@href"))
    if root.group(1) == "feed":
        for m in _ATOM_IMG.finditer(text):
            found.append((m.start(), _text(m, 2), "E", f"atom {m.group(1)}"))
    found.sort(key=lambda t: t[0])
    for _, ref, hop, context in found:
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
