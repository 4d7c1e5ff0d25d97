"""The banner's "certificate" disclosure in Debian's Chromium: on the replay (``webark
serve``) of an https page crawled from a loopback server with the test's chain, opening
"certificate" shows the leaf's subject and SHA-256 fingerprint exactly; the http capture
of the same page has no such disclosure."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from typing import Any

import pytest
from browser_support import BANNER_HOST, VIEWPORT, make_collection, webark_serve
from cryptography import x509
from test_replay_screenshot_link import OPEN_SHADOW

from tls_site import Crawled, crawl_both


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Crawled]]:
    root = tmp_path_factory.mktemp("tls")
    crawled = crawl_both(root)
    make_collection(root / "colls", "c", crawled.warcs)
    with webark_serve(root / "colls") as base:
        yield base, crawled


def test_certificate_disclosure(served: tuple[str, Crawled], browser: Any) -> None:
    base, crawled = served
    leaf = crawled.ca.sent[0]
    context = browser.new_context(viewport=VIEWPORT, service_workers="block")
    try:
        context.add_init_script(OPEN_SHADOW)
        page = context.new_page()
        resp = page.goto(f"{base}c/2/{crawled.https}next.html", wait_until="load")
        assert resp is not None and resp.status == 200
        summary = page.locator(f"{BANNER_HOST} details.cert summary")
        assert summary.count() == 1 and summary.inner_text() == "certificate"
        subject = page.locator(f"{BANNER_HOST} dd.subject")
        assert not subject.is_visible()  # closed until asked
        summary.click()
        subject.wait_for(state="visible")
        want = x509.load_der_x509_certificate(leaf).subject.rfc4514_string()
        assert subject.inner_text() == want
        fingerprint = ":".join(f"{b:02X}" for b in hashlib.sha256(leaf).digest())
        assert page.locator(f"{BANNER_HOST} dd.sha256").inner_text() == fingerprint
        page.goto(f"{base}c/2/{crawled.http}next.html", wait_until="load")
        page.locator(f"{BANNER_HOST} a.all").wait_for()
        assert page.locator(f"{BANNER_HOST} details.cert").count() == 0
    finally:
        context.close()
