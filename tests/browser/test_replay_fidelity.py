"""Replay fidelity (issue 17) in Debian's Chromium against a real ``webark serve``: what
was captured replays, nothing leaves the replay server.

One archived site (:mod:`fidelity_site`, a WARC written here) holds a page per class of
miss the issue lists: CSS that scripts put into the page, near misses by query string
or path, POST/PUT requests, and a page per way out of the archive. The browser
contexts bypass the pages' Content-Security-Policy: the CSP is the last line, and
these tests look at the lines before it; every request to another host is aborted
and counted by :func:`~browser_support.watch_requests`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any
from urllib.parse import urljoin

import httpx
import pytest
from browser_support import VIEWPORT, make_collection, original_url, watch_requests, webark_serve
from fidelity_site import (
    CSS_IMAGES,
    FUZZY,
    IN_PAGE,
    LANDING,
    LEAKS,
    SITE,
    TIMESTAMP,
    write_site,
)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    root = tmp_path_factory.mktemp("fidelity")
    make_collection(root / "colls", "fid", write_site(root / "warcs"))
    with webark_serve(root / "colls") as base:
        yield {"base": base, "prefix": base + "fid/"}


@pytest.fixture
def context(browser: Any) -> Iterator[Any]:
    """A context that ignores the replay CSP (so that a URL the rewriting misses shows
    up as a request to another host, aborted and counted, instead of being blocked
    silently by the browser)."""
    ctx = browser.new_context(viewport=VIEWPORT, service_workers="block", bypass_csp=True)
    try:
        yield ctx
    finally:
        ctx.close()


def _open(context: Any, site: dict[str, str], path: str) -> tuple[Any, Any]:
    requests = watch_requests(context, site["base"])
    page = context.new_page()
    resp = page.goto(f"{site['prefix']}{TIMESTAMP}/{SITE}{path}", wait_until="load")
    assert resp is not None and resp.status == 200, resp and resp.status
    return page, requests


def _answered(requests: Any, prefix: str) -> dict[str, int]:
    """Original URL → status of the archive's answer (the last one: redirects followed)."""
    out: dict[str, int] = {}
    for url, status in requests.statuses.items():
        orig = original_url(url, prefix)
        if orig is not None:
            out[orig] = status
    return out


def _stayed_in_archive(requests: Any, prefix: str) -> None:
    assert requests.escaped == [], requests.escaped
    assert requests.outside() == [] and requests.not_archival(prefix) == [], (
        requests.not_archival(prefix))


def test_css_added_by_scripts_loads_from_the_archive(context: Any, site: dict[str, str]) -> None:
    page, requests = _open(context, site, "css.html")
    page.wait_for_function("window.__done === true", timeout=15000)
    page.wait_for_load_state("networkidle")
    answered = _answered(requests, site["prefix"])
    missing = {way: url for way, url in CSS_IMAGES.items() if answered.get(url) != 200}
    assert missing == {}, (missing, requests.network_requests())
    _stayed_in_archive(requests, site["prefix"])


def test_near_misses_are_answered_by_fuzzy_rules(context: Any, site: dict[str, str]) -> None:
    page, requests = _open(context, site, "fuzzy.html")
    page.wait_for_load_state("networkidle")
    colour = "rgb(0, 128, 0)"
    assert page.eval_on_selector("#lp", "e => getComputedStyle(e).color") == colour  # load.php
    assert page.eval_on_selector("#st", "e => getComputedStyle(e).color") == colour  # style.css
    assert page.evaluate("window.__app") == 1  # app.js?v=9 from app.js
    titles = sorted(f.title() for f in page.frames[1:])
    assert titles == ["docs/index.html", "section/"], titles
    sizes = page.eval_on_selector_all("img", "es => es.map(e => e.naturalWidth)")
    assert sizes == [1, 1, 1, 1], sizes
    failed = {u: s for u, s in requests.statuses.items() if s >= 400}
    assert failed == {}, failed
    _stayed_in_archive(requests, site["prefix"])


@pytest.mark.parametrize(("asked", "captured", "ctype", "rule"), FUZZY)
def test_fuzzy_match_names_its_rule(site: dict[str, str], asked: str, captured: str,
                                    ctype: str, rule: str) -> None:  # fmt: skip
    r = httpx.get(f"{site['prefix']}{TIMESTAMP}/{SITE}{asked}", follow_redirects=False)
    assert r.status_code in (200, 302), r.text
    assert r.headers["x-webark-fuzzy-match"] == rule
    if r.status_code == 302:
        r = httpx.get(urljoin(site["base"], r.headers["location"]))
    assert r.status_code == 200
    assert r.headers["content-type"].startswith(ctype)
    assert f"<{SITE}{captured}>" in r.headers["link"]  # rel="original": what was served


def test_post_and_put_requests_replay(context: Any, site: dict[str, str]) -> None:
    page, requests = _open(context, site, "post.html")
    page.wait_for_function("window.__done === true", timeout=15000)
    texts = {i: page.inner_text(f"#{i}") for i in ("json", "form", "put")}
    assert texts == {"json": "3 captures of warc, page 2", "form": "form: web archive (en)",
                     "put": "put: 4 bytes"}, texts  # fmt: skip
    methods = sorted(m for m, u in requests.requests if "/api/" in u)
    assert methods == ["POST", "POST", "PUT"], requests.requests
    _stayed_in_archive(requests, site["prefix"])


def test_form_post_replays(context: Any, site: dict[str, str]) -> None:
    page, requests = _open(context, site, "form.html")
    with page.expect_navigation(wait_until="load") as nav:
        page.click("#go")
    assert nav.value is not None and nav.value.status == 200
    assert page.title() == "submitted"
    assert page.url.startswith(site["prefix"]) and page.url.endswith(SITE + "submit")
    _stayed_in_archive(requests, site["prefix"])


@pytest.mark.parametrize("leak", sorted(LEAKS))
def test_scripts_cannot_navigate_out_of_the_archive(context: Any, site: dict[str, str],
                                                    leak: str) -> None:  # fmt: skip
    requests = watch_requests(context, site["base"])
    page = context.new_page()
    # the archive URL of the landing page (a form's GET adds an empty query)
    landing = re.compile(re.escape(f"{site['prefix']}{TIMESTAMP}") + r"[a-z_]*/"
                         + re.escape(LANDING) + r"\??$")  # fmt: skip
    opens_window = leak in ("window-open", "window-open-blank", "target-blank",
                            "form-target-blank")  # fmt: skip
    if opens_window:
        with context.expect_page(timeout=10000) as popup:
            page.goto(f"{site['prefix']}{TIMESTAMP}/{SITE}leak/{leak}.html")
        target = popup.value
    else:
        page.goto(f"{site['prefix']}{TIMESTAMP}/{SITE}leak/{leak}.html")
        target = page
    target.wait_for_url(landing, timeout=10000)
    target.wait_for_load_state("load")
    assert target.title() == "landing", (target.url, requests.escaped)
    _stayed_in_archive(requests, site["prefix"])


def test_websocket_is_refused_inside_the_archive(context: Any, site: dict[str, str]) -> None:
    requests = watch_requests(context, site["base"])
    page = context.new_page()
    sockets: list[str] = []
    page.on("websocket", lambda ws: sockets.append(ws.url))
    page.goto(f"{site['prefix']}{TIMESTAMP}/{SITE}leak/websocket.html")
    page.wait_for_function("document.title.startsWith('closed')", timeout=10000)
    assert page.title() == "closed 1006"  # the replay server refused the handshake
    ws_origin = site["base"].replace("http://", "ws://")
    assert sockets == [f"{ws_origin}fid/{TIMESTAMP}/ws://live.fidelity.test/socket"], sockets
    _stayed_in_archive(requests, site["prefix"])


@pytest.mark.parametrize(("leak", "title"), [("document-domain", "www.fidelity.test"),
                                             ("service-worker", "refused")])
def test_page_apis_that_name_the_live_site(context: Any, site: dict[str, str], leak: str,
                                          title: str) -> None:  # fmt: skip
    assert leak in IN_PAGE
    page, requests = _open(context, site, f"leak/{leak}.html")
    page.wait_for_function(f"document.title !== {leak!r}", timeout=10000)
    assert page.title() == title
    _stayed_in_archive(requests, site["prefix"])
