"""Rewrite JavaScript for replay — only what is safe without a parser.

A string literal (``"…"``, ``'…'`` or a template literal) that *starts* with an
absolute ``http://`` / ``https://`` URL gets the archive prefix put in front of it:
``"http://cdn.example.com/lib.js"`` → ``"/web/2014/http://cdn.example.com/lib.js"``.
The URL itself is not touched (scripts often concatenate onto it), JSON-style escaped
slashes (``"https:\\/\\/…"``) get an escaped prefix, and XML namespace URIs
(``http://www.w3.org/2000/svg`` …) are left alone because ``createElementNS`` needs
them verbatim. Everything else — ``location`` assignments, relative URLs, URLs built
from pieces — is the job of the client-side script (:mod:`webark.rewrite.client`),
which sees the values at run time.

The modifier of the prefix is the document's when it is a navigation modifier
(``""``, ``mp_``, ``if_``, ``fr_``), else ``""``: a URL in a script may be a page as
well as a resource, and ``""`` lets the server decide by content type.
"""

from __future__ import annotations

import re

from webark.rewrite.charset import python_codec, to_bytes, to_text
from webark.rewrite.urls import NAVIGATION_MODIFIERS, UrlRewriter

__all__ = ["rewrite_js", "rewrite_js_bytes"]

# The opening quote, then the URL up to a character that ends it in practice.
_JS_URL = re.compile(r"""(?<=["'`])(https?:)(\\?/\\?/)(?=[\w.\-\[%@])""", re.IGNORECASE)
_NAMESPACES = ("http://www.w3.org/", "https://www.w3.org/", "http:\\/\\/www.w3.org\\/",
               "https:\\/\\/www.w3.org\\/")


def _modifier(rewriter: UrlRewriter) -> str:
    return rewriter.modifier if rewriter.modifier in NAVIGATION_MODIFIERS else ""


def rewrite_js(text: str, rewriter: UrlRewriter) -> str:
    """Prefix absolute http(s) URLs at the start of string literals; returns the text
    itself when nothing changed.

    >>> r = UrlRewriter("/c/", "2014", "http://a.org/", "js_")
    >>> rewrite_js('x = "http://b.org/p?q=1" + y; t = "see http://d.org"', r)
    'x = "/c/2014/http://b.org/p?q=1" + y; t = "see http://d.org"'
    >>> print(rewrite_js(r's = "https:\\/\\/c.org\\/"', r))
    s = "\\/c\\/2014\\/https:\\/\\/c.org\\/"
    """
    if "//" not in text and ":\\/\\/" not in text:
        return text
    prefix = rewriter.archive_prefix(_modifier(rewriter))
    escaped_prefix = prefix.replace("/", "\\/")
    pieces: list[str] = []
    last = 0
    for m in _JS_URL.finditer(text):
        start = m.start()
        head = text[start : start + len(prefix) + 40]
        if head.startswith(_NAMESPACES) or rewriter.is_rewritten(head):
            continue
        pieces.append(text[last:start])
        pieces.append(escaped_prefix if "\\" in m.group(2) else prefix)
        last = start
    if not pieces:
        return text
    pieces.append(text[last:])
    return "".join(pieces)


def rewrite_js_bytes(body: bytes, rewriter: UrlRewriter, charset: str | None = None) -> bytes:
    """Rewrite a script payload (or JSON, see :func:`webark.rewrite.mime.rewrite_kind`),
    keeping its encoding and every byte outside the inserted prefixes."""
    if b"//" not in body and b":\\/\\/" not in body:
        return body
    view = to_text(body, python_codec(charset))
    out = rewrite_js(view.text, rewriter)
    if out is view.text:
        return body
    return to_bytes(out, view.codec)
