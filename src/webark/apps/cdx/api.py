"""The resolution API (the "CDX server") as an ASGI app (Starlette).

Endpoints (full reference: ``docs/cdx-api.md``; machine-readable: ``/openapi.json``):

``GET /``
    The collections (JSON; a small HTML page for browsers).
``GET /{collection}/cdx?url=…``
    Captures by URL key range and time — pywb 2.10 / IA CDX server parameters
    (:mod:`webark.apps.cdx.params`), outputs ``cdxj`` | ``json`` | ``cdx`` | ``link``
    (:mod:`webark.apps.cdx.output`).
``GET /{collection}/timemap/link/{url}``
    Memento TimeMap (RFC 7089 §5, ``application/link-format``).
``GET /openapi.json``
    OpenAPI 3.0 description (:mod:`webark.apps.cdx.openapi`).

Errors are JSON ``{"error": …, "status": …}`` (plus ``"param"`` for 400):

* 400 — a bad parameter, named in the message and in ``param``;
* 404 — unknown collection (or, for a TimeMap, a URL without captures);
* 503 also when the collection's access rules file is unusable (nothing is shown
  rather than what the rules hide).

**Access control.** With ``hidden`` (``webark serve`` passes its access rules, see
:mod:`webark.apps.replay.access`), captures an ``exclude`` or ``block`` rule applies to
are left out of every answer — CDX queries, digest lookups and TimeMaps — as pywb's
access checker does: an excluded capture is "not archived", and a blocked one would
only answer 451, so a TimeMap must not list it as a memento.
* 503 — the index cannot be read (:class:`~webark.index.source.IndexUnavailable`,
  ``OSError``: missing, unreadable or corrupt index, database down). Never an empty 200:
  the first chunk of a result is computed before the status line is sent, so a backend
  that fails at once gives 503; one that fails mid-stream aborts the connection (the
  client sees a truncated chunked body, not a clean end).

**Streaming.** Bodies are produced lazily (:func:`webark.apps.cdx.engine.run_query`) and
sent in chunks (16 KiB first, then 64 KiB) with ``StreamingResponse``: memory does not
grow with the result, uvicorn's flow control stops production while the client does not
read, and a disconnect stops the scan. Queries whose work is bounded (a ``limit`` of at
most :data:`INLINE_LIMIT`, no filter, exact URL or no time range) run inline in the
event loop and are answered with a plain ``Response`` (``Content-Length``, no thread
hop); all others run from start to end in one thread of a small dedicated pool
(:class:`~webark.apps.cdx.stream.ThreadedBody`), so a long scan never blocks the loop
and SQLite cursors stay in their thread. A result that fits in the first chunk is
answered with a plain ``Response`` too.

**Fast path.** :func:`create_app` returns a :class:`CdxApp`: ``GET /{collection}/cdx``
goes straight to :meth:`CdxApi.cdx_response`; everything else to the Starlette app.
"""

from __future__ import annotations

import html
import json
import logging
import os
from collections.abc import AsyncIterator, Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from urllib.parse import quote, unquote_plus

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response, StreamingResponse
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from webark.apps.cdx.engine import Chunks, Context, run_query, run_timemap, timemap_exists
from webark.apps.cdx.openapi import openapi_spec
from webark.apps.cdx.params import CdxQuery, ParamError, parse_params
from webark.apps.cdx.sources import (
    Collections,
    DirectoryCollections,
    HiddenLines,
    HidingSource,
    UnknownCollection,
)
from webark.apps.cdx.stream import ThreadedBody
from webark.core.text import without_paths
from webark.index.source import IndexSource, IndexUnavailable

log = logging.getLogger(__name__)

#: Largest ``limit`` answered inline (in the event loop) when the rest of the query is
#: bounded too (see the module docstring).
INLINE_LIMIT = 1000

MEDIA_TYPES = {
    "cdxj": "text/plain; charset=utf-8",
    "cdx": "text/plain; charset=utf-8",
    "json": "application/x-ndjson",
    "link": "application/link-format",
}

_BACKEND_ERRORS = (IndexUnavailable, OSError)


def error_response(status: int, message: str, param: str | None = None) -> JSONResponse:
    """``{"error": message, "status": status[, "param": param]}`` with that status."""
    body: dict[str, object] = {"error": message, "status": status}
    if param is not None:
        body["param"] = param
    return JSONResponse(body, status_code=status)


def _bounded(q: CdxQuery) -> bool:
    """True when ``q`` reads at most a few binary searches and ``limit`` lines."""
    return (
        q.limit is not None
        and q.limit <= INLINE_LIMIT
        and q.simple
        and not q.collapse
        and q.page is None
        and not q.show_num_pages
        and q.resume is None
        and (q.match_type == "exact" or (q.from14 is None and q.to14 is None))
    )


class CdxApi:
    """The request handlers over a set of collections (see :func:`create_app`)."""

    def __init__(
        self, collections: Collections, replay_base: str | None = None, stream_threads: int = 8,
        hidden: HiddenLines | None = None,
    ):  # fmt: skip
        self.collections = collections
        self.replay_base = replay_base
        self.hidden = hidden
        self.executor = ThreadPoolExecutor(stream_threads, thread_name_prefix="webark-cdx")

    # -- helpers ---------------------------------------------------------------------
    def _source(self, name: str) -> IndexSource | Response:
        try:
            source = self.collections.get(name)
            hide = self.hidden(name) if self.hidden is not None else None
        except UnknownCollection:
            return error_response(404, f"no collection named {name!r}")
        except _BACKEND_ERRORS as exc:
            return _unavailable(name, exc)
        except ValueError as exc:  # the collection's access rules are unusable
            log.error("collection %r: %s", name, exc)
            return error_response(
                503, f"collection {name!r}: access rules unusable: {without_paths(str(exc))}"
            )
        return source if hide is None else HidingSource(source, hide)

    def _replay_prefix(self, request: Request, coll: str) -> str:
        return self._prefix(lambda: str(request.base_url), coll)

    def _prefix(self, base_url: Callable[[], str], coll: str) -> str:
        base = self.replay_base if self.replay_base is not None else base_url()
        if not base.endswith("/"):
            base += "/"
        return f"{base}{quote(coll)}/"

    async def _respond(
        self, pieces: Iterator[bytes], media: str, inline: bool, coll: str
    ) -> Response:
        if inline:
            try:
                body = b"".join(pieces)
            except _BACKEND_ERRORS as exc:
                return _unavailable(coll, exc)
            return Response(body, media_type=media)
        chunks = Chunks(pieces)
        stream = ThreadedBody(chunks, self.executor)
        try:
            first = await stream.get()
        except _BACKEND_ERRORS as exc:
            return _unavailable(coll, exc)
        except BaseException:
            stream.cancel()
            raise
        if first is None or chunks.single:
            stream.cancel()
            return Response(first or b"", media_type=media)
        return StreamingResponse(_logged(stream.stream(first), coll), media_type=media)

    # -- endpoints -------------------------------------------------------------------
    async def cdx(self, request: Request) -> Response:
        coll = request.path_params["collection"]
        items = request.query_params.multi_items()
        if request.method == "HEAD":  # parameters and collection checked, no scan
            try:
                q = parse_params(items)
            except ParamError as exc:
                return error_response(400, str(exc), exc.param)
            source = self._source(coll)
            if isinstance(source, Response):
                return source
            return Response(b"", media_type=MEDIA_TYPES[q.output])
        return await self.cdx_response(coll, items, lambda: str(request.base_url))

    async def cdx_response(
        self, coll: str, items: Iterable[tuple[str, str]], base_url: Callable[[], str]
    ) -> Response:
        """The response to ``/{coll}/cdx`` with query parameters ``items``
        (``base_url()``: this server's base URL, asked only for link output)."""
        try:
            q = parse_params(items)
        except ParamError as exc:
            return error_response(400, str(exc), exc.param)
        source = self._source(coll)
        if isinstance(source, Response):
            return source
        prefix = self._prefix(base_url, coll) if q.output == "link" else ""
        pieces = run_query(q, source, Context(coll, prefix))
        media = MEDIA_TYPES[q.output]
        if q.show_num_pages and q.output == "json":
            media = "application/json"
        return await self._respond(pieces, media, _bounded(q), coll)

    async def timemap(self, request: Request) -> Response:
        coll = request.path_params["collection"]
        url = request.path_params["url"]
        if request.url.query:
            url += "?" + request.url.query
        if url.startswith(("http:/", "https:/")) and not url.startswith(("http://", "https://")):
            url = url.replace(":/", "://", 1)  # a proxy merged the slashes of the scheme
        if not url.strip():
            return error_response(400, "url: missing (…/timemap/link/<url>)", "url")
        source = self._source(coll)
        if isinstance(source, Response):
            return source
        try:
            ends = timemap_exists(url, source)
        except _BACKEND_ERRORS as exc:
            return _unavailable(coll, exc)
        except ValueError as exc:
            return error_response(400, f"url: cannot be used as a URL: {exc}", "url")
        if ends is None:
            return error_response(404, f"no captures of {url} in {coll!r}")
        ctx = Context(coll, self._replay_prefix(request, coll))
        pieces = run_timemap(url, source, ctx, str(request.url), *ends)
        return await self._respond(pieces, MEDIA_TYPES["link"], False, coll)

    async def home(self, request: Request) -> Response:
        names = self.collections.names()
        items = [
            {"name": n, "cdx": f"/{quote(n)}/cdx", "timemap": f"/{quote(n)}/timemap/link/"}
            for n in names
        ]
        if "text/html" in request.headers.get("accept", ""):
            rows = "".join(
                f'<li><a href="{html.escape(i["cdx"])}?url=&amp;matchType=range&amp;limit=20">'
                f"{html.escape(i['name'])}</a></li>"
                for i in items
            )
            page = (
                "<!doctype html><meta charset=utf-8><title>webark collections</title>"
                f"<h1>Collections</h1><ul>{rows}</ul>"
                '<p><a href="/openapi.json">API description (OpenAPI)</a></p>'
            )
            return HTMLResponse(page)
        return JSONResponse({"collections": items})

    async def openapi(self, request: Request) -> Response:
        return Response(json.dumps(openapi_spec()), media_type="application/json")


async def _http_error(request: Request, exc: Exception) -> Response:
    """Router errors (no such path, wrong method) in the API's JSON error shape."""
    code = int(getattr(exc, "status_code", 500))
    message = "not found" if code == 404 else str(getattr(exc, "detail", "error")).lower()
    resp = error_response(code, f"{message}: {request.url.path}")
    if code == 405:
        resp.headers["allow"] = "GET, HEAD"
    return resp


def _unavailable(coll: str, exc: BaseException) -> JSONResponse:
    log.warning("collection %r: index failed: %s", coll, exc)
    return error_response(
        503, f"index of collection {coll!r} unavailable: {without_paths(str(exc))}"
    )


async def _logged(chunks: AsyncIterator[bytes], coll: str) -> AsyncIterator[bytes]:
    try:
        async for chunk in chunks:
            yield chunk
    except Exception:
        log.exception("collection %r: index failed while streaming; aborting the response", coll)
        raise


def parse_query_string(qs: bytes) -> list[tuple[str, str]]:
    """``a=1&b=x%20y`` → ``[("a", "1"), ("b", "x y")]``: what Starlette's
    ``QueryParams`` gives (``parse_qsl(keep_blank_values=True)`` of the latin-1 decoded
    string), without the work for parts that need no unquoting."""
    out: list[tuple[str, str]] = []
    for part in qs.decode("latin-1").split("&"):
        if not part:
            continue
        k, _, v = part.partition("=")
        if "%" in part or "+" in part:
            k, v = unquote_plus(k), unquote_plus(v)
        out.append((k, v))
    return out


class CdxApp:
    """The ASGI app :func:`create_app` returns: ``GET /{collection}/cdx`` — the hot
    path — goes straight to :meth:`CdxApi.cdx_response` (no router, middleware or
    request object: ~25 µs less per request, a seventh of a closest lookup), every
    other request to the Starlette app (:attr:`starlette`), which also serves
    ``/{collection}/cdx`` the same way for HEAD and mounted (``root_path``) use.

    Attributes:
        api: the handlers; starlette: the Starlette app; state: its ``state``.
    """

    def __init__(self, api: CdxApi, starlette: Starlette):
        self.api = api
        self.starlette = starlette
        self.state = starlette.state

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] == "GET" and not scope.get("root_path"):
            path: str = scope["path"]
            if path.endswith("/cdx") and path.count("/") == 2 and len(path) > 5:
                coll = path[1:-4]
                items = parse_query_string(scope.get("query_string", b""))
                response = await self.api.cdx_response(
                    coll, items, lambda: str(Request(scope).base_url)
                )
                await response(scope, receive, send)
                return
        await self.starlette(scope, receive, send)


def create_app(
    collections: Collections | str | os.PathLike[str],
    *,
    replay_base: str | None = None,
    stream_threads: int = 8,
    hidden: HiddenLines | None = None,
) -> CdxApp:
    """The resolution API over ``collections`` (a collections directory — see
    :class:`~webark.apps.cdx.sources.DirectoryCollections` — or any
    :class:`~webark.apps.cdx.sources.Collections`).

    Args:
        replay_base: base URL of the replay app for Memento links (``link`` output,
            TimeMaps): a capture is ``{replay_base}{collection}/{timestamp}/{url}``.
            Default: this server's own base URL.
        stream_threads: threads that run streamed (unbounded) queries, one query per
            thread from start to end (see :mod:`webark.apps.cdx.stream`); more
            concurrent streamed queries wait for a free thread.
        hidden: access control — for a collection name, the predicate of the index lines
            the API must not show, or None (see
            :func:`webark.apps.replay.access.AccessConfig.hidden_from_api`); ``webark
            serve`` hides ``exclude`` and ``block`` captures from queries and TimeMaps.
    """
    if isinstance(collections, str | os.PathLike):
        collections = DirectoryCollections(collections)
    api = CdxApi(collections, replay_base, stream_threads, hidden)
    routes = [
        Route("/", api.home, methods=["GET"]),
        Route("/openapi.json", api.openapi, methods=["GET"]),
        Route("/{collection}/cdx", api.cdx, methods=["GET"]),
        Route("/{collection}/timemap/link/{url:path}", api.timemap, methods=["GET"]),
    ]
    app = Starlette(routes=routes, exception_handlers={404: _http_error, 405: _http_error})
    app.state.api = api
    return CdxApp(api, app)


def app_from_env() -> CdxApp:
    """App factory for ``uvicorn --factory`` and multi-worker serving: the collections
    directory comes from ``$WEBARK_COLLECTIONS`` (``webark serve`` sets it), the replay
    base from ``$WEBARK_REPLAY_BASE`` (optional).

    Raises:
        RuntimeError: ``$WEBARK_COLLECTIONS`` is not set.
    """
    root = os.environ.get("WEBARK_COLLECTIONS")
    if not root:
        raise RuntimeError("WEBARK_COLLECTIONS is not set")
    return create_app(root, replay_base=os.environ.get("WEBARK_REPLAY_BASE") or None)
