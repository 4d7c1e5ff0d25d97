"""The response for a chosen capture: status, headers and body, by replay mode.

* ``id_`` — the payload exactly as archived (content-coding as stored, e.g. still
  gzipped), the original status and headers; only headers that would break replay are
  kept as ``X-Archive-Orig-*`` (:func:`webark.rewrite.headers.prefix_unsafe_headers`),
  and a 3xx ``Location`` points into the archive (``id_`` again), so that even raw mode
  never sends the browser to the live web. Raw bytes are never a live document: they
  carry :data:`RAW_CSP` (sandbox, no workers), and when a browser *navigates* to an
  active document (HTML, SVG, XML; ``navigation``) it is labelled ``text/plain``
  (:func:`webark.rewrite.headers.inert_document_headers`), so its scripts, meta
  refresh and links cannot take the browser to the live web; programs (curl, wget,
  replay tools' fetches) get the archived ``Content-Type``.
* other modes — :func:`webark.rewrite.mime.rewrite_kind` picks the rewriter from the
  media type, URL and modifier: ``html`` (with the head insert: client-script
  configuration, client script, banner), ``css``, ``js``; a stored ``Content-Encoding``
  (gzip, br, deflate) is undone first and the rewritten body is sent as identity.
  Anything else (images, media, JSON, PDF …) is sent as stored with rewritten headers.
  The charset comes from the ``Content-Type`` parameter and goes to the rewriter
  (which falls back to ``<meta charset>``/BOM and never re-encodes lossy).

Bodies that are not rewritten support Range requests (:mod:`webark.apps.replay.range`,
``Accept-Ranges: bytes``; served from ``ResolvedCapture.payload_range``, which seeks in
uncompressed WARCs) and are streamed in :data:`CHUNK` pieces when larger than
:data:`INLINE_MAX`. They carry a strong ``ETag`` (:func:`memento_etag`: a memento never
changes) unless the archived one is sent as is (``id_``), so that ``If-Range``
(RFC 9110 §13.1.5) can be answered: a matching validator gets the range, any other one
the whole payload with ``200``.

Every response also gets :data:`REPLAY_CSP`, a ``Content-Security-Policy`` that lets a
replayed document load only from the replay server itself (plus inline code and
``data:``/``blob:`` URLs): whatever URL the rewriters miss — in markup a parser
cannot see through, in an ``id_``/``im_`` document opened as a page, in SVG — the
browser refuses to fetch from the live web (pywb's ``csp-header`` does the same).

Large bodies (over :data:`INLINE_MAX` bytes) that are rewritten take a lease of
:func:`rewrite_weight` bytes from the server's
:class:`~webark.apps.replay.budget.ByteBudget` before :func:`render` runs (the app
does that, :mod:`webark.apps.replay.app`), and large HTML is rewritten into encoded
chunks (:func:`webark.rewrite.html.rewrite_html_chunks`) that are streamed and dropped
as they are sent: the whole rewritten page never exists as one string or one bytes
object (a 10 MB UTF-8 page with non-Latin-1 text took ~150 MB to rewrite whole, ~45 MB
in chunks).

Everything here does blocking reads: run it in a worker thread.
"""

from __future__ import annotations

import base64
import hashlib
import json
import logging
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import BinaryIO

from webark.apps.replay.paths import APP_PREFIX
from webark.apps.replay.range import ByteRange, Unsatisfiable, if_range_allows, parse_range
from webark.index.resolved import ResolvedCapture
from webark.rewrite.client import client_config_script
from webark.rewrite.css import rewrite_css_bytes
from webark.rewrite.headers import (
    inert_document_headers,
    is_active_document,
    prefix_unsafe_headers,
    rewrite_headers,
)
from webark.rewrite.html import html_view, rewrite_html, rewrite_html_chunks
from webark.rewrite.js import rewrite_js_bytes
from webark.rewrite.mime import rewrite_kind
from webark.rewrite.urls import UrlRewriter
from webark.warc.payload import MAX_DECODED_BYTES, DecodedTooLarge, decode_content

log = logging.getLogger(__name__)

#: Payloads up to this many bytes are read at once and sent with one write.
INLINE_MAX = 1 << 20
#: Piece size of streamed payloads.
CHUNK = 1 << 16
#: Modifiers whose HTML gets the banner (top-level pages).
BANNER_MODIFIERS = frozenset({"", "mp_"})

#: Content-Security-Policy of every replayed response (module docstring): the replay
#: server's own origin, inline code, data:/blob: URLs; nothing from any other host.
REPLAY_CSP = (
    "default-src 'self' 'unsafe-inline' 'unsafe-eval' data: blob: mediastream:; "
    "form-action 'self'"
)
#: Content-Security-Policy of a raw (``id_``) response: :data:`REPLAY_CSP`, no workers
#: (an archived script must never become a service worker of the replay origin) and a
#: sandbox (no script, forms, popups or plugins; an opaque origin without storage).
RAW_CSP = REPLAY_CSP + "; worker-src 'none'; sandbox"
#: Characters per chunk of a large rewritten HTML page (module docstring).
CHUNK_CHARS = 1 << 18
#: Default of the largest body rewritten, in bytes once its content-coding is undone
#: (``webark serve --rewrite-limit``): the crawler's extraction limit. A larger body is
#: sent as stored, not rewritten, with :data:`NOT_REWRITTEN` saying why: a 1 MB gzip
#: member that inflates to 1 GiB must not be inflated by the replay server.
REWRITE_LIMIT = MAX_DECODED_BYTES
#: Response header of a body sent as stored because it passes the rewrite limit.
NOT_REWRITTEN = "X-Webark-Not-Rewritten"
#: Assumed decoded size / stored size of a content-coded (gzip, br …) text payload:
#: HTML, CSS and JS usually compress 3-5x.
DECODED_RATIO = 4

#: Headers this module sets itself (the archived ones are dropped or prefixed).
_FRAMING = frozenset({"content-length", "transfer-encoding", "content-encoding", "content-range"})
_NO_BODY = frozenset({204, 304})


@dataclass
class Rendered:
    """A response ready to send: ``body`` (bytes) or ``stream`` (a blocking iterator
    of byte pieces, to be iterated in a worker thread; ``length`` bytes in all)."""

    status: int
    headers: list[tuple[str, str]]
    body: bytes = b""
    stream: Iterator[bytes] | None = None
    length: int = 0


@dataclass(frozen=True, slots=True)
class Banner:
    """What the banner shows: ``date`` (display form, UTC), ``captures`` (URL of the
    capture list), ``prev``/``next``: ``(archival URL, display date)`` or None;
    ``screenshot``: ``(raw URL of the capture's urn:view: screenshot, display date)``
    or None (:mod:`webark.apps.replay.screenshots`); ``certificate``: the JSON form of
    the server's leaf certificate of an https capture
    (:meth:`webark.apps.replay.certificates.Certificate.data`) or None."""

    date: str
    captures: str
    prev: tuple[str, str] | None = None
    next: tuple[str, str] | None = None
    screenshot: tuple[str, str] | None = None
    certificate: dict[str, object] | None = None

    def data(self) -> dict[str, object]:
        def cap(c: tuple[str, str] | None) -> dict[str, str] | None:
            return None if c is None else {"href": c[0], "date": c[1]}

        return {"date": self.date, "captures": self.captures,
                "prev": cap(self.prev), "next": cap(self.next),
                "screenshot": cap(self.screenshot),
                "certificate": self.certificate}  # fmt: skip


def _script_json(value: object) -> str:
    """JSON safe inside ``<script>``: ``<``, ``>``, ``&`` and line separators escaped."""
    text = json.dumps(value, ensure_ascii=True, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def head_insert(
    rewriter: UrlRewriter, url: str, root: str, banner: Banner | None
) -> str:
    """The HTML inserted right after ``<head>``: the client script's configuration
    (``window.__webark``), the client script (``{root}_webark/client.js``, cached by the
    browser) and, for top-level pages, the banner data and script."""
    parts = [
        client_config_script(rewriter.prefix, rewriter.timestamp, url, rewriter.modifier),
        f'<script src="{root}{APP_PREFIX[1:]}client.js"></script>',
    ]
    if banner is not None:
        parts.append(f"<script>window.__webark_banner={_script_json(banner.data())};</script>")
        parts.append(f'<script src="{root}{APP_PREFIX[1:]}static/banner.js" defer></script>')
    return "".join(parts)


def charset_of(content_type: str | None) -> str | None:
    """The ``charset`` parameter of a Content-Type value, or None."""
    if not content_type:
        return None
    for part in content_type.split(";")[1:]:
        k, _, v = part.partition("=")
        if k.strip().lower() == "charset":
            v = v.strip().strip("\"'").strip()
            return v or None
    return None


def _header(headers: list[tuple[str, str]], name: str) -> str | None:
    low = name.lower()
    for k, v in headers:
        if k.lower() == low:
            return v
    return None


def _without(headers: list[tuple[str, str]], names: frozenset[str]) -> list[tuple[str, str]]:
    return [(k, v) for k, v in headers if k.lower() not in names]


def memento_etag(rc: ResolvedCapture) -> str:
    """A strong entity tag for the payload of capture ``rc`` as stored: from the CDX
    line's payload digest (a revisit's is its original's), else from the record's place
    (file name, offset); ``"wa-<27 base32 chars>"``."""
    line = rc.line
    basis = line.digest if line.digest not in ("", "-") else f"{line.filename}:{line.offset}"
    h = hashlib.sha1(basis.encode("utf-8", "surrogateescape")).digest()
    return '"wa-' + base64.b32encode(h).decode("ascii")[:27].lower() + '"'


def _status(code: int) -> int:
    """A status code a server may send (1xx and nonsense become 200)."""
    return code if 200 <= code <= 599 else 200


def _read_all(stream: BinaryIO) -> bytes:
    try:
        return stream.read()
    finally:
        stream.close()


def _pieces(stream: BinaryIO, size: int = CHUNK) -> Iterator[bytes]:
    try:
        while True:
            piece = stream.read(size)
            if not piece:
                return
            yield piece
    finally:
        stream.close()


def render(
    rc: ResolvedCapture,
    *,
    url: str,
    prefix: str,
    root: str,
    modifier: str,
    range_header: str | None,
    banner: Banner | None,
    head_only: bool = False,
    if_range: str | None = None,
    reserve: Callable[[int], None] | None = None,
    rewrite_limit: int = REWRITE_LIMIT,
    navigation: bool = False,
    link_timestamp: str | None = None,
) -> Rendered:
    """The response for capture ``rc`` requested as ``{prefix}{ts}{modifier}/{url}``.

    Args:
        url: the original URL (the capture's, as archived).
        prefix: ``/coll/`` (or absolute) for rewritten URLs; root: the app's root
            path (``/``) for its own files.
        range_header: the request's ``Range`` (None: none, or ignored by the caller).
        banner: banner data, or None for no banner (``if_``, embeds).
        head_only: a HEAD request (no body is read when it can be avoided).
        if_range: the request's ``If-Range`` (None: absent).
        reserve: called with the size of a body about to be rewritten once its
            content-coding is undone (the app grows its budget lease to it).
        rewrite_limit: the largest body rewritten (bytes, decoded); a larger one is
            sent as stored with a :data:`NOT_REWRITTEN` header (:data:`REWRITE_LIMIT`).
        navigation: a browser navigates to it (the app's
            :func:`~webark.apps.replay.app.is_navigation`): an ``id_`` active document is
            then sent as ``text/plain`` (module docstring).
        link_timestamp: the timestamp put in rewritten URLs instead of the capture's
            (``""`` in record mode: ``{prefix}{modifier}/{url}``).
    """
    ts = rc.line.timestamp if link_timestamp is None else link_timestamp
    status = _status(rc.status)
    rewriter = UrlRewriter(prefix, ts, url, modifier)
    stored_encoding = (_header(rc.headers, "Content-Encoding") or "").strip()
    if modifier == "id_":
        headers = prefix_unsafe_headers(list(rc.headers), body_length=rc.payload_length)
        loc = _header(headers, "Location")
        if loc is not None and 300 <= status < 400:
            headers = [
                (k, rewriter.rewrite(v, "id_") if k.lower() == "location" else v)
                for k, v in headers
            ]
        if navigation and is_active_document(_header(headers, "Content-Type")):
            headers = inert_document_headers(headers)
        return _as_stored(rc, headers, status, stored_encoding, range_header, head_only,
                          if_range)  # fmt: skip
    content_type = _header(rc.headers, "Content-Type") or (
        rc.line.mime if rc.line.mime not in ("-", "warc/revisit") else ""
    )
    mime = content_type.split(";", 1)[0].strip().lower()
    kind = rewrite_kind(mime, url, modifier)
    rewritten = kind in ("html", "css", "js") and status not in _NO_BODY
    headers = rewrite_headers(list(rc.headers), rewriter, status=status, body_rewritten=rewritten)
    if not rewritten:
        return _as_stored(rc, headers, status, stored_encoding, range_header, head_only,
                          if_range)  # fmt: skip
    if (rc.payload_length or 0) > rewrite_limit:
        return _too_large(rc, headers, status, stored_encoding, range_header, head_only,
                          if_range, rewrite_limit)  # fmt: skip
    return _rewritten(rc, url, root, modifier, banner, head_only, rewriter, headers,
                      status, content_type, kind, stored_encoding, reserve,
                      rewrite_limit)  # fmt: skip


def _too_large(
    rc: ResolvedCapture, headers: list[tuple[str, str]], status: int, encoding: str,
    range_header: str | None, head_only: bool, if_range: str | None, limit: int,
) -> Rendered:  # fmt: skip
    """The payload as stored (not rewritten) of a body over the rewrite limit."""
    log.info("%s @ %s: body over the rewrite limit of %d bytes; sent as stored",
             rc.line.url, rc.line.timestamp, limit)  # fmt: skip
    out = _as_stored(rc, headers, status, encoding, range_header, head_only, if_range)
    out.headers.append((NOT_REWRITTEN, f"decoded body over the rewrite limit of {limit} bytes"))
    return out


def rewrite_weight(rc: ResolvedCapture, modifier: str, url: str | None = None,
                   rewrite_limit: int = REWRITE_LIMIT) -> int:  # fmt: skip
    """The bytes :func:`render` would rewrite for capture ``rc`` in mode ``modifier``
    when that is a large body (over :data:`INLINE_MAX`), else 0 (small, sent as
    stored, ``id_``, 204/304, over ``rewrite_limit``). The size is the payload length,
    times :data:`DECODED_RATIO` (at most ``rewrite_limit``) when it has a content-coding
    (its decoded size is known only once decoded; :func:`render`'s ``reserve`` then
    gets the real one). The app takes a lease of this many bytes from its budget
    before rendering (module docstring)."""
    if modifier == "id_" or rc.payload_length is None or _status(rc.status) in _NO_BODY:
        return 0
    size = rc.payload_length
    if size > rewrite_limit:
        return 0
    encoding = (_header(rc.headers, "Content-Encoding") or "").strip().lower()
    if encoding and encoding != "identity":
        size = min(size * DECODED_RATIO, rewrite_limit)
    if size <= INLINE_MAX:
        return 0
    content_type = _header(rc.headers, "Content-Type") or (
        rc.line.mime if rc.line.mime not in ("-", "warc/revisit") else ""
    )
    mime = content_type.split(";", 1)[0].strip().lower()
    if rewrite_kind(mime, url if url is not None else rc.line.url, modifier) not in (
        "html", "css", "js",
    ):  # fmt: skip
        return 0
    return size


def _drain(chunks: deque[bytes]) -> Iterator[bytes]:
    """The chunks, each dropped as soon as it is handed out."""
    while chunks:
        yield chunks.popleft()


def _rewritten(
    rc: ResolvedCapture, url: str, root: str, modifier: str, banner: Banner | None,
    head_only: bool, rewriter: UrlRewriter, headers: list[tuple[str, str]], status: int,
    content_type: str, kind: str, stored_encoding: str,
    reserve: Callable[[int], None] | None = None, rewrite_limit: int = REWRITE_LIMIT,
) -> Rendered:  # fmt: skip
    """The rewritten response (HTML, CSS or JS) of :func:`render`; a body whose
    content-coding undoes to more than ``rewrite_limit`` bytes is sent as stored."""
    ts = rc.line.timestamp
    raw = _read_all(rc.payload_stream())
    body = raw
    if stored_encoding and stored_encoding.lower() != "identity":
        try:
            body = decode_content(raw, stored_encoding, limit=rewrite_limit)
        except DecodedTooLarge:
            raw = b""
            return _too_large(rc, headers, status, stored_encoding, None, head_only, None,
                              rewrite_limit)  # fmt: skip
        except ValueError as exc:  # serve it as stored: better than nothing
            log.warning("%s @ %s: cannot undo Content-Encoding %s (%s); sent as stored",
                        url, ts, stored_encoding, exc)  # fmt: skip
            return _as_stored(rc, headers, status, stored_encoding, None, head_only)
    raw = b""
    if reserve is not None:
        reserve(len(body))
    charset = charset_of(content_type)
    if kind == "html":
        insert = head_insert(rewriter, url, root, banner if modifier in BANNER_MODIFIERS else None)
        if len(body) > INLINE_MAX:
            view = html_view(body, charset)
            body = b""  # the view holds the document now
            chunks = rewrite_html_chunks(view, rewriter, head_insert=insert,
                                         chunk_chars=CHUNK_CHARS)  # fmt: skip
            del view
            total = sum(map(len, chunks))
            out = _without(headers, _FRAMING)
            out.append(("Content-Length", str(total)))
            if head_only:
                return Rendered(status, out, length=total)
            return Rendered(status, out, stream=_drain(deque(chunks)), length=total)
        body = rewrite_html(body, rewriter, charset=charset, head_insert=insert)
    elif kind == "css":
        body = rewrite_css_bytes(body, rewriter, charset=charset)
    else:
        body = rewrite_js_bytes(body, rewriter, charset=charset)
    out = _without(headers, _FRAMING)
    out.append(("Content-Length", str(len(body))))
    return Rendered(status, out, b"" if head_only else body, length=len(body))


def _as_stored(
    rc: ResolvedCapture,
    headers: list[tuple[str, str]],
    status: int,
    encoding: str,
    range_header: str | None,
    head_only: bool,
    if_range: str | None = None,
) -> Rendered:
    """The payload as stored (content-coding kept), with Range support on 200s
    (``If-Range`` checked against the ``ETag``/``Last-Modified`` sent)."""
    out = _without(headers, _FRAMING)
    if encoding:
        out.append(("Content-Encoding", encoding))
    if status in _NO_BODY:
        return Rendered(status, out)
    etag = _header(out, "ETag")
    if etag is None:
        etag = memento_etag(rc)
        out.append(("ETag", etag))
    if not if_range_allows(if_range, etag, _header(out, "Last-Modified")):
        range_header = None
    total = rc.payload_length
    data: bytes | None = None
    if total is None:
        data = _read_all(rc.payload_stream())
        total = len(data)
    out.append(("Accept-Ranges", "bytes"))
    rng: ByteRange | None = None
    if status == 200:
        try:
            rng = parse_range(range_header, total)
        except Unsatisfiable as exc:
            out.append(("Content-Range", exc.content_range()))
            out.append(("Content-Length", "0"))
            return Rendered(416, out)
    if rng is not None:
        out.append(("Content-Range", rng.content_range()))
        out.append(("Content-Length", str(rng.length)))
        if head_only:
            return Rendered(206, out, length=rng.length)
        if data is not None:
            return Rendered(206, out, data[rng.start : rng.end + 1], length=rng.length)
        if rng.length <= INLINE_MAX:
            body = b"".join(rc.payload_range(rng.start, rng.end))
            return Rendered(206, out, body, length=len(body))
        return Rendered(206, out, stream=rc.payload_range(rng.start, rng.end), length=rng.length)
    out.append(("Content-Length", str(total)))
    if head_only:
        return Rendered(status, out, length=total)
    if data is not None:
        return Rendered(status, out, data, length=total)
    if total <= INLINE_MAX:
        body = _read_all(rc.payload_stream())
        return Rendered(status, out, body, length=len(body))
    return Rendered(status, out, stream=_pieces(rc.payload_stream()), length=total)
