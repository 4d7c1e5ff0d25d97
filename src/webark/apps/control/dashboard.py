"""The web dashboard of a running crawl, served by the control API (same 127.0.0.1
socket, same token): server-side HTML (jinja2, ``templates/``) plus one small script
(``static/dashboard.js``, no build step) that polls :func:`dashboard_data` every second.

``GET /``
    The dashboard, or the token form when the browser has no valid token cookie.
``POST /login``
    Form field ``token``: a right token is kept in the cookie ``webark_token_PORT``
    (``HttpOnly``, ``SameSite=Strict``, ``Path=/``; browsers scope cookies by host,
    not port, so the name carries the port: two crawls on one machine keep their own)
    and the browser is sent to ``/``; a wrong one gets the form again (401).
``POST /logout``
    Forgets the cookie.
``GET /dashboard/data``
    JSON for the page: :meth:`CrawlControl.status`, queues by host (in flight, queued,
    next wake-up, errors …), the reject rules and host settings, recent crawl.log lines
    (``?status=`` a status or its first digits, e.g. ``2``, ``-5000``; ``?q=`` a
    substring of the line) and the rates over the crawl (from progress-statistics.log).
``GET /dashboard.js``
    The script.

The controls call the JSON API (``/pause``, ``/seeds``, ``/scope/reject`` …) with the
cookie. A request authenticated by the cookie must carry ``X-Requested-With: webark``
when it changes something: a page of another site cannot send that header without a
CORS preflight this server never answers, so it cannot drive the crawl through the
cookie (cross-site request forgery).
"""

from __future__ import annotations

import hmac
import re
from collections import deque
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

from jinja2 import Environment, FileSystemLoader, select_autoescape
from starlette.requests import Request
from starlette.responses import FileResponse, HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Route

from webark.crawl.control import CrawlControl
from webark.crawllog import parse_line
from webark.crawllog.progress import ProgressLine, parse_progress_line

__all__ = ["COOKIE_PREFIX", "CSRF_HEADER", "cookie_name", "dashboard_data", "dashboard_routes"]

HERE = Path(__file__).parent
COOKIE_PREFIX = "webark_token_"
CSRF_HEADER = "x-requested-with"
"""Header (value ``webark``) a cookie-authenticated request that changes state needs."""

_TAIL_BYTES = 256 * 1024
_MAX_LINES = 200
_MAX_POINTS = 600


def cookie_name(port: int) -> str:
    """The name of the token cookie of the control API on ``port``."""
    return f"{COOKIE_PREFIX}{port}"


def _port_of(request: Request) -> int:
    server = request.scope.get("server")
    return int(server[1]) if server and server[1] else 0


def cookie_token(request: Request) -> str | None:
    """The token the browser keeps for this port, if any."""
    return request.cookies.get(cookie_name(_port_of(request)))


def _tail_lines(path: Path, limit: int = _TAIL_BYTES) -> list[str]:
    """The last lines of ``path`` within ``limit`` bytes (the first, partial one
    dropped)."""
    try:
        with open(path, "rb") as f:
            f.seek(0, 2)
            size = f.tell()
            f.seek(max(0, size - limit))
            data = f.read()
    except OSError:
        return []
    lines = data.decode("utf-8", "replace").splitlines()
    return lines[1:] if size > limit and lines else lines


def _log_lines(control: CrawlControl, status: str, q: str) -> list[dict[str, Any]]:
    path = control.controller.job.logs_dir / "crawl.log"
    out: deque[dict[str, Any]] = deque(maxlen=_MAX_LINES)
    for text in _tail_lines(path):
        if q and q not in text:
            continue
        try:
            ln = parse_line(text)
        except ValueError:
            continue
        if status and not str(ln.status).startswith(status):
            continue
        out.append({"time": ln.timestamp.isoformat(), "status": ln.status, "size": ln.size,
                    "uri": ln.uri, "hops": ln.hop_path, "mime": ln.mime_type,
                    "annotations": list(ln.annotations)})  # fmt: skip
    return list(reversed(out))  # newest first


def _rates(control: CrawlControl) -> list[dict[str, Any]]:
    path = control.controller.job.logs_dir / "progress-statistics.log"
    points: deque[dict[str, Any]] = deque(maxlen=_MAX_POINTS)
    for text in _tail_lines(path, 4 * _TAIL_BYTES):
        try:
            row = parse_progress_line(text)
        except ValueError:
            continue
        if isinstance(row, ProgressLine):
            points.append({"t": row.when.timestamp(), "uris_per_s": row.docs_per_s,
                           "bytes_per_s": row.kib_per_s * 1024})  # fmt: skip
    return list(points)


def _queues(control: CrawlControl) -> list[dict[str, Any]]:
    snap = control.snapshot(top=100)
    f = snap.frontier
    if f is None:
        return []
    return [{"host": q.key, "queued": q.queued, "in_flight": q.in_flight,
             "finished": q.finished, "succeeded": q.succeeded, "bytes": q.bytes,
             "next_wake": datetime.fromtimestamp(q.due, UTC).isoformat(timespec="seconds"),
             "wait_s": round(max(0.0, q.due - snap.now), 1), "errors": q.errors,
             "blocked": q.blocked} for q in f.top_queues]  # fmt: skip


def dashboard_data(control: CrawlControl, *, status: str = "", q: str = "") -> dict[str, Any]:
    """What the dashboard shows (module docstring), JSON-serializable."""
    from webark.crawl.live import host_settings, reject_rules

    return {
        "status": control.status(),
        "queues": _queues(control),
        "rules": reject_rules(control),
        "hosts": host_settings(control),
        "log": _log_lines(control, status.strip(), q),
        "rates": _rates(control),
    }


def dashboard_routes(control: CrawlControl, secret: bytes,
                     guarded: Callable[[Any], Any]) -> list[Route]:  # fmt: skip
    """The dashboard's routes (module docstring); ``guarded`` is the API's guard (which
    accepts the cookie too)."""
    env = Environment(loader=FileSystemLoader(str(HERE / "templates")),
                      autoescape=select_autoescape(["html"]))  # fmt: skip

    def page(name: str, status: int = 200, **values: Any) -> HTMLResponse:
        html = env.get_template(name).render(job=control.controller.job.job_dir.name, **values)
        return HTMLResponse(html, status, headers={"Cache-Control": "no-store"})

    def signed_in(request: Request) -> bool:
        given = cookie_token(request)
        return given is not None and hmac.compare_digest(given.encode(), secret)

    async def home(request: Request) -> Response:
        if not signed_in(request):
            return page("login.html")
        return page("dashboard.html", reports=[r.name for r in control.reports])

    async def login(request: Request) -> Response:
        # an urlencoded form, read without python-multipart (not a dependency)
        form = parse_qs((await request.body()).decode("utf-8", "replace"))
        token = (form.get("token") or [""])[0].strip()
        if not hmac.compare_digest(token.encode(), secret):
            return page("login.html", 401, error="wrong token (see JOBDIR/control.json)")
        resp = RedirectResponse("/", 303)
        resp.set_cookie(cookie_name(_port_of(request)), token, httponly=True,
                        samesite="strict", path="/")  # fmt: skip
        return resp

    async def logout(request: Request) -> Response:
        resp = RedirectResponse("/", 303)
        resp.delete_cookie(cookie_name(_port_of(request)), path="/")
        return resp

    async def data(request: Request) -> Response:
        p = request.query_params
        return JSONResponse(dashboard_data(control, status=p.get("status", ""),
                                           q=p.get("q", "")))  # fmt: skip

    async def script(request: Request) -> Response:
        return FileResponse(HERE / "static" / "dashboard.js", media_type="text/javascript",
                            headers={"Cache-Control": "no-store"})  # fmt: skip

    return [
        Route("/", home, methods=["GET"]),
        Route("/login", login, methods=["POST"]),
        Route("/logout", logout, methods=["POST"]),
        Route("/dashboard/data", guarded(data), methods=["GET"]),
        Route("/dashboard.js", script, methods=["GET"]),
    ]


_UNSAFE = re.compile(r"^(POST|PUT|PATCH|DELETE)$")


def cookie_request_allowed(request: Request) -> bool:
    """A cookie-authenticated request may change state only with the CSRF header."""
    if not _UNSAFE.match(request.method):
        return True
    return request.headers.get(CSRF_HEADER, "").lower() == "webark"
