"""Speculative outlinks of JavaScript: URL-like string literals (hop ``X``).

Like Heritrix's ``ExtractorJS`` we do not run or parse the script; we scan its string
literals and keep those that look like URLs. Heritrix's test (``UriUtils.isLikelyUri``)
is generous and is a well-known source of junk fetches and crawler traps, so webark is
deliberately more conservative. A literal (single, double or back-quoted without
``${``; never spanning a line; at most 2048 characters; JS escapes such as ``\\/`` and
``\\u002F`` decoded) is extracted only if it is one of:

1. an absolute ``http(s)://`` URL whose host has a dot and an alphabetic TLD (or is an
   IPv4 address), e.g. ``"https://cdn.example.com/app.js"``;
2. a protocol-relative URL ``//host.tld/…`` with the same host test;
3. a path ending in a *known file extension* (:data:`EXTENSIONS`: pages, scripts,
   styles, images, fonts, media, documents), optionally with a query, e.g.
   ``"img/logo.png"``, ``"../page.html?x=1"``, ``"/static/app.min.js"``;
4. an absolute path whose first segment has at least two characters, made only of
   unreserved characters, e.g. ``"/about/team"`` (no query allowed here; ``"/a"``,
   which jQuery compares ``href`` with, is not extracted).

and none of the trap signs holds:

* the literal is an operand of ``+`` (a fragment of a URL built at run time, e.g.
  ``"/calendar/" + year + "/"``): the nearest non-blank character before the opening
  or after the closing quote is ``+``;
* it ends in ``=``, ``&``, ``?`` or contains a placeholder (``{``, ``}``, ``%s``,
  ``%d``, ``$``) or whitespace;
* the same path segment occurs more than twice (Heritrix's "pathological path" rule).

Relative references are resolved against the script's URL for ``.js`` files (as
Heritrix does; browsers would use the page's URL, which we do not know here) and
against the document's base URL for inline scripts and event handlers.

Source: Heritrix 3 ``ExtractorJS`` (``JAVASCRIPT_STRING_EXTRACTOR`` then
``UriUtils.isLikelyUri``); ECMAScript 2024 §12.9.4 (string literals, escapes).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from webark.crawl.extract import Link, decode_text, resolve

__all__ = [
    "EXTENSIONS", "XML_NAMESPACES", "JsExtractor", "is_script", "is_sphinx_index_url",
    "js_links", "looks_like_url",
]  # fmt: skip

_EXTENSION_WORDS = (
    "html htm xhtml shtml php asp aspx jsp cfm cgi pl "
    "js mjs css json xml rss atom txt pdf "
    "png jpg jpeg gif svg webp avif ico bmp tif tiff "
    "woff woff2 ttf otf eot "
    "mp4 webm ogv ogg mp3 m4a m4v wav flac mov avi m3u8 mpd swf flv "
    "zip gz tgz doc docx xls xlsx ppt pptx"
)
#: File extensions that make a relative path string worth fetching.
EXTENSIONS = frozenset(_EXTENSION_WORDS.split())

_STRING = re.compile(
    r""""((?:[^"\\\n]|\\[^\n]){2,2048}?)"|'((?:[^'\\\n]|\\[^\n]){2,2048}?)'|`([^`\\$\n]{2,2048}?)`"""
)
_JS_ESCAPE = re.compile(r"\\(?:u\{([0-9A-Fa-f]{1,6})\}|u([0-9A-Fa-f]{4})|x([0-9A-Fa-f]{2})|(.))")
_URL_CHARS = r"[A-Za-z0-9\-._~%!$&'()*+,;=:@/]"
_HOST = r"(?:[A-Za-z0-9](?:[A-Za-z0-9\-]{0,62})\.)+(?:[A-Za-z]{2,63}|xn--[A-Za-z0-9\-]+)|\d{1,3}(?:\.\d{1,3}){3}"  # noqa: E501
_QUERY = r"(?:\?[A-Za-z0-9\-._~%!$&'()*+,;=:@/?]*)?"
_ABSOLUTE = re.compile(
    r"(?:https?:)?//(?:" + _HOST + r")(?::\d{1,5})?(?:/" + _URL_CHARS + r"*)?" + _QUERY + r"$",
    re.IGNORECASE,
)
_EXT_PATH = re.compile(
    r"(?:\.{0,2}/)?(?:[A-Za-z0-9\-._~%!$&'()*,;=:@]+/)*[A-Za-z0-9\-_~%!()*,;:@]"
    r"[A-Za-z0-9\-._~%!()*,;:@]*\.([A-Za-z0-9]{2,5})" + _QUERY + r"$"
)
_ABS_PATH = re.compile(r"/[A-Za-z0-9\-_~%][A-Za-z0-9\-._~%]+(?:/[A-Za-z0-9\-._~%]+)*/?$")
_BAD = re.compile(r"[{}$\s<>\"\\^`|]|%[sd]")


def _unescape_one(m: re.Match[str]) -> str:
    braced, u4, x2, other = m.groups()
    code = braced or u4 or x2
    if code is not None:
        cp = int(code, 16)
        return chr(cp) if cp <= 0x10FFFF and not 0xD800 <= cp <= 0xDFFF else "\ufffd"
    return {"n": "\n", "t": "\t", "r": "\r"}.get(other, other)


def looks_like_url(s: str) -> bool:
    """The heuristic of this module's docstring, on an unescaped string literal.

    >>> looks_like_url("/img/a.png"), looks_like_url("text/css"), looks_like_url("/p?id=")
    (True, False, False)
    """
    s = s.split("#", 1)[0]  # a fragment is never fetched; judge the rest
    if len(s) < 2 or _BAD.search(s) or s.endswith(("=", "&", "?")):
        return False
    if s.startswith(("http:", "https:", "HTTP:", "HTTPS:", "//")):
        ok = _ABSOLUTE.match(s) is not None
    else:
        m = _EXT_PATH.match(s)
        if m is not None:
            ok = m.group(1).lower() in EXTENSIONS
        else:
            ok = s[0] == "/" and _ABS_PATH.match(s) is not None
    if not ok:
        return False
    path = s.split("?", 1)[0]
    segments = [p for p in path.split("/") if p]
    return not segments or max(segments.count(p) for p in set(segments)) <= 2


def _next_char(text: str, pos: int, step: int) -> str:
    n = len(text)
    while 0 <= pos < n:
        c = text[pos]
        if c not in " \t\r\n":
            return c
        pos += step
    return ""


def js_strings(code: str) -> Iterator[str]:
    """Unescaped string literals of ``code`` that are not ``+`` operands."""
    for m in _STRING.finditer(code):
        if _next_char(code, m.start() - 1, -1) == "+" or _next_char(code, m.end(), 1) == "+":
            continue
        s = m.group(1) or m.group(2) or m.group(3) or ""
        if "\\" in s:
            s = _JS_ESCAPE.sub(_unescape_one, s)
        yield s


XML_NAMESPACES = frozenset(
    {
        "http://www.w3.org/1999/xhtml",
        "http://www.w3.org/2000/svg",
        "http://www.w3.org/1999/xlink",
        "http://www.w3.org/1998/Math/MathML",
        "http://www.w3.org/XML/1998/namespace",
        "http://www.w3.org/2000/xmlns/",
        "http://www.w3.org/1999/02/22-rdf-syntax-ns#",
    }
)
"""Namespace names scripts pass to ``createElementNS`` and kin (Namespaces in XML 1.0;
HTML Standard §2.1.8): identifiers, not links. Nearly every page with inline SVG or a
charting library names ``http://www.w3.org/2000/svg``; fetching it is a request to a
third party for nothing (Heritrix's ExtractorJS does fetch them)."""


def js_links(base_url: str, code: str, context: str = "js string") -> Iterator[Link]:
    """Speculative links (hop ``X``) from the string literals of script ``code``
    (:data:`XML_NAMESPACES` excepted)."""
    for s in js_strings(code):
        if looks_like_url(s) and s.rstrip("/") not in _NAMESPACES:
            url = resolve(base_url, s)
            if url is not None:
                yield Link(url, "X", context)


_NAMESPACES = frozenset(n.rstrip("/") for n in XML_NAMESPACES)


_JS_TYPES = frozenset(
    {
        "application/javascript",
        "application/x-javascript",
        "text/javascript",
        "application/ecmascript",
        "text/ecmascript",
        "text/x-javascript",
        "text/jscript",
    }
)


def is_script(mime: str, url: str) -> bool:
    """True for the JavaScript media types, or an unknown type with a ``.js`` / ``.mjs``
    path."""
    if mime in _JS_TYPES:
        return True
    return mime in ("", "text/plain", "application/octet-stream") and url.split("?", 1)[
        0
    ].lower().endswith((".js", ".mjs"))


def is_sphinx_index_url(url: str) -> bool:
    """True when the path of ``url`` ends in ``/searchindex.js``, the name Sphinx gives
    its search index (read by :mod:`webark.crawl.extract.sphinx`)."""
    return url.split("#", 1)[0].split("?", 1)[0].endswith("/searchindex.js")


class JsExtractor:
    """Extractor for JavaScript responses (hop ``X``, context ``"js string"``)."""

    def handles(self, mime: str, url: str) -> bool:
        """:func:`is_script`, except for a Sphinx ``searchindex.js``: the Sphinx
        extractor takes it (its strings are index terms, not URLs; scanning the 3.5 MB
        index of the python docs cost 0.28 s and found two 404s) and scans it as a
        script only when it turns out not to be a Sphinx index."""
        return is_script(mime, url) and not is_sphinx_index_url(url)

    def extract(
        self, base_url: str, content: bytes, mime: str, charset: str | None
    ) -> Iterable[Link]:
        """Speculative links of a script; decoded per HTTP charset, BOM, UTF-8,
        windows-1252."""
        return list(js_links(base_url, decode_text(content, charset, sniff=False)))
