"""Rewrite an archived HTML document for replay: every URL-bearing attribute value
becomes an archive URL, and nothing else changes.

The document is scanned once, following the tokenizer states of the HTML Standard
(§13.2.5) for what matters here: tags with their attributes (quoted values may hold
``>``), comments (``<!-->``, ``--!>``), doctype / CDATA / conditional comments /
processing instructions (bogus comments up to ``>``), and raw-text elements (``script``,
``style``, ``textarea``, ``title``, ``iframe``, ``xmp``, ``noembed``, ``noframes``)
whose content is not markup. Each construct is matched by one precompiled regular
expression, so the cost is one C-level match per token (about 4× faster than
:class:`html.parser.HTMLParser`, which pywb uses). Nothing is re-serialized: the
rewriter records edits and splices replacements into the original text, so comments,
doctype, CDATA sections, conditional comments, entity references, whitespace and
attribute quoting come out exactly as recorded. A start tag is touched only when one
of its attribute values changes, and then only inside that value (the quote character
is kept; an unquoted value that needs it gets double quotes).

What is rewritten (pywb's tag/attribute table, with its modifiers): ``href``, ``src``,
``srcset`` (each candidate), ``action``, ``formaction``, ``poster``, ``data``,
``background``, ``codebase``, ``archive``, ``cite``, ``longdesc``, ``icon``,
``manifest``, ``xlink:href``, ``<meta http-equiv=refresh content>``, ``<base href>``
(which also changes the base for later URLs), ``style`` attributes and ``<style>``
elements (:mod:`webark.rewrite.css`), ``<script>`` elements of a JavaScript type and
``on*`` event handler attributes (:mod:`webark.rewrite.js`), ``<iframe srcdoc>`` (a
nested document). ``integrity`` attributes are removed (a rewritten body no longer
matches its Subresource Integrity digest); ``<meta http-equiv>`` Content-Security-
Policy is neutralized like the header. The ``head_insert`` (banner, client script) is
placed right after ``<head …>``, or before the first element other than ``<html>``
when there is no head (after the doctype, so the page keeps its rendering mode). If
the insert would push a ``<meta charset>`` out of the first 1024 bytes (the only
place the browser looks for it), it goes right after that meta instead.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from html import unescape
from html.entities import html5

from webark.rewrite.charset import (
    ChunkWriter,
    TextView,
    encodes_piecewise,
    html_charset,
    to_bytes,
    to_text,
)
from webark.rewrite.css import rewrite_css
from webark.rewrite.js import rewrite_js
from webark.rewrite.refresh import rewrite_refresh
from webark.rewrite.urls import UrlRewriter

__all__ = ["html_view", "rewrite_html", "rewrite_html_chunks", "rewrite_html_text"]

#: Edits collected before :func:`rewrite_html_chunks` splices them into its output.
_FLUSH_EDITS = 512
#: The browser's ``<meta charset>`` prescan window (HTML Standard): past it the head
#: insert cannot move any more.
_PRESCAN = 1024

# Sentinel modifiers for attributes with their own syntax.
_SRCSET = "srcset"
_STYLE = "style"
_LINK = "link"  # <link href>: modifier from rel / as
_SOURCE = "source"  # <source src>: im_ inside <picture>, oe_ in <audio>/<video>
_SRCDOC = "srcdoc"

_PAGE = None  # the document's own modifier (links, forms)

# tag -> {attribute: modifier or sentinel}
_TAG_RULES: dict[str, dict[str, str | None]] = {
    "a": {"href": _PAGE, "xlink:href": _PAGE, "ping": _PAGE},
    "area": {"href": _PAGE, "ping": _PAGE},
    "applet": {"codebase": "oe_", "archive": "oe_", "code": "oe_"},
    "audio": {"src": "oe_"},
    "base": {"href": _PAGE},
    "blockquote": {"cite": _PAGE},
    "body": {"background": "im_"},
    "button": {"formaction": _PAGE},
    "command": {"icon": "im_"},
    "del": {"cite": _PAGE},
    "embed": {"src": "oe_"},
    "form": {"action": _PAGE},
    "frame": {"src": "if_", "longdesc": _PAGE},
    "head": {"profile": _PAGE},
    "html": {"manifest": "id_"},
    "iframe": {"src": "if_", "longdesc": _PAGE, "srcdoc": _SRCDOC},
    "image": {"href": "im_", "xlink:href": "im_", "src": "im_"},
    "img": {"src": "im_", "srcset": _SRCSET, "longdesc": _PAGE, "lowsrc": "im_",
            "dynsrc": "oe_"},
    "input": {"src": "im_", "formaction": _PAGE},
    "ins": {"cite": _PAGE},
    "link": {"href": _LINK, "imagesrcset": _SRCSET},
    "menuitem": {"icon": "im_"},
    "object": {"data": "oe_", "codebase": "oe_", "archive": "oe_"},
    "q": {"cite": _PAGE},
    "script": {"src": "js_", "xlink:href": "js_", "href": "js_"},
    "source": {"src": _SOURCE, "srcset": _SRCSET},
    "table": {"background": "im_"},
    "td": {"background": "im_"},
    "th": {"background": "im_"},
    "track": {"src": "oe_"},
    "use": {"href": "im_", "xlink:href": "im_"},
    "video": {"src": "oe_", "poster": "im_"},
}
_ANY_TAG: dict[str, str | None] = {"style": _STYLE, "background": "im_"}
_JS_TYPES = frozenset({
    "", "text/javascript", "application/javascript", "module", "text/ecmascript",
    "application/ecmascript", "application/x-javascript", "text/x-javascript",
    "text/jscript", "text/livescript", "application/x-ecmascript", "text/javascript1.0",
    "text/javascript1.1", "text/javascript1.2", "text/javascript1.3", "text/javascript1.4",
    "text/javascript1.5", "importmap", "speculationrules",
})
_LINK_AS = {"script": "js_", "style": "cs_", "image": "im_", "font": "im_",
            "audio": "oe_", "video": "oe_", "track": "oe_", "fetch": "", "document": _PAGE}

# Tokenizer pieces (HTML Standard §13.2.5: tag open, tag name, before/after attribute
# name, attribute value (double-quoted, single-quoted, unquoted) states). Possessive
# quantifiers and atomic groups: no backtracking, so a tag that never closes (EOF in a
# quoted value) fails to match at once, and the browser would drop it too.
_W = "\t\n\f\r "
_WS = frozenset(_W)
_ATTRS = (rf"""(?>[{_W}/]++|[^{_W}/>][^{_W}/>=]*+"""
          rf"""(?>[{_W}]*+=[{_W}]*+(?>"[^"]*+"|'[^']*+'|[^{_W}>]*+))?)*+""")
# One token per match, text between tokens skipped by the regex engine:
# 1 start tag name, 2 end tag name, 3 an unterminated comment or tag (EOF: the rest of
# the document is no markup), else a comment, doctype, CDATA/conditional comment,
# processing instruction or "</>" (kept as they are).
_TOKEN = re.compile(
    rf"""<(?:([a-zA-Z][^{_W}/>]*+){_ATTRS}>"""
    rf"""|/([a-zA-Z][^{_W}/>]*+)[^>]*+>"""
    r"""|!--(?:>|->|.*?--!?>)"""
    r"""|[!?/][^>]*+>"""
    r"""|(!--|[a-zA-Z]))""",
    re.DOTALL)
_DEPTH_TAGS = frozenset({"picture", "audio", "video"})
_ATTR = re.compile(
    rf"""([^{_W}/>][^{_W}/>=]*+)(?:[{_W}]*+=[{_W}]*+(?:"([^"]*+)"|'([^']*+)'|([^{_W}>]*+)))?""")
_GLOBAL_ATTR = re.compile(rf"""[{_W}/"'](?:style|background|on[a-z]+|integrity)[{_W}]*+=""",
                          re.IGNORECASE)
# Per tag, the attributes that make a start tag worth parsing (None: always parse).
_WANTED_ATTR: dict[str, re.Pattern[str] | None] = {
    tag: re.compile(
        rf"""[{_W}/"'](?:{"|".join(re.escape(a) for a in sorted(rules))}"""
        rf"""|style|background|on[a-z]+|integrity)[{_W}]*+=""", re.IGNORECASE)
    for tag, rules in _TAG_RULES.items()
}
_WANTED_ATTR["meta"] = None
_NEEDS_QUOTES = re.compile(rf"""[{_W}"'<>`]""")
# Raw text / RCDATA elements: their content is text up to the matching end tag.
_RAW_TEXT_END = {
    name: re.compile(rf"</{name}[{_W}/>]", re.IGNORECASE)
    for name in ("script", "style", "textarea", "title", "xmp", "iframe", "noembed",
                 "noframes")
}
_SCRIPT_STYLE = frozenset({"script", "style"})
_NO_RULES: dict[str, str | None] = {}
# Character references inside attribute values (HTML Standard, "named character
# reference state": a legacy reference without ';' followed by '=' or an alphanumeric
# is not decoded inside an attribute).
_CHARREF = re.compile(r"&(#[0-9]+;?|#[xX][0-9a-fA-F]+;?|[A-Za-z][A-Za-z0-9]*;?)")
_SRCSET_SKIP = re.compile(r"[\s,]*")
_SRCSET_URL = re.compile(r"\S+")
_SRCSET_DESC = re.compile(r"(?:[^,(]|\([^)]*\)?)*")


def _attr_unescape(value: str) -> str:
    if "&" not in value:
        return value

    def one(m: re.Match[str]) -> str:
        ref = m.group(1)
        if ref[0] == "#" or ref.endswith(";"):
            return unescape(m.group())
        nxt = m.string[m.end() : m.end() + 1]
        if ref in html5 or (ref + ";") in html5:
            # exact legacy name (e.g. "&amp") not followed by '=' or alnum: decoded
            return unescape(m.group()) if ref in html5 and nxt != "=" else m.group()
        return m.group()

    return _CHARREF.sub(one, value)


def _attr_escape(value: str, quote: str) -> str:
    value = value.replace("&", "&amp;")
    if quote == '"':
        return value.replace('"', "&quot;")
    if quote == "'":
        return value.replace("'", "&#39;")
    return value


class _Rewriter:
    """Scans the document once (HTML Standard §13.2.5 tokenizer states for tags,
    comments, declarations and raw text elements) and collects edits
    ``(start, end, replacement)`` over the text; text and markup not edited are never
    re-serialized."""

    def __init__(self, text: str, rewriter: UrlRewriter, head_insert: str):
        self.text = text
        self.rw = rewriter
        self.edits: list[tuple[int, int, str]] = []
        self.head_insert = head_insert
        self.insert_at = -1  # where head_insert goes (-1: not decided yet)
        self.insert_placed = False  # its edit is in self.edits (or was flushed)
        self.base_seen = False
        self.picture_depth = 0
        self.media_depth = 0

    def run(self, flush: Callable[[list[tuple[int, int, str]]], None] | None = None) -> None:
        """Scan the whole text; the edits end up in :attr:`edits`, or, with ``flush``,
        are handed to ``flush`` in batches as the scan goes (every edit of a batch
        starts before every edit of the next one; the head insert is in the batch it
        belongs to), so that they need not all be kept."""
        text = self.text
        n = len(text)
        search: Callable[[str, int], re.Match[str] | None] = _TOKEN.search
        if flush is not None:  # (a wrapper: no cost per token without flush)
            token_search = search

            def search(text: str, pos: int) -> re.Match[str] | None:
                if len(self.edits) >= _FLUSH_EDITS and self._settled(pos):
                    # every edit so far starts before pos, every later one at pos or after
                    self._place_insert()
                    flush(self.edits)
                    self.edits = []
                return token_search(text, pos)

        pos = 0
        while True:
            m = search(text, pos)
            if m is None:
                break
            pos = m.end()
            name = m.group(1)
            if name is not None:  # start tag
                tag = name if name.islower() else name.lower()
                start = m.start()
                if self.insert_at < 0 and tag != "html":
                    self.insert_at = pos if tag == "head" else start
                if tag in _DEPTH_TAGS:
                    self._depth(tag, 1)
                wanted = _WANTED_ATTR.get(tag, _GLOBAL_ATTR)
                if wanted is None or wanted.search(text, m.end(1), pos):
                    raw = m.group()
                    new = self._rewrite_tag(tag, raw, m.end(1) - start)
                    if new != raw:
                        self.edits.append((start, pos, new))
                    if tag == "meta" and start < _PRESCAN < pos + len(self.head_insert) \
                            and 0 <= self.insert_at <= start and "charset" in raw.lower():
                        # the insert would push the charset declaration out of the
                        # first 1024 bytes, where the browser's prescan looks for it
                        # (HTML Standard): insert after it instead
                        self.insert_at = pos
                raw_end = _RAW_TEXT_END.get(tag)
                if raw_end is not None:
                    # (a "/>" is ignored on HTML elements: <script/> opens raw text too)
                    e = raw_end.search(text, pos)
                    stop = e.start() if e else n
                    if tag in _SCRIPT_STYLE and stop > pos:
                        self._raw_text(tag, m.group(), pos, stop)
                    if e is None:
                        break
                    pos = stop
                elif tag == "plaintext":
                    break
            elif m.group(2) is not None:  # end tag
                end_name = m.group(2).lower()
                if end_name in _DEPTH_TAGS:
                    self._depth(end_name, -1)
            elif m.group(3) is not None:  # unterminated comment / tag: rest is not markup
                break
        if self.head_insert and not self.insert_placed:
            if self.insert_at < 0:  # no element at all: at the start, after a byte order mark
                self.insert_at = 1 if text.startswith("\ufeff") else 0
            self._place_insert()

    def _settled(self, pos: int) -> bool:
        """True when the head insert's place can no longer change once the scan is at
        ``pos`` (or there is no insert): it is decided, and no ``<meta charset>`` in the
        prescan window is left to move it."""
        return not self.head_insert or (self.insert_at >= 0 and pos >= _PRESCAN)

    def _place_insert(self) -> None:
        if self.head_insert and not self.insert_placed:
            self.edits.append((self.insert_at, self.insert_at, self.head_insert))
            self.insert_placed = True

    # -- tokens ------------------------------------------------------------------------

    def _depth(self, tag: str, step: int) -> None:
        if tag == "picture":
            self.picture_depth = max(0, self.picture_depth + step)
        else:
            self.media_depth = max(0, self.media_depth + step)

    def _raw_text(self, tag: str, raw: str, start: int, stop: int) -> None:
        body = self.text[start:stop]
        if not body:
            return
        if tag == "style":
            new = rewrite_css(body, self.rw)
        else:
            stype = ""
            if "type" in raw.lower():
                for am in _ATTR.finditer(raw, 7):
                    if am.group(1).lower() == "type":
                        stype = _attr_value(am)
                        break
            if stype.strip().lower() not in _JS_TYPES:
                return
            new = rewrite_js(body, self.rw)
        if new != body:
            self.edits.append((start, stop, new))

    # -- attributes --------------------------------------------------------------------
    def _rewrite_tag(self, tag: str, raw: str, name_end: int) -> str:
        rules = _TAG_RULES.get(tag, _NO_RULES)
        attrs = list(_ATTR.finditer(raw, name_end))
        info: dict[str, str] = {}
        if tag == "link" or tag == "meta":  # values that decide how href / content is read
            for am in attrs:
                info.setdefault(am.group(1).lower(), _attr_value(am))
        if tag == "meta":
            return self._rewrite_meta(raw, attrs, info)
        pieces: list[str] = []
        last = 0
        for am in attrs:
            name = am.group(1)
            if not name.islower():
                name = name.lower()
            if name == "integrity" and (tag == "script" or tag == "link"):
                cut = am.start()
                while cut > name_end and raw[cut - 1] in _WS:
                    cut -= 1
                pieces.append(raw[last:cut])
                last = am.end()
                continue
            vgroup = _value_group(am)
            if not vgroup:
                continue
            kind: str | None
            if name in rules:
                kind = rules[name]
            elif name in _ANY_TAG:
                kind = _ANY_TAG[name]
            elif name.startswith("on"):
                kind = "js"
            else:
                continue
            value = _attr_unescape(am.group(vgroup))
            new_value = self._rewrite_value(tag, name, kind, value, info)
            if new_value == value:
                continue
            pieces.append(raw[last : am.start(vgroup)])
            pieces.append(_quoted(new_value, vgroup))
            last = am.end(vgroup)
        if not pieces:
            return raw
        pieces.append(raw[last:])
        return "".join(pieces)

    def _rewrite_value(self, tag: str, name: str, kind: str | None, value: str,
                       info: dict[str, str]) -> str:
        rw = self.rw
        if kind is None or kind.endswith("_") or kind == "":
            if tag == "base" and name == "href":
                if self.base_seen:
                    return value
                self.base_seen = True
                new = rw.rewrite(value, kind)
                rw.set_base(value)
                return new
            return rw.rewrite(value, kind)
        if kind == _SRCSET:
            return _rewrite_srcset(value, rw)
        if kind == _STYLE:
            return rewrite_css(value, rw) if value else value
        if kind == "js":
            return rewrite_js(value, rw)
        if kind == _LINK:
            return rw.rewrite(value, _link_modifier(info))
        if kind == _SOURCE:
            mod = "im_" if self.picture_depth or not self.media_depth else "oe_"
            return rw.rewrite(value, mod)
        if kind == _SRCDOC:  # a document of its own (its <base> must not leak out)
            inner = UrlRewriter(rw.prefix, rw.timestamp, rw.base, "if_")
            return rewrite_html_text(value, inner) if value else value
        return value

    def _rewrite_meta(self, raw: str, attrs: list[re.Match[str]], info: dict[str, str]) -> str:
        equiv = info.get("http-equiv", "").strip().lower()
        rewrite: Callable[[str], str]
        if equiv == "refresh":
            target, rewrite = "content", lambda v: rewrite_refresh(v, self.rw)
        elif equiv in ("content-security-policy", "content-security-policy-report-only"):
            target, rewrite = "http-equiv", lambda v: "X-Archive-Orig-" + v.strip()
        else:
            return raw
        for am in attrs:
            if am.group(1).lower() != target:
                continue
            vgroup = _value_group(am)
            if not vgroup:
                return raw
            value = _attr_unescape(am.group(vgroup))
            new = rewrite(value)
            if new == value:
                return raw
            return raw[: am.start(vgroup)] + _quoted(new, vgroup) + raw[am.end(vgroup) :]
        return raw


def _value_group(am: re.Match[str]) -> int:
    """Which group of :data:`_ATTR` holds the value: 2 double-quoted, 3 single-quoted,
    4 unquoted, 0 no value (the groups are alternatives, so the last one matched)."""
    last = am.lastindex
    return last if last is not None and last > 1 else 0


def _attr_value(am: re.Match[str]) -> str:
    g = _value_group(am)
    return _attr_unescape(am.group(g)) if g else ""


def _quoted(value: str, vgroup: int) -> str:
    """A new value for the value span of group ``vgroup`` (keeps its quoting; an
    unquoted value that would need quotes gets double quotes)."""
    if vgroup == 2:
        return _attr_escape(value, '"')
    if vgroup == 3:
        return _attr_escape(value, "'")
    escaped = _attr_escape(value, "")
    if not escaped or _NEEDS_QUOTES.search(escaped):
        return '"' + _attr_escape(value, '"') + '"'
    return escaped


def _link_modifier(info: dict[str, str]) -> str | None:
    rels = info.get("rel", "").lower().split()
    if "stylesheet" in rels:
        return "cs_"
    if "modulepreload" in rels:
        return "js_"
    if "preload" in rels or "prefetch" in rels:
        return _LINK_AS.get(info.get("as", "").strip().lower(), "")
    if any(r in ("icon", "apple-touch-icon", "apple-touch-icon-precomposed",
                 "mask-icon", "image_src") for r in rels):
        return "im_"
    if "manifest" in rels:
        return "id_"
    return _PAGE


def _rewrite_srcset(value: str, rw: UrlRewriter) -> str:
    """Each image candidate's URL (HTML Standard, "parse a srcset attribute"): the URL
    is a run of non-whitespace with trailing commas removed; descriptors follow up to
    the next comma outside parentheses."""
    pieces: list[str] = []
    last = 0
    pos = 0
    n = len(value)
    while pos < n:
        pos = _SRCSET_SKIP.match(value, pos).end()  # type: ignore[union-attr]
        if pos >= n:
            break
        um = _SRCSET_URL.match(value, pos)
        assert um is not None
        url = um.group()
        stripped = url.rstrip(",")
        url_end = pos + len(stripped)
        new = rw.rewrite(stripped, "im_")
        if new != stripped:
            pieces.append(value[last:pos])
            pieces.append(new)
            last = url_end
        if len(stripped) != len(url):
            pos = um.end()
            continue
        pos = _SRCSET_DESC.match(value, um.end()).end()  # type: ignore[union-attr]
    if not pieces:
        return value
    pieces.append(value[last:])
    return "".join(pieces)


class _Splicer:
    """:func:`_splice` a batch of edits at a time, into a :class:`ChunkWriter`."""

    def __init__(self, text: str, out: ChunkWriter):
        self.text = text
        self.out = out
        self.last = 0

    def take(self, edits: list[tuple[int, int, str]]) -> None:
        edits.sort(key=lambda e: (e[0], e[1]))
        out = self.out
        for start, end, new in edits:
            if start < self.last:  # as _splice
                continue
            out.write_span(self.text, self.last, start)
            out.write(new)
            self.last = end

    def finish(self) -> list[bytes]:
        self.out.write_span(self.text, self.last, len(self.text))
        return self.out.close()


def _splice(text: str, edits: list[tuple[int, int, str]]) -> str:
    if not edits:
        return text
    edits.sort(key=lambda e: (e[0], e[1]))
    out: list[str] = []
    last = 0
    for start, end, new in edits:
        if start < last:  # overlapping edits cannot happen; be safe
            continue
        out.append(text[last:start])
        out.append(new)
        last = end
    out.append(text[last:])
    return "".join(out)


def rewrite_html_text(text: str, rewriter: UrlRewriter, *, head_insert: str = "") -> str:
    """Rewrite an HTML document given as text (see :func:`rewrite_html`); used for
    ``srcdoc`` documents and by callers that already decoded the page."""
    parser = _Rewriter(text, rewriter, head_insert)
    parser.run()
    return _splice(text, parser.edits)


def rewrite_html(body: bytes, rewriter: UrlRewriter, *, charset: str | None = None,
                 head_insert: str = "") -> bytes:
    """Rewrite an archived HTML payload for replay.

    Args:
        body: the payload bytes (content-coding already removed).
        rewriter: the page's :class:`UrlRewriter` (its base follows ``<base href>``).
        charset: the ``charset`` parameter of the recorded Content-Type, if any.
        head_insert: markup to insert after ``<head>`` (e.g. the client script with
            its ``window.__webark`` configuration); keep it ASCII (characters the
            page's encoding cannot express become numeric character references).

    Returns:
        The rewritten payload, in the page's own encoding. Every byte outside the
        rewritten attribute values / style / script contents and the insertion is the
        recorded byte, also for undeclared, mislabelled or invalid encodings (see
        :mod:`webark.rewrite.charset`). Never raises on malformed HTML.
    """
    view = html_view(body, charset)
    out = rewrite_html_text(view.text, rewriter, head_insert=head_insert)
    return to_bytes(out, view.codec)


def html_view(body: bytes, charset: str | None = None) -> TextView:
    """The text of an HTML payload and the codec that gives its bytes back, as
    :func:`rewrite_html` decodes it (charset: the Content-Type parameter, if any; see
    :func:`webark.rewrite.charset.html_charset`)."""
    return to_text(body, html_charset(body, charset))


def rewrite_html_chunks(view: TextView, rewriter: UrlRewriter, *, head_insert: str = "",
                        chunk_chars: int = 1 << 18) -> list[bytes]:  # fmt: skip
    """:func:`rewrite_html` for large documents: the same bytes
    (``b"".join(chunks) == rewrite_html(body, …)``), as encoded chunks of about
    ``chunk_chars`` characters, made while the document is scanned.

    :func:`rewrite_html` holds, at its peak, the decoded text, every edit, the spliced
    pieces, the joined rewritten text and its encoding (about 15x a 10 MB UTF-8 page
    with non-Latin-1 text); this holds the text, one batch of edits and the encoded
    output. The caller may drop the payload bytes once it has ``view``
    (:func:`html_view`). Codecs that cannot be encoded a piece at a time (UTF-16,
    ISO-2022-JP …, see :func:`~webark.rewrite.charset.encodes_piecewise`) are
    rewritten whole and returned as one chunk.

    Args:
        view: the payload as text (:func:`html_view`).
        rewriter, head_insert: as for :func:`rewrite_html`.
        chunk_chars: characters per chunk (> 0).

    Raises:
        ValueError: ``chunk_chars`` is not positive.
    """
    if chunk_chars <= 0:
        raise ValueError("chunk_chars must be positive")
    if not encodes_piecewise(view.codec):
        out = rewrite_html_text(view.text, rewriter, head_insert=head_insert)
        return [to_bytes(out, view.codec)]
    splicer = _Splicer(view.text, ChunkWriter(view.codec, chunk_chars))
    parser = _Rewriter(view.text, rewriter, head_insert)
    parser.run(flush=splicer.take)
    splicer.take(parser.edits)
    return splicer.finish()
