"""The replay app (Wayback-style URLs) beside the resolution API, as one ASGI app.

:func:`create_server` returns a :class:`ReplayServer`: requests for the resolution API
(``/{coll}/cdx``, ``/{coll}/timemap/…``, ``/openapi.json``, and ``/`` when the client
does not ask for HTML) go to :func:`webark.apps.cdx.api.create_app`'s app unchanged;
everything else is replay (URL space in :mod:`webark.apps.replay.paths`):

* pages — home, collection, capture calendar / URL lists (:mod:`.pages`);
* mementos ``/{coll}/{ts}{mod}/{url}``: the closest servable capture
  (:mod:`.select`); when its timestamp is not the one asked for, a ``302`` to
  the capture's own archival URL (pywb does this: relative links then resolve, the
  banner and bookmarks name the real capture); else the rewritten or raw response
  (:mod:`.render`) with ``Memento-Datetime`` and ``Link`` (:mod:`.memento`);
* TimeGate ``/{coll}/{url}``: ``Accept-Datetime`` (or latest) → ``302``;
* full-text search ``/{coll}/search?q=`` (:mod:`.fulltext`);
* "Not in archive" (404) with the nearest captures and similar URLs; blocked (451);
* diff ``/{coll}/diff/{ts1}/{ts2}/{url}`` (:mod:`.diff`);
* record mode ``/{coll}/record/{url}``, only when the server was made with a
  :class:`~webark.apps.replay.record.Recorder` (``webark serve --record``): the live URL
  fetched and archived, then served as its memento is, with links to
  ``/{coll}/record/…`` (:mod:`.record`); patch mode ``/{coll}/patch/{url}``: the
  capture the collection has, else recorded as in record mode.

A memento request is ``GET``/``HEAD``, or ``POST``/``PUT`` from a replayed page, looked
up by its method and body (:func:`webark.cdx.post.method_url`, the key the indexer gave
the capture of the same request) and answered without a redirect. A URL without
captures gets a fuzzy match (:mod:`webark.index.fuzzy`) named in :data:`FUZZY_HEADER`.
WebSocket handshakes are refused (:func:`refuse_websocket`).

Nothing is ever fetched from the live web, except in record mode. Index lookups and
WARC reads run in worker threads (Starlette's ``run_in_threadpool``), never in the event
loop; large payloads are streamed.

Memory under load: a memento whose body is large and rewritten
(:func:`~webark.apps.replay.render.rewrite_weight`) first waits, in the event loop, for
a lease of that many bytes from the server's
:class:`~webark.apps.replay.budget.ByteBudget` (:data:`REWRITE_BUDGET`), is then
rendered by the one large-rewrite thread, and gives the lease back when its response
has been sent. Forty clients asking for one 10 MB page at once are served a few at a
time, and small pages go on being served meanwhile by the memento threads. A client
that stops reading such a response for :data:`SEND_TIMEOUT` seconds is disconnected,
so that a few stalled clients cannot keep the budget (and large-page replay) for
themselves.
"""

from __future__ import annotations

import logging
import mimetypes
import os
import re
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlencode

import anyio.to_thread
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import FileResponse, RedirectResponse, Response, StreamingResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from webark.apps.cdx.api import create_app
from webark.apps.cdx.sources import Collections, DirectoryCollections, UnknownCollection
from webark.apps.replay.access import AccessConfig
from webark.apps.replay.budget import ByteBudget, Lease
from webark.apps.replay.calendar import build_calendar, build_url_list
from webark.apps.replay.diff import side_by_side, visible_lines
from webark.apps.replay.fulltext import FullTextSearch
from webark.apps.replay.leased import (
    REWRITE_BUDGET,
    SEND_TIMEOUT,
    Deferred,
    LeasedResponse,
    limiters,
)
from webark.apps.replay.memento import (
    BadAcceptDatetime,
    MementoLinks,
    display_date,
    http_date,
    parse_accept_datetime,
)
from webark.apps.replay.pages import STATIC, Pages
from webark.apps.replay.paths import (
    APP_PREFIX,
    Target,
    archival_url,
    captures_url,
    clamp_timestamp,
    coll_prefix,
    fix_url,
    parse_target,
    record_prefix,
)
from webark.apps.replay.record import Recorder, RecordFailure, RecordSettings
from webark.apps.replay.render import (
    RAW_CSP,
    REPLAY_CSP,
    REWRITE_LIMIT,
    Banner,
    Rendered,
    render,
    rewrite_weight,
)
from webark.apps.replay.request_info import (
    BODY_METHODS,
    BodyTooLarge,
    expected_families,
    is_navigation,
    is_service_worker_script,
    lookup_body,
)
from webark.apps.replay.select import Blocked, Chosen, Missing, select_capture
from webark.apps.replay.sources import ReplayCollections, ReplayContext
from webark.cdx.line import CdxLine
from webark.cdx.post import method_url
from webark.core.text import without_paths
from webark.index.capture_select import captures, closest, is_replayable, neighbours
from webark.index.collection import CollectionError
from webark.index.fuzzy import FuzzyMatch
from webark.index.resolved import ResolvedCapture
from webark.index.source import IndexUnavailable, KeyRange, resolve_match
from webark.rewrite.client import client_script
from webark.warc.payload import DecodedTooLarge, decode_content

log = logging.getLogger(__name__)

_CDX_PATH = re.compile(r"^/[^/]+/(?:cdx|timemap/.*)$", re.S)
#: Response header naming the fuzzy-match rules a capture was found by
#: (:mod:`webark.index.fuzzy`), on the memento and on the redirect to it.
FUZZY_HEADER = "X-Webark-Fuzzy-Match"
#: Methods the replay side answers.
METHODS = ("GET", "HEAD", *sorted(BODY_METHODS))
_BACKEND = (IndexUnavailable, OSError)
#: Rows of a capture list, URLs of a URL list, similar URLs on a 404 page.
MAX_ROWS, MAX_URLS, MAX_SIMILAR = 2000, 1000, 20


def is_api_request(scope: Scope) -> bool:
    """True when the request is for the resolution API (see the module docstring)."""
    path: str = scope["path"]
    if path == "/openapi.json" or _CDX_PATH.match(path):
        return True
    if path == "/":
        for k, v in scope.get("headers", ()):
            if k == b"accept":
                return b"text/html" not in v
        return True
    return False


#: Characters an HTTP field value cannot hold (RFC 9110 §5.5: CTLs other than HTAB);
#: servers refuse to send them (uvicorn drops the connection).
_CTL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")


def _latin1(value: str) -> bytes:
    value = _CTL.sub(" ", value)
    try:
        return value.encode("latin-1")
    except UnicodeEncodeError:
        return quote(value, safe=" !\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~").encode("latin-1")


def _response(r: Rendered, extra: list[tuple[str, str]]) -> Response:
    resp: Response
    if r.stream is not None:
        resp = StreamingResponse(r.stream, status_code=r.status)
    else:
        resp = Response(r.body, status_code=r.status)
    resp.raw_headers = [(k.lower().encode("latin-1"), _latin1(v)) for k, v in r.headers + extra]
    return resp


class ReplayServer:
    """The ASGI app of ``webark serve``: replay + resolution API (module docstring).

    Attributes:
        api: the resolution API app. collections: :class:`ReplayCollections`.
        pages: the page renderer. fulltext: the full-text search page
        (:class:`~webark.apps.replay.fulltext.FullTextSearch`). budget: the
        :class:`ByteBudget` of large rewrites
        (module docstring). send_timeout: seconds a leased response waits for a client
        that does not read (:data:`SEND_TIMEOUT`). rewrite_limit: the largest body
        (bytes, content-coding undone) that is rewritten or compared in a diff; larger
        ones are sent as stored (:data:`~webark.apps.replay.render.REWRITE_LIMIT`).
        recorder: record mode's :class:`~webark.apps.replay.record.Recorder`, or None
            (``/{coll}/record/…`` answers 404); closed at the ASGI lifespan shutdown.
    """

    def __init__(self, api: ASGIApp, collections: ReplayCollections,
                 rewrite_budget: int = REWRITE_BUDGET,
                 rewrite_limit: int = REWRITE_LIMIT,
                 recorder: Recorder | None = None):  # fmt: skip
        if rewrite_limit <= 0:
            raise ValueError("the rewrite limit must be a positive number of bytes")
        self.api = api
        self.collections = collections
        self.pages = Pages("/")
        self.fulltext = FullTextSearch(self.pages)
        self.budget = ByteBudget(rewrite_budget)
        self.rewrite_limit = rewrite_limit
        self.send_timeout = SEND_TIMEOUT
        self.recorder = recorder
        self._client_js: bytes | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan" and self.recorder is not None:
            recorder = self.recorder

            async def closing(message: Any) -> None:  # the WARCs closed before the end
                if message.get("type") == "lifespan.shutdown.complete":
                    await recorder.aclose()
                await send(message)

            await self.api(scope, receive, closing)
            return
        if scope["type"] == "websocket":
            await refuse_websocket(scope, receive, send)
            return
        if scope["type"] != "http" or is_api_request(scope):
            await self.api(scope, receive, send)
            return
        request = Request(scope, receive)
        if request.method not in METHODS:
            resp: Response = self.pages.error(405, "Method not allowed",
                                              f"{request.method} is not supported here.",
                                              headers={"Allow": ", ".join(METHODS)})  # fmt: skip
        else:
            try:
                resp = await self.dispatch(request)
            except _BACKEND as exc:
                log.warning("replay %s: index or WARC unavailable: %s", scope["path"], exc)
                resp = self.pages.error(503, "Archive unavailable", "The index or a WARC "
                                        f"cannot be read: {without_paths(str(exc))}")  # fmt: skip
            except ValueError as exc:  # a URL or timestamp the index cannot look up
                log.info("replay %s: bad request: %s", scope["path"], exc)
                resp = self.pages.error(400, "Bad request", str(exc))
        await resp(scope, receive, send)

    # -- dispatch ----------------------------------------------------------------------
    async def dispatch(self, request: Request) -> Response:
        """The response to a replay-side request (``GET``/``HEAD``)."""
        scope = request.scope
        raw = scope.get("raw_path") or scope["path"].encode("utf-8")
        raw_path = raw.decode("latin-1").split("?", 1)[0]
        query = scope.get("query_string", b"").decode("latin-1")
        target = parse_target(raw_path, query)
        if target is None:
            return self.pages.error(404, "Not found", f"No page at {scope['path']}.")
        if target.kind == "home":
            return self.pages.html("home.html", collections=self.collections.names())
        if request.method in BODY_METHODS and target.kind != "memento":
            return self.pages.error(405, "Method not allowed",
                                    f"{request.method} is answered for mementos only.",
                                    headers={"Allow": "GET, HEAD"})  # fmt: skip
        if target.kind == "app":
            return await self.app_file(request, target.url)
        if is_service_worker_script(request.headers):
            # archived script never becomes a service worker of the replay origin: it
            # would answer every later request of the server (all collections, the API)
            return self.pages.error(403, "Service workers are not replayed",
                                    "An archived script cannot be installed as a service "
                                    "worker of the archive.")  # fmt: skip
        try:
            ctx = self.collections.get(target.coll)  # cached: a dict lookup (see ttl)
        except UnknownCollection:
            return self.pages.error(404, "No such collection",
                                    f"There is no collection named {target.coll!r}.")  # fmt: skip
        except ValueError as exc:  # the collection's access-rules.yaml is unusable
            log.error("collection %r: %s", target.coll, exc)
            return self.pages.error(500, "Access rules unusable", without_paths(str(exc)),
                                    target.coll)  # fmt: skip
        if target.kind == "collection":
            return await self.collection_page(request, ctx, raw_path)
        if target.kind == "search":
            return await run_in_threadpool(self.fulltext.page, ctx, request.query_params,
                                           str(request.base_url))  # fmt: skip
        if not target.url:
            return self.pages.error(400, "No URL", "Give a URL after the timestamp.", ctx.name)
        if target.kind == "captures":
            return await run_in_threadpool(self.capture_list, ctx, target)
        if target.kind == "diff":
            return await run_in_threadpool(self.diff_page, ctx, target)
        if target.kind == "timegate":
            return await self.timegate(request, ctx, target)
        if target.kind in ("record", "patch"):
            return await self.record(request, ctx, target)
        return await self.memento(request, ctx, target)

    # -- the app's own files -------------------------------------------------------------
    async def app_file(self, request: Request, path: str) -> Response:
        """``/_webark/client.js`` (the client script of :mod:`webark.rewrite.client`),
        ``/_webark/static/…`` (files of ``webark/apps/replay/static``) and
        ``/_webark/search?coll=&url=&ts=`` (the search forms: a redirect to the capture
        list, a URL list or a memento)."""
        if path == "client.js":
            if self._client_js is None:
                self._client_js = client_script().encode("utf-8")
            return Response(self._client_js, media_type="text/javascript; charset=utf-8",
                            headers={"Cache-Control": "max-age=600"})  # fmt: skip
        if path.startswith("static/"):
            name = path[len("static/") :]
            f = (STATIC / name).resolve()
            if "/" in name or "\\" in name or not f.is_file() or f.parent != STATIC.resolve():
                return self.pages.error(404, "Not found", f"No file {name!r}.")
            media = mimetypes.guess_type(f.name)[0] or "application/octet-stream"
            if media.startswith("text/") or media.endswith("javascript"):
                media += "; charset=utf-8"
            return FileResponse(f, media_type=media, headers={"Cache-Control": "max-age=600"})
        if path.split("?", 1)[0] == "search":
            return self.search(request)
        return self.pages.error(404, "Not found", f"No page {APP_PREFIX}{path}.")

    def search(self, request: Request) -> Response:
        """Redirect a search form to its page (see :meth:`app_file`)."""
        q = request.query_params
        names = self.collections.names()
        coll = q.get("coll") or (names[0] if len(names) == 1 else "")
        url = (q.get("url") or "").strip()
        ts = re.sub(r"\D", "", q.get("ts") or "")[:14]
        if not coll or coll not in names:
            return self.pages.error(400, "Which collection?", "Choose a collection to search.")
        prefix = coll_prefix("/", coll)
        if not url:
            return RedirectResponse(prefix, 303)
        if url.startswith("*.") or url.endswith("*"):
            return RedirectResponse(f"{prefix}*/{quote(url, safe=':/?#[]@!$&()*+,;=%~')}", 303)
        url = fix_url(url)
        if ts:
            return RedirectResponse(archival_url(prefix, ts, url), 303)
        return RedirectResponse(captures_url(prefix, url), 303)

    # -- pages ---------------------------------------------------------------------------
    async def collection_page(
        self, request: Request, ctx: ReplayContext, raw_path: str
    ) -> Response:
        """``/{coll}/``: search form and the first URLs of the collection;
        ``/{coll}`` redirects there, ``/{coll}/?url=…`` searches."""
        if not raw_path.endswith("/"):
            return RedirectResponse(coll_prefix("/", ctx.name), 301)
        if request.query_params.get("url"):
            items = [("coll", ctx.name), *request.query_params.multi_items()]
            return RedirectResponse(f"{APP_PREFIX}search?{urlencode(items)}", 303)

        def first_urls() -> list[Any]:
            lines = (x for x in ctx.source.scan(KeyRange("", None)) if is_replayable(x))
            rows, _ = build_url_list(
                (x for x in lines if not ctx.access.excluded(x)), max_urls=50
            )
            return rows

        hosts = await run_in_threadpool(first_urls)
        return self.pages.html("collection.html", coll=ctx.name, hosts=hosts)

    def capture_list(self, ctx: ReplayContext, target: Target) -> Response:
        """``/{coll}/*/{url}``: calendar of an exact URL; for ``url*`` (prefix) and
        ``*.host`` (domain) the list of URLs. A timestamp prefix (``2014*``) limits the
        captures to that period."""
        raw = target.url
        if raw.startswith("http://*."):
            raw = raw[len("http://") :]
        url, match = resolve_match(raw)
        ts = target.timestamp
        try:
            lines = captures(ctx.source, url, match, ts, ts)
            kept = (x for x in lines if not ctx.access.excluded(x))
            if match != "exact":
                rows, more = build_url_list(kept, MAX_URLS)
                return self.pages.html("captures.html", coll=ctx.name, url=url, query_url=raw,
                                       urls=rows, truncated=more)  # fmt: skip
            cal = build_calendar(kept, MAX_ROWS)
        except ValueError as exc:
            return self.pages.error(400, "Bad URL", f"{target.url}: {exc}", ctx.name)
        last_ts = cal.rows[-1].timestamp if cal.rows else ""
        if cal.truncated:
            last = closest(ctx.source, url, None, limit=1)
            last_ts = last[0].timestamp if last else last_ts
        status = 200 if cal.total else 404
        if not cal.total:
            return self.not_found(ctx, url, None, [], "No captures of this URL.")
        return self.pages.html("captures.html", status, coll=ctx.name, url=url, urls=None,
                               cal=cal, last_ts=last_ts)  # fmt: skip

    def missing(self, ctx: ReplayContext, url: str, timestamp: str | None, sel: Missing,
                reason: str = "", headers: dict[str, str] | None = None) -> Response:  # fmt: skip
        """No capture to serve: 503 "Capture damaged" when a capture failed to load
        because of damaged storage (a missing or truncated WARC, unreadable bytes, a
        file name outside the collection; pywb answers its ``ArchiveLoadFailed`` with
        503 too), else the 404 "Not in archive" page. Messages name CDX file names,
        never server paths (issue 20 items 4 and 7)."""
        why = "; ".join(sel.failures[:3])
        if sel.damaged:
            when = f" at {timestamp}" if timestamp else ""
            message = (f"The archive has captures of {url}{when}, but their stored records "
                       f"are missing or damaged: {why}")  # fmt: skip
            return self.pages.error(503, "Capture damaged", message, ctx.name, headers)
        reason = "; ".join(x for x in (reason, why) if x)
        return self.not_found(ctx, url, timestamp, sel.tried, reason, headers)

    def not_found(self, ctx: ReplayContext, url: str, timestamp: str | None,
                  tried: list[CdxLine], reason: str = "",
                  headers: dict[str, str] | None = None) -> Response:  # fmt: skip
        """The 404 "Not in archive" page: ``tried`` (captures of the URL that could not
        be served) and similar URLs (same folder, then same host)."""
        similar: list[Any] = []
        try:
            for base, match in _similar_queries(url):
                lines = captures(ctx.source, base, match)
                rows, _ = build_url_list(
                    (x for x in lines if not ctx.access.excluded(x)), MAX_SIMILAR + 1
                )
                similar = [r for r in rows if r.url != url][:MAX_SIMILAR]
                if similar:
                    break
        except ValueError:
            similar = []
        return self.pages.html("not_found.html", 404, headers, coll=ctx.name, url=url,
                               timestamp=timestamp, nearest=tried[:10], similar=similar,
                               reason=reason)  # fmt: skip

    def blocked(self, ctx: ReplayContext, sel: Blocked) -> Response:
        """451 for a capture blocked by an access rule (RFC 7725)."""
        rule = sel.decision.rule
        note = getattr(rule, "note", "") if rule is not None else ""
        return self.pages.html("blocked.html", 451, coll=ctx.name, url=sel.line.url,
                               timestamp=sel.line.timestamp, note=note)  # fmt: skip

    def diff_page(self, ctx: ReplayContext, target: Target) -> Response:
        """``/{coll}/diff/{ts1}/{ts2}/{url}``: side-by-side text diff of the captures
        closest to ``ts1`` and ``ts2`` (both must be HTML)."""
        texts: list[list[str]] = []
        stamps: list[str] = []
        for ts in (target.timestamp, target.timestamp2):
            sel = select_capture(ctx, target.url, clamp_timestamp(ts or ""))
            if isinstance(sel, Blocked):
                return self.blocked(ctx, sel)
            if isinstance(sel, Missing):
                return self.missing(ctx, target.url, ts, sel)
            rc = sel.capture
            ctype = (rc.header("Content-Type") or rc.line.mime or "").lower()
            if "html" not in ctype:
                return self.pages.error(
                    400, "Not an HTML page",
                    f"The capture at {display_date(rc.line.timestamp)} is {ctype or 'untyped'}; "
                    "the diff view compares HTML pages.", ctx.name,
                )  # fmt: skip
            limit = self.rewrite_limit
            with rc.payload_stream() as f:
                body = f.read(limit + 1)
            too_large = len(body) > limit
            if not too_large:
                try:
                    body = decode_content(body, rc.header("Content-Encoding"), limit=limit)
                except DecodedTooLarge:
                    too_large = True
                except ValueError:
                    pass  # compared as stored
            if too_large:
                return self.pages.error(
                    413, "Too large to compare",
                    f"The capture at {display_date(rc.line.timestamp)} is over "
                    f"{limit:,} bytes once decoded.", ctx.name,
                )  # fmt: skip
            texts.append(visible_lines(body))
            stamps.append(rc.line.timestamp)
        rows, changed = side_by_side(texts[0], texts[1])
        return self.pages.html("diff.html", coll=ctx.name, url=target.url, ts1=stamps[0],
                               ts2=stamps[1], rows=rows, changed=changed,
                               same=changed == 0)  # fmt: skip

    # -- Memento ---------------------------------------------------------------------------
    async def timegate(self, request: Request, ctx: ReplayContext, target: Target) -> Response:
        """RFC 7089 TimeGate: 302 to the memento closest to ``Accept-Datetime`` (latest
        without it), with ``Vary: accept-datetime`` and a ``Link`` header; 400 for a bad
        ``Accept-Datetime``."""
        vary = {"Vary": "accept-datetime"}
        ts: str | None = None
        header = request.headers.get("accept-datetime")
        if header is not None:
            try:
                ts = parse_accept_datetime(header)
            except BadAcceptDatetime as exc:
                return self.pages.error(400, "Bad Accept-Datetime", str(exc), ctx.name, vary)
        sel = await run_in_threadpool(select_capture, ctx, target.url, ts)
        if isinstance(sel, Blocked):
            return self.blocked(ctx, sel)
        if isinstance(sel, Missing):
            return await run_in_threadpool(self.missing, ctx, target.url, ts, sel, "", vary)
        chosen, url = sel.capture.line.timestamp, sel.capture.line.url
        prefix = coll_prefix(str(request.base_url), ctx.name)
        links = MementoLinks(url, prefix, chosen, target.modifier)
        location = archival_url(prefix, chosen, url, target.modifier)
        return Response(b"", 302, headers={"Location": location, "Link": links.header(), **vary})

    async def memento(self, request: Request, ctx: ReplayContext, target: Target) -> Response:
        """A memento: the capture, or a 302 to the canonical timestamp, 404, 451 (one
        hop to a worker thread for the whole lookup and rendering; a large rewrite
        waits for its lease and is rendered in a second hop, see the module
        docstring). A POST/PUT is looked up by its method and body
        (:func:`webark.cdx.post.method_url`, as the collection's index keys them) and
        answered at once, without a redirect (a browser would repeat it as a GET)."""
        lookup: str | None = None
        if request.method in BODY_METHODS:
            try:
                body = await lookup_body(request)
            except BodyTooLarge as exc:
                return self.pages.error(413, "Request body too large", str(exc), ctx.name)
            lookup = method_url(target.url, request.method, request.headers.get("content-type"),
                                body, compat=ctx.compat)  # fmt: skip
        ask = MementoRequest(
            abs_prefix=coll_prefix(str(request.base_url), ctx.name),
            range_header=request.headers.get("range"),
            head_only=request.method == "HEAD",
            if_range=request.headers.get("if-range"),
            navigation=is_navigation(request.headers),
            lookup_url=lookup,
            expected=expected_families(request.headers, target.modifier, target.url),
        )
        small, large = limiters()
        first = await anyio.to_thread.run_sync(self._memento, ctx, target, ask, None,
                                               limiter=small)  # fmt: skip
        if not isinstance(first, Deferred):
            return first
        lease = await self.budget.acquire(first.weight)
        try:
            resp = await anyio.to_thread.run_sync(self._memento, ctx, target, ask, lease,
                                                  limiter=large)  # fmt: skip
        except BaseException:
            lease.release()
            raise
        if isinstance(resp, Deferred):  # cannot happen with a lease
            lease.release()
            raise AssertionError("memento deferred twice")
        return LeasedResponse(resp, lease, self.send_timeout)

    async def record(self, request: Request, ctx: ReplayContext, target: Target) -> Response:
        """Record mode (:mod:`.record`): fetch and archive ``target.url``, then serve
        the capture just written with its links to ``/{coll}/record/…``. Patch mode
        (``target.kind == "patch"``, pywb's, its issue 601): the latest capture of
        exactly this URL when the collection has one (served with links to
        ``/{coll}/patch/…``, nothing fetched), else recorded. 404 when the server does
        not record; 409 for a collection that cannot be indexed while written; 502 /
        504 / 403 when the live URL cannot be fetched (nothing written)."""
        if self.recorder is None:
            return self.pages.error(404, "Record mode is off",
                                    "This server does not record (webark serve --record).",
                                    ctx.name)  # fmt: skip
        ask = MementoRequest(
            abs_prefix=coll_prefix(str(request.base_url), ctx.name),
            head_only=request.method == "HEAD", navigation=is_navigation(request.headers),
        )  # fmt: skip
        if target.kind == "patch":
            have = await anyio.to_thread.run_sync(self._archived, ctx, target, ask)
            if have is not None:
                return have
        rec_path = record_prefix(coll_prefix("/", ctx.name), target.kind)
        try:
            self.recorder.backend(ctx.folder)
        except (CollectionError, ValueError) as exc:
            return self.pages.error(409, "Cannot record into this collection",
                                    without_paths(str(exc)), ctx.name)  # fmt: skip
        got = await self.recorder.record(ctx.folder, target.url, request.headers.items(),
                                         rec_path)  # fmt: skip
        if isinstance(got, RecordFailure):
            return self.pages.error(got.status, got.reason, got.message, ctx.name)
        return await anyio.to_thread.run_sync(self._recorded, ctx, target, ask, got)

    def _archived(self, ctx: ReplayContext, target: Target,
                  ask: MementoRequest) -> Response | None:  # fmt: skip
        """Patch mode: the latest capture of exactly ``target.url`` served with links
        to ``/{coll}/patch/…`` (a blocked one: 451), None when there is none (a fuzzy
        match does not count: the URL itself is missing) (worker thread)."""
        sel = select_capture(ctx, target.url, None)
        if isinstance(sel, Blocked):
            return self.blocked(ctx, sel)
        if not isinstance(sel, Chosen) or sel.fuzzy is not None:
            return None
        ts = sel.capture.line.timestamp
        shown = Target("memento", ctx.name, target.url, ts, target.modifier)
        return self._serve(ctx, shown, sel.capture, ask, live_mode=target.kind)

    def _recorded(self, ctx: ReplayContext, target: Target, ask: MementoRequest,
                  ts: str) -> Response:  # fmt: skip
        """The capture of ``target.url`` at ``ts`` just recorded (worker thread)."""
        sel = select_capture(ctx, target.url, ts)
        if isinstance(sel, Blocked):  # recorded, but the access rules hide it
            return self.blocked(ctx, sel)
        if not isinstance(sel, Chosen) or sel.capture.line.timestamp != ts:
            return self.pages.error(500, "Recorded capture not found",
                                    f"{target.url} was recorded at {ts} but the index does "
                                    "not give it back.", ctx.name)  # fmt: skip
        shown = Target("memento", ctx.name, target.url, ts, target.modifier)
        return self._serve(ctx, shown, sel.capture, ask, live_mode=target.kind)

    def _memento(self, ctx: ReplayContext, target: Target, ask: MementoRequest,
                 lease: Lease | None = None) -> Response | Deferred:  # fmt: skip
        """Select and render (worker thread). Without ``lease``, a large rewrite is
        not rendered: a :class:`Deferred` with its weight comes back instead."""
        assert target.timestamp is not None
        sel = select_capture(ctx, ask.lookup_url or target.url, clamp_timestamp(target.timestamp),
                             expected=ask.expected)  # fmt: skip
        if isinstance(sel, Blocked):
            return self.blocked(ctx, sel)
        if isinstance(sel, Missing):
            reason = ""
            if ask.lookup_url is not None:
                reason = "no capture of a request with this method and body"
            return self.missing(ctx, target.url, target.timestamp, sel, reason)
        rc, fuzzy = sel.capture, sel.fuzzy
        ts = rc.line.timestamp
        if ask.lookup_url is None and (ts != target.timestamp
                                       or (fuzzy is not None and fuzzy.moves_path)):
            # to the capture's own URL too: same URL key, maybe another spelling (/a vs
            # /a/), or the URL a fuzzy match found; a URL whose extra parameters only the
            # page's script reads stays as asked
            shown = target.url if fuzzy is not None and fuzzy.keeps_asked_url else rc.line.url
            location = archival_url(ask.abs_prefix, ts, shown, target.modifier)
            links = MementoLinks(rc.line.url, ask.abs_prefix, ts, target.modifier)
            headers = {"Location": location, "Link": links.header(), **_fuzzy_header(fuzzy)}
            return Response(b"", 302, headers=headers)
        weight = rewrite_weight(rc, target.modifier, rewrite_limit=self.rewrite_limit)
        if weight and lease is None:
            return Deferred(weight)  # and rc goes: a waiting request holds no payload
        return self._serve(ctx, target, rc, ask, fuzzy, lease)

    def _serve(self, ctx: ReplayContext, target: Target, rc: ResolvedCapture,
               ask: MementoRequest, fuzzy: FuzzyMatch | None = None,
               lease: Lease | None = None, live_mode: str | None = None) -> Response:  # fmt: skip
        """The memento response of ``rc``; ``live_mode``: ``record`` or ``patch`` for
        record and patch mode (links to ``/{coll}/{live_mode}/{modifier}/…``, no
        banner)."""
        ts = rc.line.timestamp
        url = rc.line.url  # the base of relative links: the capture's URL as archived
        reserve: Callable[[int], None] | None = None
        if lease is not None:
            held = lease

            def grow(n: int) -> None:  # the decoded size may pass what was acquired
                if n > held.weight:
                    held.grow(n - held.weight)

            reserve = grow
        prefix = coll_prefix("/", ctx.name)
        prev, nxt = neighbours(ctx.source, url, ts)
        first = next(iter(captures(ctx.source, url)), None)
        last_l = closest(ctx.source, url, None, limit=1)
        last = last_l[0] if last_l else None
        banner = None
        if target.modifier in ("", "mp_") and live_mode is None:
            def cap(x: CdxLine | None) -> tuple[str, str] | None:
                if x is None or ctx.access.excluded(x):
                    return None
                return archival_url(prefix, x.timestamp, url, target.modifier), display_date(
                    x.timestamp
                )

            banner = Banner(display_date(ts), captures_url(prefix, url), cap(prev), cap(nxt))
        rendered = render(
            rc, url=url, prefix=record_prefix(prefix, live_mode) if live_mode else prefix,
            root="/",
            modifier=target.modifier, range_header=ask.range_header, banner=banner,
            head_only=ask.head_only, if_range=ask.if_range, reserve=reserve,
            rewrite_limit=self.rewrite_limit, navigation=ask.navigation,
            link_timestamp="" if live_mode else None,
        )  # fmt: skip
        links = MementoLinks(
            url, ask.abs_prefix, ts, target.modifier,
            first=first.timestamp if first else None,
            prev=prev.timestamp if prev else None,
            next=nxt.timestamp if nxt else None,
            last=last.timestamp if last else None,
        )  # fmt: skip
        csp = RAW_CSP if target.modifier == "id_" else REPLAY_CSP
        extra = [("Memento-Datetime", http_date(ts)), ("Link", links.header()),
                 ("Content-Security-Policy", csp), *_fuzzy_header(fuzzy).items()]  # fmt: skip
        return _response(rendered, extra)


@dataclass(frozen=True, slots=True)
class MementoRequest:
    """What a memento request asks beyond its target: ``abs_prefix`` (the collection's
    absolute URL), its ``Range`` / ``If-Range`` headers, ``head_only`` (HEAD),
    ``navigation`` (:func:`~webark.apps.replay.request_info.is_navigation`),
    ``lookup_url`` (a POST/PUT's method URL, None for GET/HEAD) and ``expected`` (the
    MIME families it can use, :func:`~webark.apps.replay.request_info.expected_families`)."""

    abs_prefix: str
    range_header: str | None = None
    head_only: bool = False
    if_range: str | None = None
    navigation: bool = False
    lookup_url: str | None = None
    expected: Collection[str] | None = None


def _fuzzy_header(fuzzy: FuzzyMatch | None) -> dict[str, str]:
    """:data:`FUZZY_HEADER` naming the rules of a fuzzy match (none for an exact one)."""
    return {} if fuzzy is None else {FUZZY_HEADER: ", ".join(fuzzy.rules)}


async def refuse_websocket(scope: Scope, receive: Receive, send: Send) -> None:
    """Refuse a WebSocket handshake (a capture of a socket cannot be replayed; the
    client script sends a page's sockets here instead of to the live web): closing
    before accepting makes the server answer the upgrade with 403 (ASGI spec)."""
    message = await receive()
    if message.get("type") == "websocket.connect":
        log.info("replay: WebSocket %s refused (sockets are not replayed)", scope.get("path"))
        await send({"type": "websocket.close", "code": 1008})


def _similar_queries(url: str) -> Iterator[tuple[str, Any]]:
    """Queries for similar URLs: the URL's folder (prefix), then its host."""
    base = url.split("?", 1)[0].split("#", 1)[0]
    scheme_end = base.find("://")
    slash = base.rfind("/")
    if scheme_end >= 0 and slash > scheme_end + 2:
        folder = base[: slash + 1]
        host_end = base.find("/", scheme_end + 3)
        if slash > host_end:
            yield folder, "prefix"
        yield base[:host_end + 1] if host_end > 0 else base, "host"
    else:
        yield base, "host"


def create_server(
    collections_dir: str | os.PathLike[str],
    *,
    access_rules: str | os.PathLike[str] | None = None,
    replay_base: str | None = None,
    rewrite_budget: int = REWRITE_BUDGET,
    rewrite_limit: int = REWRITE_LIMIT,
    record: RecordSettings | None = None,
) -> ReplayServer:
    """``webark serve``'s app over the collections in ``collections_dir``: replay and the
    resolution API (sharing one index source per collection).

    Args:
        access_rules: a server-wide access rules file (YAML, see
            :mod:`webark.apps.replay.access`); each collection may add its own
            ``access-rules.yaml``.
        replay_base: base URL of the replay app in the resolution API's Memento links
            (default: this server).
        rewrite_budget: bytes of large payloads rewritten or sent at once (> 0; the
            module docstring).
        rewrite_limit: the largest body rewritten, in bytes once decoded (> 0); larger
            ones are sent as stored.
        record: record mode's settings (:mod:`.record`); None: no record mode.

    Raises:
        ValueError / OSError: the access rules file cannot be used; a budget or a
            limit <= 0.
    """
    colls: Collections = DirectoryCollections(collections_dir)
    assert isinstance(colls, DirectoryCollections)
    access = AccessConfig(access_rules)
    root = colls.root

    def hidden(name: str) -> Callable[[CdxLine], bool] | None:
        return access.hidden_from_api(root, name)

    api = create_app(colls, replay_base=replay_base, hidden=hidden)
    recorder = Recorder(record) if record is not None else None
    return ReplayServer(api, ReplayCollections(colls, access), rewrite_budget, rewrite_limit,
                        recorder)  # fmt: skip


def server_from_env() -> ReplayServer:
    """App factory for ``uvicorn --factory``: ``$WEBARK_COLLECTIONS`` (required),
    ``$WEBARK_ACCESS_RULES``, ``$WEBARK_REPLAY_BASE``, ``$WEBARK_REWRITE_BUDGET`` and
    ``$WEBARK_REWRITE_LIMIT`` (bytes; optional).

    Raises:
        RuntimeError: ``$WEBARK_COLLECTIONS`` is not set.
        ValueError: ``$WEBARK_REWRITE_BUDGET`` or ``$WEBARK_REWRITE_LIMIT`` is not a
            positive integer.
    """
    root = os.environ.get("WEBARK_COLLECTIONS")
    if not root:
        raise RuntimeError("WEBARK_COLLECTIONS is not set")
    budget = int(os.environ.get("WEBARK_REWRITE_BUDGET") or REWRITE_BUDGET)
    limit = int(os.environ.get("WEBARK_REWRITE_LIMIT") or REWRITE_LIMIT)
    return create_server(root, access_rules=os.environ.get("WEBARK_ACCESS_RULES") or None,
                         replay_base=os.environ.get("WEBARK_REPLAY_BASE") or None,
                         rewrite_budget=budget, rewrite_limit=limit)  # fmt: skip


__all__ = ["ReplayServer", "create_server", "is_api_request", "server_from_env"]
