"""The browser workers (``webark.crawl.browser.BrowserPool``) against the scripted test
site (tests/js_site.py), through a real ``webark proxy`` writing a job folder: what a
visit returns (outlinks made by script, in frames, ``window.open`` targets, screenshots),
what the proxy archived (scroll batches, expanded content, CSS images), the prefetched
document, the pool bound, the load timeout, and that nothing left the machine."""

from __future__ import annotations

import asyncio
import gzip
import json
import os
import signal
import socket
import ssl
import struct
import subprocess
import time
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import trustme
from browser_support import CHROMIUM
from png_pixels import pixel_stats

from http_wait import WEBARK, proxy_process
from js_site import BATCHES, JS_PAGES, item_path, items_handler, js_pages, site_urls
from sites import HTML, Hit, Page, TestSite
from system_packages import require
from webark.core.errors import BrowserUnavailableError
from webark.crawl.browser import (
    BehaviorOptions,
    BrowserClosedError,
    BrowserPool,
    PageVisit,
    PrefetchedDocument,
    Viewport,
    behaviors_path,
)
from webark.crawl.browser.procs import ProcessUsage
from webark.warc.reader import ArchiveReader

SETUP = "WEBARK_BROWSER=1 bash scripts/setup.sh"
SIZE = 2
#: Pages the bound test opens at once (more than SIZE); each takes SLOW s to answer.
SLOW_PAGES = tuple(f"/slow/{i}.html" for i in range(5))
SLOW = 0.6
HANG = 8.0  # the hanging page's image answers after this many seconds
LOAD_TIMEOUT = 1.5


def require_browser() -> None:
    """Skip (outside CI) or fail (in CI) without Chromium, Playwright or the behaviors."""
    require(CHROMIUM.exists(), f"Chromium ({CHROMIUM})", SETUP)
    try:
        import playwright.async_api  # noqa: F401
    except ImportError:
        require(False, "Playwright (Python package)", SETUP)
    try:
        behaviors_path()
    except BrowserUnavailableError as exc:
        require(False, str(exc), SETUP)


def handler(path: str, headers: Mapping[str, str]) -> Page | None:
    """The site's batches, plus pages of this test: slow ones, a page whose image
    hangs, and a page with a gzip body."""
    if path.startswith("/slow/"):
        time.sleep(SLOW)
        return (200, HTML, b"<!doctype html><title>slow</title><p>slow</p>")
    if path == "/hang.png":
        time.sleep(HANG)
        return (404, HTML, b"late")
    return items_handler(path, headers)


HANG_PAGE = (b'<!doctype html><title>hangs</title><a href="/js-page/1.html">a</a>'
             b'<img src="/hang.png">')
EXTRA = {
    "/hang.html": (200, HTML, HANG_PAGE),
    # leaves at once when loaded: a guard set up after `load` was seen came too late
    "/leaves.html": (200, HTML, b"<!doctype html><title>leaves</title><script>"
                     b"addEventListener('load', () => "
                     b"{ location.href = '/js-' + 'page/3.html'; });</script>"),
    "/moved": (301, (("Location", "/js-page/2.html"), *HTML), b"moved"),
    "/throws.html": (200, HTML, b"<!doctype html><title>throws</title>"
                     b"<script>throw new Error('boom ' + 6 * 7)</script>"
                     b'<img src="http://www.example.com/outside.png">'),
}


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then closed)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Run:
    origin: str
    visits: dict[str, PageVisit]
    hits: dict[str, list[Hit]]  # access log after each step
    lines: list[str]  # crawl.log
    responses: Counter[str]  # response records by target URI, all WARCs
    prefixed: dict[str, list[str]]  # WARC prefix -> target URIs of responses, revisits
    peak: int
    hang_elapsed: float  # seconds of the hanging page's visit, as the caller saw it
    other_origin: str  # the site on 127.0.0.2 that /cross.html frames


def _wait_for_log(log: Path, urls: set[str], wait: float = 15.0) -> list[str]:
    """crawl.log lines once every URL in ``urls`` has one (the proxy archives after the
    browser had its response)."""
    end = time.monotonic() + wait
    while True:
        lines = log.read_text().splitlines() if log.exists() else []
        if urls <= {ln.split()[3] for ln in lines} or time.monotonic() > end:
            return lines
        time.sleep(0.1)


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Run]:
    require_browser()
    job = tmp_path_factory.mktemp("browser") / "job"
    site = TestSite({**js_pages(), **EXTRA}, handler=handler)
    # another site (127.0.0.2: another origin and site, so Chromium's site isolation
    # puts its frame in a renderer of its own) framed by /cross.html
    other = TestSite({"/frame.html": js_pages()["/frame.html"]}, host="127.0.0.2")
    site.pages["/cross.html"] = (200, HTML, b"<!doctype html><title>cross</title>"
                                 b'<iframe src="http://127.0.0.2:%d/frame.html"></iframe>'
                                 % other.port)  # fmt: skip
    visits: dict[str, PageVisit] = {}
    hits: dict[str, list[Hit]] = {}
    peak = 0
    hang_elapsed: list[float] = []

    async def main(port: int) -> None:
        nonlocal peak
        async with BrowserPool(f"http://127.0.0.1:{port}", size=SIZE) as pool:

            async def go(path: str, **kw: object) -> PageVisit:
                args: dict[str, object] = {"behavior_timeout": 30, "load_timeout": 15, **kw}
                return await pool.visit(site.url(path), **args)  # type: ignore[arg-type]

            visits["/"] = await go("/")
            visits["/feed.html"] = await go("/feed.html", behavior_timeout=60)
            hits["before-prefetch"] = site.snapshot()
            _, headers, body = js_pages()["/"]
            coded = [*headers, ("Content-Encoding", "gzip"), ("Content-Length", "1")]
            doc = PrefetchedDocument(200, coded, gzip.compress(body))
            meta = {"Warcprox-Meta": json.dumps({"warc-prefix": "prefetched"})}
            visits["prefetched"] = await go("/", document=doc, extra_headers=meta)
            hits["after-prefetch"] = site.snapshot()
            started = time.monotonic()
            visits["/hang.html"] = await go("/hang.html", load_timeout=LOAD_TIMEOUT)
            hang_elapsed.append(time.monotonic() - started)
            visits["/moved"] = await go("/moved")
            visits["/throws.html"] = await go("/throws.html")
            visits["/leaves.html"] = await go("/leaves.html")
            visits["/cross.html"] = await go("/cross.html")
            visits["refused"] = await pool.visit(f"http://127.0.0.1:{closed_port()}/")
            visits["unsafe"] = await pool.visit("http://127.0.0.1:9/")  # discard: blocked
            slow = await asyncio.gather(*(go(p, behavior_timeout=5) for p in SLOW_PAGES))
            visits.update(zip(SLOW_PAGES, slow, strict=True))
            peak = pool.peak_open_pages
            assert pool.open_pages == 0

    with site, other, proxy_process("--job", str(job)) as (port, _):
        asyncio.run(main(port))
        other_origin = other.origin
        urls = site_urls(site.origin)
        lines = _wait_for_log(job / "logs" / "crawl.log",
                              {site.origin + "/api/items?page=4", site.url("/img/expanded.png")})
        hits["end"] = site.snapshot()
    responses: Counter[str] = Counter()
    prefixed: dict[str, list[str]] = {}
    for warc in sorted((job / "warcs").iterdir()):
        assert not warc.name.endswith(".open"), warc
        for rec in ArchiveReader(str(warc)):
            if rec.type == "response":
                responses[rec.target_uri] += 1
            if rec.type in ("response", "revisit"):  # the second visit's are revisits
                prefixed.setdefault(warc.name.split("-")[0], []).append(rec.target_uri)
    assert urls.all
    yield Run(site.origin, visits, hits, lines, responses, prefixed, peak, hang_elapsed[0],
              other_origin)


def test_outlinks_hold_every_link_made_by_script_in_all_frames(run: Run) -> None:
    urls = site_urls(run.origin)
    index, feed = run.visits["/"], run.visits["/feed.html"]
    assert index.status == 200 and index.title == "js site" and index.errors == ()
    assert index.behavior_finished and feed.behavior_finished
    o = run.origin
    assert set(index.outlinks) == {*(o + p for p in JS_PAGES), o + "/feed.html",
                                   o + "/in-frame.html",  # the iframe's script-made link
                                   o + "/expanded/target.html",  # inside <details>
                                   o + "/panel/target.html"}  # behind aria-expanded  # fmt: skip
    assert index.window_open == (o + "/popup.html",)
    # every batch of the infinite list was loaded by scrolling: all its item links
    assert set(feed.outlinks) == {o + item_path(k) for k in range(1, BATCHES * 6 + 1)}
    found = {*index.outlinks, *index.window_open, *feed.outlinks}
    assert set(urls.js_links) <= found
    assert not set(urls.js_links) & set(urls.static)


def test_the_proxy_archived_what_scripts_and_behaviors_fetched(run: Run) -> None:
    o = run.origin
    for path in ("/api/more", "/img/expanded.png", "/api/panel", "/img/hero.png",
                 *(f"/api/items?page={n}" for n in range(1, BATCHES + 1))):  # fmt: skip
        assert run.responses[o + path] >= 1, path
        assert any(ln.split()[3] == o + path and ln.split()[1] == "200" for ln in run.lines), path
    # no fifth batch was asked for: the list said there was none
    assert o + f"/api/items?page={BATCHES + 1}" not in run.responses


def test_outlinks_of_a_cross_site_frame(run: Run) -> None:
    cross = run.visits["/cross.html"]
    assert cross.outlinks == (run.other_origin + "/in-frame.html",), cross.errors


def test_every_request_went_through_the_proxy_and_none_left_loopback(run: Run) -> None:
    site_hits = Counter(run.origin + h.path for h in run.hits["end"])
    ours = Counter(ln.split()[3] for ln in run.lines if ln.split()[3].startswith(run.origin))
    assert ours == site_hits  # the site saw exactly what the proxy relayed
    for ln in run.lines:
        url = ln.split()[3]
        if urlsplit(url).hostname not in ("127.0.0.1", "127.0.0.2"):
            # anything else Chromium asked for was refused unresolved (-6): never left
            assert ln.split()[1] == "-6", ln
    # an embed on another host went to the proxy too, which did not even resolve it
    (outside,) = [ln for ln in run.lines if "www.example.com" in ln]
    assert outside.split()[1:4:2] == ["-6", "http://www.example.com/outside.png"], outside
    for name, v in run.visits.items():
        r = v.requests
        assert r.total >= r.proxied + r.fulfilled + r.failed, name
    index = run.visits["/"]
    assert index.requests.proxied == index.requests.total and index.requests.fulfilled == 0


def _jpeg_size(data: bytes) -> tuple[int, int]:
    """(width, height) from the first SOF marker of a JPEG (ITU T.81 §B.2.2)."""
    assert data[:2] == b"\xff\xd8", data[:4]
    pos = 2
    while pos < len(data):
        marker, length = data[pos + 1], struct.unpack(">H", data[pos + 2 : pos + 4])[0]
        if marker in (0xC0, 0xC1, 0xC2):
            height, width = struct.unpack(">HH", data[pos + 5 : pos + 9])
            return width, height
        pos += 2 + length
    raise AssertionError("no SOF marker")


def test_screenshot_is_a_viewport_png_and_the_thumbnail_a_small_jpeg(run: Run) -> None:
    v = run.visits["/"]
    assert v.screenshot_png is not None and v.thumbnail_jpeg is not None
    stats = pixel_stats(v.screenshot_png)
    vp = Viewport()
    assert (stats.width, stats.height) == (vp.width, vp.height) == (1366, 768)
    assert stats.colours > 20 and stats.dominant_share < 0.99, stats  # a page, not blank
    assert _jpeg_size(v.thumbnail_jpeg) == (320, round(320 * 768 / 1366))


def test_prefetched_document_is_not_fetched_again_but_its_subresources_are(run: Run) -> None:
    before = Counter(h.path for h in run.hits["before-prefetch"])
    after = Counter(h.path for h in run.hits["after-prefetch"])
    new = after - before
    assert new["/"] == 0  # the main document came from `document`
    assert new["/js/app.js"] == 1 and new["/frame.html"] == 1 and new["/api/more"] == 1
    v = run.visits["prefetched"]
    assert v.status == 200 and v.title == "js site"  # the gzip body was decoded
    assert v.requests.fulfilled == 1 and v.requests.proxied == v.requests.total - 1
    assert set(v.outlinks) == set(run.visits["/"].outlinks)
    # the per-page Warcprox-Meta went with every request of the page
    mine = run.prefixed["prefetched"]
    assert run.origin + "/js/app.js" in mine and run.origin + "/img/expanded.png" in mine
    assert run.origin + "/" not in mine


def test_pool_opens_at_most_size_pages(run: Run) -> None:
    assert run.peak == SIZE
    spans = sorted((h.start, h.end) for h in run.hits["end"] if h.path.startswith("/slow/"))
    assert len(spans) == len(SLOW_PAGES)
    most = max(sum(1 for s, e in spans if s <= t < e) for t, _ in spans)
    assert most == SIZE  # the server saw two pages at once, never three
    assert all(run.visits[p].status == 200 for p in SLOW_PAGES)


def test_a_hanging_page_is_cut_at_the_load_timeout(run: Run) -> None:
    v = run.visits["/hang.html"]
    assert LOAD_TIMEOUT <= run.hang_elapsed < HANG - 1, run.hang_elapsed
    assert v.status == 200 and not v.behavior_finished
    assert any(e.startswith("timeout:") for e in v.errors), v.errors
    assert v.outlinks == (run.origin + "/js-page/1.html",)  # the DOM that was there


def test_redirects_page_errors_and_failed_fetches_are_results(run: Run) -> None:
    moved = run.visits["/moved"]
    assert moved.status == 200 and moved.final_url == run.origin + "/js-page/2.html"
    assert moved.outlinks == (run.origin + "/",)
    throws = run.visits["/throws.html"]
    assert throws.status == 200 and throws.title == "throws"
    assert "pageerror: boom 42" in throws.errors, throws.errors
    leaves = run.visits["/leaves.html"]  # its script's navigation: stopped, an outlink
    assert leaves.final_url == run.origin + "/leaves.html" and leaves.status == 200
    assert leaves.outlinks == (run.origin + "/js-page/3.html",) and leaves.title == "leaves"
    refused = run.visits["refused"]  # the proxy answers 502 for a refused connection
    assert refused.status == 502 and refused.outlinks == () and refused.errors == ()
    unsafe = run.visits["unsafe"]  # Chromium itself refuses the port: no response at all
    assert unsafe.status is None and not unsafe.behavior_finished
    assert unsafe.screenshot_png is None and unsafe.thumbnail_jpeg is None
    assert unsafe.errors == ("navigation: Page.goto: net::ERR_UNSAFE_PORT at "
                             "http://127.0.0.1:9/",)  # fmt: skip


def test_behavior_time_limit_stops_the_scroll(tmp_path: Path) -> None:
    require_browser()
    site = TestSite(js_pages(), handler=items_handler)

    async def main(port: int) -> PageVisit:
        async with BrowserPool(f"http://127.0.0.1:{port}", size=1) as pool:
            return await pool.visit(site.url("/feed.html"), behavior_timeout=1.0,
                                    load_timeout=15)  # fmt: skip

    with site, proxy_process("--job", str(tmp_path / "job")) as (port, _):
        v = asyncio.run(main(port))
    assert not v.behavior_finished and v.elapsed < 10
    assert any(e.startswith("behaviors: stopped") for e in v.errors), v.errors
    assert len(v.outlinks) < BATCHES * 6  # not every batch was reached


def test_https_through_the_proxy_is_trusted_by_its_ca_pins_only(tmp_path: Path) -> None:
    """Chromium accepts the proxy's man-in-the-middle certificates through the SPKI
    pins of its CA file, and without them refuses (no blanket ignore of errors)."""
    require_browser()
    upstream = trustme.CA()  # the site's own CA, which nobody trusts (the proxy does
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)  # not verify upstream)
    upstream.issue_cert("127.0.0.1").configure_cert(ctx)
    site = TestSite(js_pages(), handler=items_handler)
    site.server.socket = ctx.wrap_socket(site.server.socket, server_side=True)
    ca_file = tmp_path / "ca" / "proxy-ca.pem"
    subprocess.run([*WEBARK, "proxy", "ca", "--ca-file", str(ca_file)], check=True,
                   capture_output=True)  # fmt: skip
    url = f"https://127.0.0.1:{site.port}/"

    async def main(port: int) -> tuple[PageVisit, PageVisit]:
        async with BrowserPool(f"127.0.0.1:{port}", ca_file=ca_file, size=1) as pool:
            trusted = await pool.visit(url, behavior_timeout=10, load_timeout=15)
        async with BrowserPool(f"127.0.0.1:{port}", size=1) as pool:
            refused = await pool.visit(url, behavior_timeout=10, load_timeout=15)
        return trusted, refused

    job = tmp_path / "job"
    with site, proxy_process("--job", str(job), "--ca-file", str(ca_file)) as (port, _):
        trusted, refused = asyncio.run(main(port))
    assert trusted.status == 200 and trusted.title == "js site", trusted.errors
    assert f"https://127.0.0.1:{site.port}/js-page/1.html" in trusted.outlinks
    assert refused.status is None and refused.outlinks == ()
    assert any("ERR_CERT_AUTHORITY_INVALID" in e for e in refused.errors), refused.errors


def test_a_browser_that_is_gone_is_an_error_not_a_result(tmp_path: Path) -> None:
    require_browser()
    site = TestSite(js_pages(), handler=items_handler)

    async def main(port: int) -> tuple[PageVisit, list[int], object]:
        async with BrowserPool(f"http://127.0.0.1:{port}", size=1) as pool:
            first = await pool.visit(site.url("/js-page/1.html"), load_timeout=15)
            pids = pool.process_ids()
            used = pool.usage()
            assert pool.browser_pid is not None
            os.kill(pool.browser_pid, signal.SIGKILL)  # the browser process we started
            with pytest.raises(BrowserClosedError):
                await pool.visit(site.url("/js-page/2.html"), load_timeout=15)
        with pytest.raises(BrowserClosedError, match="not running"):
            await pool.visit(site.url("/js-page/3.html"))
        return first, pids, used

    with site, proxy_process("--job", str(tmp_path / "job")) as (port, _):
        first, pids, used = asyncio.run(main(port))
    assert first.status == 200
    assert len(pids) >= 3  # browser, renderer, helpers
    # helper processes come and go between the two readings
    assert isinstance(used, ProcessUsage) and 3 <= used.processes <= len(pids) + 2
    assert used.cpu_seconds > 0 and used.rss_bytes > 50_000_000
    assert 10_000_000 < used.pss_bytes < used.rss_bytes  # shared pages counted once


CLICK_PAGE = b"""<!doctype html><title>click</title><a id="c" href="#more">Load more</a>
<div id="out"></div><script>
document.getElementById("c").addEventListener("click", function () {
  fetch("/api/" + "clicked").then(function (r) { return r.text(); })
    .then(function (html) { document.getElementById("out").innerHTML = html; });
});
</script>"""


def test_autoclick_is_opt_in_and_clicks_links_with_handlers(tmp_path: Path) -> None:
    """browsertrix-behaviors' autoclick (off by default, as in Browsertrix) clicks a
    same-origin link that has a click handler: what it loads is found only with it."""
    require_browser()
    pages = {**js_pages(), "/click.html": (200, HTML, CLICK_PAGE),
             "/api/clicked": (200, HTML, b'<a href="/clicked/target.html">t</a>')}  # fmt: skip
    site = TestSite(pages, handler=items_handler)

    async def main(port: int) -> list[PageVisit]:
        out = []
        for options in (BehaviorOptions(), BehaviorOptions(autoclick=True)):
            async with BrowserPool(f"127.0.0.1:{port}", size=1, behaviors=options) as pool:
                out.append(await pool.visit(site.url("/click.html"), load_timeout=15))
        return out

    with site, proxy_process("--job", str(tmp_path / "job")) as (port, _):
        default, clicking = asyncio.run(main(port))
    target = site.url("/clicked/target.html")
    assert default.outlinks == (site.url("/click.html"),)  # its own #more link
    assert clicking.outlinks == (site.url("/click.html"), target), clicking
    assert clicking.final_url == site.url("/click.html")  # went back after the click
