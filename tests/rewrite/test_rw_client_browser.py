"""client.js in a real browser (Debian's Chromium through Playwright): a replayed page
that builds URLs at run time in every way the script wraps must only ever request
archive URLs. No network at all: Playwright's router answers every request itself and
records it. Skipped when Chromium is missing, except under CI (``CI=true``)."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from webark.rewrite.client import client_config_script, client_script

CHROMIUM = Path("/usr/bin/chromium")
ORIGIN = "http://127.0.0.1:9"
TS = "20140126200624"
PAGE = "http://www.example.org/docs/page.html"
REPLAY = f"{ORIGIN}/coll/{TS}/{PAGE}"
A = f"{ORIGIN}/coll/{TS}"

PAGE_SCRIPT = """
const d = document.getElementById("d");
const img = new Image(); img.src = "/img/a.png"; d.appendChild(img);
const img2 = document.createElement("img");
img2.setAttribute("src", "b.png"); img2.srcset = "c.png 2x"; d.appendChild(img2);
fetch("api/data.json").catch(() => {});
fetch(new Request("/req.json")).catch(() => {});
const x = new XMLHttpRequest(); x.open("GET", "//cdn.example.org/x.json"); x.send();
document.write('<img src="/written.png">');
d.insertAdjacentHTML("beforeend", '<img src="/adjacent.png">');
const holder = document.createElement("div");
holder.innerHTML = '<img src="http://other.example/inner.png">'; d.appendChild(holder);
const s = document.createElement("script"); s.src = "/dyn.js"; document.head.appendChild(s);
const l = document.createElement("link"); l.rel = "stylesheet"; l.href = "/dyn.css";
document.head.appendChild(l);
const v = document.createElement("video"); v.poster = "/poster.jpg"; v.preload = "auto";
v.src = "/movie.mp4"; d.appendChild(v);
const f = document.createElement("iframe"); f.src = "/frame.html"; d.appendChild(f);
const b = document.createElement("div");
b.setAttribute("style", "width:10px;height:10px;background:url(/bg.png)"); d.appendChild(b);
navigator.sendBeacon("/beacon");
history.pushState({}, "", "?page=2");
const a = document.createElement("a"); a.href = "next.html";
window.results = {location: location.href, anchor: a.getAttribute("href")};
"""


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if not CHROMIUM.exists():
        if os.environ.get("CI", "").lower() in ("true", "1", "yes"):
            pytest.fail(f"{CHROMIUM} missing (WEBARK_BROWSER=1 bash scripts/setup.sh)")
        pytest.skip(f"{CHROMIUM} missing (WEBARK_BROWSER=1 bash scripts/setup.sh)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=str(CHROMIUM),
                               args=["--no-sandbox", "--disable-gpu", "--no-first-run",
                                     "--disable-background-networking"])
        try:
            yield b
        finally:
            b.close()


def test_runtime_urls_stay_in_the_archive(browser: Any) -> None:
    html = ("<!doctype html><html><head>"
            + client_config_script("/coll/", TS, PAGE, "")
            + "<script>" + client_script() + "</script></head><body><div id=d></div>"
            + "<script>" + PAGE_SCRIPT + "</script></body></html>")
    requested: list[str] = []

    def answer(route: Any) -> None:
        url = route.request.url
        requested.append(url)
        if url == REPLAY:
            route.fulfill(status=200, content_type="text/html; charset=utf-8", body=html)
        else:
            route.fulfill(status=200, content_type="text/plain", body="")

    context = browser.new_context(service_workers="block")
    try:
        context.route("**/*", answer)
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(REPLAY, wait_until="load")
        page.wait_for_timeout(300)
        results = page.evaluate("window.results")
    finally:
        context.close()
    assert errors == []
    outside = [u for u in requested if not u.startswith(f"{ORIGIN}/coll/")]
    assert outside == [], json.dumps(outside)
    for expected in [
        f"{A}im_/http://www.example.org/img/a.png", f"{A}im_/http://www.example.org/docs/b.png",
        f"{A}/http://www.example.org/docs/api/data.json", f"{A}/http://www.example.org/req.json",
        f"{A}/http://cdn.example.org/x.json", f"{A}im_/http://www.example.org/written.png",
        f"{A}im_/http://www.example.org/adjacent.png", f"{A}im_/http://other.example/inner.png",
        f"{A}js_/http://www.example.org/dyn.js", f"{A}cs_/http://www.example.org/dyn.css",
        f"{A}im_/http://www.example.org/poster.jpg", f"{A}if_/http://www.example.org/frame.html",
        f"{A}im_/http://www.example.org/bg.png", f"{A}/http://www.example.org/beacon",
    ]:
        assert expected in requested, expected
    assert results == {"location": f"{REPLAY}?page=2",
                       "anchor": f"/coll/{TS}/http://www.example.org/docs/next.html"}
