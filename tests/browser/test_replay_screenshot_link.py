"""The banner's screenshot link in Debian's Chromium (issue 13): on the replay of a
browser-crawled capture served by ``webark serve``, clicking "screenshot" in the banner
opens the capture's own ``urn:view:`` PNG, which loads (its natural size is the
screenshot's), and no request leaves the replay server."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from browser_support import BANNER_HOST, VIEWPORT, make_collection, watch_requests, webark_serve

from screenshot_site import PAGE, PLAIN, SHOT_DELAY, T1, T2, image_size, images, ts14
from screenshot_site import write_screenshot_warc as write_warc

#: The banner's shadow root is closed (pages cannot reach it); the test opens it to
#: find the link, the way a user finds it with their eyes.
OPEN_SHADOW = """(() => { const a = Element.prototype.attachShadow;
  Element.prototype.attachShadow = function (o) { return a.call(this, {...o, mode: "open"}); };
})();"""


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, browser: Any) -> Iterator[str]:
    root = tmp_path_factory.mktemp("shots")
    warc = write_warc(root / "warcs", browser)
    make_collection(root / "colls", "shots", [warc])
    with webark_serve(root / "colls") as base:
        yield base


@pytest.mark.parametrize(("when", "size"), [(T1, (640, 400)), (T2, (800, 500))])
def test_click_the_banner_s_screenshot_link(served: str, browser: Any, when: Any,
                                            size: tuple[int, int]) -> None:  # fmt: skip
    base = served
    want = images(browser).view_1 if when == T1 else images(browser).view_2
    assert image_size(want) == size
    context = browser.new_context(viewport=VIEWPORT, service_workers="block")
    try:
        context.add_init_script(OPEN_SHADOW)
        requests = watch_requests(context, base)
        page = context.new_page()
        resp = page.goto(f"{base}shots/{ts14(when)}/{PAGE}", wait_until="load")
        assert resp is not None and resp.status == 200
        link = page.locator(f"{BANNER_HOST} a.shot")
        assert link.count() == 1 and link.is_visible()
        href = link.get_attribute("href")
        # absolute: the client script would take a relative one for a page link (before)
        assert href == f"{base}shots/{ts14(when + SHOT_DELAY)}id_/urn:view:{PAGE}"
        # hovering shows the screenshot itself as a preview (fetched on hover only)
        assert page.locator(f"{BANNER_HOST} img.preview").count() == 0
        link.hover()
        preview = page.locator(f"{BANNER_HOST} img.preview")
        preview.wait_for(state="visible")
        page.wait_for_function(
            "() => { const h = document.getElementById('__webark_banner_host');"
            " const i = h.shadowRoot.querySelector('img.preview');"
            " return i && i.complete && i.naturalWidth > 0; }")  # fmt: skip
        got = preview.evaluate("i => [i.naturalWidth, i.naturalHeight]")
        assert tuple(got) == size
        with page.expect_navigation(wait_until="load") as nav:
            link.click()
        shown = nav.value
        assert shown is not None and shown.status == 200
        assert shown.headers["content-type"] == "image/png" and shown.body() == want
        img = page.locator("img")
        page.wait_for_function("document.images.length && document.images[0].complete")
        natural = img.first.evaluate("i => [i.naturalWidth, i.naturalHeight]")
        assert tuple(natural) == size
        assert requests.escaped == [] and requests.outside() == [], requests.outside()
        assert requests.failed() == {}, requests.failed()
    finally:
        context.close()


def test_no_link_without_a_screenshot(served: str, browser: Any) -> None:
    context = browser.new_context(viewport=VIEWPORT, service_workers="block")
    try:
        context.add_init_script(OPEN_SHADOW)
        requests = watch_requests(context, served)
        page = context.new_page()
        page.goto(f"{served}shots/{ts14(T1)}/{PLAIN}", wait_until="load")
        page.locator(f"{BANNER_HOST} a.all").wait_for()
        assert page.locator(f"{BANNER_HOST} a.shot").count() == 0
        assert requests.outside() == []
    finally:
        context.close()
