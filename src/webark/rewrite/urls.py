"""Archive URLs for replay: turn a URL found in an archived page into
``{prefix}{timestamp}{modifier}/{absolute original URL}``.

This is the Wayback / pywb URL scheme (``/web/20140126200624im_/http://example.com/a.png``):
the path after the prefix names the capture time (1–14 digits), an optional two-letter
modifier ending in ``_`` that says how the response is going to be used (pywb's
convention: ``id_`` raw, ``im_`` image, ``js_`` script, ``cs_`` stylesheet, ``if_``
iframe/frame, ``oe_`` object/embed, ``mp_`` main page without the banner frame, ``""``
page), and then the original URL, made absolute.

Relative references are resolved the way a browser does (WHATWG URL Standard, through
:func:`webark.url.join`), against the page's URL or the document's ``<base href>``.
Characters outside ASCII are carried over untouched instead of being percent-encoded
as UTF-8: the browser that loads the rewritten page encodes them itself, in the page's
encoding for the query (WHATWG URL Standard, "query state"), so the archive receives
the same bytes the original page would have requested.
"""

from __future__ import annotations

import re

from webark.url.errors import InvalidURLError
from webark.url.normalize import join

__all__ = ["CACHE_MAX", "MODIFIERS", "NAVIGATION_MODIFIERS", "UrlRewriter"]

#: Rewritten URLs a :class:`UrlRewriter` keeps (its cache is emptied when full).
CACHE_MAX = 4096

#: The modifiers of pywb's URL scheme (``{timestamp}{modifier}/``).
MODIFIERS = frozenset({"", "id_", "im_", "js_", "cs_", "if_", "fr_", "oe_", "mp_", "bn_"})
#: Modifiers of documents a user navigates in (links inside them keep the modifier).
NAVIGATION_MODIFIERS = frozenset({"", "mp_", "if_", "fr_"})

# WHATWG URL parser: leading/trailing C0 controls and spaces are stripped, ASCII tab and
# newline removed anywhere.
_C0_AND_SPACE = "".join(chr(c) for c in range(0x21))
_TAB_NEWLINE = re.compile(r"[\t\n\r]")
_SCHEME = re.compile(r"([a-zA-Z][a-zA-Z0-9+.\-]*):")
_NON_ASCII = re.compile(r"[^\x00-\x7f]+")
_REWRITABLE_SCHEMES = ("http://", "https://")


class UrlRewriter:
    """Rewrites URLs of one archived document into archive URLs.

    Args:
        prefix: the collection's URL prefix, ``"/{collection}/"`` or an absolute
            ``"http://host:port/{collection}/"`` (a missing final ``/`` is added).
        timestamp: the capture's timestamp, 14 digits or shorter (``""`` = latest).
        base_url: the document's original URL (WARC-Target-URI); relative references
            resolve against it until :meth:`set_base` changes the base.
        modifier: the modifier the document itself is served with; URLs rewritten
            without an explicit modifier (links, forms) get this one, so that a page
            replayed in ``mp_`` or ``if_`` mode keeps its links in that mode (pywb).

    The rewriter caches results per (url, modifier), up to :data:`CACHE_MAX` of them
    (then the cache starts again: a 10 MB page with 100,000 distinct URLs would
    otherwise keep ~30 MB of them); one instance serves one response. Not thread-safe
    (the cache), which is fine for that use.
    """

    __slots__ = (
        "_already",
        "_base",
        "_cache",
        "_prefix_forms",
        "base_url",
        "modifier",
        "prefix",
        "timestamp",
    )

    def __init__(self, prefix: str, timestamp: str, base_url: str, modifier: str = ""):
        if not prefix.endswith("/"):
            prefix += "/"
        self.prefix = prefix
        self.timestamp = timestamp
        self.base_url = base_url
        self.modifier = modifier
        self._base = _ascii_base(base_url)
        self._cache: dict[tuple[str, str], str] = {}
        # Forms in which an already rewritten URL can appear: the absolute prefix and
        # its scheme-relative form (when the prefix is absolute), and the prefix's path
        # followed by "{timestamp}{modifier}/" (or a capture-list "*" / "2014*" form) and
        # a URL with a scheme — so that a site's own "/coll/about.html" is not taken for
        # a rewritten URL.
        m = re.match(r"(?i)https?:(//[^/]+)(/.*)$", prefix)
        self._prefix_forms = (prefix, m.group(1) + m.group(2)) if m else ()
        path = m.group(2) if m else prefix
        self._already = re.compile(
            re.escape(path) + r"(?:[\d*\-]{0,30}(?:[a-z]{2}_)?/)?(?:https?:)?//", re.IGNORECASE)

    # -- public API --------------------------------------------------------------------
    def set_base(self, url: str) -> None:
        """Set the document base URL (``<base href>``), resolved against the current
        base. An unusable value (unparsable, non-http scheme) is ignored, as browsers
        fall back to the document URL (HTML Standard, "document base URL")."""
        candidate = url.strip(_C0_AND_SPACE)
        candidate = _TAB_NEWLINE.sub("", candidate)
        if not candidate:
            return
        try:
            resolved = _join_keeping_non_ascii(self._base, candidate)
        except InvalidURLError:
            return
        if resolved.startswith(_REWRITABLE_SCHEMES):
            self._base = _ascii_base(resolved)
            self._cache.clear()

    @property
    def base(self) -> str:
        """The base URL currently used for resolution (ASCII form)."""
        return self._base

    def archive_prefix(self, modifier: str | None = None) -> str:
        """``{prefix}{timestamp}{modifier}/`` — what goes in front of an absolute URL
        (``"/coll/20140126200624im_/"``). With an empty timestamp and modifier the
        segment is left out (``"/coll/"``, the latest capture)."""
        mod = self.modifier if modifier is None else modifier
        seg = self.timestamp + mod
        return self.prefix + seg + "/" if seg else self.prefix

    def is_rewritten(self, url: str) -> bool:
        """True when ``url`` already points into this archive (starts with the prefix,
        or with the prefix's path followed by ``{timestamp}{modifier}/http...``)."""
        if self._prefix_forms and url.startswith(self._prefix_forms):
            return True
        return self._already.match(url) is not None

    def rewrite(self, url: str, modifier: str | None = None) -> str:
        """Return the archive URL for ``url`` as found in the document.

        ``url`` is resolved against the base (surrounding whitespace dropped, as a
        browser does) and returned as ``{prefix}{timestamp}{modifier}/{absolute}``;
        ``modifier=None`` means the document's own modifier. Returned unchanged:
        empty and fragment-only references (``#top``), references with a scheme other
        than http(s) (``data:``, ``javascript:``, ``mailto:``, ``tel:``, ``about:``,
        ``blob:``, …), URLs already in the archive, and references that do not parse.

        >>> r = UrlRewriter("/coll/", "20140126200624", "http://www.iana.org/domains/")
        >>> r.rewrite("../_css/screen.css", "cs_")
        '/coll/20140126200624cs_/http://www.iana.org/_css/screen.css'
        >>> r.rewrite("//example.com/x?a=1&b=2"), r.rewrite("mailto:a@b.c")
        ('/coll/20140126200624/http://example.com/x?a=1&b=2', 'mailto:a@b.c')
        """
        mod = self.modifier if modifier is None else modifier
        key = (url, mod)
        cached = self._cache.get(key)
        if cached is not None:
            return cached
        result = self._rewrite(url, mod)
        if len(self._cache) >= CACHE_MAX:  # a huge page: keep memory bounded
            self._cache.clear()
        self._cache[key] = result
        return result

    # -- internals ---------------------------------------------------------------------
    def _rewrite(self, url: str, mod: str) -> str:
        ref = url.strip(_C0_AND_SPACE)
        if "\t" in ref or "\n" in ref or "\r" in ref:
            ref = _TAB_NEWLINE.sub("", ref)
        if not ref or ref[0] == "#":
            return url
        m = _SCHEME.match(ref)
        if m is not None and m.group(1).lower() not in ("http", "https"):
            return url
        if self.is_rewritten(ref):
            return url
        try:
            absolute = _join_keeping_non_ascii(self._base, ref)
        except InvalidURLError:
            return url
        if not absolute.startswith(_REWRITABLE_SCHEMES):
            return url
        return self.archive_prefix(mod) + absolute


def _ascii_base(url: str) -> str:
    """The base in the parser's ASCII serialization (non-ASCII percent-encoded / IDNA);
    the unparsed text when it does not parse (then every join fails and URLs are left
    as they are)."""
    try:
        return join(url, "")
    except InvalidURLError:
        return url


def _join_keeping_non_ascii(base: str, ref: str) -> str:
    """:func:`webark.url.join`, but runs of non-ASCII characters (including lone
    surrogates from a ``surrogateescape`` decoding) come back as they were instead of
    percent-encoded, so the browser encodes them in the document's charset."""
    if ref.isascii():
        return join(base, ref)
    runs: list[str] = []

    def hold(m: re.Match[str]) -> str:
        runs.append(m.group())
        return f"wbkph{len(runs) - 1}x"

    masked = _NON_ASCII.sub(hold, ref)
    if "wbkph" in ref:  # cannot mask unambiguously: let the parser encode
        return join(base, ref.encode("utf-8", "surrogateescape").decode("utf-8", "replace"))
    joined = join(base, masked)
    return re.sub(r"wbkph(\d+)x", lambda m: runs[int(m.group(1))], joined)
