"""Headless Chromium recording a page through ``webark serve --record`` (pywb's record
mode, the manual crawler): the page, its style sheet, its images, its script and what the
script fetches at run time are all asked of the record endpoint (none of the live host
directly), each is archived once, the WARCs pass ``webark warc check``, and the page
replays in Chromium from the collection with the live site stopped. Following a link
records the next page; patch mode serves what the collection has and fetches nothing
twice."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from http_wait import webark_serve_process
from record_site import SUBRESOURCES, new_collection, record_pages, warc_check
from sites import TestSite
from webark.warc.reader import ArchiveReader


def _load(context: Any, url: str) -> tuple[Any, list[str]]:
    """Open ``url`` in a new page of ``context``; (the page, every request URL it made)."""
    page = context.new_page()
    asked: list[str] = []
    page.on("request", lambda r: asked.append(r.url))
    page.goto(url, wait_until="load")
    page.wait_for_function("document.title === 'script ran'", timeout=10000)
    return page, asked


def _looks_right(page: Any) -> None:
    assert page.eval_on_selector("#p", "e => getComputedStyle(e).color") == "rgb(0, 128, 0)"
    assert page.eval_on_selector("#i", "e => [e.complete, e.naturalWidth]") == [True, 7]
    bg = page.eval_on_selector("#p", "e => getComputedStyle(e).backgroundImage")
    assert "/img/bg.png" in bg


def test_chromium_records_a_page_and_replays_it_with_the_site_stopped(
    tmp_path: Path, context: Any
) -> None:
    coll = new_collection(tmp_path)
    site = TestSite(record_pages()).start()
    try:
        with webark_serve_process(str(tmp_path), "--record", "--allow-private",
                                  "--resolve-only") as (base, _):  # fmt: skip
            page, asked = _load(context, f"{base}rec/record/{site.url('/')}")
            _looks_right(page)
            href = page.eval_on_selector("#a", "e => e.getAttribute('href')")
            assert href == f"/rec/record/{site.origin}/second.html"
            page.close()
        hits = Counter(h.path for h in site.snapshot())
    finally:
        site.stop()
    # nothing went to the live host from the browser: every request was the record
    # endpoint's (or the replay app's own script), the live site saw only the recorder
    assert asked and all(u.startswith(base) for u in asked), asked
    ours = [u[len(base) - 1 :] for u in asked if not u.startswith(f"{base}_webark/")]
    assert all(u.startswith("/rec/record/") for u in ours), ours
    assert hits == Counter(["/", *SUBRESOURCES])  # each once (favicon: not the site's)
    recorded = Counter(r.target_uri for w in (coll / "warcs").iterdir()
                       for r in ArchiveReader(str(w)) if r.type == "response")  # fmt: skip
    assert recorded == Counter(site.url(p) for p in ["/", *SUBRESOURCES])
    check = warc_check(coll)
    assert check.returncode == 0 and " 0 errors" in check.stdout, check.stdout + check.stderr
    with webark_serve_process(str(tmp_path)) as (base, _):
        page, asked = _load(context, f"{base}rec/{site.url('/')}")
        _looks_right(page)
    assert all(u.startswith(base) for u in asked), asked
    assert not any("/record/" in u for u in asked), asked


def test_chromium_follows_a_link_while_recording_and_patch_mode_fetches_nothing_twice(
    tmp_path: Path, context: Any, browser: Any
) -> None:
    new_collection(tmp_path)
    with TestSite(record_pages()) as site, webark_serve_process(
        str(tmp_path), "--record", "--allow-private", "--resolve-only"
    ) as (base, _):
        page, asked = _load(context, f"{base}rec/patch/{site.url('/')}")
        _looks_right(page)
        with page.expect_navigation():
            page.click("#a")  # the link leads to the patch endpoint, which records it
        assert page.title() == "second"
        assert page.url == f"{base}rec/patch/{site.url('/second.html')}"
        first = Counter(h.path for h in site.snapshot())
        assert first == Counter(["/", *SUBRESOURCES, "/second.html"])
        page.close()
        fresh = browser.new_context(service_workers="block")  # no HTTP cache to help
        try:
            again, asked_again = _load(fresh, f"{base}rec/patch/{site.url('/')}")
            _looks_right(again)  # from the collection: the live site is asked nothing more
        finally:
            fresh.close()
        assert Counter(h.path for h in site.snapshot()) == first
    assert all(u.startswith(base) for u in asked + asked_again), asked + asked_again
