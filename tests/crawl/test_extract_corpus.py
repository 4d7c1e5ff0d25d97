"""Extraction on real captured pages (node-warc books.toscrape, pywb iana) and speed."""

from __future__ import annotations

import time
from collections import Counter
from pathlib import Path

import pytest
from test_extract_html import responses

from webark.crawl.extract import extract_links

IANA_HOME = [
    ("E", "link/@href", "http://www.iana.org/_css/2013.1/screen.css"),
    ("E", "link/@href", "http://www.iana.org/_css/2013.1/print.css"),
    ("E", "link/@href", "http://www.iana.org/_img/bookmark_icon.ico"),
    ("E", "script/@src", "http://www.iana.org/_js/2013.1/jquery.js"),
    ("E", "script/@src", "http://www.iana.org/_js/2013.1/iana.js"),
    ("L", "a/@href", "http://www.iana.org/about/"),
    ("L", "a/@href", "http://www.iana.org/domains"),
    ("L", "a/@href", "http://www.iana.org/domains/root"),
    ("L", "a/@href", "http://www.iana.org/domains/root/db"),
    ("L", "a/@href", "http://www.iana.org/domains/int"),
    ("L", "a/@href", "http://www.iana.org/domains/arpa"),
    ("L", "a/@href", "http://www.iana.org/domains/idn-tables"),
    ("L", "a/@href", "http://www.iana.org/numbers"),
    ("L", "a/@href", "http://www.iana.org/abuse"),
    ("L", "a/@href", "http://www.iana.org/protocols"),
    ("L", "a/@href", "http://www.iana.org/protocols/apply"),
    ("L", "a/@href", "http://www.iana.org/time-zones"),
    ("L", "a/@href", "http://www.iana.org/reports/2013/customer-survey-20131210.pdf"),
    ("L", "form/@action", "http://gsa.icann.org/search"),
    ("L", "a/@href", "http://www.iana.org/about"),
    ("L", "a/@href", "http://www.iana.org/about/presentations"),
    ("L", "a/@href", "http://www.iana.org/reports"),
    ("L", "a/@href", "http://www.iana.org/performance"),
    ("L", "a/@href", "http://www.iana.org/reviews"),
    ("L", "a/@href", "http://www.iana.org/about/excellence"),
    ("L", "a/@href", "http://www.iana.org/contact"),
    ("E", "img/@src", "http://www.iana.org/_img/2013.1/icann-logo.svg"),
    ("L", "a/@href", "http://www.icann.org/"),
]


def test_iana_home_exact(corpus: Path) -> None:
    warc = responses(corpus / "pywb" / "warcs" / "iana.warc.gz")
    body, headers = warc["http://www.iana.org/"]
    got = [
        (lk.hop, lk.context, lk.url)
        for lk in extract_links("http://www.iana.org/", None, body, headers)
    ]
    assert got == IANA_HOME


def test_books_toscrape_home(corpus: Path) -> None:
    warc = responses(corpus / "node-warc" / "books.toscrape.warc")
    body, headers = warc["http://books.toscrape.com/"]
    links = extract_links("http://books.toscrape.com/", None, body, headers)
    assert Counter((lk.hop, lk.context) for lk in links) == {
        ("L", "a/@href"): 73,  # home, 50 categories + "Books", 20 books, page-2
        ("E", "img/@src"): 20,  # one cover per book
        ("E", "link/@href"): 4,  # favicon + 3 stylesheets
        ("E", "script/@src"): 5,
    }
    urls = {lk.url for lk in links}
    assert "http://books.toscrape.com/catalogue/page-2.html" in urls
    assert "http://books.toscrape.com/catalogue/category/books/travel_2/index.html" in urls
    assert "http://books.toscrape.com/static/oscar/favicon.ico" in urls
    assert "http://ajax.googleapis.com/ajax/libs/jquery/1.9.1/jquery.min.js" in urls
    assert all(lk.url.startswith("http") and "#" not in lk.url for lk in links)


def test_every_record_of_every_corpus_warc_is_safe(corpus: Path) -> None:
    """No crash on any response body of the test WARCs, whatever its type."""
    for name in [
        "node-warc/books.toscrape.warc",
        "pywb/warcs/iana.warc.gz",
        "webarchive-commons/link-extraction-test.warc",
        "pywb/warcs/example.warc.gz",
    ]:
        for url, (body, headers) in responses(corpus / name).items():
            for link in extract_links(url, None, body, headers):
                assert link.hop in "LEXRIM"


def test_speed_iana_html(corpus: Path) -> None:
    """Generous floor (measured ~200-340 pages/s, ~10-17 MB/s, on the dev box)."""
    warc = responses(corpus / "pywb" / "warcs" / "iana.warc.gz")
    pages = [
        (u, b, h)
        for u, (b, h) in warc.items()
        if any(n.lower() == "content-type" and v.startswith("text/html") for n, v in h)
    ]
    assert len(pages) >= 10
    start = time.perf_counter()
    for u, b, h in pages:
        extract_links(u, None, b, h)
    rate = len(pages) / (time.perf_counter() - start)
    assert rate > 10, f"{rate:.1f} pages/s"


@pytest.mark.parametrize(
    ("mime", "body"),
    [
        ("application/javascript", b'"' * 2_000_000),
        ("application/javascript", (b'"' + b"a" * 3000) * 500),
        ("text/css", b"url(" * 500_000),
        ("text/css", b"/*" + b"a" * 3_000_000),
        ("text/html", b"<div " + b"a=b " * 300_000 + b">"),
        ("text/html", b"<p><?php echo 1 ?></p>" * 50_000),
        ("application/rss+xml", b"<rss>" + b"<image>" * 200_000),
        ("application/rss+xml", b"<rss>" + b"<url><![CDATA[" * 5_000),
        ("text/xml", b"<urlset>" + b"<loc><![CDATA[" * 5_000),
        ("text/xml", b"<urlset>" + b"<!--" * 200_000),
    ],
    ids=[
        "js-quotes",
        "js-open-quotes",
        "css-url(",
        "css-comment",
        "html-attrs",
        "html-php",
        "rss-image",
        "rss-cdata",
        "sitemap-cdata",
        "xml-comments",
    ],
)
def test_pathological_inputs_are_fast(mime: str, body: bytes) -> None:
    """Inputs that blew up a regex (up to 25 s) or crashed lexbor while fuzzing."""
    start = time.perf_counter()
    extract_links("http://a.org/sitemap.xml", mime, body)
    assert time.perf_counter() - start < 5
