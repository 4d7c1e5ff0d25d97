"""UrlRewriter, refresh values and the rewrite-kind decision."""

from __future__ import annotations

import pytest

from webark.rewrite.mime import rewrite_kind
from webark.rewrite.refresh import rewrite_refresh
from webark.rewrite.urls import UrlRewriter

TS = "20140126200624"


@pytest.fixture
def rw() -> UrlRewriter:
    return UrlRewriter("/coll/", TS, "http://www.iana.org/domains/root/db.html")


@pytest.mark.parametrize(("ref", "mod", "expected"), [
    ("/_css/2013.1/screen.css", "cs_", f"/coll/{TS}cs_/http://www.iana.org/_css/2013.1/screen.css"),
    ("../x.png", "im_", f"/coll/{TS}im_/http://www.iana.org/domains/x.png"),
    ("//cdn.example.org/a.js", "js_", f"/coll/{TS}js_/http://cdn.example.org/a.js"),
    ("?a=1&b=2", None, f"/coll/{TS}/http://www.iana.org/domains/root/db.html?a=1&b=2"),
    ("  \n other.html \t", None, f"/coll/{TS}/http://www.iana.org/domains/root/other.html"),
    ("https://Example.COM:443/a/./b/../c#top", None, f"/coll/{TS}/https://example.com/a/c#top"),
    ("HTTP://example.com", "if_", f"/coll/{TS}if_/http://example.com/"),
    ("a b.html", None, f"/coll/{TS}/http://www.iana.org/domains/root/a%20b.html"),
    # non-ASCII comes back as written: the browser encodes it (query: page charset)
    ("/suche?q=Bücher", None, f"/coll/{TS}/http://www.iana.org/suche?q=Bücher"),
    ("/x?q=\udc93", None, f"/coll/{TS}/http://www.iana.org/x?q=\udc93"),
])
def test_rewrite_resolves_against_the_page(rw: UrlRewriter, ref: str, mod: str | None,
                                           expected: str) -> None:
    assert rw.rewrite(ref, mod) == expected


@pytest.mark.parametrize("ref", [
    "", "   ", "#top", "data:image/png;base64,AAAA", "javascript:void(0)",
    "JavaScript:alert(1)", "java\tscript:alert(1)", "mailto:iana@iana.org", "tel:+1-310",
    "about:blank", "blob:http://www.iana.org/1234", "ftp://ftp.iana.org/x",
    f"/coll/{TS}im_/http://www.iana.org/x.png", "/coll/http://www.iana.org/",
    "/coll/*/http://www.iana.org/", "/coll/2014*/https://www.iana.org/",
    "http://[::1", "http://a b/",
])
def test_left_alone(rw: UrlRewriter, ref: str) -> None:
    assert rw.rewrite(ref) == ref


def test_site_path_that_looks_like_the_prefix_is_rewritten(rw: UrlRewriter) -> None:
    # a site's own /coll/ path is not an archive URL (no timestamp + scheme after it)
    assert rw.rewrite("/coll/about.html") == f"/coll/{TS}/http://www.iana.org/coll/about.html"


def test_absolute_prefix_and_its_forms() -> None:
    rw = UrlRewriter("http://127.0.0.1:8080/web", TS, "https://example.org/a/", "mp_")
    assert rw.prefix == "http://127.0.0.1:8080/web/"
    assert rw.rewrite("b") == f"http://127.0.0.1:8080/web/{TS}mp_/https://example.org/a/b"
    for done in (f"http://127.0.0.1:8080/web/{TS}/https://x.org/",
                 f"//127.0.0.1:8080/web/{TS}/https://x.org/", f"/web/{TS}js_/https://x.org/"):
        assert rw.rewrite(done) == done
    assert rw.archive_prefix("") == f"http://127.0.0.1:8080/web/{TS}/"


def test_set_base_changes_resolution_and_ignores_bad_values(rw: UrlRewriter) -> None:
    rw.rewrite("x.css", "cs_")  # cached against the old base
    rw.set_base("https://static.iana.org/v2/")
    assert rw.rewrite("x.css", "cs_") == f"/coll/{TS}cs_/https://static.iana.org/v2/x.css"
    rw.set_base("../")  # relative to the current base
    assert rw.base == "https://static.iana.org/"
    rw.set_base("javascript:x")
    rw.set_base("http://[::1")
    assert rw.base == "https://static.iana.org/"


def test_empty_timestamp_means_latest() -> None:
    rw = UrlRewriter("/coll/", "", "http://a.org/")
    assert rw.rewrite("b") == "/coll/http://a.org/b"
    assert rw.rewrite("b", "im_") == "/coll/im_/http://a.org/b"


@pytest.mark.parametrize(("value", "expected"), [
    ("5; url=/next", f"5; url=/coll/{TS}/http://www.iana.org/next"),
    ("0;URL='http://example.com/'", f"0;URL='/coll/{TS}/http://example.com/'"),
    ("3, url = \"a.html\" ", f"3, url = \"/coll/{TS}/http://www.iana.org/domains/root/a.html\" "),
    ("0; http://example.com/x", f"0; /coll/{TS}/http://example.com/x"),
    ("30", "30"),
])
def test_refresh(rw: UrlRewriter, value: str, expected: str) -> None:
    assert rewrite_refresh(value, rw) == expected


@pytest.mark.parametrize(("mime", "url", "mod", "kind"), [
    ("text/html; charset=UTF-8", "http://a/", "", "html"),
    ("application/xhtml+xml", "http://a/", "mp_", "html"),
    ("text/html", "http://a/", "if_", "html"),
    ("text/html", "http://a/", "id_", "none"),
    ("text/css", "http://a/s.css", "cs_", "css"),
    ("application/x-javascript", "http://a/j", "js_", "js"),
    ("text/javascript; charset=utf-8", "http://a/j", "", "js"),
    ("text/html", "http://a/jsonp?cb=f", "js_", "js"),
    ("application/json", "http://a/api", "", "json"),
    ("application/activity+json", "http://a/api", "", "json"),
    ("image/png", "http://a/i.png", "", "none"),
    ("image/svg+xml", "http://a/i.svg", "im_", "none"),
    ("text/plain", "http://a/s.css?v=1", "", "css"),
    ("application/octet-stream", "http://a/lib.js", "", "js"),
    ("", "http://a/x", "cs_", "css"),
    ("text/plain", "http://a/robots.txt", "", "none"),
    ("warc/revisit", "http://a/", "", "none"),
])
def test_rewrite_kind(mime: str, url: str, mod: str, kind: str) -> None:
    assert rewrite_kind(mime, url, mod) == kind
