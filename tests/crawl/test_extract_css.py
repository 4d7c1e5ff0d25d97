"""CSS link extraction: url(), @import, escapes, comments; real stylesheets."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_extract_html import responses

from webark.crawl.extract import Link, extract_links
from webark.crawl.extract.css import CssExtractor, css_links, css_references, unescape_css

S = "http://example.org/css/site.css"


def refs(css: str) -> list[tuple[str, str]]:
    return list(css_references(css))


@pytest.mark.parametrize(
    ("css", "expected"),
    [
        ("a{background:url(x.png)}", [("x.png", "css url()")]),
        ("a{background:URL( 'x y.png' )}", [("x y.png", "css url()")]),
        ('a{background:url("q\\"uote.png")}', [('q"uote.png', "css url()")]),
        ("a{b:url(p\\(1\\).png)}", [("p(1).png", "css url()")]),
        ("a{b:url(\\31 .png)}", [("1.png", "css url()")]),
        ('@import "a.css";', [("a.css", "css @import")]),
        ("@import 'b.css' screen;", [("b.css", "css @import")]),
        ("@import url(c.css);", [("c.css", "css url()")]),
        ('@IMPORT url("d.css") print;', [("d.css", "css url()")]),
        ("/* url(no.png) */ a{b:url(yes.png)}", [("yes.png", "css url()")]),
        ("a{b:url()}", [("", "css url()")]),
        (
            'a{b:image-set("i1.png" 1x, "i2.png" 2x)}',
            [("i1.png", "css image-set()"), ("i2.png", "css image-set()")],
        ),
        (
            "@font-face{src:url(f.woff2) format('woff2'),url(f.woff)}",
            [("f.woff2", "css url()"), ("f.woff", "css url()")],
        ),
    ],
)
def test_css_references(css: str, expected: list[tuple[str, str]]) -> None:
    assert refs(css) == expected


def test_unescape() -> None:
    assert unescape_css("a\\\nb") == "ab"
    assert unescape_css("\\0") == "\ufffd"
    assert unescape_css("\\110000") == "\ufffd"


def test_resolution_and_drops() -> None:
    css = """a{b:url(../img/a.png#frag)} c{d:url(data:image/png;base64,AAA=)}
    e{f:url(//cdn.example.net/f.png)} g{h:url(#svgfilter)} i{j:url(javascript:x)}"""
    assert list(css_links(S, css)) == [
        Link("http://example.org/img/a.png", "E", "css url()"),
        Link("http://cdn.example.net/f.png", "E", "css url()"),
    ]


def test_unterminated_and_garbage() -> None:
    for css in ["url(", "a{b:url('x", "@import", "/* never closed url(x.png)", "\x00" * 10]:
        list(css_links(S, css))


def test_extractor_handles_and_charset() -> None:
    ex = CssExtractor()
    assert ex.handles("text/css", S)
    assert ex.handles("", "http://a/b.CSS?v=1")
    assert not ex.handles("text/html", S)
    body = '@charset "iso-8859-1"; a{b:url(caf\xe9.png)}'.encode("latin-1")
    assert list(ex.extract(S, body, "text/css", None)) == [
        Link("http://example.org/css/caf%C3%A9.png", "E", "css url()")
    ]


def test_iana_screen_css(corpus: Path) -> None:
    """pywb's iana.warc.gz: @font-face url()s (relative ``fonts/``) and images."""
    warc = responses(corpus / "pywb" / "warcs" / "iana.warc.gz")
    url = "http://www.iana.org/_css/2013.1/screen.css"
    body, headers = warc[url]
    got = [(lk.hop, lk.context, lk.url) for lk in extract_links(url, None, body, headers)]
    base = "http://www.iana.org/_css/2013.1/fonts/"
    assert got == [
        ("E", "css url()", base + "OpenSans-Light.ttf"),
        ("E", "css url()", base + "OpenSans-Regular.ttf"),
        ("E", "css url()", base + "OpenSans-Semibold.ttf"),
        ("E", "css url()", base + "OpenSans-Bold.ttf"),
        ("E", "css url()", base + "Inconsolata.otf"),
        ("E", "css url()", "http://www.iana.org/_img/2011.1/icons/icon_alert.png"),
        ("E", "css url()", "http://www.iana.org/_img/2013.1/iana-logo-homepage.png"),
        ("E", "css url()", "http://www.iana.org/_img/2013.1/iana-logo-homepage@2x.png"),
        ("E", "css url()", "http://www.iana.org/_img/2013.1/iana-logo-header.svg"),
    ]


def test_books_toscrape_css(corpus: Path) -> None:
    """node-warc's books.toscrape.warc: font URLs as written (``%3F`` stays encoded)."""
    warc = responses(corpus / "node-warc" / "books.toscrape.warc")
    url = "http://books.toscrape.com/static/oscar/css/styles.css"
    body, headers = warc[url]
    got = {lk.url for lk in extract_links(url, None, body, headers)}
    f = "http://books.toscrape.com/static/oscar/fonts/"
    assert got == {
        f + "glyphicons-halflings-regular.eot",
        f + "glyphicons-halflings-regular.eot%3F",
        f + "glyphicons-halflings-regular.woff",
        f + "glyphicons-halflings-regular.ttf",
        f + "glyphicons-halflings-regular.svg",
        f + "fontawesome-webfont.eot%3Fv=3.2.1",
        f + "fontawesome-webfont.eot%3F",
        f + "fontawesome-webfont.woff%3Fv=3.2.1",
        f + "fontawesome-webfont.ttf%3Fv=3.2.1",
        f + "fontawesome-webfont.svg",
    }
