"""Rewrite the URLs of a stylesheet (or a ``style`` attribute) for replay.

Rewritten: ``url(…)`` in its three spellings (bare, ``"…"``, ``'…'``; CSS Syntax §4.3.6
"consume a url token"), the string form of ``@import "…"``, and the strings of
``image-set()`` / ``-webkit-image-set()``. ``@import`` targets get ``cs_``, everything
else ``im_`` (images and fonts are served as recorded). URLs resolve against the
rewriter's base: the stylesheet's own URL for a file, the page's for inline CSS.
Everything outside the URL text is kept character for character.
"""

from __future__ import annotations

import re

from webark.rewrite.charset import css_charset, to_bytes, to_text
from webark.rewrite.urls import UrlRewriter

__all__ = ["css_unescape", "rewrite_css", "rewrite_css_bytes"]

_CSS_URL = re.compile(
    r"""(?P<imp>@import\s*)?"""
    r"""(?:url\(\s*(?:"(?P<dq>(?:[^"\\\n]++|\\.)*+)"|'(?P<sq>(?:[^'\\\n]++|\\.)*+)'"""
    r"""|(?P<bare>(?:[^)"'\s\\]++|\\[0-9a-fA-F]{1,6}[ \t\n\r\f]?|\\.)*+))\s*\)"""
    r"""|(?P<istr>(?<=@import)\s*(?:"(?P<idq>(?:[^"\\\n]++|\\.)*+)"|"""
    r"""'(?P<isq>(?:[^'\\\n]++|\\.)*+)')))""",
    re.IGNORECASE | re.DOTALL,
)
# CSS Syntax §4.3.7 "consume an escaped code point"; an escaped newline in a string is
# a line continuation (§4.3.5).
_ESCAPE = re.compile(r"\\(?:([0-9a-fA-F]{1,6})[ \t\n\r\f]?|(\r\n|[\n\r\f])|(.))", re.DOTALL)
_NEEDS_QUOTES = re.compile(r"""[\s"'()\\]""")
_IMAGE_SET = re.compile(r"(?:-webkit-)?image-set\(", re.IGNORECASE)
_IMAGE_SET_STRING = re.compile(r"""(?<!url\()(?:"([^"\n]*)"|'([^'\n]*)')""")


def _group(m: re.Match[str]) -> tuple[str, int, int, str] | None:
    """The URL text of a match, its span and its quote character (``""``: bare)."""
    for g, quote in (("dq", '"'), ("sq", "'"), ("bare", ""), ("idq", '"'), ("isq", "'")):
        v = m.group(g)
        if v is not None:
            return v, m.start(g), m.end(g), quote
    return None


def _unescape_char(m: re.Match[str]) -> str:
    hexa, newline, char = m.groups()
    if hexa:
        cp = int(hexa, 16)
        return "\ufffd" if cp == 0 or cp > 0x10FFFF or 0xD800 <= cp <= 0xDFFF else chr(cp)
    return "" if newline else char


def css_unescape(text: str) -> str:
    """``text`` with its CSS escapes undone: ``\\/\\/cdn.org\\/x.png`` → ``//cdn.org/x.png``,
    ``\\2f img`` → ``/img`` (CSS Syntax §4.3.7)."""
    return _ESCAPE.sub(_unescape_char, text) if "\\" in text else text


def _escaped(url: str, quote: str) -> str:
    """A rewritten URL written back where the original stood: in its quotes (the quote
    character and backslashes escaped), or bare unless it needs quotes."""
    if not quote:
        return url if not _NEEDS_QUOTES.search(url) else _escaped(url, '"')
    body = url.replace("\\", "\\\\").replace(quote, "\\" + quote).replace("\n", "\\a ")
    return quote + body + quote


def rewrite_css(text: str, rewriter: UrlRewriter) -> str:
    """Rewrite URLs in CSS text; returns the text itself when nothing changed.

    >>> r = UrlRewriter("/c/", "2014", "http://a.org/css/site.css")
    >>> rewrite_css('@import "x.css"; b{background:url( ../i.png )}',
    ...             r)  # doctest: +NORMALIZE_WHITESPACE
    '@import "/c/2014cs_/http://a.org/css/x.css";
     b{background:url( /c/2014im_/http://a.org/i.png )}'
    """
    lowered = None
    if "url(" not in text and "@import" not in text:
        lowered = text.lower()
        if "url(" not in lowered and "@import" not in lowered and "image-set(" not in lowered:
            return text
    pieces: list[str] = []
    last = 0
    for m in _CSS_URL.finditer(text):
        found = _group(m)
        if found is None:
            continue
        raw, start, end, quote = found
        url = css_unescape(raw)
        imported = m.group("imp") is not None or m.group("istr") is not None
        new = rewriter.rewrite(url, "cs_" if imported else "im_")
        if new != url:
            if raw is not url:  # it had escapes: write the new URL back escaped
                start, end = (start - 1, end + 1) if quote else (start, end)
                new = _escaped(new, quote)
            pieces.append(text[last:start])
            pieces.append(new)
            last = end
    if pieces:
        pieces.append(text[last:])
        text = "".join(pieces)
    if "image-set(" in (lowered if lowered is not None else text.lower()):
        text = _rewrite_image_sets(text, rewriter)
    return text


def _rewrite_image_sets(text: str, rewriter: UrlRewriter) -> str:
    pieces: list[str] = []
    last = 0
    for m in _IMAGE_SET.finditer(text):
        # the arguments, up to the matching ')'
        depth, i = 1, m.end()
        while i < len(text) and depth:
            c = text[i]
            if c == "(":
                depth += 1
            elif c == ")":
                depth -= 1
            i += 1
        for s in _IMAGE_SET_STRING.finditer(text, m.end(), i):
            g = 1 if s.group(1) is not None else 2
            url = s.group(g)
            new = rewriter.rewrite(url, "im_")
            if new != url and s.start(g) >= last:
                pieces.append(text[last : s.start(g)])
                pieces.append(new)
                last = s.end(g)
    if not pieces:
        return text
    pieces.append(text[last:])
    return "".join(pieces)


def rewrite_css_bytes(body: bytes, rewriter: UrlRewriter, charset: str | None = None) -> bytes:
    """Rewrite a stylesheet payload, keeping its encoding and every byte outside the
    rewritten URLs (BOM, ``@charset`` or declared ``charset``, else UTF-8 with
    undecodable bytes kept; see :mod:`webark.rewrite.charset`)."""
    view = to_text(body, css_charset(body, charset))
    out = rewrite_css(view.text, rewriter)
    if out is view.text:
        return body
    return to_bytes(out, view.codec)
