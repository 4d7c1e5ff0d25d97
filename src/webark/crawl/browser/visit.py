"""One browser visit of a page: what goes in (:class:`PrefetchedDocument`), what comes
out (:class:`PageVisit`), and the steps in between (:func:`visit_page`).

The steps, in the order of Brozzler's ``browse_page`` and Browsertrix-crawler's page
loop: a fresh BrowserContext (no cookies, cache or service workers shared with other
pages); per-page request headers (``extra_headers``, e.g. a ``Warcprox-Meta``, as
Brozzler sends with ``Network.setExtraHTTPHeaders``); one route that serves the
prefetched document, if any, and keeps the page from navigating away after its first
navigation (:func:`_keep_page`); navigation until ``load``
(bounded by ``load_timeout``); the viewport screenshot and its thumbnail (taken at
load, before behaviors, as Brozzler and Browsertrix do: the page as a visitor first
sees it); the behaviors (webark's expand, then ``browsertrix-behaviors`` ``run()`` in
every frame, then expand again for what scrolling brought, all within
``behavior_timeout``); a wait for the network to go quiet (at most ``idle_timeout``);
then the links of every frame and the ``window.open`` targets.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import time
from collections.abc import Awaitable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar
from urllib.parse import urldefrag

from webark.warc.payload import decode_content

from .behaviors import BehaviorOptions

__all__ = ["PageVisit", "PrefetchedDocument", "RequestCounts", "Viewport", "visit_page"]

T = TypeVar("T")

#: Response header fields not passed on when a prefetched document is served to the
#: browser: the body is given decoded and whole (hop-by-hop fields, RFC 9110 §7.6.1,
#: and the framing and coding of the original transfer).
_DROPPED = frozenset({"content-length", "content-encoding", "transfer-encoding", "connection",
                      "keep-alive", "proxy-connection", "te", "trailer", "upgrade"})  # fmt: skip
#: Upper bound of a prefetched document's decoded body (bytes).
MAX_DOCUMENT_BYTES = 64 * 1024 * 1024
#: Bound of each step after the page loaded (outlinks of a frame, title, screenshot), s.
STEP_TIMEOUT = 10.0
#: The network counts as quiet when no request has been in flight this long, s.
QUIET = 0.5


@dataclass(frozen=True)
class Viewport:
    """Browser window size in CSS pixels (device scale factor 1)."""

    width: int = 1366
    height: int = 768


@dataclass(frozen=True)
class PrefetchedDocument:
    """A page's main document as the bulk crawler already fetched it, served to the
    browser for the page's main-frame navigation (Playwright ``route.fulfill``) so the
    site is not asked twice (Heritrix 3.4's ExtractorChrome loaded the fetched page into
    the browser the same way); every subresource still goes through the proxy.

    Attributes:
        status: the HTTP status code.
        headers: the response header fields as received, in order, repeats kept.
        body: the entity body as received with transfer coding removed and
            ``Content-Encoding`` kept (what a WARC record's payload digest covers);
            it is decoded (gzip, deflate, br) before the browser gets it, and the
            ``Content-Encoding``/``Content-Length``/hop-by-hop fields are dropped.
    """

    status: int
    headers: Sequence[tuple[str, str]]
    body: bytes

    def fulfil_args(self) -> dict[str, Any]:
        """Keyword arguments of Playwright's ``Route.fulfill``: status, headers (repeated
        fields joined: ``Set-Cookie`` by newline, as Playwright expects, others by
        comma), and the decoded body.

        Raises:
            ValueError: the body is not valid for its ``Content-Encoding``, or decodes
                to more than :data:`MAX_DOCUMENT_BYTES`.
        """
        coding = ", ".join(v for n, v in self.headers if n.lower() == "content-encoding")
        body = decode_content(self.body, coding or None, limit=MAX_DOCUMENT_BYTES)
        merged: dict[str, str] = {}
        for name, value in self.headers:
            key = name.lower()
            if key in _DROPPED:
                continue
            sep = "\n" if key == "set-cookie" else ", "
            merged[key] = merged[key] + sep + value if key in merged else value
        return {"status": self.status, "headers": merged, "body": body}


@dataclass(frozen=True)
class RequestCounts:
    """The network requests (``http:``/``https:``) a page made, main document included.

    Attributes:
        total: requests the page made.
        fulfilled: answered from the :class:`PrefetchedDocument` (0 or 1).
        proxied: answered over the network, i.e. by the archiving proxy.
        failed: got no answer (refused, cut, aborted by the page, timed out).
    A request still in flight when the visit ended is in ``total`` only.
    """

    total: int = 0
    fulfilled: int = 0
    proxied: int = 0
    failed: int = 0


@dataclass(frozen=True)
class PageVisit:
    """What a browser visit of one page found.

    Attributes:
        url: the URL asked for.
        final_url: the main frame's URL at the end (after redirects, history changes).
        status: HTTP status of the main document's last response; None when unknown
            (no response, e.g. a navigation that failed or timed out before one).
        title: the document title ("" when none or unknown).
        outlinks: absolute ``http(s)`` URLs of ``a[href]`` and ``area[href]`` in all
            frames (iframes included), read after the behaviors ran, then the targets
            of main-frame navigations that were stopped (after the first navigation
            the page is kept where it is: a link clicked by autoclick, a script
            setting ``location``); fragments removed, each once, in document order
            (main frame first).
        window_open: absolute URLs the page passed to ``window.open`` (no popup was
            opened), each once.
        requests: the page's requests (:class:`RequestCounts`).
        screenshot_png: PNG of the viewport at load (viewport size), or None when it
            could not be taken (see ``errors``) or the main document got no response.
        thumbnail_jpeg: JPEG of the same view scaled to the pool's thumbnail width, or
            None.
        elapsed: wall-clock seconds of the whole visit.
        behavior_finished: False when ``behavior_timeout`` stopped the behaviors (or the
            page never loaded, so they did not run).
        errors: what went wrong, one line each: navigation failures and timeouts,
            uncaught page errors (``pageerror: ...``), a crashed tab, a step that timed
            out. A failed page is a result, not an exception.
    """

    url: str
    final_url: str
    status: int | None
    title: str
    outlinks: tuple[str, ...]
    window_open: tuple[str, ...]
    requests: RequestCounts
    screenshot_png: bytes | None
    thumbnail_jpeg: bytes | None
    elapsed: float
    behavior_finished: bool
    errors: tuple[str, ...] = field(default=())


def _network(url: str) -> bool:
    return url.startswith(("http:", "https:"))


class _Traffic:
    """Counts a context's requests and knows when the network has gone quiet."""

    def __init__(self) -> None:
        self.total = self.fulfilled = self.proxied = self.failed = 0
        self.in_flight: set[object] = set()
        self.served: set[object] = set()  # requests answered by route.fulfill
        self.changed = time.monotonic()

    def attach(self, context: Any) -> None:
        context.on("request", self._request)
        context.on("requestfinished", self._finished)
        context.on("requestfailed", self._failed)

    def _request(self, req: Any) -> None:
        if _network(req.url):
            self.total += 1
            self.in_flight.add(req)
            self.changed = time.monotonic()

    def _done(self, req: Any) -> bool:
        if req in self.in_flight:
            self.in_flight.discard(req)
            self.changed = time.monotonic()
            return True
        return False

    def _finished(self, req: Any) -> None:
        if self._done(req) and req not in self.served:
            self.proxied += 1

    def _failed(self, req: Any) -> None:
        if self._done(req):
            self.failed += 1

    def counts(self) -> RequestCounts:
        return RequestCounts(self.total, self.fulfilled, self.proxied, self.failed)

    async def quiet(self, limit: float) -> None:
        """Return once no request has been in flight for :data:`QUIET` seconds, or
        after ``limit`` seconds."""
        end = time.monotonic() + max(0.0, limit)
        while time.monotonic() < end:
            if not self.in_flight and time.monotonic() - self.changed >= QUIET:
                return
            await asyncio.sleep(0.05)


def _unique(urls: Sequence[str]) -> tuple[str, ...]:
    seen: dict[str, None] = {}
    for u in urls:
        if _network(u):
            seen.setdefault(urldefrag(u)[0], None)
    return tuple(seen)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


async def _bounded(aw: Awaitable[T], timeout: float, what: str, errors: list[str]) -> T | None:
    """``await aw`` within ``timeout`` s; None (and a line in ``errors``) on a timeout
    or a Playwright error (the page or frame went away)."""
    from playwright.async_api import Error as PlaywrightError

    try:
        return await asyncio.wait_for(aw, max(timeout, 0.001))
    except TimeoutError:
        errors.append(f"{what}: timed out after {timeout:.1f} s")
    except PlaywrightError as exc:
        errors.append(f"{what}: {_first_line(exc)}")
    return None


@dataclass(frozen=True)
class VisitSettings:
    """The pool's fixed settings of each visit (see :class:`BrowserPool`)."""

    viewport: Viewport
    init_script: str
    behaviors: BehaviorOptions
    thumbnail_width: int
    idle_timeout: float
    user_agent: str | None


async def _screenshots(page: Any, s: VisitSettings,
                       errors: list[str]) -> tuple[bytes | None, bytes | None]:  # fmt: skip
    """The viewport PNG, and a JPEG scaled to ``s.thumbnail_width`` made by Chromium
    itself (DevTools ``Page.captureScreenshot`` with a scaled clip: no image library)."""
    png = await _bounded(page.screenshot(type="png", timeout=STEP_TIMEOUT * 1000),
                         STEP_TIMEOUT, "screenshot", errors)  # fmt: skip

    async def thumb() -> bytes:
        cdp = await page.context.new_cdp_session(page)
        try:
            w, h = s.viewport.width, s.viewport.height
            shot = await cdp.send("Page.captureScreenshot", {
                "format": "jpeg", "quality": 80,
                "clip": {"x": 0, "y": 0, "width": w, "height": h,
                         "scale": s.thumbnail_width / w}})  # fmt: skip
            return base64.b64decode(shot["data"])
        finally:
            with contextlib.suppress(Exception):
                await cdp.detach()

    jpeg = await _bounded(thumb(), STEP_TIMEOUT, "thumbnail", errors)
    return png, jpeg


async def _keep_page(page: Any, traffic: _Traffic, fulfil: dict[str, Any] | None,
                     left: list[str]) -> None:  # fmt: skip
    """Route the page's requests: its first main-frame navigation (the URL asked for)
    is answered from ``fulfil`` when given (:meth:`PrefetchedDocument.fulfil_args`),
    else sent on; after it the page stays: any later main-frame navigation to another
    document (a link autoclick clicked, a script setting ``location``, before or after
    load) is aborted and its URL added to ``left`` (an outlink: the crawl visits it as
    a page of its own). Redirects of the first navigation are followed (Playwright
    routes see only the first request of a redirect chain); same-document navigations
    (``#fragment``, ``history.pushState``) make no request. Every other request is sent
    on unchanged. Browsertrix-crawler also keeps behaviors from leaving the page.

    Playwright serves a routed page without its HTTP cache; each page has a fresh
    context anyway."""
    first = [True]

    async def route_request(route: Any, request: Any) -> None:
        if request.is_navigation_request() and request.frame == page.main_frame:
            if not first[0]:
                left.append(request.url)
                await route.abort("aborted")
                return
            first[0] = False
            if fulfil is not None:
                traffic.fulfilled += 1
                traffic.served.add(request)
                await route.fulfill(**fulfil)
                return
        await route.continue_()

    await page.route("**/*", route_request)


async def _behave(page: Any, s: VisitSettings, budget: float) -> bool:
    """Run the behaviors within ``budget`` seconds; True when they all finished."""
    opts = s.behaviors
    expand = f"self.__webark ? self.__webark.expand({opts.expand_rounds}, " \
             f"{int(opts.expand_pause * 1000)}) : 0"  # fmt: skip

    async def in_frames(js: str) -> None:
        await asyncio.gather(*(f.evaluate(js) for f in page.frames), return_exceptions=True)

    async def all_of_them() -> None:
        if opts.expand:
            await in_frames(expand)
        await in_frames("self.__bx_behaviors ? self.__bx_behaviors.run() : null")
        if opts.expand:
            await in_frames(expand)

    try:
        await asyncio.wait_for(all_of_them(), max(budget, 0.001))
        return True
    except TimeoutError:
        return False


_LINKS = """() => self.__webark ? [self.__webark.links(), self.__webark.opened()]
    : [Array.from(document.querySelectorAll("a[href], area[href]"), a => String(a.href)), []]"""


async def _read(page: Any, errors: list[str]) -> tuple[list[str], list[str], str]:
    """The links and ``window.open`` targets of every frame, and the title."""
    links: list[str] = []
    opened: list[str] = []
    for frame in list(page.frames):
        got = await _bounded(frame.evaluate(_LINKS), STEP_TIMEOUT,
                             f"outlinks of {frame.url}", errors)  # fmt: skip
        if got:
            links.extend(got[0])
            opened.extend(got[1])
    title = await _bounded(page.title(), STEP_TIMEOUT, "title", errors)
    return links, opened, title or ""


async def visit_page(
    browser: Any,
    url: str,
    s: VisitSettings,
    *,
    extra_headers: Mapping[str, str],
    document: PrefetchedDocument | None,
    behavior_timeout: float,
    load_timeout: float,
) -> PageVisit:
    """Visit ``url`` in a new context of the Playwright ``browser`` (steps: module
    docstring). Timeouts are in seconds.

    Raises:
        playwright.async_api.Error: only when the browser itself is gone (the caller
            checks ``browser.is_connected()``); everything else is in the result.
        ValueError: ``document``'s body cannot be decoded (:meth:`PrefetchedDocument.fulfil_args`).
    """
    from playwright.async_api import Error as PlaywrightError

    start = time.monotonic()
    fulfil = document.fulfil_args() if document is not None else None
    errors: list[str] = []
    traffic = _Traffic()
    context = await browser.new_context(
        viewport={"width": s.viewport.width, "height": s.viewport.height},
        service_workers="block", user_agent=s.user_agent,
        extra_http_headers=dict(extra_headers) if extra_headers else None,
    )  # fmt: skip
    try:
        await context.add_init_script(script=s.init_script)
        traffic.attach(context)
        page = await context.new_page()
        main_status: list[int] = []
        page.on("pageerror", lambda exc: errors.append(f"pageerror: {_first_line(exc)}"))
        page.on("crash", lambda _page: errors.append("crash: the page's renderer crashed"))

        def on_response(resp: Any) -> None:
            req = resp.request
            if req.is_navigation_request() and req.frame == page.main_frame:
                main_status.append(resp.status)

        page.on("response", on_response)
        left: list[str] = []  # navigations stopped by _keep_page
        await _keep_page(page, traffic, fulfil, left)
        loaded = False
        try:
            await page.goto(url, wait_until="load", timeout=load_timeout * 1000)
            loaded = True
        except PlaywrightError as exc:
            if not browser.is_connected():
                raise
            kind = "timeout" if "Timeout" in type(exc).__name__ else "navigation"
            errors.append(f"{kind}: {_first_line(exc)}")
        png = jpeg = None
        finished = False
        links: tuple[list[str], list[str], str] = ([], [], "")
        # without a response Chromium shows an error page of its own: nothing to read
        if main_status:
            png, jpeg = await _screenshots(page, s, errors)
            if loaded:
                finished = await _behave(page, s, behavior_timeout)
                if not finished:
                    errors.append(f"behaviors: stopped at the time limit "
                                  f"({behavior_timeout:.1f} s)")  # fmt: skip
                await traffic.quiet(s.idle_timeout)
            links = await _read(page, errors)
        if not browser.is_connected():
            raise PlaywrightError("the browser is gone")
        return PageVisit(
            url=url, final_url=page.url, status=main_status[-1] if main_status else None,
            title=links[2], outlinks=_unique(links[0] + left),
            window_open=_unique(links[1]),
            requests=traffic.counts(), screenshot_png=png, thumbnail_jpeg=jpeg,
            elapsed=time.monotonic() - start, behavior_finished=finished,
            errors=tuple(errors),
        )  # fmt: skip
    finally:
        with contextlib.suppress(PlaywrightError):
            await context.close()
