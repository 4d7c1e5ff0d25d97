"""Response headers for replay, from recorded responses of the corpus."""

from __future__ import annotations

from pathlib import Path

from webark.rewrite.headers import (
    field_name,
    prefix_unsafe_headers,
    rewrite_headers,
    rewrite_link_header,
)
from webark.rewrite.urls import UrlRewriter
from webark.warc.reader import ArchiveReader

TS = "20140126200804"
P = f"/coll/{TS}"


def recorded(corpus: Path, url: str) -> tuple[int, list[tuple[str, str]]]:
    rec = next(r for r in ArchiveReader(corpus / "pywb/warcs/iana.warc.gz")
               if r.type == "response" and r.target_uri == url)
    assert rec.http is not None and rec.http.status is not None
    return rec.http.status, list(rec.http.headers)


def test_iana_redirect(corpus: Path) -> None:
    url = "http://www.iana.org/about/performance/ietf-statistics"
    status, headers = recorded(corpus, url)
    assert status == 302
    out = rewrite_headers(headers, UrlRewriter("/coll/", TS, url), status=status)
    assert out == [
        ("Server", "Apache"),
        ("Location", f"{P}/http://www.iana.org/performance/ietf-statistics"),
        ("Content-Type", "text/html; charset=iso-8859-1"),
        ("X-Archive-Orig-Content-Length", "212"),
        ("Accept-Ranges", "bytes"),
        ("X-Archive-Orig-Date", "Sun, 26 Jan 2014 20:08:04 GMT"),
        ("X-Varnish", "2084492286"),
        ("X-Archive-Orig-Age", "0"),
        ("Via", "1.1 varnish"),
        ("X-Archive-Orig-Connection", "close"),
    ]
    raw = prefix_unsafe_headers(headers, body_length=212)
    assert ("Content-Length", "212") in raw and ("X-Archive-Orig-Connection", "close") in raw
    # the server sends its own Date: the archived one would make a second Date field
    assert ("X-Archive-Orig-Date", "Sun, 26 Jan 2014 20:08:04 GMT") in raw
    assert not any(k.lower() == "date" for k, _ in raw)


def test_location_keeps_the_modifier_and_absolute_prefix() -> None:
    rw = UrlRewriter("http://127.0.0.1:8080/coll/", TS, "https://a.org/lib/x.js", "js_")
    out = rewrite_headers([("location", "../y.js"), ("Content-Location", "https://b.org/z")],
                          rw, status=301)
    assert out == [("location", f"http://127.0.0.1:8080{P}js_/https://a.org/y.js"),
                   ("Content-Location", f"http://127.0.0.1:8080{P}js_/https://b.org/z")]


def test_unsafe_and_caching_headers() -> None:
    headers = [("Set-Cookie", "a=1; path=/"), ("Content-Security-Policy", "default-src 'self'"),
               ("Strict-Transport-Security", "max-age=1"), ("Transfer-Encoding", "chunked"),
               ("Content-Encoding", "gzip"), ("Cache-Control", "max-age=60"), ("ETag", '"x"'),
               ("X-Frame-Options", "DENY"), ("Keep-Alive", "timeout=5"),
               ("Content-Type", "text/html"),
               ("Refresh", "3; url=/later"), ("Content-Range", "bytes 0-1/2"),
               ("X-Custom", "kept")]
    rw = UrlRewriter("/coll/", TS, "http://a.org/")
    out = dict(rewrite_headers(headers, rw, status=200))
    for name in ("Set-Cookie", "Content-Security-Policy", "Strict-Transport-Security",
                 "Transfer-Encoding", "Content-Encoding", "Cache-Control", "ETag",
                 "X-Frame-Options", "Keep-Alive", "Content-Range"):
        assert f"X-Archive-Orig-{name}" in out and name not in out, name
    assert out["Content-Type"] == "text/html" and out["X-Custom"] == "kept"
    assert out["Refresh"] == f"3; url={P}/http://a.org/later"
    passthrough = dict(rewrite_headers(headers, rw, status=206, body_rewritten=False))
    assert passthrough["Content-Encoding"] == "gzip"
    assert passthrough["Content-Range"] == "bytes 0-1/2"
    raw = dict(prefix_unsafe_headers([*headers, ("Content-Length", "10")]))
    assert raw["Content-Encoding"] == "gzip" and raw["Cache-Control"] == "max-age=60"
    assert "X-Archive-Orig-Set-Cookie" in raw and "X-Archive-Orig-Transfer-Encoding" in raw
    assert "X-Archive-Orig-Content-Length" in raw  # chunked: the length was not the body's


def test_link_header() -> None:
    rw = UrlRewriter("/coll/", TS, "http://a.org/page")
    value = ('</s.css>; rel=preload; as=style, <https://cdn.a.org/f.woff2>; rel=preload; '
             'as="font"; crossorigin, <http://a.org/page?p=2>; rel="next", '
             '</app.js>; rel=modulepreload')
    assert rewrite_link_header(value, rw) == (
        f'<{P}cs_/http://a.org/s.css>; rel=preload; as=style, <{P}im_/https://cdn.a.org/f.woff2>; '
        f'rel=preload; as="font"; crossorigin, <{P}/http://a.org/page?p=2>; rel="next", '
        f'<{P}js_/http://a.org/app.js>; rel=modulepreload')


def test_names_that_are_not_tokens_are_kept_inert() -> None:
    """node-warc writes Chrome's header names with spaces (``X-Content Type Options``):
    a server cannot send such a name (uvicorn dropped the connection), so it goes out
    as ``X-Archive-Orig-`` + the name percent-encoded, in both modes."""
    rec = [("Content-Type", "text/javascript"), ("X-Content Type Options", "nosniff"),
           ("Access-Control Allow Origin", "*"), ("Grüße", "x"), ("X-Ok%", "1")]  # fmt: skip
    r = UrlRewriter("/c/", "2018", "http://a.org/j.js", "js_")
    names = [n for n, _ in rewrite_headers(rec, r, status=200)]
    assert names == ["Content-Type", "X-Archive-Orig-X-Content%20Type%20Options",
                     "X-Archive-Orig-Access-Control%20Allow%20Origin",
                     "X-Archive-Orig-Gr%C3%BC%C3%9Fe", "X-Ok%"]  # fmt: skip
    assert [n for n, _ in prefix_unsafe_headers(rec)] == names
    assert field_name("") == "X-Archive-Orig-"
    assert field_name(":status") == "X-Archive-Orig-%3Astatus"
