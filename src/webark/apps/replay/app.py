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

Modules by responsibility: this one dispatches (:class:`ReplayServer`) and builds the
app (:func:`create_server`); :mod:`.views` has the HTML pages (collection, capture
calendar / URL lists, 404 / 451 / 503, diff), :mod:`.mementos` the TimeGate, memento,
record and patch responses; both are mixins of :class:`ReplayServer`.
"""

from __future__ import annotations

import logging
import mimetypes
import os
import re
from collections.abc import Callable
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import FileResponse, Response
from starlette.types import ASGIApp, Receive, Scope, Send

from webark.apps.cdx.api import create_app
from webark.apps.cdx.sources import Collections, DirectoryCollections, UnknownCollection
from webark.apps.replay.access import AccessConfig
from webark.apps.replay.budget import ByteBudget
from webark.apps.replay.fulltext import FullTextSearch
from webark.apps.replay.leased import REWRITE_BUDGET, SEND_TIMEOUT
from webark.apps.replay.mementos import FUZZY_HEADER, MementoViews
from webark.apps.replay.pages import STATIC, Pages
from webark.apps.replay.paths import APP_PREFIX, parse_target
from webark.apps.replay.record import Recorder, RecordSettings
from webark.apps.replay.render import REWRITE_LIMIT
from webark.apps.replay.request_info import BODY_METHODS, is_service_worker_script
from webark.apps.replay.sources import ReplayCollections
from webark.cdx.line import CdxLine
from webark.core.text import without_paths
from webark.index.source import IndexUnavailable
from webark.rewrite.client import client_script

log = logging.getLogger(__name__)

_CDX_PATH = re.compile(r"^/[^/]+/(?:cdx|timemap/.*)$", re.S)
#: Methods the replay side answers.
METHODS = ("GET", "HEAD", *sorted(BODY_METHODS))
_BACKEND = (IndexUnavailable, OSError)


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


class ReplayServer(MementoViews):
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


async def refuse_websocket(scope: Scope, receive: Receive, send: Send) -> None:
    """Refuse a WebSocket handshake (a capture of a socket cannot be replayed; the
    client script sends a page's sockets here instead of to the live web): closing
    before accepting makes the server answer the upgrade with 403 (ASGI spec)."""
    message = await receive()
    if message.get("type") == "websocket.connect":
        log.info("replay: WebSocket %s refused (sockets are not replayed)", scope.get("path"))
        await send({"type": "websocket.close", "code": 1008})


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


__all__ = ["FUZZY_HEADER", "ReplayServer", "create_server", "is_api_request", "server_from_env"]
