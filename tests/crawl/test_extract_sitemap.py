"""Sitemap extraction: urlset, sitemapindex, gzip, text, extensions, junk."""

from __future__ import annotations

import gzip

from webark.crawl.extract import Link, extract_links
from webark.crawl.extract.sitemap import SitemapExtractor

SM = "https://www.example.com/sitemap.xml"

URLSET = b"""<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"
        xmlns:image="http://www.google.com/schemas/sitemap-image/1.1"
        xmlns:xhtml="http://www.w3.org/1999/xhtml">
  <!-- <url><loc>https://www.example.com/commented-out</loc></url> -->
  <url>
    <loc>https://www.example.com/</loc>
    <lastmod>2024-01-01</lastmod>
    <xhtml:link rel="alternate" hreflang="de" href="https://www.example.com/de/"/>
  </url>
  <url><loc> https://www.example.com/catalog?item=12&amp;desc=vacation_hawaii </loc>
    <image:image><image:loc>https://img.example.com/hawaii.jpg</image:loc></image:image>
  </url>
  <url><loc><![CDATA[https://www.example.com/a&b]]></loc></url>
  <url><loc>ftp://www.example.com/file</loc></url>
  <url><loc>https://www.example.com/page#section</loc></url>
</urlset>"""

INDEX = b"""<?xml version="1.0" encoding="UTF-8"?>
<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
  <sitemap><loc>https://www.example.com/sitemap1.xml.gz</loc><lastmod>2024-10-01</lastmod></sitemap>
  <sitemap><loc>https://www.example.com/sitemap2.xml</loc></sitemap>
</sitemapindex>"""


def triples(links: list[Link]) -> list[tuple[str, str, str]]:
    return [(lk.hop, lk.context, lk.url) for lk in links]


def test_urlset() -> None:
    assert triples(extract_links(SM, "application/xml", URLSET)) == [
        ("M", "urlset/url/loc", "https://www.example.com/"),
        ("M", "urlset/url/loc", "https://www.example.com/catalog?item=12&desc=vacation_hawaii"),
        ("M", "urlset/url/image:loc", "https://img.example.com/hawaii.jpg"),
        ("M", "urlset/url/loc", "https://www.example.com/a&b"),
        ("M", "urlset/url/loc", "https://www.example.com/page"),
        ("M", "urlset/url/xhtml:link", "https://www.example.com/de/"),
    ]


def test_sitemapindex() -> None:
    assert triples(extract_links(SM, "text/xml", INDEX)) == [
        ("M", "sitemapindex/sitemap/loc", "https://www.example.com/sitemap1.xml.gz"),
        ("M", "sitemapindex/sitemap/loc", "https://www.example.com/sitemap2.xml"),
    ]


def test_gzip_sitemap_by_magic_number() -> None:
    url = "https://www.example.com/sitemap1.xml.gz"
    for mime in ("application/x-gzip", "application/xml", "application/octet-stream"):
        got = extract_links(url, mime, gzip.compress(INDEX))
        assert [lk.url for lk in got] == [
            "https://www.example.com/sitemap1.xml.gz",
            "https://www.example.com/sitemap2.xml",
        ], mime


def test_corrupt_gzip_is_empty() -> None:
    assert extract_links(SM + ".gz", "application/gzip", b"\x1f\x8b\x08garbage") == []


def test_text_sitemap() -> None:
    body = b"https://www.example.com/a\r\n\r\n  http://www.example.com/b  \nnot a url\n/rel\n"
    got = extract_links("https://www.example.com/sitemap.txt", "text/plain", body)
    assert triples(got) == [
        ("M", "text sitemap", "https://www.example.com/a"),
        ("M", "text sitemap", "http://www.example.com/b"),
    ]


def test_other_xml_and_plain_text_ignored() -> None:
    assert extract_links(SM, "application/xml", b"<svg><loc>http://a.org/</loc></svg>") == []
    assert extract_links("https://www.example.com/notes.txt", "text/plain", b"http://a.org/") == []


def test_broken_xml_still_yields() -> None:
    body = b"<urlset><url><loc>http://a.org/1</loc><url><loc>http://a.org/2</loc></urlset"
    assert [lk.url for lk in extract_links(SM, "text/xml", body)] == [
        "http://a.org/1",
        "http://a.org/2",
    ]


def test_no_entity_expansion() -> None:
    body = b"""<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol">
    <!ENTITY lol2 "&lol;&lol;&lol;&lol;">]><urlset><url><loc>http://a.org/&lol2;</loc></url></urlset>"""
    # html.unescape leaves unknown entities as written; nothing is expanded.
    assert [lk.url for lk in extract_links(SM, "text/xml", body)] == ["http://a.org/&lol2;"]


def test_handles() -> None:
    ex = SitemapExtractor()
    assert ex.handles("application/xml", "http://a/x")
    assert ex.handles("application/x-gzip", "http://a/sitemap_1.xml.gz")
    assert not ex.handles("application/x-gzip", "http://a/archive.tar.gz")
    assert ex.handles("text/plain", "http://a/sitemap.txt")
    assert not ex.handles("text/html", "http://a/sitemap")
