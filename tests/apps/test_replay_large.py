"""Large pages under concurrent load: the byte budget of large rewrites
(:mod:`webark.apps.replay.budget`) and the chunked HTML rewrite
(:func:`webark.rewrite.html.rewrite_html_chunks`).

* the chunked rewrite gives the very bytes of :func:`~webark.rewrite.html.rewrite_html`
  on every HTML page of pywb's sample WARCs and on generated documents, with edits
  handed over one at a time and chunks down to one character;
* :class:`~webark.apps.replay.budget.ByteBudget`: first come first served, a lease
  larger than the budget runs alone, growth, cancellation; never more than the budget
  in flight (read from the limiter's own counters, not from timing);
* a real ``uvicorn`` server on 127.0.0.1 with a budget of 2.5 pages: 12 clients at
  once get a complete page each, byte-identical to the single-client response and to
  an in-process :func:`rewrite_html` of the payload; the budget's peak never passes its
  limit and every lease is given back (also for HEAD and a gzip-stored page).

Memory figures are in ``bench/replay_memory.py``, not here.
"""

from __future__ import annotations

import asyncio
import gzip
import http.client
import random
import re
import socket
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
import uvicorn

import webark.rewrite.html as html_mod
from webark.apps.http_protocol import http_protocol
from webark.apps.replay.app import ReplayServer, create_server
from webark.apps.replay.budget import ByteBudget
from webark.apps.replay.memento import display_date
from webark.apps.replay.paths import captures_url
from webark.apps.replay.render import INLINE_MAX, Banner, head_insert
from webark.index.collection import Collection
from webark.rewrite.charset import encodes_piecewise
from webark.rewrite.html import html_view, rewrite_html, rewrite_html_chunks
from webark.rewrite.urls import UrlRewriter
from webark.warc.reader import ArchiveReader
from webark.warc.writer import WarcWriter

TS = "20240501120000"
WHEN = datetime(2024, 5, 1, 12, 0, 0, tzinfo=UTC)
INSERT = '<script>window.__webark={"a":1};</script><script src="/_webark/client.js"></script>'


def big_page(size: int) -> bytes:
    """An HTML page of at least ``size`` bytes: links, srcset, style attributes and
    elements, scripts with absolute URLs, UTF-8 text beyond Latin-1 (``—``)."""
    parts = ['<!DOCTYPE html><html><head><meta charset="utf-8"><title>Grande — page</title>'
             '<link rel="stylesheet" href="/site.css"></head><body>\n']  # fmt: skip
    n, i = len(parts[0]), 0
    while n < size:
        s = (f'<section><h2>Section {i} — été</h2><p style="background:url(/bg{i % 7}.png)">'
             f'<a href="/a/{i}.html">a</a> <a href="http://other.test/p?id={i}">b</a></p>'
             f'<img src="/i/{i}.jpg" srcset="/i/{i}-2x.jpg 2x" alt="">'
             f"<style>.c{i}{{background:url('/c{i}.png')}}</style>"
             f'<script>var u = "http://big.test/api/{i}";</script></section>\n')  # fmt: skip
        parts.append(s)
        n += len(s.encode("utf-8"))
        i += 1
    parts.append("</body></html>\n")
    return "".join(parts).encode("utf-8")


# -- the chunked rewrite -----------------------------------------------------------------


def _corpus_html(corpus: Path) -> list[tuple[str, bytes, str | None]]:
    out = []
    for name in ("iana.warc.gz", "example.warc.gz", "dupes.warc.gz"):
        for rec in ArchiveReader(corpus / "pywb" / "warcs" / name):
            h = rec.http
            if rec.type != "response" or h is None or h.status != 200 or not rec.target_uri:
                continue
            ct = next((v for k, v in h.headers if k.lower() == "content-type"), "")
            if "html" not in ct.lower():
                continue
            charset = ct.split("charset=", 1)[1].strip() if "charset=" in ct else None
            out.append((rec.target_uri, rec.payload(decode_content_encoding=True), charset))
    return out


EDGE_CASES = [
    "<!doctype html><html lang=en><HEAD class=h><title>t</title><a href=/x>",
    "<!doctype html><title>t</title><p>x<a href=/y>",
    "<!-- c --><html manifest=/m><body>b<img src=i.png>",
    "just text",
    "",
    "\ufefftext <a href=a>",
    "<head>" + "<!--" + "x" * 1100 + "-->" + "<meta charset=utf-8><a href=/late>",
    "<head><a href=/1><a href=/2><a href=/3>" + "<meta charset=utf-8>" + "<a href=/4>" * 300,
    "<html><a href=/x>" * 50,
    "<script>var a = 'http://x.org/';</script><style>p{background:url(x.png)}</style>",
    "<a href='unterminated",
    "<!-- open comment <a href=/x>",
    '<iframe srcdoc="<a href=x>"></iframe><a href=y>',
]


@pytest.mark.parametrize("flush_every", [1, 3, 512])
def test_chunked_rewrite_is_byte_identical(
    corpus: Path, monkeypatch: pytest.MonkeyPatch, flush_every: int
) -> None:
    monkeypatch.setattr(html_mod, "_FLUSH_EDITS", flush_every)
    docs = _corpus_html(corpus)
    assert len(docs) >= 5
    docs += [(f"http://edge.test/{i}", s.encode("utf-8"), "utf-8")
             for i, s in enumerate(EDGE_CASES)]  # fmt: skip
    docs.append(("http://big.test/page.html", big_page(200_000), None))
    sj, jis = "<p>日本語<a href=/x>リンク</a>", "<p>日本<a href=/x>語</a>"
    docs.append(("http://sj.test/", sj.encode("shift_jis"), "shift_jis"))
    docs.append(("http://u16.test/", "\ufeff<a href=/x>é</a>".encode("utf-16"), None))
    docs.append(("http://jis.test/", jis.encode("iso2022_jp"), "iso-2022-jp"))
    compared = 0
    for url, body, charset in docs:
        for modifier in ("", "if_"):
            want = rewrite_html(body, UrlRewriter("/c/", TS, url, modifier),
                                charset=charset, head_insert=INSERT)  # fmt: skip
            for chunk_chars in (1, 7, 4096) if len(body) < 50_000 else (7, 4096):
                rw = UrlRewriter("/c/", TS, url, modifier)
                view = html_view(body, charset)
                chunks = rewrite_html_chunks(view, rw, head_insert=INSERT, chunk_chars=chunk_chars)
                assert b"".join(chunks) == want, (url, modifier, chunk_chars)
                compared += 1
    assert compared == sum(6 if len(d[1]) < 50_000 else 4 for d in docs)
    # the large page really is cut into chunks, and is rewritten (not passed through)
    page = big_page(200_000)
    chunks = rewrite_html_chunks(html_view(page), UrlRewriter("/c/", TS, "http://big.test/"),
                                 chunk_chars=4096)  # fmt: skip
    assert len(chunks) > 40 and b'href="/c/20240501120000/http://big.test/a/7.html"' in b"".join(
        chunks
    )


def test_encodes_piecewise() -> None:
    for codec in ("utf-8", "latin-1", "ascii", "cp1252", "iso8859-2", "koi8-r", "shift_jis",
                  "gb18030", "big5", "euc_kr"):  # fmt: skip
        assert encodes_piecewise(codec), codec
    for codec in ("utf-16", "utf-32", "utf-8-sig", "utf-7", "iso2022_jp", "hz", "no-such"):
        assert not encodes_piecewise(codec), codec


def test_chunked_rewrite_rejects_bad_chunk_size() -> None:
    with pytest.raises(ValueError, match="chunk_chars"):
        rewrite_html_chunks(html_view(b"<p>"), UrlRewriter("/c/", TS, "http://a.test/"),
                            chunk_chars=0)  # fmt: skip


# -- the budget ------------------------------------------------------------------------


def test_budget_first_come_first_served() -> None:
    async def main() -> None:
        budget = ByteBudget(100)
        a = await budget.acquire(60)
        order: list[str] = []

        async def take(name: str, n: int) -> None:
            lease = await budget.acquire(n)
            order.append(name)
            assert budget.in_flight <= budget.limit
            await asyncio.sleep(0)
            lease.release()

        tb = asyncio.create_task(take("b", 60))
        tc = asyncio.create_task(take("c", 10))  # would fit, but b came first
        for _ in range(5):
            await asyncio.sleep(0)
        assert order == [] and budget.waiting == 2 and budget.in_flight == 60
        a.release()
        a.release()  # idempotent
        await asyncio.gather(tb, tc)
        assert order == ["b", "c"]
        assert budget.in_flight == 0 and budget.peak == 70 and budget.granted == 3

    asyncio.run(main())


def test_budget_oversized_runs_alone_and_growth_counts() -> None:
    async def main() -> None:
        budget = ByteBudget(100)
        big = await budget.acquire(250)  # nothing in flight: admitted
        assert budget.in_flight == 250
        waiter = asyncio.create_task(budget.acquire(1))
        await asyncio.sleep(0)
        assert not waiter.done()
        big.release()
        small = await waiter
        small.grow(120)  # a decoded payload larger than acquired: no waiting
        assert budget.in_flight == 121 and small.weight == 121
        later = asyncio.create_task(budget.acquire(1))
        await asyncio.sleep(0)
        assert not later.done()  # over the budget until the grown lease is back
        small.release()
        (await later).release()
        assert budget.in_flight == 0 and budget.peak == 250
        with pytest.raises(RuntimeError):
            small.grow(1)
        with pytest.raises(ValueError):
            await budget.acquire(-1)
        with pytest.raises(ValueError):
            ByteBudget(0)

    asyncio.run(main())


def test_budget_cancelled_waiter_holds_nothing() -> None:
    async def main() -> None:
        budget = ByteBudget(100)
        a = await budget.acquire(90)
        head = asyncio.create_task(budget.acquire(50))
        behind = asyncio.create_task(budget.acquire(5))
        await asyncio.sleep(0)
        head.cancel()  # the head of the queue goes: the one behind it fits at once
        with pytest.raises(asyncio.CancelledError):
            await head
        lease = await asyncio.wait_for(behind, 5)
        assert budget.in_flight == 95 and budget.waiting == 0
        lease.release()
        a.release()
        assert budget.in_flight == 0 and budget.granted == 2

    asyncio.run(main())


# -- the server under concurrent load ------------------------------------------------------

PAGE = big_page(int(INLINE_MAX * 1.3))
# compresses ~3.3x, so its estimated decoded size (4x stored) covers it: its lease
# does not need to grow, and the budget's peak stays within the limit
_NOISE = random.Random(1)
NOISY = re.sub(rb"</section>", lambda m: (
    b"<!-- " + _NOISE.randbytes(120).hex().encode() + b" --></section>"), PAGE)  # fmt: skip
SMALL = b"<html><head><title>small</title></head><body><a href='/x'>x</a></body></html>"


def _ok(body: bytes, extra: list[tuple[str, str]] | None = None) -> bytes:
    headers = [("Content-Type", "text/html; charset=utf-8"), ("Content-Length", str(len(body))),
               *(extra or [])]  # fmt: skip
    head = "HTTP/1.1 200 OK\r\n" + "".join(f"{k}: {v}\r\n" for k, v in headers) + "\r\n"
    return head.encode("latin-1") + body


@pytest.fixture(scope="module")
def large_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ReplayServer, int]]:
    """``webark serve``'s app (budget: 2.5 pages) on a uvicorn server in a thread."""
    root = tmp_path_factory.mktemp("large")
    writer = WarcWriter(root / "warcs", prefix="LARGE")
    with writer as w:
        for url, response in (
            ("http://big.test/page.html", _ok(PAGE)),
            ("http://big.test/page-gz.html",
             _ok(gzip.compress(NOISY, mtime=0), [("Content-Encoding", "gzip")])),
            ("http://big.test/small.html", _ok(SMALL)),
        ):  # fmt: skip
            req = f"GET {url[15:]} HTTP/1.1\r\nHost: big.test\r\n\r\n".encode()
            w.write(*w.builder.exchange(url, response, req, date=WHEN))
    coll = Collection.init(root / "colls" / "big")
    with coll:
        assert all(r.status == "indexed" for r in coll.add([Path(p) for p in writer.paths]))
    app = create_server(root / "colls", rewrite_budget=int(len(PAGE) * 2.5))
    sock = socket.socket()
    # accepted connections inherit it: a client that stops reading blocks the server
    # after ~128 kB instead of after the kernel's autotuned megabytes
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 65536)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, http=http_protocol(), log_level="warning"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert time.monotonic() < deadline and thread.is_alive(), "server did not start"
        time.sleep(0.05)
    try:
        yield app, port
    finally:
        server.should_exit = True
        thread.join(30)
        sock.close()


def _get(port: int, path: str, method: str = "GET") -> tuple[int, dict[str, str], bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    try:
        conn.request(method, path)
        r = conn.getresponse()
        return r.status, {k.lower(): v for k, v in r.getheaders()}, r.read()
    finally:
        conn.close()


def _all_returned(budget: ByteBudget) -> bool:
    """True once every lease is back: the server releases a lease after its last
    ``send``, which may return after the client has read the whole body."""
    deadline = time.monotonic() + 30
    while budget.in_flight and time.monotonic() < deadline:
        time.sleep(0.01)
    return budget.in_flight == 0 and budget.waiting == 0


def _expected(url: str, body: bytes) -> bytes:
    """The page as the whole-document rewriter makes it, with the app's head insert
    (banner of a capture without neighbours)."""
    rw = UrlRewriter("/big/", TS, url, "")
    banner = Banner(display_date(TS), captures_url("/big/", url), None, None)
    return rewrite_html(body, rw, charset="utf-8", head_insert=head_insert(rw, url, "/", banner))


@pytest.mark.parametrize("name", ["page.html", "page-gz.html"])
def test_many_clients_get_identical_complete_pages(
    large_server: tuple[ReplayServer, int], name: str
) -> None:
    app, port = large_server
    path = f"/big/{TS}/http://big.test/{name}"
    granted = app.budget.granted
    status, headers, single = _get(port, path)
    assert status == 200 and int(headers["content-length"]) == len(single)
    assert headers.get("content-encoding") is None  # a gzip-stored page goes as identity
    assert b"__webark_banner" in single and len(single) > len(PAGE)

    clients = 12
    results: list[tuple[int, dict[str, str], bytes] | BaseException] = [ValueError()] * clients
    small: list[bytes] = []
    barrier = threading.Barrier(clients + 1)

    def fetch(k: int) -> None:
        barrier.wait()
        try:
            results[k] = _get(port, path)
        except BaseException as exc:  # reported by the assertions below
            results[k] = exc

    def fetch_small() -> None:  # a small page among the large ones: no lease, served too
        barrier.wait()
        small.append(_get(port, f"/big/{TS}/http://big.test/small.html")[2])

    threads = [threading.Thread(target=fetch, args=(k,)) for k in range(clients)]
    threads.append(threading.Thread(target=fetch_small))
    for t in threads:
        t.start()
    for t in threads:
        t.join(300)
    for r in results:
        assert not isinstance(r, BaseException), r
        st, hd, body = r
        assert st == 200 and int(hd["content-length"]) == len(body)
        assert body == single
    assert small and b"<title>small</title>" in small[0]
    # the same bytes as the whole-document rewriter (the chunked path changed nothing)
    assert single == _expected(f"http://big.test/{name}", NOISY if "gz" in name else PAGE)
    # the limiter's own counters: every large request took a lease, never more than the
    # budget was held (a gzip page's lease grew to its decoded size), all given back
    assert app.budget.granted - granted == clients + 1
    assert app.budget.peak <= app.budget.limit
    assert _all_returned(app.budget)


def test_head_of_large_page_takes_and_returns_a_lease(
    large_server: tuple[ReplayServer, int],
) -> None:
    app, port = large_server
    path = f"/big/{TS}/http://big.test/page.html"
    granted = app.budget.granted
    status, headers, body = _get(port, path, "HEAD")
    assert status == 200 and body == b""
    _, _, full = _get(port, path)
    assert int(headers["content-length"]) == len(full)
    assert app.budget.granted - granted == 2 and _all_returned(app.budget)
    # small pages and raw mode take no lease
    for p in (f"/big/{TS}/http://big.test/small.html", f"/big/{TS}id_/http://big.test/page.html"):
        assert _get(port, p)[0] == 200
    assert app.budget.granted - granted == 2 and _all_returned(app.budget)


def test_a_client_that_stops_reading_gives_the_budget_back(
    large_server: tuple[ReplayServer, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A client that asks for a large page and stops reading is dropped after the send
    timeout, and its lease is given back while its connection is still open (before,
    it kept its share of the budget until it went away)."""
    app, port = large_server
    monkeypatch.setattr(app, "send_timeout", 0.5)
    path = f"/big/{TS}/http://big.test/page.html"
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.connect(("127.0.0.1", port))
    try:
        sock.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode())
        # the lease is taken before the response starts; then the client stops reading
        assert sock.recv(1024).startswith(b"HTTP/1.1 200")
        assert _all_returned(app.budget)  # given back with the client still connected
        # and the server serves the page to the next client
        status, headers, body = _get(port, path)
        assert status == 200 and int(headers["content-length"]) == len(body)
    finally:
        sock.close()
    assert _all_returned(app.budget)
