"""Which rewriter a replayed response gets, from its MIME type, URL and modifier.

Follows pywb's choices: the modifier says how the browser is going to use the
response, so it wins where the two disagree (a ``js_`` request answered with
``text/html`` is a JSONP script served with the wrong type; it is going to run as a
script). ``id_`` (raw) and ``im_`` (image) responses are never rewritten.
"""

from __future__ import annotations

from typing import Literal

__all__ = ["RewriteKind", "media_type", "rewrite_kind"]

RewriteKind = Literal["html", "css", "js", "json", "none"]

_HTML = frozenset({"text/html", "application/xhtml+xml", "application/xhtml",
                   "text/x-server-parsed-html", "application/vnd.wap.xhtml+xml"})
_CSS = frozenset({"text/css"})
_JS = frozenset({
    "application/javascript", "text/javascript", "application/x-javascript",
    "application/ecmascript", "text/ecmascript", "application/x-ecmascript",
    "text/x-javascript", "text/jscript", "text/livescript", "text/x-ecmascript",
    "application/x-js", "text/js",
})
_JSON = frozenset({"application/json", "text/json", "application/x-json",
                   "application/manifest+json", "application/ld+json"})
# Types a server sends when it does not know better: the URL and modifier decide.
_UNKNOWN = frozenset({"", "text/plain", "application/octet-stream", "unk", "none",
                      "application/x-unknown-content-type", "unknown/unknown"})
_BY_EXTENSION: dict[str, RewriteKind] = {
    ".html": "html", ".htm": "html", ".xhtml": "html", ".shtml": "html",
    ".css": "css", ".js": "js", ".mjs": "js", ".json": "json",
}


def media_type(content_type: str) -> str:
    """The lowercased media type of a Content-Type value, parameters removed
    (``"Text/HTML; charset=UTF-8"`` → ``"text/html"``)."""
    return content_type.split(";", 1)[0].strip().lower()


def rewrite_kind(mime: str, url: str, modifier: str) -> RewriteKind:
    """What rewriter a response gets: ``"html"``, ``"css"``, ``"js"``, ``"json"`` or
    ``"none"``.

    Args:
        mime: the response's Content-Type (parameters allowed) or a CDX ``mime``
            field; ``""`` when unknown.
        url: the original URL (its extension is used when the type is unknown).
        modifier: the replay modifier (``""``, ``"mp_"``, ``"id_"``, ``"js_"`` …).

    ``"json"`` is a JSON payload: the only safe rewrite is the one of
    :func:`webark.rewrite.js.rewrite_js` (absolute URLs in string literals), which
    the app may apply or not.

    >>> rewrite_kind("text/html; charset=utf-8", "http://a/", "")
    'html'
    >>> rewrite_kind("text/html", "http://a/cb", "js_"), rewrite_kind("text/css", "", "id_")
    ('js', 'none')
    >>> rewrite_kind("text/plain", "http://a/s.css?v=2", "")
    'css'
    """
    if modifier in ("id_", "im_"):
        return "none"
    mt = media_type(mime)
    kind: RewriteKind
    if mt in _HTML:
        kind = "html"
    elif mt in _CSS:
        kind = "css"
    elif mt in _JS:
        kind = "js"
    elif mt in _JSON or mt.endswith("+json"):
        kind = "json"
    elif mt in _UNKNOWN:
        kind = _by_extension(url)
    else:
        return "none"
    # The modifier says how the browser uses the response (pywb: html served for a
    # script tag is a script, e.g. JSONP with the wrong type).
    # (kind is "none" here only for an unknown type without a telling extension.)
    if modifier == "js_" and kind in ("html", "json", "none"):
        return "js"
    if modifier == "cs_" and kind in ("html", "none"):
        return "css"
    return kind


def _by_extension(url: str) -> RewriteKind:
    path = url.split("#", 1)[0].split("?", 1)[0]
    dot = path.rfind(".")
    if dot < 0 or "/" in path[dot:]:
        return "none"
    return _BY_EXTENSION.get(path[dot:].lower(), "none")
