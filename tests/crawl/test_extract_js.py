"""Speculative JS extraction: what looks like a URL, and crawler traps that must not."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_extract_html import responses

from webark.crawl.extract import Link, extract_links
from webark.crawl.extract.js import JsExtractor, js_links, js_strings, looks_like_url

J = "http://example.org/static/app.js"


def found(code: str) -> list[str]:
    return [lk.url for lk in js_links(J, code)]


@pytest.mark.parametrize(
    "s",
    [
        "https://cdn.example.com/lib.js",
        "http://example.org",
        "//cdn.example.net/x/y",
        "/img/logo.png",
        "img/logo.png",
        "../page.html?x=1",
        "./a.json",
        "page.php",
        "/about/team",
        "/about/",
        "http://10.0.0.1/x",
        "/x.png#frag",
        "HTTPS://A.COM/",
    ],
)
def test_looks_like_url(s: str) -> None:
    assert looks_like_url(s)


@pytest.mark.parametrize(
    "s",
    [
        "text/css",
        "application/json",
        "window.location",
        "e.target",
        "1.2.3",
        "google-analytics.com",
        "/a",
        "/",
        "//",
        "a",
        "hello world",
        "/p?id=",
        "/search?q=x&",
        "/{id}/edit",
        "/user/${id}",
        "%s/%d.html",
        "http://localhost/",
        "//venobox-destination",
        "jquery.min",
        "width=550,height=300",
        "/a/b/a/b/a/b.html",
        "<a href='/x'>",
        "http://",
        "mailto:a@b.org",
        "/items/?page=",
        "/p/:id",
        "MM/DD/YYYY",
    ],
)
def test_does_not_look_like_url(s: str) -> None:
    assert not looks_like_url(s)


def test_string_forms_and_escapes() -> None:
    code = r"""a = "/x/one.png"; b = '/x/two.png'; c = `/x/three.png`; d = `/x/${n}.png`;
    e = "\/x\/four.png"; f = '\u002fx/five.png'; g = "/x/six.png\n"; """
    assert found(code) == [
        "http://example.org/x/one.png",
        "http://example.org/x/two.png",
        "http://example.org/x/three.png",
        "http://example.org/x/four.png",
        "http://example.org/x/five.png",
    ]


def test_crawler_trap_concatenations_not_extracted() -> None:
    # A calendar that builds /calendar/<year>/<month>/ at run time: following the
    # fragments (or guessing) is the classic trap. None of these may be extracted.
    code = """
    function next(y, m) {
      var url = "/calendar/" + y + "/" + (m + 1) + "/";
      location.href = base + "/calendar/index.html";
      load("/events/list.php?date=" + y + "-" + m);
      window.open('page-' + n + '.html');
      fetch(`/api/v1/items/${id}/related`);
      $.get("/search?q=" + q + "&page=" + p);
    }"""
    assert found(code) == []


def test_strings_not_spanning_lines() -> None:
    # An apostrophe in a comment must not swallow the code after the line.
    code = "// don't do this\nvar u = '/good/one.html';\n"
    assert found(code) == ["http://example.org/good/one.html"]


def test_resolution_against_script_url_and_non_http() -> None:
    code = "x='sprites/s.png'; y='javascript:void(0).js'; z='data:a.png'"
    assert found(code) == ["http://example.org/static/sprites/s.png"]


def test_plus_is_checked_on_both_sides() -> None:
    assert list(js_strings('a = "/x.png" +b; c = d+ "/y.png"; e = "/z.png"')) == ["/z.png"]


def test_extractor_handles() -> None:
    ex = JsExtractor()
    assert ex.handles("application/javascript", J)
    assert ex.handles("text/javascript", J)
    assert ex.handles("", "http://a/b/c.mjs")
    assert not ex.handles("text/html", J)
    assert not ex.handles("application/json", "http://a/data.json")
    assert list(ex.extract(J, b"\xff\xfe", "application/javascript", None)) == []


def test_context_and_hop() -> None:
    links = extract_links(J, "application/javascript", b'img.src = "/i/a.gif";')
    assert links == [Link("http://example.org/i/a.gif", "X", "js string")]


def test_real_jquery_yields_nothing(corpus: Path) -> None:
    """jQuery 1.9.1 (books.toscrape) and iana's jquery.js compare hrefs with "/a";
    no string in them is a URL worth fetching."""
    warc = responses(corpus / "node-warc" / "books.toscrape.warc")
    url = "http://ajax.googleapis.com/ajax/libs/jquery/1.9.1/jquery.min.js"
    body, headers = warc[url]
    assert extract_links(url, None, body, headers) == []
    iana = responses(corpus / "pywb" / "warcs" / "iana.warc.gz")
    url = "http://www.iana.org/_js/2013.1/jquery.js"
    body, headers = iana[url]
    assert extract_links(url, None, body, headers) == []


def test_xml_namespace_names_are_not_links() -> None:
    """``createElementNS("http://www.w3.org/2000/svg", …)`` names a namespace; a crawl
    of the python docs fetched it (a DNS lookup and a request to w3.org for nothing)."""
    code = (
        'document.createElementNS("http://www.w3.org/2000/svg", "svg");'
        "el.setAttributeNS('http://www.w3.org/1999/xlink', 'href', '#a');"
        'var x = "http://www.w3.org/1999/xhtml"; var y = "http://www.w3.org/2000/svg/";'
        'fetch("https://www.w3.org/2000/svg/logo.png");'
    )
    assert found(code) == ["https://www.w3.org/2000/svg/logo.png"]
