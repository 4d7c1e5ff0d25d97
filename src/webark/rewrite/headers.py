"""HTTP response headers of a replayed capture.

A recorded header is either kept, rewritten (its URLs made archive URLs) or kept for
the record as ``X-Archive-Orig-<Name>`` so the browser does not act on it — pywb's
header rewriter convention, which replay clients and Memento tools already know.

Prefixed, because applying them would break replay or leave it: cookies
(``Set-Cookie``), security policies that would block the archive's own scripts or
frames (CSP, HSTS, ``X-Frame-Options``, COOP/COEP/CORP, Permissions-Policy …), caching
validators and lifetimes (the archive decides how its responses are cached), framing
of the recorded message (``Content-Length``, ``Transfer-Encoding``, and
``Content-Encoding`` when the app serves a rewritten or decoded body), hop-by-hop
fields (RFC 9110 §7.6.1) and headers that steer the browser elsewhere (``Alt-Svc``,
``Clear-Site-Data``, reporting endpoints). Everything else is kept.
"""

from __future__ import annotations

import re

from webark.rewrite.refresh import rewrite_refresh
from webark.rewrite.urls import UrlRewriter

__all__ = [
    "ORIG_PREFIX",
    "field_name",
    "inert_document_headers",
    "is_active_document",
    "prefix_unsafe_headers",
    "rewrite_headers",
    "rewrite_link_header",
]

#: Prefix of recorded headers that are kept for information only (pywb convention).
ORIG_PREFIX = "X-Archive-Orig-"

# Would break replay even for a raw (id_) response.
_UNSAFE = frozenset({
    "set-cookie", "set-cookie2",
    "content-security-policy", "content-security-policy-report-only",
    "x-content-security-policy", "x-webkit-csp",
    "strict-transport-security", "public-key-pins", "public-key-pins-report-only",
    "expect-ct", "alt-svc", "clear-site-data", "nel", "report-to", "reporting-endpoints",
    "transfer-encoding", "connection", "keep-alive", "proxy-connection", "proxy-authenticate",
    "proxy-authorization", "te", "trailer", "upgrade",
    # the replay server sends its own Date (RFC 9110 §6.6.1: one per message); two Date
    # fields, the archived one first, made clients take the capture time as "now"
    "date",
    # an archived page must never widen a service worker's scope over the replay origin
    # (with "Service-Worker-Allowed: /" an id_ script took over every collection)
    "service-worker-allowed",
})
# Prefixed in rewriting mode as well.
_PREFIXED_WHEN_REWRITING = _UNSAFE | frozenset({
    "date", "expires", "last-modified", "etag", "cache-control", "age", "pragma", "vary",
    "x-frame-options", "cross-origin-opener-policy", "cross-origin-embedder-policy",
    "cross-origin-resource-policy", "permissions-policy", "feature-policy",
    "access-control-allow-origin", "access-control-allow-credentials",
    "access-control-allow-methods", "access-control-allow-headers",
    "access-control-expose-headers", "access-control-max-age",
    "service-worker-allowed", "origin-agent-cluster", "x-xss-protection",
    "memento-datetime", "www-authenticate",
})
_URL_HEADERS = frozenset({"location", "content-location", "content-base", "uri"})
# RFC 9110 §5.1 field-name = token; tchar as §5.6.2.
_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
_NOT_TCHAR = re.compile(r"[^!#$&'*+\-.^_`|~0-9A-Za-z]")


def field_name(name: str) -> str:
    """A recorded header name as a server may send it: itself when it is an RFC 9110
    token (§5.1), else ``X-Archive-Orig-`` + the name with every other character
    percent-encoded as UTF-8 (``X-Content Type Options``, as node-warc records Chrome's
    headers, → ``X-Archive-Orig-X-Content%20Type%20Options``): HTTP servers refuse to
    send such a name (uvicorn dropped the connection), and the browser must not act on
    a field it could not have received.

    >>> field_name("Content-Type"), field_name("X-Content Type Options")
    ('Content-Type', 'X-Archive-Orig-X-Content%20Type%20Options')
    """
    if _TOKEN.fullmatch(name):
        return name
    encoded = _NOT_TCHAR.sub(
        lambda m: "".join(f"%{b:02X}" for b in m.group().encode("utf-8", "surrogateescape")),
        name,
    )
    return ORIG_PREFIX + encoded
_LINK_URL = re.compile(r"<([^>]*)>")
_LINK_AS = re.compile(r""";\s*as\s*=\s*"?([a-zA-Z]+)""")
_LINK_REL = re.compile(r""";\s*rel\s*=\s*(?:"([^"]*)"|([^;,\s]+))""")
_AS_MODIFIER = {"script": "js_", "style": "cs_", "image": "im_", "font": "im_",
                "audio": "oe_", "video": "oe_", "track": "oe_", "document": None}


def rewrite_headers(headers: list[tuple[str, str]], rewriter: UrlRewriter, *, status: int,
                    body_rewritten: bool = True) -> list[tuple[str, str]]:
    """Headers to send with a replayed (rewriting-mode) response.

    Args:
        headers: the recorded HTTP response headers, ``(name, value)`` in order.
        rewriter: the response's :class:`UrlRewriter` (its modifier is kept on
            ``Location``, so a redirected script stays ``js_``).
        status: the recorded status code; ``Content-Range`` is kept only for 206.
        body_rewritten: the app sends a body other than the recorded bytes (rewritten,
            or with its content-coding removed): ``Content-Length`` and
            ``Content-Encoding`` then become ``X-Archive-Orig-*``. With False (the
            recorded payload is sent as stored) both are kept.

    Returns:
        New ``(name, value)`` list, same order: ``Location``, ``Content-Location``,
        ``Content-Base``, ``URI`` and ``Refresh`` values and the URLs of ``Link`` are
        rewritten; unsafe headers, and names that are not tokens (:func:`field_name`),
        are renamed ``X-Archive-Orig-<Name>``; the rest is kept. Source: pywb
        ``HeaderRewriter`` conventions, RFC 9110, RFC 8288 (Link).
    """
    out: list[tuple[str, str]] = []
    for raw, value in headers:
        name = field_name(raw)
        lname = name.lower()
        if lname in _URL_HEADERS:
            out.append((name, rewriter.rewrite(value)))
        elif lname == "link":
            out.append((name, rewrite_link_header(value, rewriter)))
        elif lname == "refresh":
            out.append((name, rewrite_refresh(value, rewriter)))
        elif lname in _PREFIXED_WHEN_REWRITING:
            out.append((ORIG_PREFIX + name, value))
        elif lname in ("content-length", "content-encoding"):
            out.append((ORIG_PREFIX + name, value) if body_rewritten else (name, value))
        elif lname == "content-range" and status != 206:
            out.append((ORIG_PREFIX + name, value))
        else:
            out.append((name, value))
    return out


def prefix_unsafe_headers(headers: list[tuple[str, str]], *,
                          body_length: int | None = None) -> list[tuple[str, str]]:
    """Headers for a raw (``id_``) response: kept as recorded, except those that would
    break replay, renamed ``X-Archive-Orig-<Name>``: cookies, CSP, HSTS, key pinning,
    ``Alt-Svc``, ``Clear-Site-Data``, reporting endpoints, ``Date`` (the server sends
    its own; the capture time is in ``Memento-Datetime``), hop-by-hop and framing fields
    (``Transfer-Encoding``: the stored payload is already de-chunked) and
    ``Content-Length`` when it does not match the body sent.

    Args:
        headers: recorded ``(name, value)`` pairs.
        body_length: bytes of the body the app sends; ``None`` = unknown, then
            ``Content-Length`` is renamed only if ``Transfer-Encoding`` is present too.
    """
    chunked = any(n.lower() == "transfer-encoding" for n, _ in headers)
    out: list[tuple[str, str]] = []
    for raw, value in headers:
        name = field_name(raw)
        lname = name.lower()
        if lname in _UNSAFE:
            out.append((ORIG_PREFIX + name, value))
        elif lname == "content-length":
            wrong = chunked if body_length is None else value.strip() != str(body_length)
            out.append((ORIG_PREFIX + name, value) if wrong else (name, value))
        else:
            out.append((name, value))
    return out


#: Media types a browser runs as an active document when navigated to (scripts, links,
#: meta refresh): HTML, XHTML, SVG and XML (which can carry XHTML or XSLT).
_ACTIVE_TYPES = frozenset({
    "text/html", "application/xhtml+xml", "image/svg+xml", "text/xml", "application/xml",
    "text/xsl", "application/xslt+xml", "multipart/x-mixed-replace",
    "application/vnd.wap.xhtml+xml",
})  # fmt: skip


def is_active_document(content_type: str | None) -> bool:
    """True when a browser navigated to a response of ``content_type`` (a Content-Type
    value, or None when there is none) would render it as a document that can run
    script or follow links by itself: HTML, XHTML, SVG, XML (``*+xml`` too), and a
    missing or unparseable type (browsers sniff those as HTML; WHATWG MIME Sniffing)."""
    mime = (content_type or "").split(";", 1)[0].strip().lower()
    if not mime or "/" not in mime:
        return True
    return mime in _ACTIVE_TYPES or mime.endswith("+xml")


def inert_document_headers(headers: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """``headers`` of a raw (``id_``) response changed so that a browser shows the body
    as text instead of running it: ``Content-Type`` kept as ``X-Archive-Orig-Content-Type``
    and replaced by ``text/plain`` (with the archived charset, if any), plus
    ``X-Content-Type-Options: nosniff``. The bytes sent are unchanged."""
    charset = ""
    out: list[tuple[str, str]] = []
    for name, value in headers:
        lname = name.lower()
        if lname == "content-type":
            for part in value.split(";")[1:]:
                k, _, v = part.partition("=")
                if k.strip().lower() == "charset" and v.strip().strip("\"'"):
                    charset = "; charset=" + v.strip().strip("\"'")
            out.append((ORIG_PREFIX + name, value))
        elif lname == "x-content-type-options":
            out.append((ORIG_PREFIX + name, value))
        else:
            out.append((name, value))
    out.append(("Content-Type", "text/plain" + charset))
    out.append(("X-Content-Type-Options", "nosniff"))
    return out


def rewrite_link_header(value: str, rewriter: UrlRewriter) -> str:
    """Rewrite every ``<URI-Reference>`` of a Link header (RFC 8288 §3), choosing the
    modifier from its ``as=`` (``preload`` of a script → ``js_``) or ``rel``
    (``stylesheet`` → ``cs_``, ``modulepreload`` → ``js_``).

    >>> r = UrlRewriter("/c/", "2014", "http://a.org/")
    >>> rewrite_link_header('</s.css>; rel=preload; as=style, <http://b.org/>; rel="next"', r)
    '</c/2014cs_/http://a.org/s.css>; rel=preload; as=style, </c/2014/http://b.org/>; rel="next"'
    """
    pieces: list[str] = []
    last = 0
    matches = list(_LINK_URL.finditer(value))
    for i, m in enumerate(matches):
        params_end = matches[i + 1].start() if i + 1 < len(matches) else len(value)
        as_m = _LINK_AS.search(value, m.end(), params_end)
        modifier = _AS_MODIFIER.get(as_m.group(1).lower()) if as_m else None
        rel_m = _LINK_REL.search(value, m.end(), params_end)
        rels = (rel_m.group(1) or rel_m.group(2) or "").lower().split() if rel_m else []
        if "stylesheet" in rels:
            modifier = "cs_"
        elif "modulepreload" in rels:
            modifier = "js_"
        pieces.append(value[last : m.start(1)])
        pieces.append(rewriter.rewrite(m.group(1), modifier))
        last = m.end(1)
    pieces.append(value[last:])
    return "".join(pieces)
