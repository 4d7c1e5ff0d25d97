"""Real robots.txt files collected by protego's authors (corpus robots/protego-real-world):
every file parses without error, and some real decisions, delays and sitemaps."""

from __future__ import annotations

from pathlib import Path

import pytest

from corpus_location import CORPUS
from webark.robots import RobotsPolicy

REAL = CORPUS / "robots" / "protego-real-world"
UA = "webark"


def _policy(name: str) -> RobotsPolicy:
    return RobotsPolicy.from_bytes((REAL / f"{name}.robots.txt").read_bytes())


def test_thirty_files() -> None:
    assert len(list(REAL.glob("*.robots.txt"))) == 30


@pytest.mark.parametrize("path", sorted(REAL.glob("*.robots.txt")), ids=lambda p: p.name)
def test_every_file_parses(path: Path) -> None:
    policy = RobotsPolicy.from_bytes(path.read_bytes())
    assert policy.allowed(f"http://{path.name.removesuffix('.robots.txt')}/robots.txt", UA)
    assert isinstance(policy.allowed("http://x/some/page.html", UA), bool)
    for sitemap in policy.sitemaps:
        assert sitemap.startswith(("http://", "https://")), sitemap


def test_wikipedia() -> None:
    p = _policy("en.wikipedia.org")
    assert p.decoded.encoding == "utf-8"  # the BOM is skipped
    w = "https://en.wikipedia.org"
    assert p.allowed(f"{w}/wiki/Web_archiving", UA)
    assert not p.allowed(f"{w}/w/index.php?title=Web_archiving&action=history", UA)
    assert not p.allowed(f"{w}/wiki/Special:Random", UA)
    assert not p.allowed(f"{w}/wiki/Special%3ARandom", UA)
    assert not p.allowed(f"{w}/trap/", UA)
    # the longest match wins: Allow: /w/api.php?action=mobileview& beats Disallow: /w/
    assert p.allowed(f"{w}/w/api.php?action=mobileview&page=x", UA)
    assert not p.allowed(f"{w}/w/api.php?action=query", UA)
    # a rule written with a raw UTF-8 character and its percent-encoded URL
    assert not p.allowed(f"{w}/wiki/Wikipedia:L%C3%B6schkandidaten/2024", UA)
    # named bots
    assert not p.allowed(f"{w}/wiki/Web_archiving", "MJ12bot")
    assert not p.allowed(f"{w}/wiki/Web_archiving", "Mediapartners-Google")
    assert p.allowed(f"{w}/wiki/Web_archiving", "IsraBot")
    assert p.allowed(f"{w}/w/index.php", "IsraBot")  # its own group: empty Disallow
    assert p.crawl_delay(UA) is None
    assert p.sitemaps == []


def test_archive_org() -> None:
    p = _policy("archive.org")
    assert p.sitemaps == ["https://archive.org/sitemap/sitemap.xml"]
    assert p.allowed("https://archive.org/details/texts", UA)
    assert not p.allowed("https://archive.org/details/goldenbull2007john/", UA)
    assert not p.allowed("https://archive.org/control/x", "Teoma")


def test_emirates_crawl_delay_and_host() -> None:
    p = _policy("www.emirates.com")
    assert p.crawl_delay(UA) == 3.0
    assert p.preferred_host == "www.emirates.com"
    assert p.sitemaps == ["https://www.emirates.com/sitemapindex.xml"]
    assert not p.allowed("https://www.emirates.com/SessionHandler.aspx", UA)
    assert not p.allowed("https://www.emirates.com/uk/english/pop-ups/x", UA)
    assert p.allowed("https://www.emirates.com/uk/english/", UA)


def test_meijer_request_rate_and_delay() -> None:
    p = _policy("www.meijer.com")
    assert p.crawl_delay(UA) == 10.0
    rate = p.request_rate(UA)
    assert rate is not None and (rate.requests, rate.seconds) == (1, 10)


def test_bni_crawl_delay() -> None:
    assert _policy("www.bni.co.id").crawl_delay(UA) == 10.0


def test_usps_utf16() -> None:
    p = _policy("store.usps.com")
    assert p.decoded.encoding == "utf-16"
    assert not p.allowed("https://store.usps.com/store/cart/", UA)
    assert p.allowed("https://store.usps.com/store/product/x", UA)
    assert p.sitemaps == ["https://store.usps.com/store/siteindex.xml"]


def test_dstv_bom_crlf_and_dollar() -> None:
    p = _policy("www.dstv.com")
    assert p.allowed("https://www.dstv.com/en-za/", UA)
    assert not p.allowed("https://www.dstv.com/en-za/search", UA)
    assert p.allowed("https://www.dstv.com/en-za/searching", UA)
    assert not p.allowed("https://www.dstv.com/en-za/search?q=x", UA)
    assert p.sitemaps == ["https://www.dstv.com/sitemap.xml"]


def test_prometric_cr_only_lines() -> None:
    p = _policy("www.prometric.com")
    assert p.parsed.lines == 4
    assert len(p.sitemaps) == 1


@pytest.mark.parametrize(
    "name", ["www.airindia.in", "www.moi.gov.tw", "cx.rightnow.com", "www.pch.com"]
)
def test_not_robots_txt_allows_everything(name: str) -> None:
    """HTML pages and an .ico image served as robots.txt hold no rules."""
    p = _policy(name)
    assert p.parsed.groups == () and p.parsed.valid_directives == 0
    assert p.allowed("http://h/any/path", UA)


def test_latin1_files() -> None:
    for name in ("www.europarl.europa.eu", "www.opentext.com"):
        assert _policy(name).decoded.encoding == "utf-8+latin-1"


def test_empty_file() -> None:
    p = _policy("www.keio.ac.jp")
    assert p.parsed.lines == 0 and p.allowed("http://www.keio.ac.jp/", UA)


def test_google() -> None:
    p = _policy("www.google.com")
    assert not p.allowed("https://www.google.com/search?q=web+archive", UA)
    assert p.allowed("https://www.google.com/search/about", UA)
    assert p.sitemaps == ["https://www.google.com/sitemap.xml"]


def test_github_named_groups() -> None:
    p = _policy("github.com")
    assert not p.allowed("https://github.com/owner/repo/sitemap.xml", "Googlebot")
    assert p.parsed.unknown_directives == 0


def test_misspelled_directives_are_understood() -> None:
    p = _policy("www.dbs.com")
    assert p.parsed.unknown_directives == 0
    assert len(p.sitemaps) == 2


def test_nytimes_and_bing_sitemaps() -> None:
    assert len(_policy("www.nytimes.com").sitemaps) == 6
    assert len(_policy("www.bing.com").sitemaps) == 6
    assert len(_policy("www.samsung.com").sitemaps) == 81
