"""The main job end to end in a real browser: Debian's python docs, served on 127.0.0.1,
crawled with ``webark crawl``, indexed into a collection, and replayed by ``webark serve``
in Debian's Chromium. The live site is stopped before replay: what the browser shows
comes from the archive, and every request it makes goes to the replay server."""

from __future__ import annotations

import html
import json
import re
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
    python_docs_dir,
    replay_in_full,
    static_site,
    watch_requests,
    webark,
    webark_serve,
)
from png_pixels import pixel_stats

#: pages replayed (the crawl's seeds, so a limited crawl always holds them)
INDEX = "index.html"
LIBRARY_PAGE = "library/functions.html"
MAX_URIS = 150  # seeds first, then breadth-first: the home page's links, their embeds, ...


def original_title(site: Path, page: str) -> str:
    """The <title> of the page in the served folder (the docs' version varies)."""
    m = re.search(r"<title>(.*?)</title>", (site / page).read_text("utf-8"), re.S)
    assert m, page
    return html.unescape(m.group(1)).strip()


@pytest.fixture(scope="module")
def pydocs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """Crawl the python docs (``MAX_URIS`` fetches, seeds ``/`` and ``LIBRARY_PAGE``),
    index the WARCs into collection ``pydocs``, stop the site, serve the collection."""
    site = python_docs_dir()
    work = tmp_path_factory.mktemp("pydocs")
    with static_site(site) as site_url:
        (work / "job.yaml").write_text(
            f"seeds: [{site_url}, {site_url}{LIBRARY_PAGE}]\n"
            f"job_dir: {work / 'job'}\n"
            "contact: webarchive@example.org\n"
            "allow_private: true\nmin_delay: 0\nmax_delay: 0\ndelay_factor: 0\n"
            f"max_uris: {MAX_URIS}\n"
            "scope: {max_trans_hops: 0}\n"
        )
        webark("crawl", "--no-progress", work / "job.yaml")
    warcs = sorted((work / "job" / "warcs").glob("*.warc.gz"))
    assert warcs
    make_collection(work / "colls", "pydocs", warcs)
    with webark_serve(work / "colls") as base:
        yield {"site": site, "site_url": site_url, "base": base, "prefix": base + "pydocs/"}


def open_replay(context: Any, pydocs: dict[str, Any], page_path: str) -> tuple[Any, Any]:
    """Open the replay (latest capture, default mode) of ``page_path`` of the docs; the
    page and the request log."""
    requests = watch_requests(context, pydocs["base"])
    page = context.new_page()
    url = f"{pydocs['prefix']}{pydocs['site_url']}{page_path}"
    resp = page.goto(url, wait_until="load")
    assert resp is not None and resp.status == 200, (url, resp and resp.status)
    page.wait_for_load_state("networkidle")
    return page, requests


def assert_archive_only(requests: Any, prefix: str) -> None:
    assert requests.escaped == [] and requests.outside() == [], requests.outside()
    assert requests.not_archival(prefix) == []


def test_index_page(context: Any, pydocs: dict[str, Any]) -> None:
    page, requests = open_replay(context, pydocs, "")
    assert page.title() == original_title(pydocs["site"], INDEX)
    stats = pixel_stats(page.screenshot())
    assert stats.luma_stddev > 10 and stats.colours > 50 and stats.dominant_share < 0.95, stats
    # the docs' stylesheet came from the archive and applied (pydoctheme.css's own layout)
    css = [u for u, s in requests.statuses.items() if "pydoctheme.css" in u and s == 200]
    assert css, requests.statuses
    for url in requests.failed():
        orig = original_url(url, pydocs["prefix"])
        assert orig and not captured(pydocs["prefix"], orig), (url, requests.failed())
    assert_archive_only(requests, pydocs["prefix"])
    assert_banner_visible(page, pydocs["prefix"])


def test_library_page(context: Any, pydocs: dict[str, Any]) -> None:
    page, requests = open_replay(context, pydocs, LIBRARY_PAGE)
    assert page.title() == original_title(pydocs["site"], LIBRARY_PAGE)
    assert page.locator("h1").first.inner_text().startswith("Built-in Functions")
    stats = pixel_stats(page.screenshot())
    assert stats.luma_stddev > 10 and stats.colours > 50 and stats.dominant_share < 0.95, stats
    assert_archive_only(requests, pydocs["prefix"])
    assert_banner_visible(page, pydocs["prefix"])
    # every request that failed asked for something the (limited) crawl did not capture
    for url in requests.failed():
        orig = original_url(url, pydocs["prefix"])
        assert orig and not captured(pydocs["prefix"], orig), (url, requests.failed())


def test_navigation_stays_in_the_archive(context: Any, pydocs: dict[str, Any]) -> None:
    page, requests = open_replay(context, pydocs, "")
    link = page.locator("a", has_text="Library Reference").first
    href = link.get_attribute("href")
    assert href and (href.startswith(pydocs["prefix"]) or href.startswith("/pydocs/")), href
    with page.expect_navigation(wait_until="load"):
        link.click()
    assert page.url.startswith(pydocs["prefix"]), page.url
    assert page.url.endswith(f"{pydocs['site_url']}library/index.html"), page.url
    assert page.title() == original_title(pydocs["site"], "library/index.html")
    # and on from there, to a page captured as a seed
    with page.expect_navigation(wait_until="load"):
        page.locator("a[href$='library/functions.html']").first.click()
    assert page.url.startswith(pydocs["prefix"]), page.url
    assert page.title() == original_title(pydocs["site"], LIBRARY_PAGE)
    page.wait_for_load_state("networkidle")
    assert_archive_only(requests, pydocs["prefix"])


def test_cdx_api_lists_the_crawl(pydocs: dict[str, Any]) -> None:
    """The collection the browser tests replay holds the crawl (both seeds as 200s)."""
    for page_path in ("", LIBRARY_PAGE):
        r = httpx.get(pydocs["prefix"] + "cdx",
                      params={"url": pydocs["site_url"] + page_path, "output": "json"})  # fmt: skip
        assert r.status_code == 200, r.text
        lines = [json.loads(x) for x in r.text.splitlines()]
        assert [x["status"] for x in lines if x["mime"] == "text/html"] == ["200"], lines


def test_search_form_works_in_the_archive(context: Any, pydocs: dict[str, Any]) -> None:
    """The docs' Quick search: the form goes to search.html?q=..., never crawled; replay
    falls back to the archived search.html (same path, no query), whose script loads
    searchindex.js and lists the results, all from the archive."""
    page, requests = open_replay(context, pydocs, "")
    box = page.locator("input[name='q']:visible").first
    box.fill("open")
    with page.expect_navigation(wait_until="load") as nav:
        box.press("Enter")
    resp = nav.value
    assert page.url.startswith(pydocs["prefix"]), page.url
    assert "search.html?q=open" in page.url, page.url
    assert resp is not None and resp.status == 200, (page.url, resp and resp.status)
    assert page.title() == original_title(pydocs["site"], "search.html")
    # Sphinx lists the hits one by one (each after fetching its page for a summary), then
    # says "Search finished, found N page(s)": wait for that, not for the first hit
    status = page.locator("#search-results .search-summary")
    status.filter(has_text="Search finished").wait_for(timeout=60000)
    found = int(re.search(r"found (\d+) page", status.inner_text()).group(1))
    assert found > 5
    assert page.locator("#search-results ul.search li").count() == found
    assert_archive_only(requests, pydocs["prefix"])


#: HTML pages of the crawl replayed by test_a_spread_of_pages_replays_in_full
SPREAD = 8


def test_a_spread_of_pages_replays_in_full(browser: Any, pydocs: dict[str, Any]) -> None:
    """``SPREAD`` HTML pages spread over the crawl, in a context that ignores the CSP (a
    URL the rewriting misses shows up as an escape): every request for a captured
    resource answered from the archive, none leaving the replay server
    (``bench/replay_fidelity.py`` does the same for every page of a full crawl)."""
    query = {"url": pydocs["site_url"], "matchType": "prefix", "output": "json",
             "filter": "mime:text/html"}
    r = httpx.get(pydocs["prefix"] + "cdx", params=query)
    assert r.status_code == 200, r.text
    pages = sorted({(x["url"], x["timestamp"]) for x in map(json.loads, r.text.splitlines())
                    if x["status"] == "200"})  # fmt: skip
    assert len(pages) > SPREAD, len(pages)
    step = len(pages) / SPREAD
    answered = sum(replay_in_full(browser, pydocs["base"], pydocs["prefix"], ts, url)
                   for url, ts in (pages[int(i * step)] for i in range(SPREAD)))  # fmt: skip
    assert answered > 3 * SPREAD  # each page and its stylesheets, scripts, images
