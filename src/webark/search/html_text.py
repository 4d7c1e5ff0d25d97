"""The text of an HTML page, as a reader sees it: title, visible text by blocks, the
declared language, and its links (lexbor HTML5 parser, :mod:`selectolax.lexbor`).

Visible text: ``<script>``, ``<style>``, ``<noscript>``, ``<template>``, ``<svg>``,
everything in ``<head>`` but the title, and comments are dropped; each block of text
(block-level elements and ``<br>``) becomes a line with runs of white space collapsed.
The same lines feed the replay diff view (:mod:`webark.apps.replay.diff`) and the
``content`` of search documents (without the title line there: the title is a field
of its own).

Language: ``<html lang>`` (or ``xml:lang``), else ``<meta http-equiv=Content-Language>``,
else the HTTP ``Content-Language`` header; the primary subtag, lowercase (``en-GB`` →
``en``), as webarchive-discovery's ``content_language``. Undeclared: ``""`` (no guessing).

Links: ``href`` of ``<a>`` and ``<area>``, resolved against ``<base href>`` or the page
URL (:func:`webark.url.join_normalized`), http(s) only, first occurrence order, at most
``max_links``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from selectolax.lexbor import LexborHTMLParser

from webark.url import join_normalized

_DROP = "script, style, noscript, template, svg, head > *:not(title)"
_WS = re.compile(r"\s+")
_SPACES = re.compile(r"[^\S\n]+")  # white space other than line ends
_LANG = re.compile(r"^([A-Za-z]{2,3})(?:[-_]|$)")
#: Elements that start a new line of text (block-level and line-breaking ones).
_BLOCKS = (
    "title, p, div, li, dt, dd, h1, h2, h3, h4, h5, h6, tr, td, th, br, hr, pre, "
    "blockquote, section, article, header, footer, nav, aside, main, figcaption, "
    "caption, option, form, table, ul, ol, dl, address, details, summary, legend"
)
MAX_LINKS = 1000


@dataclass(frozen=True, slots=True)
class HtmlText:
    """What :func:`html_text` finds: ``title`` (white space collapsed), ``lines`` of
    visible body text, ``language`` (primary subtag or ''), ``links`` (absolute)."""

    title: str
    lines: tuple[str, ...]
    language: str
    links: tuple[str, ...]


def _lines(tree: LexborHTMLParser, keep_title: bool) -> list[str]:
    """Visible text lines of a parsed document (module docstring); modifies ``tree``."""
    for node in tree.css(_DROP if keep_title else _DROP + ", title"):
        node.decompose()
    for node in tree.css(_BLOCKS):
        node.insert_before("\n")
        node.insert_after("\n")
    root = tree.root
    if root is None:
        return []
    text = _SPACES.sub(" ", root.text(separator="", strip=False))  # one pass, not per line
    return [x for x in (y.strip() for y in text.split("\n")) if x]


def visible_lines(html: bytes | str) -> list[str]:
    """The visible text of an HTML document, one line per text block (the title
    first), white space collapsed, empty lines dropped. Bytes are decoded by lexbor
    (BOM, ``<meta charset>``, else UTF-8 with replacement)."""
    return _lines(LexborHTMLParser(html), keep_title=True)


def primary_language(tag: str | None) -> str:
    """``en-GB`` → ``en``; '' for a missing or malformed tag."""
    m = _LANG.match((tag or "").strip())
    return m.group(1).lower() if m else ""


_TITLE_END = re.compile(r"</title\s*>", re.IGNORECASE)


def html_title(html: str) -> str:
    """The ``<title>`` of the page ``html``, white space collapsed (``""`` when none),
    as :func:`html_text` finds it, parsing only the document up to the first
    ``</title>`` (the rest cannot change it: HTML's parser ends the title element at
    its first end tag)."""
    end = _TITLE_END.search(html)
    tree = LexborHTMLParser(html[: end.end()] if end else html)
    node = tree.css_first("title")
    return _WS.sub(" ", node.text()).strip() if node is not None else ""


def html_text(html: str, url: str = "", *, content_language: str | None = None,
              max_links: int = MAX_LINKS) -> HtmlText:  # fmt: skip
    """Title, visible text, language and links of the page ``html`` archived at ``url``
    (module docstring). ``content_language``: the HTTP header, the last resort for the
    language."""
    tree = LexborHTMLParser(html)
    title_node = tree.css_first("title")
    title = _WS.sub(" ", title_node.text()).strip() if title_node is not None else ""
    lang = ""
    root = tree.css_first("html")
    if root is not None:
        attrs = root.attributes
        lang = primary_language(attrs.get("lang") or attrs.get("xml:lang"))
    if not lang:
        for meta in tree.css("meta[http-equiv]"):
            if (meta.attributes.get("http-equiv") or "").strip().lower() == "content-language":
                lang = primary_language(meta.attributes.get("content"))
                break
    if not lang:
        lang = primary_language((content_language or "").split(",")[0])
    links = _links(tree, url, max_links)
    return HtmlText(title, tuple(_lines(tree, keep_title=False)), lang, links)


def _links(tree: LexborHTMLParser, url: str, max_links: int) -> tuple[str, ...]:
    base = url
    node = tree.css_first("base[href]")
    if node is not None and url:
        try:
            base = join_normalized(url, node.attributes.get("href") or "") or url
        except ValueError:
            base = url
    seen: dict[str, None] = {}
    for a in tree.css("a[href], area[href]"):
        href = (a.attributes.get("href") or "").strip()
        if not href or href.startswith("#"):
            continue
        try:
            absolute = join_normalized(base, href) if base else href
        except ValueError:
            continue
        if absolute and absolute.startswith(("http://", "https://")):
            seen.setdefault(absolute, None)
            if len(seen) >= max_links:
                break
    return tuple(seen)
