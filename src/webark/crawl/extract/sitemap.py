"""Outlinks of sitemaps (sitemaps.org protocol 0.9): hop ``M`` (manifest).

Handles ``<urlset>`` and ``<sitemapindex>`` XML documents, gzip-compressed or not, and
plain-text sitemaps (one URL per line). Every URL found gets hop ``M``, as Heritrix's
``ExtractorSitemap`` does; the context tells the kinds apart:

* ``sitemapindex/sitemap/loc`` — a child sitemap (the crawler should feed it back here);
* ``urlset/url/loc`` — a page;
* ``urlset/url/xhtml:link`` — an ``hreflang`` alternate of a page;
* ``urlset/url/image:loc`` / ``video:content_loc`` / ``video:thumbnail_loc`` — media;
* ``text sitemap`` — a line of a text sitemap.

The XML is scanned with regular expressions, not an XML parser: sitemaps in the wild are
often not well-formed, and no entity is ever expanded (no "billion laughs"). Only
absolute http(s) ``<loc>`` values are kept (the protocol requires absolute URLs);
relative ones are resolved against the sitemap URL anyway for robustness. We do not
enforce the protocol's "same directory" rule — scope rules decide. Decompressed size is
capped at :data:`MAX_UNCOMPRESSED` (protocol limit is 50 MB).

``robots.txt`` ``Sitemap:`` lines are :mod:`webark.robots`' job, not this module's.

Sources: https://www.sitemaps.org/protocol.html; Google image/video sitemap extensions.
"""

from __future__ import annotations

import html
import re
import zlib
from collections.abc import Iterable, Iterator

from webark.crawl.extract import Link, decode_text, resolve

__all__ = ["MAX_UNCOMPRESSED", "SitemapExtractor", "sitemap_links", "strip_xml_comments"]

#: Cap on the decompressed size of a gzipped sitemap (bytes).
MAX_UNCOMPRESSED = 64 * 1024 * 1024

_XML_TYPES = frozenset({"application/xml", "text/xml", "application/x-xml"})
_GZ_TYPES = frozenset({"application/gzip", "application/x-gzip", "application/x-gunzip"})
_ROOT = re.compile(r"<(?:[A-Za-z_][\w.\-]*:)?(urlset|sitemapindex)[\s>/]")
_ELEMENT = re.compile(
    r"<(?:([A-Za-z_][\w.\-]*):)?(loc|content_loc|thumbnail_loc|player_loc)\s*>"
    r"\s*(?:<!\[CDATA\[(.{0,4096}?)\]\]>|([^<]*))\s*<",
    re.DOTALL,
)
_XHTML_LINK = re.compile(r"<xhtml:link\s[^>]*?href\s*=\s*(?:\"([^\"]*)\"|'([^']*)')")


def strip_xml_comments(text: str) -> str:
    """Remove ``<!-- … -->`` comments in linear time (an unterminated comment runs to
    the end, as in XML); a regex ``<!--.*?-->`` is quadratic on many unclosed ones."""
    if "<!--" not in text:
        return text
    parts: list[str] = []
    pos = 0
    while True:
        start = text.find("<!--", pos)
        if start < 0:
            parts.append(text[pos:])
            break
        parts.append(text[pos:start])
        end = text.find("-->", start + 4)
        if end < 0:
            break
        pos = end + 3
    return "".join(parts)


def _gunzip(content: bytes) -> bytes | None:
    d = zlib.decompressobj(zlib.MAX_WBITS | 16)
    try:
        out = d.decompress(content, MAX_UNCOMPRESSED)
    except zlib.error:
        return None
    return out


_LINE = re.compile(r"[^\r\n]+")


def sitemap_links(sitemap_url: str, text: str) -> Iterator[Link]:
    """Links (hop ``M``) of a decoded sitemap document (XML or text)."""
    root = _ROOT.search(text[:65536])
    if root is None:
        if text.lstrip()[:1] == "<":
            return
        for m in _LINE.finditer(text):  # lazily: a cap on links bounds the memory
            line = m.group().strip()
            if line.startswith(("http://", "https://")):
                url = resolve(sitemap_url, line)
                if url is not None:
                    yield Link(url, "M", "text sitemap")
        return
    kind = root.group(1)
    text = strip_xml_comments(text)
    for m in _ELEMENT.finditer(text, root.start()):
        prefix, name, cdata, plain = m.groups()
        raw = cdata if cdata is not None else html.unescape(plain or "")
        if kind == "sitemapindex":
            if name != "loc" or prefix:
                continue
            context = "sitemapindex/sitemap/loc"
        elif prefix is None and name == "loc":
            context = "urlset/url/loc"
        elif prefix is not None:
            context = f"urlset/url/{prefix}:{name}"
        else:
            continue
        url = resolve(sitemap_url, raw.strip())
        if url is not None:
            yield Link(url, "M", context)
    if kind == "urlset" and "xhtml:link" in text:
        for m in _XHTML_LINK.finditer(text):
            raw = html.unescape(m.group(1) if m.group(1) is not None else m.group(2))
            url = resolve(sitemap_url, raw)
            if url is not None:
                yield Link(url, "M", "urlset/url/xhtml:link")


class SitemapExtractor:
    """Extractor for sitemap documents.

    ``handles`` is true for XML media types (the document is then sniffed for a
    ``<urlset>``/``<sitemapindex>`` root and ignored otherwise), and for gzip and
    ``text/plain`` responses whose URL path contains ``sitemap``.
    """

    def handles(self, mime: str, url: str) -> bool:
        """See the class docstring."""
        if mime in _XML_TYPES:
            return True
        path = url.split("?", 1)[0].lower()
        return "sitemap" in path and (
            mime in _GZ_TYPES or mime in ("text/plain", "", "application/octet-stream")
        )

    def extract(
        self, base_url: str, content: bytes, mime: str, charset: str | None
    ) -> Iterable[Link]:
        """Links of a sitemap; gzip is undone first (by magic number)."""
        if content[:2] == b"\x1f\x8b":
            unzipped = _gunzip(content)
            if unzipped is None:
                return []
            content = unzipped
        return sitemap_links(base_url, decode_text(content, charset))  # lazily: see max_links
