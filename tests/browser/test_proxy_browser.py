"""Headless Chromium browsing through ``webark proxy`` (``--proxy-server``): a page with
a style sheet and a script loads and runs as it would directly, and every resource it
fetched is archived exactly once."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from browser_support import CHROMIUM, CHROMIUM_ARGS

from http_wait import crawl_log_lines, proxy_process
from sites import CSS, HTML, TestSite
from system_packages import require
from webark.warc.reader import ArchiveReader

PAGE = (b"<!doctype html><html><head><title>before</title>"
        b'<link rel="stylesheet" href="/style.css"><script src="/app.js"></script></head>'
        b'<body><p id="p">through the proxy</p></body></html>')  # fmt: skip
JS = (("Content-Type", "text/javascript"),)


def test_chromium_through_the_proxy_loads_and_archives_each_resource_once(
    tmp_path: Path,
) -> None:
    require(CHROMIUM.exists(), f"Chromium ({CHROMIUM})", "WEBARK_BROWSER=1 bash scripts/setup.sh")
    from playwright.sync_api import sync_playwright

    site = TestSite({
        "/": (200, HTML, PAGE),
        "/style.css": (200, CSS, b"#p { color: rgb(0, 128, 0) }"),
        "/app.js": (200, JS, b"document.title = 'script ran';"),
        "/favicon.ico": (404, HTML, b"none"),
    })  # fmt: skip
    job = tmp_path / "job"
    with site, proxy_process("--job", str(job)) as (port, _), sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=[
            *CHROMIUM_ARGS, f"--proxy-server=http://127.0.0.1:{port}",
            "--proxy-bypass-list=<-loopback>"])  # fmt: skip
        try:
            page = browser.new_page()
            page.goto(site.url("/"), wait_until="load")
            assert page.title() == "script ran"
            color = page.eval_on_selector("#p", "e => getComputedStyle(e).color")
            assert color == "rgb(0, 128, 0)"
        finally:
            browser.close()
        fetched = Counter(h.path for h in site.snapshot())
        lines = crawl_log_lines(job / "logs" / "crawl.log", sum(fetched.values()))
    for path in ("/", "/style.css", "/app.js"):
        assert fetched[path] == 1  # every request went through the proxy, once
    ours = [ln for ln in lines if ln.split()[3].startswith(site.origin)]
    assert len(ours) == sum(fetched.values())
    # what Chromium asks for elsewhere (its updater) is refused unresolved: -6, a 502
    assert all(ln.split()[1] == "-6" for ln in lines if ln not in ours)
    (warc,) = (job / "warcs").iterdir()
    responses = Counter(r.target_uri for r in ArchiveReader(str(warc)) if r.type == "response")
    assert responses == Counter({site.url(p): n for p, n in fetched.items()})
