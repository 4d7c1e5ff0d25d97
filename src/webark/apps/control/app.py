"""The control API of a running crawl (ASGI, Starlette), served on 127.0.0.1 by
``webark crawl`` in the crawl's own event loop.

Every request needs ``Authorization: Bearer TOKEN`` (the token is written to
``JOBDIR/control.json``, mode 0600) or the dashboard's token cookie (a change made with
the cookie also needs ``X-Requested-With: webark``, else 403); anything else gets 401.
``GET /`` is the web dashboard (:mod:`webark.apps.control.dashboard`). Endpoints:

``GET /status``
    The crawl at a glance (JSON; :meth:`CrawlControl.status`).
``GET /reports``
    The report names (JSON list).
``GET /reports/{name}``
    A live report (Heritrix names: ``crawl``, ``seeds``, ``hosts``, ``source``,
    ``mimetype``, ``responsecode``, ``processors``, ``frontier-summary``,
    ``frontier-nonempty``, ``threads``, plus ``dedup``): text by default, JSON with
    ``?format=json`` or ``Accept: application/json`` (``?format=text`` wins over Accept).
``POST /pause``, ``POST /resume``, ``POST /stop``
    Pause (no new URI is taken; in-flight ones finish), resume, graceful stop (WARCs
    closed, reports written, ``--resume`` continues). JSON ``{"state": …}``.
``POST /seeds``
    Add seeds: JSON ``{"seeds": [URL, …], "force": false}`` or ``text/plain`` with one
    URL a line. Answer: ``{"added": […], "already_seen": […], "rejected": [{seed,
    reason}]}``.
``POST /delays``
    JSON with any of ``min_delay``, ``max_delay`` (seconds), ``delay_factor``; answer:
    the live settings.

Changes while running (:mod:`webark.crawl.live`; saved in ``state/job.json``, kept by
``--resume``):

``GET /scope``
    The reject rules by kind: ``{"surt": […], "regex": […], "host": […]}``.
``POST /scope/reject``, ``DELETE /scope/reject``
    ``{"kind": "surt" | "regex" | "host", "value": …}``: add a reject rule, which also
    finishes the queued URIs it rejects (crawl.log ``-5000``; answer ``{"purged": n,
    "rules": …}``), or remove one.
``POST /frontier/delete``
    ``{"uri_regex": R, "queue_regex": Q}`` (Heritrix ``deleteURIs``, whole-string
    matches; ``queue_regex`` optional): queued URIs finished with ``-6000``; answer
    ``{"deleted": n}``.
``GET /hosts``, ``POST /hosts``
    Per-host settings; ``{"host": "example.org" or "host:port", "min_delay": S,
    "max_delay": S, "delay_factor": F, "max_uris": N, "max_bytes": N}`` (``null``
    removes a setting). A reached quota blocks the queue at once (``-5003``).

Continuous crawling (a job with ``rss:``; :mod:`webark.crawl.rss`), seen by the crawl at
once (the live RSS report is ``GET /reports/rss``):

``GET /rss``
    Every site with its configuration, state and feeds (as ``webark rss list --json``).
``POST /rss/sites``
    Add a site: ``{"name": …, "min_wait": "10m" or seconds, "active": true}`` (201).
``POST /rss/sites/{name}``
    Change it: ``{"min_wait": …}`` and/or ``{"active": false}`` (deactivate).
``POST /rss/feeds``
    Add a feed: ``{"site": …, "uri": …, "implied_pages": [URL, …]}`` (201).
``POST /rss/feeds/change``
    ``{"uri": …, "active": false}`` deactivates a feed (``true``: activates it).
``POST /rss/implied``, ``DELETE /rss/implied``
    ``{"feed": URI, "uri": PAGE}``: add or remove an implied page of a feed.

Errors are JSON ``{"error": …, "status": …}``: 400 bad body or value, 401 no or wrong
token, 404 unknown report, 409 the crawl is stopping or finished.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import json
import logging
import os
import secrets
import socket
from collections.abc import Awaitable, Callable, Generator
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from webark.apps.control.dashboard import cookie_request_allowed, cookie_token, dashboard_routes
from webark.core.private_file import write_private_json
from webark.crawl.control import ControlError, ControlStateError, CrawlControl

__all__ = ["ControlServer", "create_control_app", "new_token"]

log = logging.getLogger(__name__)

Handler = Callable[[Request], Awaitable[Response]]


def new_token() -> str:
    """A random bearer token (32 bytes, URL-safe Base64: 43 characters)."""
    return secrets.token_urlsafe(32)


def _error(status: int, message: str) -> JSONResponse:
    headers = {"WWW-Authenticate": 'Bearer realm="webark crawl"'} if status == 401 else None
    return JSONResponse({"error": message, "status": status}, status, headers=headers)


def _authorized(request: Request, token: bytes) -> bool:
    scheme, _, given = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() != "bearer":
        return False
    return hmac.compare_digest(given.strip().encode(), token)  # constant time


def _wants_json(request: Request) -> bool:
    fmt = request.query_params.get("format", "").lower()
    if fmt in ("json", "text", "txt"):
        return fmt == "json"
    accept = request.headers.get("accept", "")
    return "application/json" in accept and "text/plain" not in accept.split(",")[0]


async def _json_body(request: Request) -> Any:
    raw = await request.body()
    if not raw.strip():
        return {}
    try:
        return json.loads(raw)
    except ValueError as e:
        raise ControlError(f"the body is not JSON: {e}") from None


def create_control_app(control: CrawlControl, token: str) -> Starlette:
    """The control API of ``control`` (see the module docstring), guarded by ``token``.

    Raises:
        ValueError: an empty token.
    """
    if not token:
        raise ValueError("the control API needs a non-empty token")
    secret = token.encode()

    def guarded(fn: Handler) -> Handler:
        async def handler(request: Request) -> Response:
            if not _authorized(request, secret):
                cookie = cookie_token(request)  # the dashboard's (webark.apps.control.dashboard)
                if cookie is None or not hmac.compare_digest(cookie.encode(), secret):
                    return _error(401, "missing or wrong bearer token (see JOBDIR/control.json)")
                if not cookie_request_allowed(request):
                    return _error(403, "a change made with the token cookie needs the header "
                                       "X-Requested-With: webark")  # fmt: skip
            try:
                return await fn(request)
            except ControlError as e:
                return _error(409 if isinstance(e, ControlStateError) else 400, str(e))

        return handler

    async def status(request: Request) -> Response:
        return JSONResponse(control.status())

    async def report_names(request: Request) -> Response:
        return JSONResponse([r.name for r in control.reports])

    async def report(request: Request) -> Response:
        name = request.path_params["name"]
        try:
            rep, snap = control.report(name)
        except ControlError as e:
            return _error(404, str(e))
        if _wants_json(request):
            return Response(
                json.dumps(rep.to_json(snap), indent=2, default=str) + "\n",
                media_type="application/json",
            )
        return PlainTextResponse(rep.render_text(snap))

    async def pause(request: Request) -> Response:
        return JSONResponse({"state": control.pause()})

    async def resume(request: Request) -> Response:
        return JSONResponse({"state": control.resume()})

    async def stop(request: Request) -> Response:
        return JSONResponse({"state": control.stop()})

    async def seeds(request: Request) -> Response:
        force = False
        if request.headers.get("content-type", "").startswith("text/plain"):
            text = (await request.body()).decode("utf-8", "replace")
            urls = [ln.strip() for ln in text.splitlines() if ln.strip()]
        else:
            body = await _json_body(request)
            if isinstance(body, list):
                body = {"seeds": body}
            if not isinstance(body, dict) or not isinstance(body.get("seeds"), list):
                raise ControlError('expected {"seeds": [URL, …]} or a text/plain URL list')
            urls = [str(u) for u in body["seeds"]]
            force = bool(body.get("force", False))
        if not urls:
            raise ControlError("no seed given")
        result = await control.add_seeds(urls, force=force)
        return JSONResponse(result.to_json())

    async def delays(request: Request) -> Response:
        body = await _json_body(request)
        if not isinstance(body, dict):
            raise ControlError('expected {"min_delay": S, "max_delay": S, "delay_factor": F}')
        unknown = set(body) - {"min_delay", "max_delay", "delay_factor"}
        if unknown:
            raise ControlError(f"unknown keys {sorted(unknown)}; use min_delay, max_delay, "
                               "delay_factor")  # fmt: skip
        return JSONResponse(
            control.set_delays(
                min_delay=body.get("min_delay"),
                max_delay=body.get("max_delay"),
                delay_factor=body.get("delay_factor"),
            )
        )

    routes = [
        Route("/status", guarded(status), methods=["GET"]),
        Route("/reports", guarded(report_names), methods=["GET"]),
        Route("/reports/{name}", guarded(report), methods=["GET"]),
        Route("/pause", guarded(pause), methods=["POST"]),
        Route("/resume", guarded(resume), methods=["POST"]),
        Route("/stop", guarded(stop), methods=["POST"]),
        Route("/seeds", guarded(seeds), methods=["POST"]),
        Route("/delays", guarded(delays), methods=["POST"]),
        *_live_routes(control, guarded),
        *dashboard_routes(control, secret, guarded),
        *_rss_routes(control, guarded),
    ]
    return Starlette(routes=routes)


def _live_routes(control: CrawlControl, guarded: Callable[[Handler], Handler]) -> list[Route]:
    """Scope rules, frontier deletes and per-host settings (module docstring;
    :mod:`webark.crawl.live`)."""
    from webark.crawl import live

    async def body_of(request: Request, *required: str) -> dict[str, Any]:
        body = await _json_body(request)
        if not isinstance(body, dict):
            raise ControlError("expected a JSON object")
        missing = [k for k in required if not isinstance(body.get(k), str) or not body[k]]
        if missing:
            raise ControlError(f"missing {', '.join(missing)} (strings)")
        return body

    async def rules(request: Request) -> Response:
        return JSONResponse(live.reject_rules(control))

    async def reject(request: Request) -> Response:
        b = await body_of(request, "kind", "value")
        if request.method == "DELETE":
            return JSONResponse(live.remove_reject_rule(control, b["kind"], b["value"]))
        return JSONResponse(live.add_reject_rule(control, b["kind"], b["value"]))

    async def delete(request: Request) -> Response:
        b = await body_of(request, "uri_regex")
        queue = b.get("queue_regex")
        if queue is not None and not isinstance(queue, str):
            raise ControlError("queue_regex: expected a regex string")
        return JSONResponse(live.delete_uris(control, b["uri_regex"], queue or None))

    async def hosts(request: Request) -> Response:
        if request.method == "GET":
            return JSONResponse(live.host_settings(control))
        b = await body_of(request, "host")
        settings = {k: v for k, v in b.items() if k != "host"}
        for k, v in settings.items():
            if v is not None and (isinstance(v, bool) or not isinstance(v, int | float)):
                raise ControlError(f"{k}: expected a number or null, got {v!r}")
        return JSONResponse(live.set_host(control, b["host"], settings))

    return [
        Route("/scope", guarded(rules), methods=["GET"]),
        Route("/scope/reject", guarded(reject), methods=["POST", "DELETE"]),
        Route("/frontier/delete", guarded(delete), methods=["POST"]),
        Route("/hosts", guarded(hosts), methods=["GET", "POST"]),
    ]


def _rss_routes(control: CrawlControl, guarded: Callable[[Handler], Handler]) -> list[Route]:
    """The continuous-crawling endpoints (module docstring), a 400 for a crawl without
    ``rss:``. Changes are made as ``webark rss`` makes them and seen at once."""
    from dataclasses import asdict

    from webark.crawl.control import rss_change, rss_listing
    from webark.crawl.rss.interval import IntervalError, parse_interval

    async def body_of(request: Request, *required: str) -> dict[str, Any]:
        body = await _json_body(request)
        if not isinstance(body, dict):
            raise ControlError("expected a JSON object")
        missing = [k for k in required if k not in body]
        if missing:
            raise ControlError(f"missing {', '.join(missing)}")
        return body

    def wait_of(body: dict[str, Any]) -> float | None:
        if body.get("min_wait") is None:
            return None
        try:
            return parse_interval(body["min_wait"])
        except IntervalError as e:
            raise ControlError(str(e)) from None

    def flag(body: dict[str, Any], key: str = "active") -> bool | None:
        value = body.get(key)
        if value is not None and not isinstance(value, bool):
            raise ControlError(f"{key}: expected true or false, got {value!r}")
        return value

    async def listing(request: Request) -> Response:
        return JSONResponse(rss_listing(control))

    async def add_site(request: Request) -> Response:
        b = await body_of(request, "name")
        wait, active = wait_of(b), flag(b)
        site = rss_change(control, lambda st: st.add_site(
            str(b["name"]), min_wait=60.0 if wait is None else wait, active=active is not False))
        return JSONResponse(asdict(site), 201)

    async def change_site(request: Request) -> Response:
        b = await body_of(request)
        wait, active = wait_of(b), flag(b)
        name = request.path_params["name"]
        site = rss_change(control, lambda st: st.change_site(name, min_wait=wait, active=active))
        return JSONResponse(asdict(site))

    async def add_feed(request: Request) -> Response:
        b = await body_of(request, "site", "uri")
        pages = b.get("implied_pages") or []
        if not isinstance(pages, list):
            raise ControlError("implied_pages: expected a list of URLs")
        active = flag(b)
        feed = rss_change(control, lambda st: st.add_feed(
            str(b["site"]), str(b["uri"]), implied_pages=[str(u) for u in pages],
            active=active is not False))
        return JSONResponse(asdict(feed), 201)

    async def change_feed(request: Request) -> Response:
        b = await body_of(request, "uri")
        active = flag(b)
        feed = rss_change(control, lambda st: st.change_feed(str(b["uri"]), active=active))
        return JSONResponse(asdict(feed))

    async def implied(request: Request) -> Response:
        b = await body_of(request, "feed", "uri")
        feed_uri, page = str(b["feed"]), str(b["uri"])
        if request.method == "DELETE":
            feed = rss_change(control, lambda st: st.remove_implied_page(feed_uri, page))
        else:
            feed = rss_change(control, lambda st: st.add_implied_page(feed_uri, page))
        return JSONResponse(asdict(feed))

    return [
        Route("/rss", guarded(listing), methods=["GET"]),
        Route("/rss/sites", guarded(add_site), methods=["POST"]),
        Route("/rss/sites/{name}", guarded(change_site), methods=["POST"]),
        Route("/rss/feeds", guarded(add_feed), methods=["POST"]),
        Route("/rss/feeds/change", guarded(change_feed), methods=["POST"]),
        Route("/rss/implied", guarded(implied), methods=["POST", "DELETE"]),
    ]


def _server_class() -> Any:
    import uvicorn

    class _Server(uvicorn.Server):
        """uvicorn's server without its SIGINT/SIGTERM handlers: the crawl owns them
        (a signal stops the crawl gracefully; the server is stopped after it); and
        :meth:`request_exit` ends it at once instead of at uvicorn's next 0.1 s tick
        (which every crawl's end used to wait for)."""

        _wake: asyncio.Event | None = None

        @contextlib.contextmanager
        def capture_signals(self) -> Generator[None, None, None]:
            yield

        async def main_loop(self) -> None:
            """uvicorn's loop (``on_tick`` at least every 0.1 s), woken early by
            :meth:`request_exit`."""
            self._wake = wake = asyncio.Event()
            counter = 0
            should_exit = await self.on_tick(counter)
            while not should_exit:
                counter = (counter + 1) % 864000
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(wake.wait(), 0.1)
                should_exit = await self.on_tick(counter)

        def request_exit(self) -> None:
            self.should_exit = True
            if self._wake is not None:
                self._wake.set()

    return _Server


class ControlServer:
    """Serve :func:`create_control_app` on ``127.0.0.1:port`` in the running event loop
    (uvicorn), and publish how to reach it in ``info_path`` (``JOBDIR/control.json``:
    ``{"url", "port", "token", "pid"}``, mode 0600, removed by :meth:`stop`).

    Args:
        control: the crawl to control.
        port: TCP port; 0 picks a free one.
        token: the bearer token (default :func:`new_token`).
        info_path: where to write the connection details (None: nowhere).

    Raises (from :meth:`start`):
        OSError: the port cannot be bound (message names host and port).
    """

    host = "127.0.0.1"

    def __init__(
        self,
        control: CrawlControl,
        *,
        port: int = 0,
        token: str | None = None,
        info_path: str | Path | None = None,
    ) -> None:
        self.control = control
        self.port = port
        self.token = token or new_token()
        self.info_path = Path(info_path) if info_path is not None else None
        self._server: Any = None
        self._task: asyncio.Task[None] | None = None
        self._sock: socket.socket | None = None
        self._wrote_info = False

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def bind(self) -> None:
        """Bind and listen on ``127.0.0.1:port`` (sets :attr:`port` when it was 0).
        Separate from :meth:`start` so a taken port fails before the crawl starts.

        Raises:
            OSError: the port cannot be bound (the message names host and port).
        """
        if self._sock is not None:
            return
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((self.host, self.port))
        except OSError as e:
            sock.close()
            raise OSError(e.errno, f"control API: cannot listen on {self.host}:{self.port}: "
                                   f"{e.strerror}") from None  # fmt: skip
        sock.listen(64)
        self.port = sock.getsockname()[1]
        self._sock = sock

    async def start(self) -> None:
        """Serve (binding first if needed) and write ``info_path``; returns once the
        server listens.

        Raises:
            OSError: the port cannot be bound.
        """
        import uvicorn

        self.bind()
        assert self._sock is not None
        app = create_control_app(self.control, self.token)
        config = uvicorn.Config(
            app,
            lifespan="off",
            log_config=None,  # leave the program's logging set-up alone
            log_level="warning",
            access_log=False,
            timeout_graceful_shutdown=2,  # a crawl's end never waits on a slow client
        )
        self._server = _server_class()(config)
        self._task = asyncio.create_task(self._server.serve(sockets=[self._sock]))
        while not self._server.started:
            if self._task.done():
                self._task.result()  # raises what stopped it
                raise OSError(f"control API on {self.url} did not start")
            await asyncio.sleep(0.01)
        if self.info_path is not None:
            self._write_info(self.info_path)
            self._wrote_info = True

    def _write_info(self, path: Path) -> None:
        data = {"url": self.url, "port": self.port, "token": self.token, "pid": os.getpid()}
        write_private_json(path, data)

    async def stop(self) -> None:
        """Stop serving (open connections are closed) and remove ``info_path`` if this
        server wrote it (a crawl refused before it started leaves the running one's)."""
        if self._server is not None:
            self._server.request_exit()
        if self._task is not None:
            with contextlib.suppress(Exception):
                await self._task
        if self._sock is not None:
            self._sock.close()
            self._sock = None
        if self.info_path is not None and self._wrote_info:  # never another crawl's file
            with contextlib.suppress(FileNotFoundError):
                self.info_path.unlink()
            self._wrote_info = False
