"""Collections the replay tests run on (imported by the ``test_replay_*`` modules).

``build_collections(root)`` makes ``root/pywb`` — pywb's sample WARCs from the corpus
(iana.warc.gz, dupes.warc.gz, example.warc.gz, the URL-agnostic revisit pair and the
uncompressed example.warc) — and ``root/site``: WARCs written here with webark's
WarcWriter, each capture at a fixed date, for the cases the corpus lacks:

* ``http://site.test/a/`` ↔ ``http://site.test/a`` self-redirect pair (2020-01-01);
* a 300-revisit chain of ``http://site.test/chain.txt`` (2020-02-01, one per minute);
* ``http://site.test/page?v=2`` a revisit whose original is ``…/page?v=1``;
* two versions of ``http://site.test/news.html`` (diff view);
* a gzip-encoded HTML page and an ISO-8859-1 page;
* ``http://site.test/video.bin`` (100,000 bytes) and ``big.bin`` (3,000,000 bytes,
  streamed) in an *uncompressed* WARC (Range);
* captures for access rules: ``/private/doc.html`` (2012, 2018), ``/secret.html``
  (2014, 2016);
* ``http://site.test/api?q=1&_=1507495059747`` and ``data.json`` (fuzzy match of
  cache-busting parameters);
* ``http://site.test/gone.html``: two captures, the nearer one in a WARC that is deleted
  after indexing (fall-through to the next closest);
* ``http://site.test/nm.html``: a 200, then a ``server-not-modified`` revisit (a 304 to
  a conditional request, 2020-09-02).
"""

from __future__ import annotations

import gzip
import random
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

from webark.index.collection import Collection
from webark.warc.builders import Original
from webark.warc.record import WarcRecord
from webark.warc.writer import WarcWriter

PYWB_WARCS = [
    "iana.warc.gz",
    "dupes.warc.gz",
    "example.warc.gz",
    "example-url-agnostic-orig.warc.gz",
    "example-url-agnostic-revisit.warc.gz",
    "example.warc",
]

CHAIN = 300
CHAIN_BODY = b"the chain's one and only payload\n"
VIDEO = random.Random(7).randbytes(100_000)
BIG = random.Random(8).randbytes(3_000_000)  # > INLINE_MAX: streamed
LATIN1_BODY = (
    b'<html><head><title>Caf\xe9 cr\xe8me</title></head><body>'
    b'<p>D\xe9j\xe0 vu \xe0 la caf\xe9t\xe9ria</p><a href="/menu.html">menu</a></body></html>'
)
GZ_HTML = (
    b'<html><head><title>Gzipped page</title></head><body>'
    b'<img src="/img/logo.png"><a href="http://site.test/news.html">news</a></body></html>'
)
NM_BODY = b"<html><head><title>Not modified</title></head><body><p>same</p></body></html>"
NEWS_1 = (
    b"<html><head><title>News</title><style>p{color:red}</style></head><body>"
    b"<h1>Daily news</h1><p>The river is high.</p><p>Markets are calm.</p>"
    b"<script>var hidden = 'not text';</script><p>Weather: rain.</p></body></html>"
)
NEWS_2 = (
    b"<html><head><title>News</title></head><body>"
    b"<h1>Daily news</h1><p>The river is low.</p><p>Markets are calm.</p>"
    b"<p>Weather: rain.</p><p>Sports: home team won.</p></body></html>"
)


def when(s: str) -> datetime:
    """``"2020-01-01 00:00:00"`` → aware UTC datetime."""
    return datetime.strptime(s, "%Y-%m-%d %H:%M:%S").replace(tzinfo=UTC)


def http_response(status: str, headers: list[tuple[str, str]], body: bytes = b"") -> bytes:
    head = f"HTTP/1.1 {status}\r\n" + "".join(f"{k}: {v}\r\n" for k, v in headers) + "\r\n"
    return head.encode("latin-1") + body


def _capture(w: WarcWriter, url: str, response: bytes, date: datetime,
             original: Original | None = None) -> WarcRecord:  # fmt: skip
    req = f"GET {url.split('site.test', 1)[-1] or '/'} HTTP/1.1\r\nHost: site.test\r\n\r\n"
    recs = w.write(*w.builder.exchange(url, response, req.encode(), date=date, original=original))
    return recs[0]


def _ok(body: bytes, ctype: str = "text/html; charset=utf-8",
        extra: list[tuple[str, str]] | None = None) -> bytes:  # fmt: skip
    return http_response(
        "200 OK", [("Content-Type", ctype), ("Content-Length", str(len(body))), *(extra or [])],
        body,
    )


def write_site_warcs(out: Path) -> tuple[list[Path], Path]:
    """Write the ``site`` WARCs into ``out``; returns (WARCs to add, the WARC to delete
    after indexing)."""
    main = WarcWriter(out / "main", prefix="SITE")
    with main as w:
        # self-redirect pair: /a/ -> /a -> /a/, then /a/ answers
        _capture(w, "http://site.test/a/", http_response(
            "301 Moved Permanently", [("Location", "http://site.test/a"), ("Content-Length", "0")]
        ), when("2020-01-01 00:00:00"))  # fmt: skip
        _capture(w, "http://site.test/a", http_response(
            "301 Moved Permanently", [("Location", "/a/"), ("Content-Length", "0")]
        ), when("2020-01-01 00:00:05"))  # fmt: skip
        _capture(w, "http://site.test/a/", _ok(b"<html><title>A</title><p>page a</p></html>"),
                 when("2020-01-01 00:01:00"))  # fmt: skip
        # a chain of 300 revisits of one original
        t0 = when("2020-02-01 00:00:00")
        orig = _capture(w, "http://site.test/chain.txt", _ok(CHAIN_BODY, "text/plain"), t0)
        ref = Original("http://site.test/chain.txt", orig.headers.get("WARC-Date") or "",
                       orig.record_id, orig.headers.get("WARC-Payload-Digest"))  # fmt: skip
        for i in range(1, CHAIN + 1):
            _capture(w, "http://site.test/chain.txt", _ok(CHAIN_BODY, "text/plain"),
                     t0 + timedelta(minutes=i), ref)  # fmt: skip
        # a revisit whose original has another URL (same digest, other query string)
        body = b"<html><title>Page</title><p>same payload, two URLs</p></html>"
        o = _capture(w, "http://site.test/page?v=1", _ok(body), when("2020-04-01 00:00:00"))
        _capture(w, "http://site.test/page?v=2", _ok(body), when("2020-04-02 00:00:00"),
                 Original("http://site.test/page?v=1", o.headers.get("WARC-Date") or "",
                          o.record_id, o.headers.get("WARC-Payload-Digest")))  # fmt: skip
        # diff view
        _capture(w, "http://site.test/news.html", _ok(NEWS_1), when("2020-03-01 00:00:00"))
        _capture(w, "http://site.test/news.html", _ok(NEWS_2), when("2020-03-02 00:00:00"))
        # content codings and charsets
        _capture(w, "http://site.test/gz.html", _ok(
            gzip.compress(GZ_HTML, mtime=0), extra=[("Content-Encoding", "gzip")]
        ), when("2020-05-01 00:00:00"))  # fmt: skip
        _capture(w, "http://site.test/latin1.html", _ok(
            LATIN1_BODY, "text/html; charset=iso-8859-1"
        ), when("2020-05-01 00:00:00"))  # fmt: skip
        # access rules
        for url, dates in (
            ("http://site.test/private/doc.html", ["2012-06-01 00:00:00", "2018-06-01 00:00:00"]),
            ("http://site.test/secret.html", ["2014-06-01 00:00:00", "2016-06-01 00:00:00"]),
        ):
            for d in dates:
                _capture(w, url, _ok(f"<html><title>{url} {d}</title></html>".encode()), when(d))
        # cache-busting query parameters (fuzzy match)
        _capture(w, "http://site.test/api?q=1&_=1507495059747",
                 _ok(b'{"a": 1}', "application/json"), when("2020-08-01 00:00:00"))  # fmt: skip
        _capture(w, "http://site.test/data.json", _ok(b'{"b": 2}', "application/json"),
                 when("2020-08-01 00:00:00"))  # fmt: skip
        _capture(w, "http://site.test/gone.html", _ok(b"<title>gone: the far one</title>"),
                 when("2020-06-01 00:00:00"))  # fmt: skip
        # a recrawl's conditional request answered 304: a server-not-modified revisit
        nm = _capture(w, "http://site.test/nm.html", _ok(NM_BODY, extra=[
            ("ETag", '"v1"'), ("Cache-Control", "max-age=60"), ("X-Old", "kept")
        ]), when("2020-09-01 00:00:00"))  # fmt: skip
        _capture(w, "http://site.test/nm.html", http_response("304 Not Modified", [
            ("ETag", '"v1"'), ("Cache-Control", "max-age=3600"), ("Content-Length", "0"),
        ]), when("2020-09-02 00:00:00"), Original(
            "http://site.test/nm.html", nm.headers.get("WARC-Date") or "", nm.record_id,
            nm.headers.get("WARC-Payload-Digest"),
        ))  # fmt: skip
    raw = WarcWriter(out / "raw", prefix="SITE-RAW", compression="none")
    with raw as w:
        _capture(w, "http://site.test/video.bin", _ok(VIDEO, "video/mp4"),
                 when("2020-07-01 00:00:00"))  # fmt: skip
        _capture(w, "http://site.test/big.bin", _ok(BIG, "application/octet-stream"),
                 when("2020-07-01 00:00:00"))  # fmt: skip
    lost = WarcWriter(out / "lost", prefix="SITE-LOST")
    with lost as w:
        _capture(w, "http://site.test/gone.html", _ok(b"<title>gone: the near one</title>"),
                 when("2020-06-10 00:00:00"))  # fmt: skip
    return [Path(p) for p in main.paths + raw.paths], Path(lost.paths[0])


def build_collections(
    root: Path, corpus: Path, init: Callable[..., Collection] = Collection.init
) -> Path:
    """Make ``root/colls/pywb`` and ``root/colls/site`` (see the module docstring) with
    ``init`` (``Collection.init``, or ``index_store.init`` for the store under test);
    returns ``root/colls``."""
    colls = root / "colls"
    pywb = init(colls / "pywb")
    with pywb:
        for res in pywb.add([corpus / "pywb" / "warcs" / n for n in PYWB_WARCS]):
            assert res.status == "indexed", res
    warcs, lost = write_site_warcs(root / "written")
    site = init(colls / "site")
    with site:
        for res in site.add([*warcs, lost]):
            assert res.status == "indexed", res
    (site.warcs_dir / lost.name).unlink()  # indexed, then lost
    return colls
