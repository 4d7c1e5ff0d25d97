"""Link extraction: outlinks of fetched documents, with Heritrix hop types.

Layer L4 (imports only :mod:`webark.core`, :mod:`webark.url`, :mod:`webark.warc`).

An extractor is anything with the two methods of :class:`Extractor`; the built-in ones are
:class:`~webark.crawl.extract.html.HtmlExtractor`,
:class:`~webark.crawl.extract.css.CssExtractor`,
:class:`~webark.crawl.extract.js.JsExtractor`,
:class:`~webark.crawl.extract.sitemap.SitemapExtractor` and
:class:`~webark.crawl.extract.feeds.FeedExtractor`. :func:`extract_links` picks the
ones that handle a response and returns its outlinks, deduplicated.

Hop types (Heritrix ``Hop``): ``L`` navigation link, ``E`` embed (needed to render the
page), ``X`` speculative embed (a guess from script text), ``R`` redirect / refresh,
``I`` inferred, ``M`` manifest (sitemap). Contexts are Heritrix-style XPath-ish strings
(``a/@href``, ``img/@srcset``, ``css url()``) so crawl.log and reports read the same.

Every URL a :class:`Link` carries is absolute http(s), normalized with
:func:`webark.url.normalize` (fragment removed). ``javascript:``, ``mailto:``, ``data:``,
``about:``, ``tel:`` and every other non-http(s) reference is dropped.

Each module's docstring lists what it extracts and its deliberate differences from
Heritrix 3 (``ExtractorHTML``, ``ExtractorCSS``, ``ExtractorJS``, ``ExtractorSitemap``).
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from functools import cache, lru_cache
from itertools import chain, islice
from typing import Protocol, runtime_checkable

from webark.url import InvalidURLError, join_normalized

__all__ = [
    "HOP_TYPES",
    "MAX_OUTLINKS",
    "Extractor",
    "Link",
    "Outlinks",
    "charset_of",
    "decode_text",
    "dedupe",
    "default_extractors",
    "extract_links",
    "resolve",
]

#: Heritrix hop letters used by the extractors.
HOP_TYPES = frozenset("LEXRIM")


@dataclass(frozen=True, slots=True)
class Link:
    """One outlink.

    Attributes:
        url: absolute http(s) URL, normalized, without fragment.
        hop: Heritrix hop type letter: ``L`` link, ``E`` embed, ``X`` speculative embed,
            ``R`` redirect/refresh, ``I`` inferred, ``M`` manifest (sitemap).
        context: where it was found, e.g. ``"a/@href"``, ``"img/@srcset"``,
            ``"css url()"``, ``"script string"``.
    """

    url: str
    hop: str
    context: str


class Outlinks(list[Link]):
    """The outlinks :func:`extract_links` keeps (a list of :class:`Link`), and how many
    it dropped beyond its cap: :attr:`dropped`, the count of links found once the cap
    was reached, repeats included, as Heritrix counts discarded outlinks (crawl.log
    ``dol:N``)."""

    dropped: int = 0


@runtime_checkable
class Extractor(Protocol):
    """Finds outlinks in one kind of document."""

    def handles(self, mime: str, url: str) -> bool:
        """True if :meth:`extract` should be offered a response of this media type
        (lowercased, without parameters; ``""`` when unknown) fetched from ``url``."""
        ...

    def extract(
        self, base_url: str, content: bytes, mime: str, charset: str | None
    ) -> Iterable[Link]:
        """Outlinks of ``content`` (the entity body, transfer- and content-decoding
        already undone) fetched from ``base_url``; ``charset`` is the HTTP
        ``Content-Type`` charset parameter, if any. Must not raise on malformed input."""
        ...


# --------------------------------------------------------------------------- URLs

_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.\-]*):")
_STRIP = "\x00\x01\x02\x03\x04\x05\x06\x07\x08\t\n\x0b\x0c\r\x0e\x0f\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f "  # noqa: E501
_TAB_NL = re.compile(r"[\t\n\r]")
#: Default cap on the links returned per document (Heritrix ``maxOutlinks``).
MAX_OUTLINKS = 6000
#: Maximum length of a reference we try to resolve (Heritrix: 2048-char attribute values).
MAX_REF_LENGTH = 2048


def resolve(base: str, ref: str) -> str | None:
    """Resolve an extracted reference against a base URL the way a browser does.

    Leading/trailing C0 controls and spaces are stripped and tabs/newlines removed
    (WHATWG URL Standard, basic URL parser). Returns None for an empty or fragment-only
    reference, a non-http(s) scheme (``javascript:``, ``mailto:``, ``data:``, ``about:``,
    ``tel:``, ``ftp:`` …), a reference longer than :data:`MAX_REF_LENGTH`, or one the URL
    parser rejects. The result is normalized and has no fragment.

    >>> resolve("http://a/b/c", "../d#x")
    'http://a/d'
    >>> resolve("http://a/", "javascript:void(0)") is None
    True
    """
    ref = ref.strip(_STRIP)
    if not ref or ref[0] == "#" or len(ref) > MAX_REF_LENGTH:
        return None
    hash_at = ref.find("#")
    if hash_at > 0:
        ref = ref[:hash_at]  # the result has no fragment: "f.html#a" and "f.html#b" are one
    if ref[0] != "?":
        # anything but a query-only reference resolves the same against the base's
        # folder (RFC 3986 §5.2.3 merge), so the pages of one folder share cache entries
        query_at = base.find("?")
        path = base if query_at < 0 else base[:query_at]
        slash = path.rfind("/")
        if slash > path.find("//") + 1:
            base = path[: slash + 1]
    return _resolve(base, ref)


@lru_cache(maxsize=16384)
def _resolve(base: str, ref: str) -> str | None:
    """:func:`resolve` after the cheap checks; cached (pages repeat their links)."""
    if "\t" in ref or "\n" in ref or "\r" in ref:
        ref = _TAB_NL.sub("", ref)
    m = _SCHEME.match(ref)
    if m is not None and m.group(1).lower() not in ("http", "https"):
        return None
    try:
        url = join_normalized(base, ref)
    except InvalidURLError:
        return None
    if not url.startswith(("http://", "https://")):
        return None
    return url


# ------------------------------------------------------------------------ charsets

_BOMS = (
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)
# WHATWG Encoding Standard: these labels all mean windows-1252.
_AS_1252 = frozenset(
    {
        "iso-8859-1",
        "iso8859-1",
        "latin1",
        "latin-1",
        "l1",
        "us-ascii",
        "ascii",
        "iso_8859-1",
        "cp819",
        "ibm819",
        "windows-1252",
        "cp1252",
        "x-cp1252",
    }
)
_META_CHARSET = re.compile(
    rb"""<meta\s[^>]*?charset\s*=\s*["']?\s*([A-Za-z0-9_.:\-]+)""", re.IGNORECASE
)
_XML_ENCODING = re.compile(rb"""^<\?xml\s[^>]*encoding\s*=\s*["']([A-Za-z0-9_.:\-]+)""")


def _codec(label: str | None) -> str | None:
    """Python codec name for a charset label, or None if unknown."""
    if not label:
        return None
    low = label.strip().strip("\"'").lower()
    if low in _AS_1252:
        return "cp1252"
    if low in ("utf-16", "utf-16le", "utf-16be", "unicode"):
        return None  # a label without a BOM is a lie in practice (WHATWG: treat as UTF-8)
    try:
        return codecs.lookup(low).name
    except LookupError:
        return None


def decode_text(content: bytes, http_charset: str | None = None, sniff: bool = True) -> str:
    """Decode a document to text without ever raising.

    Order (HTML Standard "encoding sniffing algorithm", simplified): a byte order mark
    wins; then the HTTP ``Content-Type`` charset; then (``sniff=True``) a
    ``<meta charset>`` / ``<meta http-equiv=content-type>`` or ``<?xml encoding?>`` in
    the first 1024 bytes; then UTF-8 if the bytes are valid UTF-8, else windows-1252.
    Undecodable bytes become U+FFFD. ISO-8859-1 and US-ASCII labels decode as
    windows-1252 (WHATWG Encoding Standard).
    """
    for bom, name in _BOMS:
        if content.startswith(bom):
            return content[len(bom) :].decode(name, "replace")
    codec = _codec(http_charset)
    if codec is None and sniff:
        head = content[:1024]
        m = _META_CHARSET.search(head) or _XML_ENCODING.search(head)
        if m is not None:
            codec = _codec(m.group(1).decode("ascii"))
    if codec is not None:
        try:
            return content.decode(codec, "replace")
        except (LookupError, ValueError):  # codecs that reject "replace"
            pass
    try:
        return content.decode("utf-8")
    except UnicodeDecodeError:
        return content.decode("cp1252", "replace")


def charset_of(content_type: str | None) -> str | None:
    """The ``charset`` parameter of a ``Content-Type`` value, or None.

    >>> charset_of('text/html; Charset="ISO-8859-1"')
    'ISO-8859-1'
    """
    if not content_type:
        return None
    for part in content_type.split(";")[1:]:
        name, _, value = part.partition("=")
        if name.strip().lower() == "charset":
            return value.strip().strip("\"'") or None
    return None


# --------------------------------------------------------------------- dispatching


@cache
def default_extractors() -> tuple[Extractor, ...]:
    """The built-in extractors, in the order :func:`extract_links` tries them."""
    from webark.crawl.extract.css import CssExtractor
    from webark.crawl.extract.feeds import FeedExtractor
    from webark.crawl.extract.html import HtmlExtractor
    from webark.crawl.extract.js import JsExtractor
    from webark.crawl.extract.sitemap import SitemapExtractor
    from webark.crawl.extract.sphinx import SphinxSearchIndexExtractor

    return (
        HtmlExtractor(), CssExtractor(), JsExtractor(), SphinxSearchIndexExtractor(),
        SitemapExtractor(), FeedExtractor(),
    )  # fmt: skip


def _header(headers: Mapping[str, str] | Iterable[tuple[str, str]] | None, name: str) -> str | None:
    if headers is None:
        return None
    items = headers.items() if isinstance(headers, Mapping) else headers
    low = name.lower()
    for n, v in items:
        if n.lower() == low:
            return v
    return None


_HTML_SNIFF = re.compile(rb"<html|<!doctype\s+html", re.IGNORECASE)


def extract_links(
    url: str,
    mime: str | None,
    content: bytes,
    headers: Mapping[str, str] | Iterable[tuple[str, str]] | None = None,
    extractors: Iterable[Extractor] | None = None,
    max_links: int = MAX_OUTLINKS,
) -> Outlinks:
    """All outlinks of one response, deduplicated on ``(url, hop)`` (first context kept),
    in document order, the first ``max_links`` of them (:attr:`Outlinks.dropped` counts
    the others; extractors that yield links lazily keep no more than that in memory).

    Args:
        url: the URL the response was fetched from (base for relative references).
        mime: media type; when None it is taken from the ``Content-Type`` header.
            ``text/html`` is also assumed when the first 1000 bytes contain ``<html`` or
            ``<!doctype html`` (as Heritrix's ``ExtractorHTML.shouldExtract``).
        content: the entity body with transfer and content codings undone.
        headers: response header fields (mapping or ``(name, value)`` pairs), used for
            the charset and for ``Location`` / ``Content-Location`` (hop ``R``, as
            Heritrix's ``ExtractorHTTP``).
        extractors: extractors to offer the response to (default
            :func:`default_extractors`); every one whose ``handles`` is true runs.
        max_links: keep at most this many links (after deduplication), as Heritrix's
            ``maxOutlinks`` (default 6000); the job's ``max_outlinks``.
    """
    ctype = _header(headers, "Content-Type")
    if mime is None:
        mime = ctype.split(";", 1)[0] if ctype else ""
    mime = mime.strip().lower()
    charset = charset_of(ctype)
    if mime in ("", "text/plain", "application/octet-stream") and _HTML_SNIFF.search(
        content[:1000]
    ):
        mime = "text/html"
    redirects: list[Link] = []
    found: list[Iterable[Link]] = [redirects]
    for name, context in (
        ("Location", "http/location"),
        ("Content-Location", "http/content-location"),
    ):
        value = _header(headers, name)
        target = resolve(url, value) if value else None
        if target is not None and target != resolve(url, url):
            redirects.append(Link(target, "R", context))
    for ex in default_extractors() if extractors is None else extractors:
        if ex.handles(mime, url):
            found.append(ex.extract(url, content, mime, charset))
    every = chain.from_iterable(found)  # lazily: extractors run as links are taken
    out = Outlinks(islice(dedupe(every), max_links))
    if len(out) == max_links:
        out.dropped = sum(1 for _ in every)
    return out


def dedupe(links: Iterable[Link]) -> Iterator[Link]:
    """Drop repeated ``(url, hop)`` pairs, keeping the first occurrence."""
    seen: set[tuple[str, str]] = set()
    for link in links:
        key = (link.url, link.hop)
        if key not in seen:
            seen.add(key)
            yield link
