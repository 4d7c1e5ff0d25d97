"""Outlinks of HTML and XHTML, parsed with lexbor (``selectolax.lexbor``).

The document is parsed once into a tree by the HTML Standard's tree builder (so broken
markup, uppercase tags, unquoted attributes and entities behave as in a browser);
then the elements that can hold links are visited in document order: those of the
table's tag names and those carrying a generic attribute (``style``, ``background``,
``on*``, lazy-load ``data-*``), found by a scan of the text and a lexbor query. What
is extracted, with hop type and context (Heritrix ``ExtractorHTML`` conventions,
``element/@attribute``):

==========================================  ====  =======================================
element / attribute                         hop   notes
==========================================  ====  =======================================
``a|area/@href``                            L     ``javascript:`` hrefs are scanned as JS
``link/@href``                              E/L   by ``rel`` (see :data:`LINK_REL_EMBED`)
``link/@imagesrcset``                       E     every candidate
``img/@src|@lowsrc|@srcset``                E     every srcset candidate (HTML §4.8.4.3)
``img|iframe|frame/@longdesc``              L     Heritrix: E
``script/@src``, ``embed/@src``             E
``iframe|frame/@src``                       E     Heritrix ``treatFramesAsEmbedLinks``
``object/@data|@classid|@archive``          E     relative to ``@codebase``
``object|applet/@codebase``                 L     as Heritrix
``applet/@code|@archive``                   E     ``.class`` appended to ``@code``
``param/@value`` (movie, src, url…)         E
``video/@src|@poster``, ``audio/@src``      E
``source/@src|@srcset``, ``track/@src``     E
``input/@src``                              E     ``type=image``
``input|option/@value``                     L     absolute URL or ``/path``, URL-like
``iframe/@srcdoc``                          …     the inline document, extracted too
``svg image|use/@href|@xlink:href``         E
``*/@background``                           E     body, table, td …
``*/@data-src`` and lazy-load kin           E     Heritrix's list, all srcset candidates
``*/@data-href|-url|-uri|-link``            L     only URL-like values; Heritrix: none
``form/@action``                            L     only GET forms (no/GET ``method``)
``blockquote|q|del|ins/@cite``              L
``meta http-equiv=refresh``                 R     as Heritrix (``Hop.REFER``)
``meta/@content`` (absolute http(s) URL)    X     e.g. ``og:image``
``*/@style``, ``<style>``                   E     via :mod:`webark.crawl.extract.css`
``<script>`` text, ``*/@on*``               X     via :mod:`webark.crawl.extract.js`
==========================================  ====  =======================================

The first ``<base href>`` sets the base URL for everything (HTML Standard §4.2.3);
``<base>`` itself is not emitted (Heritrix emits it as an ``L``). ``<meta name=robots
content=nofollow|none>`` drops the ``L`` links but keeps embeds (Heritrix stops
extracting at the tag, losing the embeds after it). ``<template>`` contents are not
visited. Element and attribute names are lowercased by the parser; entities are decoded.

Sources: HTML Living Standard (parsing; ``srcset`` §4.8.4.3.10 "parse a srcset
attribute"; ``meta refresh`` §4.2.5.3 "shared declarative refresh steps"); Heritrix 3
``ExtractorHTML`` (attribute groups, ``processLinkTagWithRel``, ``processMeta``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from selectolax.lexbor import LexborHTMLParser, LexborNode

from webark.crawl.extract import Link, decode_text, resolve
from webark.crawl.extract.css import css_links
from webark.crawl.extract.js import js_links, looks_like_url

__all__ = [
    "HTML_TYPES",
    "LINK_REL_EMBED",
    "HtmlExtractor",
    "html_links",
    "parse_meta_refresh",
    "parse_srcset",
]

HTML_TYPES = frozenset(
    {
        "text/html",
        "application/xhtml+xml",
        "application/vnd.wap.xhtml+xml",
        "text/vnd.wap.wml",
        "application/vnd.wap.wml",
    }
)

#: ``<link rel>`` keywords that make the target an embed (``E``): Heritrix's list
#: (icon, stylesheet, modulepreload, prefetch, prerender) plus preload and the icon kin.
LINK_REL_EMBED = frozenset(
    {
        "icon",
        "stylesheet",
        "modulepreload",
        "prefetch",
        "prerender",
        "preload",
        "apple-touch-icon",
        "apple-touch-icon-precomposed",
        "mask-icon",
        "manifest",
    }
)
#: ``<link rel>`` keywords whose target is not fetched at all.
LINK_REL_IGNORE = frozenset({"pingback", "dns-prefetch", "preconnect"})

#: Lazy-loading attributes Heritrix treats as embeds (its "2023" list).
DATA_SRC_ATTRS = frozenset(
    {
        "data-src",
        "data-src-small",
        "data-src-medium",
        "data-srcset",
        "data-original",
        "data-original-set",
        "data-lazy",
        "data-lazy-src",
        "data-lazy-srcset",
        "data-full-src",
        "data-full-srcset",
    }
)
#: Data attributes whose URL-like values are followed as links (not in Heritrix).
DATA_HREF_ATTRS = frozenset({"data-href", "data-url", "data-uri", "data-link"})

#: Attributes that never hold a URL for ``_Collector.generic`` (the
#: most frequent ones; skipping them early is most of that pass's cost).
_PLAIN_ATTRS = frozenset(
    {"class", "id", "title", "href", "src", "rel", "type", "alt", "lang", "dir", "role",
     "name", "content", "width", "height", "tabindex", "target", "colspan", "rowspan",
     "align", "valign", "border", "charset", "method", "value", "for", "hidden", "srcset",
     "aria-label", "aria-hidden", "xml:lang", "xmlns", "async", "defer", "integrity",
     "crossorigin", "media", "sizes", "loading", "decoding", "http-equiv", "property"}
)  # fmt: skip

_PARAM_URL_NAMES = frozenset({"movie", "src", "filename", "url", "source", "file"})
_ASCII_WS = " \t\n\x0c\r"


def parse_srcset(value: str) -> list[str]:
    """The image candidate URLs of a ``srcset`` value, in order (descriptors dropped).

    Follows the HTML Standard's "parse a srcset attribute": candidates are separated by
    commas after the descriptors; a URL may itself contain commas (only trailing commas
    end it); a descriptor list may contain parenthesised commas.

    >>> parse_srcset("a.png 1x, b,c.png 2x,d.png")
    ['a.png', 'b,c.png', 'd.png']
    >>> parse_srcset("data:image/png;base64,AAA= 1x, x.png 480w")
    ['data:image/png;base64,AAA=', 'x.png']
    """
    out: list[str] = []
    pos, n = 0, len(value)
    while True:
        while pos < n and (value[pos] in _ASCII_WS or value[pos] == ","):
            pos += 1
        if pos >= n:
            return out
        start = pos
        while pos < n and value[pos] not in _ASCII_WS:
            pos += 1
        url = value[start:pos]
        if url.endswith(","):
            url = url.rstrip(",")
        else:
            depth = 0
            while pos < n:
                c = value[pos]
                if c == "(":
                    depth += 1
                elif c == ")" and depth:
                    depth -= 1
                elif c == "," and not depth:
                    pos += 1
                    break
                pos += 1
        if url:
            out.append(url)


_REFRESH = re.compile(r"[\s]*[\d.]*\s*[;,]?\s*(?:url\s*=\s*)?(.*)", re.IGNORECASE | re.DOTALL)


def parse_meta_refresh(content: str) -> str | None:
    """The URL of a ``<meta http-equiv=refresh content=…>`` value, or None (a plain
    delay reloads the page itself).

    >>> parse_meta_refresh("5; URL='/next.html'")
    '/next.html'
    >>> parse_meta_refresh("30") is None
    True
    """
    m = _REFRESH.match(content)
    if m is None:
        return None
    ref = m.group(1).strip()
    if ref[:1] in ("'", '"'):
        q = ref[0]
        ref = ref[1:]
        end = ref.find(q)
        if end >= 0:
            ref = ref[:end]
    return ref.strip() or None


class _Collector:
    """State of one document walk: base URL and the links found so far."""

    __slots__ = ("base", "depth", "extract_js", "frames_as_embeds", "links", "nofollow")

    def __init__(self, base: str, frames_as_embeds: bool, extract_js: bool, depth: int = 0) -> None:
        self.base = base
        self.depth = depth
        self.links: list[Link] = []
        self.nofollow = False
        self.frames_as_embeds = frames_as_embeds
        self.extract_js = extract_js

    def add(self, ref: str | None, hop: str, context: str, base: str | None = None) -> None:
        if not ref:
            return
        if hop == "L" and (ref[0] in "jJ" or ref[0] <= " ") and ref.lstrip()[:11].lower() == (
            "javascript:"
        ):
            if self.extract_js:
                self.js(ref.lstrip()[11:], context)
            return
        url = resolve(base or self.base, ref)
        if url is not None:
            self.links.append(Link(url, hop, context))

    def srcset(self, value: str | None, context: str) -> None:
        if value:
            for ref in parse_srcset(value):
                self.add(ref, "E", context)

    def js(self, code: str, context: str) -> None:
        if self.extract_js:
            self.links.extend(js_links(self.base, code, context))

    def css(self, code: str, prefix: str) -> None:
        self.links.extend(css_links(self.base, code, prefix))

    # ------------------------------------------------------------- per element

    def element(self, node: LexborNode, tag: str, attrs: dict[str, str | None]) -> None:
        """An element of :data:`_TAGS`: its own attributes, then the generic ones."""
        _TAGS[tag](self, node, tag, attrs)
        self.generic(tag, attrs)

    def generic(self, tag: str, attrs: dict[str, str | None]) -> None:
        """Attributes any element may carry: ``style``, ``background``, ``on*``, and
        the ``data-*`` names of :data:`DATA_SRC_ATTRS` / :data:`DATA_HREF_ATTRS`."""
        for name, value in attrs.items():
            if not value or name in _PLAIN_ATTRS:
                continue
            if name == "style":
                self.css(value, f"{tag}/@style ")
            elif name == "background":
                self.add(value, "E", f"{tag}/@background")
            elif name.startswith("on") and len(name) > 2:
                self.js(value, f"{tag}/@{name}")
            elif name.startswith("data-"):
                if name in DATA_SRC_ATTRS:
                    if name.endswith("set"):
                        self.srcset(value, f"{tag}/@{name}")
                    else:
                        self.add(value, "E", f"{tag}/@{name}")
                elif name in DATA_HREF_ATTRS:
                    v = value.strip()
                    if looks_like_url(v.split("#", 1)[0]) or v.startswith(("http://", "https://")):
                        self.add(v, "L", f"{tag}/@{name}")


def _a(c: _Collector, node: LexborNode, tag: str, attrs: dict[str, str | None]) -> None:
    c.add(attrs.get("href"), "L", f"{tag}/@href")


def _link(c: _Collector, node: LexborNode, tag: str, attrs: dict[str, str | None]) -> None:
    href = attrs.get("href")
    rels = (attrs.get("rel") or "").lower().split()
    if href:
        if any(r in LINK_REL_EMBED for r in rels):
            c.add(href, "E", "link/@href")
        elif not rels or any(r not in LINK_REL_IGNORE for r in rels):
            c.add(href, "L", "link/@href")
    c.srcset(attrs.get("imagesrcset"), "link/@imagesrcset")


def _img(c: _Collector, node: LexborNode, tag: str, attrs: dict[str, str | None]) -> None:
    c.add(attrs.get("src"), "E", f"{tag}/@src")
    c.add(attrs.get("lowsrc"), "E", f"{tag}/@lowsrc")
    c.srcset(attrs.get("srcset"), f"{tag}/@srcset")
    c.add(attrs.get("longdesc"), "L", f"{tag}/@longdesc")
    c.add(attrs.get("usemap"), "E", f"{tag}/@usemap")


def _frame(c: _Collector, node: LexborNode, tag: str, attrs: dict[str, str | None]) -> None:
    c.add(attrs.get("src"), "E" if c.frames_as_embeds else "L", f"{tag}/@src")
    c.add(attrs.get("longdesc"), "L", f"{tag}/@longdesc")
    srcdoc = attrs.get("srcdoc")
    if srcdoc and tag == "iframe" and c.depth < 1:
        # about:srcdoc documents resolve against the parent's base URL (HTML §7.3).
        inner = _walk(c.base, srcdoc, c.frames_as_embeds, c.extract_js, c.depth + 1)
        c.links.extend(Link(lk.url, lk.hop, "iframe/@srcdoc " + lk.context) for lk in inner.links)


def _src(c: _Collector, node: LexborNode, tag: str, attrs: dict[str, str | None]) -> None:
    c.add(attrs.get("src"), "E", f"{tag}/@src")


def _video(c: _Collector, node: LexborNode, tag: str, attrs: dict[str, str | None]) -> None:
    c.add(attrs.get("src"), "E", f"{tag}/@src")
    c.add(attrs.get("poster"), "E", f"{tag}/@poster")


def _source(c: _Collector, node: LexborNode, tag: str, attrs: dict[str, str | None]) -> None:
    c.add(attrs.get("src"), "E", "source/@src")
    c.srcset(attrs.get("srcset"), "source/@srcset")


def _script(c: _Collector, node: LexborNode, tag: str, attrs: dict[str, str | None]) -> None:
    c.add(attrs.get("src"), "E", "script/@src")
    if c.extract_js:
        code = node.text(deep=True)
        if code:
            c.js(code, "script string")


def _style(c: _Collector, node: LexborNode, tag: str, attrs: dict[str, str | None]) -> None:
    code = node.text(deep=True)
    if code:
        c.css(code, "style ")


def _object(c: _Collector, node: LexborNode, tag: str, attrs: dict[str, str | None]) -> None:
    codebase = attrs.get("codebase")
    base = None
    if codebase:
        c.add(codebase, "L", f"{tag}/@codebase")
        base = resolve(c.base, codebase)
    refs: list[tuple[str | None, str]] = [(attrs.get("data"), "data")]
    classid = attrs.get("classid")
    if classid and not classid.lower().startswith("clsid:"):
        refs.append((classid, "classid"))
    code = attrs.get("code")
    if code:
        if tag == "applet" and not code.lower().endswith(".class"):
            code += ".class"
        refs.append((code, "code"))
    for archive in (attrs.get("archive") or "").replace(",", " ").split():
        refs.append((archive, "archive"))
    for ref, name in refs:
        c.add(ref, "E", f"{tag}/@{name}", base)


def _param(c: _Collector, node: LexborNode, tag: str, attrs: dict[str, str | None]) -> None:
    if (attrs.get("name") or "").lower() in _PARAM_URL_NAMES:
        c.add(attrs.get("value"), "E", "param/@value")


def _value(c: _Collector, tag: str, attrs: dict[str, str | None]) -> None:
    value = (attrs.get("value") or "").strip()
    if value.startswith(("http://", "https://", "/")) and looks_like_url(value.split("#", 1)[0]):
        c.add(value, "L", f"{tag}/@value")


def _input(c: _Collector, node: LexborNode, tag: str, attrs: dict[str, str | None]) -> None:
    c.add(attrs.get("src"), "E", "input/@src")
    if (attrs.get("type") or "").strip().lower() in ("", "hidden", "text", "url", "radio"):
        _value(c, "input", attrs)


def _option(c: _Collector, node: LexborNode, tag: str, attrs: dict[str, str | None]) -> None:
    _value(c, "option", attrs)


def _form(c: _Collector, node: LexborNode, tag: str, attrs: dict[str, str | None]) -> None:
    method = (attrs.get("method") or "get").strip().lower()
    if method == "get":
        c.add(attrs.get("action"), "L", "form/@action")


def _cite(c: _Collector, node: LexborNode, tag: str, attrs: dict[str, str | None]) -> None:
    c.add(attrs.get("cite"), "L", f"{tag}/@cite")


def _svg_ref(c: _Collector, node: LexborNode, tag: str, attrs: dict[str, str | None]) -> None:
    c.add(attrs.get("href") or attrs.get("xlink:href"), "E", f"{tag}/@href")


def _meta(c: _Collector, node: LexborNode, tag: str, attrs: dict[str, str | None]) -> None:
    content = attrs.get("content")
    if not content:
        return
    equiv = (attrs.get("http-equiv") or "").strip().lower()
    if equiv == "refresh":
        c.add(parse_meta_refresh(content), "R", "meta/@content")
    elif (attrs.get("name") or "").strip().lower() == "robots":
        words = content.lower().replace(",", " ").split()
        if "nofollow" in words or "none" in words:
            c.nofollow = True
    elif not equiv and content.lstrip()[:8].lower().startswith(("http://", "https://")):
        c.add(content, "X", "meta/@content")


_Handler = Callable[[_Collector, LexborNode, str, dict[str, str | None]], None]
_TAGS: dict[str, _Handler] = {
    "a": _a, "area": _a, "link": _link, "img": _img, "iframe": _frame, "frame": _frame,
    "script": _script, "style": _style, "embed": _src, "audio": _src, "track": _src,
    "video": _video, "source": _source, "object": _object, "applet": _object,
    "param": _param, "input": _input, "option": _option, "form": _form,
    "blockquote": _cite, "q": _cite,
    "del": _cite, "ins": _cite, "image": _svg_ref, "use": _svg_ref, "meta": _meta,
}  # fmt: skip


_DYNAMIC_TAG_ID = 0x10000
"""lexbor gives the tag names it knows fixed ids below 0x10000 and makes the id of any
other name (custom elements, ``svg use`` …) from a pointer, per document."""


def _static_tag_ids() -> frozenset[int]:
    """lexbor's fixed ids of the tag names of :data:`_TAGS` (read from probe documents,
    so a selectolax upgrade that renumbers them cannot go unnoticed)."""
    probes = (
        "".join(f"<{t}></{t}>" for t in _TAGS) + "<svg><image/><use/></svg>",
        "<frameset><frame></frameset>",
    )
    ids: set[int] = set()
    for probe in probes:
        root = LexborHTMLParser(probe).root
        for node in root.traverse(include_text=False) if root is not None else ():
            if node.is_element_node and node.tag in _TAGS and node.tag_id < _DYNAMIC_TAG_ID:
                ids.add(node.tag_id)
    return frozenset(ids)


_TAG_IDS = _static_tag_ids()
_GENERIC_NAMES = ("style", "background")
_DATA_NAMES = frozenset(n.encode() for n in DATA_SRC_ATTRS | DATA_HREF_ATTRS)
_DATA_NAME = re.compile(rb"data-[a-z-]+")
_NAME_START = bytes.maketrans(b"\t\n\x0c\r\"'/", b"       ")
_ON_NAME = re.compile(rb"on[a-z]+ *=")


def generic_selector(html: str) -> str:
    """A CSS selector list (``[style],[onclick]``) for the generic attributes that may
    occur in ``html``, from a scan of its text: a name absent from the text cannot be
    an attribute of its tree (names are ASCII-case-insensitive, the scan too). Names
    found by the scan but not used as attributes only cost a query; "" when there is
    none. About 0.2 ms for a 100 kB page."""
    low = html.encode("utf-8", "surrogatepass").lower()
    names = [n for n in _GENERIC_NAMES if n.encode() in low]
    find = low.find
    i = find(b"data-")
    while i >= 0:
        m = _DATA_NAME.match(low, i)
        if m is not None and m.group() in _DATA_NAMES:
            names.append(m.group().decode())
        i = find(b"data-", i + 5)
    if b"on" in low:
        spaced = low.translate(_NAME_START)  # every byte that may precede a name → " "
        find, match = spaced.find, _ON_NAME.match
        i = find(b" on")
        while i >= 0:
            m = match(spaced, i + 1)
            if m is None:
                i = find(b" on", i + 3)
                continue
            names.append(m.group().rstrip(b" =").decode())
            i = find(b" on", m.end())
    return ",".join(f"[{n}]" for n in dict.fromkeys(names))


def _walk(
    url: str, html: str, frames_as_embeds: bool, extract_js: bool, depth: int = 0
) -> _Collector:
    """Parse ``html`` and visit its link-bearing elements; returns the filled collector.

    One lexbor selector query finds the elements that carry a generic attribute
    (:func:`generic_selector`); then one walk in document order visits those and the
    elements whose tag is in :data:`_TAGS`. Python reads one integer of every other
    element (its lexbor tag id; and its node address when the query found something).
    On the python3-doc pages this reads the attributes of one element in six instead of
    all of them.

    NUL characters are removed first: the HTML Standard ignores them in text (a parse
    error each, which lexbor records: a NUL-filled 20 MiB body cost 361 MiB to parse,
    1 MiB without them) and turns them into U+FFFD in tag names and attribute values,
    where we drop them instead (a NUL in a URL is no link anyone follows)."""
    if "\0" in html:
        html = html.replace("\0", "")
    tree = LexborHTMLParser(html)
    base = url
    base_node = tree.css_first("base[href]")
    if base_node is not None:
        href = base_node.attributes.get("href")
        resolved = resolve(url, href) if href else None
        if resolved is not None:
            base = resolved
    c = _Collector(base, frames_as_embeds, extract_js, depth)
    root = tree.root
    if root is None:
        return c
    tags, ids = _TAGS, _TAG_IDS
    selector = generic_selector(html)
    generic = {node.mem_id for node in root.css(selector)} if selector else None
    for node in root.traverse(include_text=False):
        tid = node.tag_id
        # Only element nodes: reading .tag/.attributes of other nodes (e.g. the node
        # lexbor makes for "<?php ... ?>" in a body, tag_id 0) reads garbage and can
        # segfault (selectolax 0.4.13; cf. rushter/selectolax#135).
        if (tid in ids or tid >= _DYNAMIC_TAG_ID) and node.is_element_node:
            tag = node.tag
            if tag in tags:
                c.element(node, tag, node.attributes)
                continue
        if generic and node.mem_id in generic:
            c.generic(node.tag or "", node.attributes)
    return c


def html_links(
    url: str,
    html: str,
    frames_as_embeds: bool = True,
    extract_js: bool = True,
    obey_nofollow: bool = True,
) -> list[Link]:
    """Outlinks of an HTML document (text), in document order, not deduplicated.

    Args:
        url: the document's URL (base unless a ``<base href>`` says otherwise).
        html: the document text.
        frames_as_embeds: ``iframe``/``frame`` ``src`` as ``E`` (True, Heritrix's
            default) or ``L``.
        extract_js: scan inline scripts, event handlers and ``javascript:`` hrefs for
            speculative ``X`` links.
        obey_nofollow: drop ``L`` links when ``<meta name=robots>`` says nofollow/none.
    """
    c = _walk(url, html, frames_as_embeds, extract_js)
    if c.nofollow and obey_nofollow:
        return [link for link in c.links if link.hop != "L"]
    return c.links


class HtmlExtractor:
    """Extractor for HTML/XHTML responses (see the module docstring for the rules)."""

    def __init__(
        self, frames_as_embeds: bool = True, extract_js: bool = True, obey_nofollow: bool = True
    ) -> None:
        self.frames_as_embeds = frames_as_embeds
        self.extract_js = extract_js
        self.obey_nofollow = obey_nofollow

    def handles(self, mime: str, url: str) -> bool:
        """True for the HTML/XHTML/WAP media types of :data:`HTML_TYPES`."""
        return mime in HTML_TYPES

    def extract(
        self, base_url: str, content: bytes, mime: str, charset: str | None
    ) -> Iterable[Link]:
        """Decode (BOM, HTTP charset, ``<meta charset>``, UTF-8, windows-1252) and
        extract."""
        return html_links(
            base_url,
            decode_text(content, charset),
            self.frames_as_embeds,
            self.extract_js,
            self.obey_nofollow,
        )
