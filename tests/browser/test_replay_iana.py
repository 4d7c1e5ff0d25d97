"""Replay of pywb's iana.warc.gz (www.iana.org, 2014-01-26) in Debian's Chromium, served
by ``webark serve`` as a real subprocess: the page renders from the archive alone, every
request it makes goes to the replay server, and following a link stays in the archive."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from browser_support import (
    assert_banner_visible,
    captured,
    make_collection,
    original_url,
    watch_requests,
    webark_serve,
)
from png_pixels import pixel_stats

HOME = "http://www.iana.org/"
#: the home page's own embeds, all captured in iana.warc.gz
EMBEDS = (
    "http://www.iana.org/_css/2013.1/screen.css",
    "http://www.iana.org/_js/2013.1/jquery.js",
    "http://www.iana.org/_js/2013.1/iana.js",
    "http://www.iana.org/_img/2013.1/iana-logo-homepage.png",
)


@pytest.fixture(scope="module")
def iana(tmp_path_factory: pytest.TempPathFactory, corpus: Path) -> Iterator[dict[str, str]]:
    """``webark serve`` over a collection ``iana`` of iana.warc.gz; the replay prefix
    (``http://127.0.0.1:PORT/iana/``) and the home page's capture timestamp, as the CDX
    API gives it."""
    colls = tmp_path_factory.mktemp("colls")
    make_collection(colls, "iana", [corpus / "pywb" / "warcs" / "iana.warc.gz"])
    with webark_serve(colls) as base:
        r = httpx.get(base + "iana/cdx", params={"url": HOME, "output": "json", "limit": "1"})
        assert r.status_code == 200, r.text
        timestamp = r.json()["timestamp"]
        assert timestamp == "20140126200624"
        yield {"base": base, "prefix": base + "iana/", "timestamp": timestamp}


def test_home_page_replays_from_the_archive_alone(context: Any, iana: dict[str, str]) -> None:
    requests = watch_requests(context, iana["base"])
    page = context.new_page()
    url = f"{iana['prefix']}{iana['timestamp']}/{HOME}"
    resp = page.goto(url, wait_until="load")
    assert resp is not None and resp.status == 200, (url, resp and resp.status)
    page.wait_for_load_state("networkidle")
    assert page.title() == "Internet Assigned Numbers Authority"
    assert page.locator("#home-panel-numbers h2").inner_text() == "Number Resources"

    stats = pixel_stats(page.screenshot())
    assert stats.luma_stddev > 10 and stats.colours > 50 and stats.dominant_share < 0.95, stats

    assert requests.escaped == [] and requests.outside() == [], requests.outside()
    assert requests.not_archival(iana["prefix"]) == []
    # the embeds were fetched through the archive (maybe redirected to their capture's
    # timestamp) and found
    for embed in EMBEDS:
        got = {u: s for u, s in requests.statuses.items() if u.endswith("/" + embed)}
        assert 200 in got.values() and all(s < 400 for s in got.values()), (embed, got)
    # and what failed is not in the archive (iana.warc.gz is a few pages and their embeds)
    for url in requests.failed():
        orig = original_url(url, iana["prefix"])
        assert orig and not captured(iana["prefix"], orig), (url, requests.failed())
    assert_banner_visible(page, iana["prefix"])
    assert page.evaluate("window.__webark_banner.date") == "2014-01-26 20:06:24 UTC"
    # the stylesheet applied: the archived screen.css lays out the three panels side by side
    left, right = (page.locator(f"#home-panel-{p}").bounding_box() for p in ("domains", "numbers"))
    assert left and right and abs(left["y"] - right["y"]) < 1 and left["x"] < right["x"], (
        left, right,
    )  # fmt: skip


def test_following_a_link_stays_in_the_archive(context: Any, iana: dict[str, str]) -> None:
    requests = watch_requests(context, iana["base"])
    page = context.new_page()
    page.goto(f"{iana['prefix']}{iana['timestamp']}/{HOME}", wait_until="load")
    with page.expect_navigation(wait_until="load"):
        page.locator("#home-panel-numbers h2 a").click()
    assert page.url.startswith(iana["prefix"]), page.url
    assert page.url.endswith("/http://www.iana.org/numbers"), page.url
    # /numbers was captured 27 s after the home page: the closest capture is served
    assert page.title() == "IANA — Number Resources"
    page.wait_for_load_state("networkidle")
    assert requests.escaped == [] and requests.outside() == [], requests.outside()
