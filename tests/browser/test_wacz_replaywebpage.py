"""A WACZ made by ``webark wacz create`` opened in ReplayWeb.page (Webrecorder's viewer,
the npm package ``replaywebpage``: its own ui.js and service worker, which nobody here
wrote) in Debian's Chromium: the pages of the job are listed with their titles, and a
page replays from the package alone (the live site stopped, no request leaving the
viewer's origin)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, TypeVar

import pytest
from browser_support import VIEWPORT, reload_until_controlled, require, wait_for_frame

from http_wait import WEBARK
from sites import TestSite
from wacz_site import EXPECTED_PAGES, PAGES, crawl_site

T = TypeVar("T")

RWP_VERSION = "2.5.3"
RWP_DIR = (Path(__file__).resolve().parents[2] / ".cache" / f"replaywebpage-{RWP_VERSION}"
           / "package")  # fmt: skip
_RANGE = re.compile(r"bytes=(\d*)-(\d*)$")


class RangeHandler(SimpleHTTPRequestHandler):
    """Static files with single byte ranges (RFC 9110 §14): ReplayWeb.page reads a WACZ
    by ranges (the zip's central directory first, a suffix range)."""

    def log_message(self, format: str, *args: object) -> None:
        pass

    def send_head(self) -> Any:
        path = self.translate_path(self.path)
        m = _RANGE.match(self.headers.get("Range", ""))
        if m is None or not os.path.isfile(path) or not (m.group(1) or m.group(2)):
            return super().send_head()
        size = os.path.getsize(path)
        if m.group(1):
            start, end = int(m.group(1)), min(int(m.group(2) or size - 1), size - 1)
        else:
            start, end = max(0, size - int(m.group(2))), size - 1
        f = open(path, "rb")  # noqa: SIM115  (closed by the server after copyfile)
        f.seek(start)
        self.send_response(206)
        self.send_header("Content-Type", self.guess_type(path))
        self.send_header("Content-Range", f"bytes {start}-{end}/{size}")
        self.send_header("Content-Length", str(end - start + 1))
        self.send_header("Accept-Ranges", "bytes")
        self.end_headers()
        self._left = end - start + 1
        return f

    def copyfile(self, source: Any, outputfile: Any) -> None:
        left = getattr(self, "_left", None)
        if left is None:
            return super().copyfile(source, outputfile)
        while left > 0 and (chunk := source.read(min(left, 1 << 16))):
            outputfile.write(chunk)
            left -= len(chunk)


@pytest.fixture(scope="module")
def viewer(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """The job crawled from the live site (then stopped), packed, and served with
    ReplayWeb.page's files on another port: ``{"base", "site_url"}``."""
    require((RWP_DIR / "sw.js").is_file(), f"ReplayWeb.page {RWP_VERSION} ({RWP_DIR})",
            "WEBARK_BROWSER=1 bash scripts/setup.sh")  # fmt: skip
    root = tmp_path_factory.mktemp("rwp")
    with TestSite(PAGES) as site:
        res = crawl_site(site, root / "job")
        site_url = site.url("/")
    assert res.returncode == 0, res.stderr
    www = root / "www"
    (www / "replay").mkdir(parents=True)
    shutil.copy(RWP_DIR / "ui.js", www / "ui.js")
    shutil.copy(RWP_DIR / "sw.js", www / "replay" / "sw.js")
    res = subprocess.run([*WEBARK, "wacz", "create", str(root / "job"), "-o",
                          str(www / "site.wacz")], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(RangeHandler, directory=str(www)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield {"base": f"http://127.0.0.1:{server.server_address[1]}/", "site_url": site_url,
               "www": www}
    finally:
        server.shutdown()
        server.server_close()


def _open(browser: Any, viewer: dict[str, Any], name: str,
          url: str | None) -> tuple[Any, Any, list[str]]:  # fmt: skip
    attrs = f' url="{url}"' if url else ""
    (viewer["www"] / name).write_text(
        '<!doctype html><html><head><script src="./ui.js"></script></head><body>'
        f'<replay-web-page source="./site.wacz" replayBase="./replay/"{attrs} '
        'style="display:block;height:700px"></replay-web-page></body></html>')
    # ReplayWeb.page is a service worker: allowed here (the replay tests block them)
    ctx = browser.new_context(viewport=VIEWPORT, service_workers="allow")
    page = ctx.new_page()
    outside: list[str] = []
    page.on("request", lambda r: None if r.url.startswith((viewer["base"], "data:", "blob:"))
            else outside.append(r.url))  # fmt: skip
    page.goto(viewer["base"] + name)
    # the first visit installs the viewer's service worker (and may show its frame
    # before the worker controls it); from the second on, the worker serves the viewer:
    # reloaded until the viewer's app frame is controlled by it (browser_support)
    page.wait_for_function(
        "async () => { const r = await navigator.serviceWorker.getRegistration('./replay/');"
        " return !!(r && r.active); }", timeout=60000)
    reload_until_controlled(page, viewer["base"] + "replay/?")
    return ctx, page, outside


#: the text of a document with the text of its (open) shadow roots, white space
#: collapsed; run in the page's own world (Playwright's locators do not see into the
#: documents ReplayWeb.page's service worker serves)
DEEP_TEXT = """() => {
  const parts = [];
  const walk = (n) => {
    if (n.nodeType === Node.TEXT_NODE) parts.push(n.textContent);
    if (n.shadowRoot) walk(n.shadowRoot);
    for (const c of n.childNodes) walk(c);
  };
  walk(document);
  return parts.join(" ").replace(/\\s+/g, " ");
}"""


#: what the static test server answers for ``replay/?…`` when ReplayWeb.page's service
#: worker did not serve the navigation (its viewer never runs there)
NOT_SERVED_BY_WORKER = "Directory listing for /replay/"


def poll_viewer(page: Any, base: str, read: Callable[[Any], T], done: Callable[[T], bool],
                seconds: float = 60) -> T:
    """``read(app frame)`` every 500 ms until ``done`` of it, or ``seconds`` have passed
    (the last value is returned: the caller's assertions say what was missing).

    A frame the worker let go to the network after ``reload_until_controlled`` (seen
    under load: the static server's listing came back and the viewer never ran) is
    reloaded until controlled again, within the same deadline."""
    deadline = time.monotonic() + seconds
    while True:
        app = wait_for_frame(page, lambda f: f.url.startswith(base + "replay/?"))
        value = read(app)
        if done(value) or time.monotonic() > deadline:
            return value
        try:
            listing = NOT_SERVED_BY_WORKER in app.evaluate("() => document.title")
        except Exception:  # the frame navigated while being read
            listing = False
        if listing:
            reload_until_controlled(page, base + "replay/?",
                                    max(1.0, deadline - time.monotonic()))  # fmt: skip
        else:
            page.wait_for_timeout(500)


def _deep_text(app: Any) -> str:
    try:
        return str(app.evaluate(DEEP_TEXT))
    except Exception:  # the frame navigated while being read: read it again
        return ""


def _text_of_viewer(page: Any, base: str, want: list[str], seconds: float = 60) -> str:
    """The deep text of the viewer's app frame once it holds every string of ``want``."""
    text = poll_viewer(page, base, _deep_text, lambda t: all(w in t for w in want), seconds)
    if not all(w in text for w in want):
        pytest.fail(f"the viewer never showed {want}: {text[:2000]}")
    return text


def test_pages_listed_with_their_titles(browser: Any, viewer: dict[str, Any]) -> None:
    ctx, page, outside = _open(browser, viewer, "list.html", None)
    try:
        titles = [t for t, _seed, _depth in EXPECTED_PAGES.values()]
        urls = [viewer["site_url"] + p.lstrip("/") for p in EXPECTED_PAGES]
        text = _text_of_viewer(page, viewer["base"], [*titles, *urls, f"{len(titles)} pages"])
        assert viewer["site_url"] + "frame.html" not in text  # embedded, not a page
        assert outside == []
    finally:
        ctx.close()


def test_a_page_replays_from_the_package(browser: Any, viewer: dict[str, Any]) -> None:
    target = viewer["site_url"] + "a.html"
    ctx, page, outside = _open(browser, viewer, "page.html", target)
    try:
        # the archived page, in the viewer's replay frame (…/replay/w/…/mp_/http://…/a.html)
        def is_archived(f: Any) -> bool:
            return "/w/" in f.url and f.url.endswith("/a.html")

        poll_viewer(page, viewer["base"], lambda _app: any(map(is_archived, page.frames)),
                    bool)  # fmt: skip
        archived = wait_for_frame(page, is_archived)
        archived.wait_for_load_state("load")
        assert archived.title() == "Page A"
        # the link to C and the archived style sheet (body color #123) came with it
        assert archived.locator("a[href$='c.html']").count() == 1
        color = archived.evaluate("getComputedStyle(document.body).color")
        assert color == "rgb(17, 34, 51)"
        assert outside == []
    finally:
        ctx.close()
