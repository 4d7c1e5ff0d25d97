"""Outlinks of CSS: ``url()`` and ``@import`` (hop ``E``).

Like Heritrix's ``ExtractorCSS`` every reference is an embed (``E``) resolved against the
stylesheet's URL (for inline CSS: the document's base URL). Unlike its single regular
expression we follow CSS Syntax Level 3 more closely:

* comments are removed first (a ``url()`` inside ``/* … */`` is not a reference);
* ``url(…)`` quoted or unquoted, any case, whitespace inside the parentheses;
* ``@import "x.css"`` / ``@import 'x.css'`` / ``@import url(x.css)``;
* CSS escapes are decoded (``\\28`` → ``(``, ``\\)`` → ``)``, escaped newline removed);
* ``image-set("a.png" 1x, …)`` plain strings (CSS Images 4) are extracted too.

Source: CSS Syntax Module Level 3 §4.3.6 (consume a url token), §4.3.7 (escapes);
CSS Cascading 4 §2 (``@import``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from webark.crawl.extract import Link, decode_text, resolve

__all__ = ["CssExtractor", "css_links", "css_references"]

_COMMENT = re.compile(r"/\*.*?(?:\*/|$)", re.DOTALL)
_STR = r""""((?:[^"\\\n]|\\.|\\\n)*)"|'((?:[^'\\\n]|\\.|\\\n)*)'"""
_URL = re.compile(
    r"url\(\s*(?:" + _STR + r"""|((?:[^\s()"'\\]|\\[0-9A-Fa-f]{1,6}[ \t\n\r\f]?|\\.)*))\s*\)""",
    re.IGNORECASE | re.DOTALL,
)
_IMPORT = re.compile(r"@import\s+(?:" + _STR + r")", re.IGNORECASE | re.DOTALL)
_IMAGE_SET = re.compile(r"image-set\(([^)]*)\)", re.IGNORECASE)
_SET_STRING = re.compile(_STR, re.DOTALL)
_ESCAPE = re.compile(r"\\(?:([0-9A-Fa-f]{1,6})[ \t\n\r\f]?|(\n)|(.))", re.DOTALL)


def _unescape_one(m: re.Match[str]) -> str:
    hexdigits, newline, char = m.groups()
    if hexdigits is not None:
        cp = int(hexdigits, 16)
        return chr(cp) if 0 < cp <= 0x10FFFF and not 0xD800 <= cp <= 0xDFFF else "\ufffd"
    if newline is not None:
        return ""
    return char or ""


def unescape_css(text: str) -> str:
    """Decode CSS escapes (CSS Syntax 3 §4.3.7).

    >>> unescape_css(r"a\\28 b\\).png")
    'a(b).png'
    """
    return _ESCAPE.sub(_unescape_one, text) if "\\" in text else text


def css_references(css: str) -> Iterator[tuple[str, str]]:
    """``(reference, context)`` pairs of a stylesheet in source order; context is
    ``"css @import"``, ``"css url()"`` or ``"css image-set()"``. References are
    unescaped, not resolved."""
    css = _COMMENT.sub(" ", css) if "/*" in css else css
    found: list[tuple[int, str, str]] = []
    for m in _IMPORT.finditer(css):
        ref = m.group(1) if m.group(1) is not None else m.group(2)
        found.append((m.start(), unescape_css(ref or ""), "css @import"))
    for m in _URL.finditer(css):
        ref = next((g for g in m.groups() if g is not None), "")
        found.append((m.start(), unescape_css(ref), "css url()"))
    if "image-set" in css.lower():
        for m in _IMAGE_SET.finditer(css):
            for s in _SET_STRING.finditer(m.group(1)):
                ref = s.group(1) if s.group(1) is not None else s.group(2)
                found.append((m.start(), unescape_css(ref or ""), "css image-set()"))
    found.sort(key=lambda t: t[0])
    for _, ref, ctx in found:
        yield ref, ctx


def css_links(base_url: str, css: str, context_prefix: str = "") -> Iterator[Link]:
    """Links (hop ``E``) of stylesheet text, resolved against ``base_url``;
    ``context_prefix`` (e.g. ``"style/"``, ``"@style "``) is put before each context."""
    for ref, ctx in css_references(css):
        url = resolve(base_url, ref)
        if url is not None:
            yield Link(url, "E", context_prefix + ctx)


class CssExtractor:
    """Extractor for ``text/css`` responses (or URLs ending in ``.css``)."""

    def handles(self, mime: str, url: str) -> bool:
        """True for ``text/css``, or an unknown type with a ``.css`` path."""
        if mime == "text/css":
            return True
        return mime in ("", "text/plain", "application/octet-stream") and (
            url.split("?", 1)[0].lower().endswith(".css")
        )

    def extract(
        self, base_url: str, content: bytes, mime: str, charset: str | None
    ) -> Iterable[Link]:
        """Links of a stylesheet. Charset: BOM, HTTP charset, then ``@charset``
        (CSS Syntax 3 §3.2, via the same sniffing as HTML), UTF-8, windows-1252."""
        css = decode_text(content, charset, sniff=False)
        if charset is None and content.startswith(b'@charset "'):
            end = content.find(b'"', 10)
            if 10 < end < 50:
                css = decode_text(content, content[10:end].decode("ascii", "replace"))
        return list(css_links(base_url, css))
