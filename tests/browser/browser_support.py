"""Helpers of the browser tests: Debian's Chromium driven by Playwright, ``webark serve``
run as a real subprocess, collections built with the ``webark`` CLI, and a log of every
request a page makes.

Chromium is Debian's ``/usr/bin/chromium`` (installed by ``WEBARK_BROWSER=1 bash
scripts/setup.sh``, which ``.ci/run`` does), never a ``playwright install`` download. The
python docs site is Debian's ``python3-doc`` (``WEBARK_DEMO_SITE=1``). Outside CI a missing
one skips the tests that need it, naming the command that installs it; under ``CI=true``
it fails them: CI installs both, so a missing one there is a broken set-up.
"""

from __future__ import annotations

import os
import re
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
from png_pixels import pixel_stats

from http_wait import WEBARK, webark_serve_process
from system_packages import in_ci, require  # noqa: F401  (re-exported for the tests)
from webark.crawl.browser.pool import CHROMIUM, QUIET_ARGS  # noqa: F401  (CHROMIUM re-exported)

#: Flags of the issue: no sandbox (root in a container), and the browser workers' quiet
#: flags (no GPU, nothing that makes the browser call home: component updates, sync,
#: background networking, QUIC).
CHROMIUM_ARGS = ["--no-sandbox", *QUIET_ARGS]
PYTHON_DOCS_DIRS = (Path("/usr/share/doc/python3/html"), Path("/usr/share/doc/python3.11/html"))
VIEWPORT = {"width": 1280, "height": 800}
#: the element the replay banner's script adds (src/webark/apps/replay/static/banner.js)
BANNER_HOST = "#__webark_banner_host"
#: where the replay app serves its own files (banner, client script)
APP_FILES = "/_webark/"
#: URL schemes that never reach the network (shown to page.on("request") all the same)
LOCAL_SCHEMES = ("data:", "blob:", "about:")


def python_docs_dir() -> Path:
    """Debian's python3-doc HTML tree (skip/fail as :func:`require` when missing)."""
    found = next((d for d in PYTHON_DOCS_DIRS if (d / "index.html").is_file()), None)
    require(found is not None, "python3-doc (/usr/share/doc/python3/html)",
            "WEBARK_DEMO_SITE=1 bash scripts/setup.sh")  # fmt: skip
    assert found is not None
    return found


def webark(*args: str | os.PathLike[str], timeout: float = 300) -> str:
    """Run the ``webark`` CLI of this checkout; its stdout. Fails the test on exit != 0."""
    res = subprocess.run([*WEBARK, *map(str, args)], capture_output=True, text=True,
                         timeout=timeout)  # fmt: skip
    if res.returncode != 0:
        pytest.fail(f"webark {' '.join(map(str, args))} exited {res.returncode}:\n{res.stderr}")
    return res.stdout


def make_collection(colls: Path, name: str, warcs: list[Path]) -> Path:
    """``webark collection init colls/name`` + ``add --link`` of ``warcs``; its path."""
    path = colls / name
    webark("collection", "init", path)
    webark("collection", "add", "--link", "--no-progress", path, *warcs)
    return path


@contextmanager
def webark_serve(colls: Path) -> Iterator[str]:
    """``webark serve colls --port 0`` as a subprocess on 127.0.0.1; yields its base URL
    (``http://127.0.0.1:PORT/``) once it answers; stopped with SIGTERM (then killed)."""
    try:
        with webark_serve_process(str(colls)) as (base, _proc):
            yield base
    except AssertionError as exc:
        pytest.fail(str(exc))


@contextmanager
def static_site(root: Path) -> Iterator[str]:
    """Serve the folder ``root`` on 127.0.0.1 (a free port) in a thread; yields the base
    URL ``http://127.0.0.1:PORT/``."""

    class Quiet(SimpleHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(Quiet, directory=str(root)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(10)


def origin(url: str) -> str:
    """``scheme://host:port`` of ``url``."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


@dataclass
class RequestLog:
    """Every request a browser context made, and the answers to them.

    ``requests`` holds (method, url) in order; ``escaped`` the URLs that went to another
    origin than the replay server (they are aborted by the route handler, so the live
    site is never contacted, and recorded here); ``statuses`` maps each answered URL to
    its HTTP status (the last answer when asked twice).
    """

    allowed_origin: str
    requests: list[tuple[str, str]] = field(default_factory=list)
    escaped: list[str] = field(default_factory=list)
    statuses: dict[str, int] = field(default_factory=dict)
    #: URL → the browser's error text, for requests to the replay server that got no
    #: answer at all (connection dropped, bad response); the page's own cancellations
    #: (net::ERR_ABORTED) are not counted
    broken: dict[str, str] = field(default_factory=dict)

    def network_requests(self) -> list[str]:
        return [u for _, u in self.requests if not u.startswith(LOCAL_SCHEMES)]

    def outside(self) -> list[str]:
        """Network requests to any origin other than the replay server's."""
        return [u for u in self.network_requests() if origin(u) != self.allowed_origin]

    def failed(self) -> dict[str, int]:
        """Answers with a status >= 400 (a 3xx is followed by the browser and its target
        has an answer of its own), and requests that got no answer (status 0)."""
        out = {u: s for u, s in self.statuses.items() if s >= 400}
        out.update((u, 0) for u in self.broken if u not in self.statuses)
        return out

    def not_archival(self, prefix: str) -> list[str]:
        """Network requests that are neither under the collection's replay ``prefix``
        (``http://host:port/coll/``) nor the app's own files (``/_webark/...``)."""
        own = self.allowed_origin + APP_FILES
        return [u for u in self.network_requests() if not u.startswith((prefix, own))]


_ARCHIVAL = re.compile(r"^(\d{0,14})([a-z]{2}_)?/(.+)$", re.S)


def original_url(replay_url: str, prefix: str) -> str | None:
    """The original URL in an archival URL ``{prefix}{timestamp}{modifier}/{url}``, or
    None when ``replay_url`` is not one."""
    if not replay_url.startswith(prefix):
        return None
    m = _ARCHIVAL.match(replay_url[len(prefix) :])
    return m.group(3) if m else None


def captured(prefix: str, url: str) -> bool:
    """Whether the collection at ``prefix`` has a capture of ``url`` (its CDX API)."""
    r = httpx.get(prefix + "cdx", params={"url": url, "limit": "1"}, timeout=30)
    assert r.status_code == 200, r.text
    return bool(r.text.strip())


def watch_requests(context: object, replay_base: str) -> RequestLog:
    """Record every request of the Playwright BrowserContext ``context`` (pages, frames,
    workers) and abort those that leave ``replay_base``'s origin."""
    log = RequestLog(origin(replay_base))

    def on_request(req: object) -> None:
        log.requests.append((req.method, req.url))  # type: ignore[attr-defined]

    def on_response(resp: object) -> None:
        log.statuses[resp.url] = resp.status  # type: ignore[attr-defined]

    def on_failed(req: object) -> None:
        url, error = req.url, req.failure or ""  # type: ignore[attr-defined]
        if origin(url) == log.allowed_origin and "ERR_ABORTED" not in error:
            log.broken[url] = error

    def route(route: object, request: object) -> None:
        url = request.url  # type: ignore[attr-defined]
        if url.startswith(LOCAL_SCHEMES) or origin(url) == log.allowed_origin:
            route.continue_()  # type: ignore[attr-defined]
        else:
            log.escaped.append(url)
            route.abort()  # type: ignore[attr-defined]

    context.on("request", on_request)  # type: ignore[attr-defined]
    context.on("response", on_response)  # type: ignore[attr-defined]
    context.on("requestfailed", on_failed)  # type: ignore[attr-defined]
    context.route("**/*", route)  # type: ignore[attr-defined]
    return log


def assert_banner_visible(page: Any, prefix: str) -> None:
    """The banner's host element is inside the viewport and on top of the page there (the
    element at its centre), its tab is painted (text on a background), and its data names
    a capture of this collection."""
    host = page.locator(BANNER_HOST)
    assert host.count() == 1 and host.is_visible()
    box = host.bounding_box()
    assert box and box["width"] > 100 and box["height"] > 10, box
    assert box["x"] >= 0 and box["x"] + box["width"] <= VIEWPORT["width"], box
    assert box["y"] >= 0 and box["y"] + box["height"] <= VIEWPORT["height"], box
    on_top = page.evaluate(
        "([x, y]) => document.elementFromPoint(x, y)?.id",
        [box["x"] + box["width"] / 2, box["y"] + box["height"] / 2],
    )
    assert on_top == BANNER_HOST[1:], on_top
    shot = pixel_stats(page.screenshot(clip=box))
    assert shot.colours > 10 and shot.luma_stddev > 10, shot
    data = page.evaluate("window.__webark_banner")
    assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC", data["date"]), data
    assert data["captures"].startswith((prefix, urlsplit(prefix).path)), data


def replay_in_full(browser: Any, base: str, prefix: str, timestamp: str, url: str) -> int:
    """Load the memento ``{prefix}{timestamp}/{url}`` in a fresh context that ignores the
    replay CSP (a URL the rewriting misses then shows up as a request to another host,
    aborted and counted); fail unless it loads, no request left the replay server and
    every request that failed asked for something not captured. Returns how many
    archive requests were answered (status < 400)."""
    context = browser.new_context(viewport=VIEWPORT, service_workers="block", bypass_csp=True)
    try:
        requests = watch_requests(context, base)
        page = context.new_page()
        resp = page.goto(f"{prefix}{timestamp}/{url}", wait_until="load")
        assert resp is not None and resp.status == 200, (url, resp and resp.status)
        page.wait_for_load_state("networkidle")
        assert requests.escaped == [] and requests.outside() == [], requests.outside()
        failed = requests.failed()
        for u in failed:
            orig = original_url(u, prefix)
            assert orig is not None and not captured(prefix, orig), (url, u, failed)
        return sum(1 for u, s in requests.statuses.items() if s < 400 and original_url(u, prefix))
    finally:
        context.close()


def wait_for_frame(page: Any, match: Callable[[Any], bool], seconds: float = 60) -> Any:
    """The first frame of the Playwright ``page`` for which ``match(frame)`` holds, polled
    every 250 ms until ``seconds`` (wall clock) have passed; fails the test naming the
    frames' URLs then."""
    deadline = time.monotonic() + seconds
    while True:
        found = next((f for f in page.frames if match(f)), None)
        if found is not None:
            return found
        if time.monotonic() > deadline:
            pytest.fail(f"no such frame among {[f.url for f in page.frames]}")
        page.wait_for_timeout(250)


#: in a frame: is its document served through a service worker (``controller`` set)?
CONTROLLED = "() => !!(navigator.serviceWorker && navigator.serviceWorker.controller)"


def reload_until_controlled(page: Any, frame_prefix: str, seconds: float = 60) -> Any:
    """Reload ``page`` until its frame whose URL starts with ``frame_prefix`` is controlled
    by the service worker of that scope; that frame (fails the test after ``seconds``).

    A worker that is ``active`` can still miss the reload's navigation of the frame (seen
    under load with ReplayWeb.page: the frame ``replay/?source=…`` is then the static
    server's directory listing, ui.js never runs in it and the viewer never shows a
    page), so the frame's own ``navigator.serviceWorker.controller`` is the condition."""
    deadline = time.monotonic() + seconds
    while True:
        page.reload()
        frame = wait_for_frame(page, lambda f: f.url.startswith(frame_prefix),
                               max(1.0, deadline - time.monotonic()))  # fmt: skip
        try:
            frame.wait_for_load_state("load")
            if frame.evaluate(CONTROLLED):
                return frame
        except Exception:  # the frame navigated or went while being read: reload
            pass
        if time.monotonic() > deadline:
            pytest.fail(f"{frame_prefix} never controlled by its service worker: {frame.url}")
