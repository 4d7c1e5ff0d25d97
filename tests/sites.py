"""A tiny threaded web server for crawler and capture tests, on 127.0.0.x, with an
access log. A page with a ``Transfer-Encoding: chunked`` header is sent as given (its
body already chunk-framed: :func:`chunked`).

Every request is recorded with its server-side start and end times
(``time.monotonic()``), so tests can prove politeness: no two requests to one host at
once, and the pause between them.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

Page = tuple[int, tuple[tuple[str, str], ...], bytes]
"""``(status, headers, body)`` of one path."""


@dataclass(frozen=True)
class Hit:
    """One request as the server saw it."""

    path: str
    status: int
    start: float
    end: float
    user_agent: str
    headers: Mapping[str, str] = field(default_factory=dict)
    """The request header fields (names lowercased; the last of repeated ones)."""


PageHandler = Callable[[str, Mapping[str, str]], "Page | None"]
"""A dynamic page: ``(path, request headers with lowercased names) → Page``, or None
to fall back to the static pages (then 404)."""


class _QuietServer(ThreadingHTTPServer):
    """Does not print clients that hung up (crawlers killed by a test), only real
    errors of the handlers."""

    def handle_error(self, request: object, client_address: object) -> None:
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)  # type: ignore[arg-type]


class TestSite:
    """Serve ``pages`` (path → :data:`Page`) on ``host`` (a free port); unknown paths 404.

    ``handler`` (a :data:`PageHandler`) is asked first for every request: dynamic pages
    (traps, bursts of 503, conditional requests). ``port`` 0 picks a free port.
    Use as a context manager; :attr:`hits` is the access log (thread-safe list).
    """

    __test__ = False  # not a pytest class

    def __init__(
        self,
        pages: Mapping[str, Page],
        host: str = "127.0.0.1",
        delay: float = 0.0,
        handler: PageHandler | None = None,
        port: int = 0,
    ):
        self.pages = dict(pages)
        self.handler = handler
        self.host = host
        self.delay = delay
        self.hits: list[Hit] = []
        self._lock = threading.Lock()
        site = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: object) -> None:
                pass

            def do_GET(self) -> None:
                start = time.monotonic()
                req = {k.lower(): v for k, v in self.headers.items()}
                page = site.handler(self.path, req) if site.handler else None
                if page is None:
                    page = site.pages.get(
                        self.path, (404, (("Content-Type", "text/html"),), b"<h1>not found</h1>")
                    )
                status, headers, body = page
                if site.delay:
                    time.sleep(site.delay)
                self.send_response(status)
                for name, value in headers:
                    self.send_header(name, value)
                chunked = any(n.lower() == "transfer-encoding" for n, _ in headers)
                if status != 304 and not chunked:  # a chunked body comes framed already
                    self.send_header("Content-Length", str(len(body)))
                # "end" is taken before the response leaves: the client cannot have it
                # earlier, so start(next) - end never understates the client's pause
                # (taken after the write, a thread starved of the GIL under load could
                # record it late and make a polite crawler look impolite).
                end = time.monotonic()
                self.end_headers()
                if status != 304:
                    self.wfile.write(body)
                self.wfile.flush()
                with site._lock:
                    site.hits.append(
                        Hit(
                            self.path, status, start, end, req.get("user-agent", ""), req
                        )
                    )

        self.server = _QuietServer((host, port), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def origin(self) -> str:
        return f"http://{self.host}:{self.port}"

    def url(self, path: str) -> str:
        return self.origin + path

    def paths(self) -> list[str]:
        with self._lock:
            return [h.path for h in self.hits]

    def snapshot(self) -> list[Hit]:
        with self._lock:
            return list(self.hits)

    def start(self) -> TestSite:
        self._thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def __enter__(self) -> TestSite:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


HTML = (("Content-Type", "text/html; charset=utf-8"),)
PNG = (("Content-Type", "image/png"),)
CSS = (("Content-Type", "text/css"),)
TEXT = (("Content-Type", "text/plain"),)
PNG_BYTES = b"\x89PNG\r\n\x1a\n" + bytes(range(64))


def chunked(body: bytes, size: int = 100) -> bytes:
    """``body`` in HTTP/1.1 chunked framing (RFC 9112 §7.1), ``size`` bytes a chunk."""
    out = b"".join(b"%x\r\n%s\r\n" % (len(body[i:i + size]), body[i:i + size])
                   for i in range(0, len(body), size))
    return out + b"0\r\n\r\n"


def html(body: str) -> bytes:
    return f"<!doctype html><html><head><title>t</title></head><body>{body}</body></html>".encode()


def static_site(
    n_pages: int = 25, crawl_delay: float | None = 0.05, other: str | None = None
) -> dict[str, Page]:
    """A small site: robots.txt (``Disallow: /private/``, Crawl-delay), an index linking
    to ``/p/1..5.html``, page N linking to N+5 (so hop paths grow: ``LLLLL``), a style
    sheet with a background image, a logo, a redirect (``/old`` → ``/new.html``), a 404,
    a 500 and a robots-excluded page. ``other`` is an origin linked from page 10."""
    robots = "User-agent: *\nDisallow: /private/\n"
    if crawl_delay:
        robots += f"Crawl-delay: {crawl_delay}\n"
    pages: dict[str, Page] = {
        "/robots.txt": (200, TEXT, robots.encode()),
        "/style.css": (200, CSS, b"body { background: url(/img/bg.png) }"),
        "/img/logo.png": (200, PNG, PNG_BYTES),
        "/img/bg.png": (200, PNG, PNG_BYTES[::-1]),
        "/old": (301, (("Location", "/new.html"), *HTML), html("moved")),
        "/new.html": (200, HTML, html("new page")),
        "/error.html": (500, HTML, html("server error")),
        "/private/secret.html": (200, HTML, html("secret")),
    }
    head = '<link rel="stylesheet" href="/style.css"><img src="/img/logo.png">'
    first = "".join(f'<a href="/p/{i}.html">p{i}</a>' for i in range(1, 6))
    pages["/"] = (
        200,
        HTML,
        html(
            head + first + '<a href="/old">old</a><a href="/missing.html">missing</a>'
            '<a href="/error.html">error</a><a href="/private/secret.html">secret</a>'
        ),
    )
    for i in range(1, n_pages + 1):
        links = head + '<a href="/">home</a>'
        if i + 5 <= n_pages:
            links += f'<a href="/p/{i + 5}.html">next</a>'
        if i == 10 and other:
            links += f'<a href="{other}/b/1.html">other site</a>'
        pages[f"/p/{i}.html"] = (200, HTML, html(links))
    return pages


def small_site(n_pages: int = 5) -> dict[str, Page]:
    """A second site: no robots.txt (404: allow all), index → ``/b/1..n.html``."""
    pages: dict[str, Page] = {
        "/": (200, HTML, html("".join(f'<a href="/b/{i}.html">b{i}</a>' for i in range(1, 6))))
    }
    for i in range(1, n_pages + 1):
        pages[f"/b/{i}.html"] = (200, HTML, html('<a href="/">home</a><img src="/img/x.png">'))
    pages["/img/x.png"] = (200, PNG, PNG_BYTES)
    return pages
