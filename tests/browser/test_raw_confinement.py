"""Raw (``id_``) replay cannot take over the replay origin or leave the archive
(hardening issue, items 2 and 3), in Debian's Chromium against a real ``webark serve``.

The collection holds a page whose scripts try every way out (a service worker with
scope ``/`` over the whole replay server, ``location`` assignment, ``window.open``, meta
refresh, a ``<base>``-relative link, ``target=_blank``) and the worker script, archived
with ``Service-Worker-Allowed: /``. Before the fix the worker registered from any page
of the origin and then answered every request of the server (other collections, the
CDX API) with archived script, and the id_ page's scripts ran.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest
from browser_support import VIEWPORT, make_collection, watch_requests, webark_serve

from webark.warc.writer import WarcWriter

PAGE = b"""<!doctype html><html><head><title>raw page</title>
<base href="http://live.test/">
<meta http-equiv="refresh" content="1;url=http://live.test/meta-refresh">
<script>
navigator.serviceWorker.register('/sw/2021id_/http://sw.test/sw.js', {scope: '/'})
  .then(function () { document.title = 'REGISTERED'; });
setTimeout(function () { location.href = 'http://live.test/location'; }, 300);
setTimeout(function () { window.open('http://live.test/open'); }, 400);
setTimeout(function () { document.getElementById('blank').click(); }, 500);
setTimeout(function () { document.getElementById('rel').click(); }, 600);
</script></head><body><p>raw</p>
<a id="blank" href="http://live.test/blank" target="_blank">blank</a>
<a id="rel" href="relative-link">relative</a>
</body></html>"""
WORKER = (b"self.addEventListener('fetch', function (e) {"
          b" e.respondWith(new Response('HIJACKED', {headers: {'Content-Type': 'text/html'}}));"
          b" });")  # fmt: skip
RAW_PAGE = "sw/20210101000000id_/http://sw.test/"
WORKER_URL = "/sw/20210101000000id_/http://sw.test/sw.js"


def _capture(w: WarcWriter, url: str, body: bytes, ctype: str,
             extra: tuple[tuple[str, str], ...] = ()) -> None:  # fmt: skip
    head = [("Content-Type", ctype), ("Content-Length", str(len(body))), *extra]
    response = ("HTTP/1.1 200 OK\r\n" + "".join(f"{k}: {v}\r\n" for k, v in head) + "\r\n")
    host = url.split("/")[2]
    request = f"GET {url} HTTP/1.1\r\nHost: {host}\r\n\r\n".encode()
    when = datetime(2021, 1, 1, tzinfo=UTC)
    w.write(*w.builder.exchange(url, response.encode() + body, request, date=when))


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    root = tmp_path_factory.mktemp("raw")
    html = "text/html; charset=utf-8"
    with WarcWriter(root / "w", prefix="RAW") as w:
        _capture(w, "http://sw.test/", PAGE, html)
        _capture(w, "http://sw.test/sw.js", WORKER, "text/javascript",
                 (("Service-Worker-Allowed", "/"),))  # fmt: skip
        _capture(w, "http://other.test/", b"<html><title>other</title>ok</html>", html)
    warcs = sorted((root / "w").glob("*.warc.gz"))
    make_collection(root / "colls", "sw", warcs)
    make_collection(root / "colls", "other", warcs)
    with webark_serve(root / "colls") as url:
        yield url


@pytest.fixture
def sw_context(browser: Any) -> Iterator[Any]:
    """A context where service workers are allowed (the attack needs them)."""
    ctx = browser.new_context(viewport=VIEWPORT, service_workers="allow")
    try:
        yield ctx
    finally:
        ctx.close()


def test_archived_script_cannot_become_a_service_worker(sw_context: Any, base: str) -> None:
    watch_requests(sw_context, base)
    page = sw_context.new_page()
    page.goto(base)  # the replay server's own home page: same origin as every collection
    outcome = page.evaluate(
        """async (url) => {
            try { await navigator.serviceWorker.register(url, {scope: '/'}); return 'registered'; }
            catch (e) { return 'refused: ' + e.name; }
        }""",
        WORKER_URL,
    )
    assert outcome.startswith("refused"), outcome
    assert page.evaluate("navigator.serviceWorker.getRegistrations().then(r => r.length)") == 0
    other = page.evaluate("fetch('/other/20210101000000/http://other.test/').then(r => r.text())")
    assert "HIJACKED" not in other and "other" in other
    # the refusal is the server's: the worker script request gets a 403, not archived bytes
    r = httpx.get(base + WORKER_URL[1:], headers={"Service-Worker": "script"}, timeout=30)
    assert r.status_code == 403 and b"HIJACKED" not in r.content


def test_raw_page_does_not_run_or_navigate_in_a_browser(sw_context: Any, base: str) -> None:
    log = watch_requests(sw_context, base)
    page = sw_context.new_page()
    page.goto(base + RAW_PAGE)
    page.wait_for_timeout(2000)  # meta refresh (1 s) and the timers (0.3-0.6 s) are due
    assert page.url == base + RAW_PAGE
    assert page.evaluate("document.contentType") == "text/plain"
    assert page.title() != "REGISTERED"
    assert len(sw_context.pages) == 1  # no window.open, no target=_blank
    assert log.escaped == [], log.escaped
    assert "navigator.serviceWorker.register" in page.inner_text("body")  # shown as text
    home = sw_context.new_page()  # the origin has no worker (the raw page is sandboxed)
    home.goto(base)
    assert home.evaluate("navigator.serviceWorker.getRegistrations().then(r => r.length)") == 0


def test_raw_bytes_for_programs_and_headers(base: str) -> None:
    """curl/httpx (``Accept: */*``, no Sec-Fetch-*) get the archived bytes and type; the
    archived ``Service-Worker-Allowed`` is kept for the record only; the CSP sandboxes
    the document and forbids workers."""
    page = httpx.get(base + RAW_PAGE, timeout=30)
    assert page.status_code == 200 and page.content == PAGE
    assert page.headers["content-type"].startswith("text/html")
    csp = page.headers["content-security-policy"]
    assert "worker-src 'none'" in csp and "sandbox" in csp
    worker = httpx.get(base + WORKER_URL[1:], timeout=30)
    assert worker.status_code == 200 and worker.content == WORKER
    assert "service-worker-allowed" not in worker.headers
    assert worker.headers["x-archive-orig-service-worker-allowed"] == "/"
    nav = httpx.get(base + RAW_PAGE, timeout=30,
                    headers={"Accept": "text/html,application/xhtml+xml,*/*;q=0.8"})  # fmt: skip
    assert nav.headers["content-type"] == "text/plain; charset=utf-8"
    assert nav.headers["x-archive-orig-content-type"] == "text/html; charset=utf-8"
    assert nav.content == PAGE
