"""The decide rules of the hybrid crawl: regex and hosts before the fetch, the
``troublesome`` heuristic after it, on real captured pages and app shells."""

from __future__ import annotations

from pathlib import Path

from test_extract_html import responses

from webark.crawl.browser.config import browser_settings
from webark.crawl.browser.rules import DelegationRules, page_signals, troublesome
from webark.crawl.extract import extract_links

SHELL = b"""<!doctype html><html><head><title>App</title>
<script type="module" src="/assets/index-4f2a.js"></script></head>
<body><div id="root"></div></body></html>"""

NEXT_SHELL = b"""<!doctype html><html><head><script src="/_next/main.js"></script></head>
<body><nav><a href="/">Home</a><a href="/a">A</a><a href="/b">B</a><a href="/c">C</a>
<a href="/d">D</a></nav><div id="__next"></div>
<script id="__NEXT_DATA__" type="application/json">{"props":{}}</script></body></html>"""

NOSCRIPT = b"""<html><body><h1>Shop</h1><p>Our catalogue of many fine products.</p>
<a href="/1">1</a><a href="/2">2</a><a href="/3">3</a><a href="/4">4</a><a href="/5">5</a>
<noscript>You need to <b>enable JavaScript</b> to run this app.</noscript></body></html>"""


def _hops(url: str, body: bytes) -> list[str]:
    return [lk.hop for lk in extract_links(url, "text/html", body, [])]


def test_before_fetch_regex_then_hosts() -> None:
    rules = DelegationRules(browser_settings({"regex": [r"/app/\d+$"], "hosts": ["spa.test"]}))
    assert rules.before_fetch("http://a.test/app/12") == r"regex:/app/\d+$"
    assert rules.before_fetch("http://a.test/app/12/x") is None
    assert rules.before_fetch("http://spa.test:8080/") == "host:spa.test"
    assert rules.before_fetch("https://www.spa.test/p") == "host:spa.test"
    assert rules.before_fetch("http://notspa.test/") is None
    # a page's embeds are loaded with it, never delegated as pages
    assert rules.before_fetch("http://spa.test/app.js", "E") is None
    assert rules.before_fetch("http://spa.test/next", "L") == "host:spa.test"
    off = DelegationRules(browser_settings({"enabled": False, "hosts": ["spa.test"]}))
    assert off.before_fetch("http://spa.test/") is None


def test_real_server_made_pages_are_not_troublesome(corpus: Path) -> None:
    rules = DelegationRules(browser_settings({}))
    iana = responses(corpus / "pywb" / "warcs" / "iana.warc.gz")
    url = "http://www.iana.org/"
    body = iana[url][0]
    s = page_signals(body, _hops(url, body).count("L"))
    assert (s.links, s.scripts, s.mount_point, s.noscript_asks_js) == (22, 2, False, False)
    assert rules.after_fetch(200, "text/html", body, _hops(url, body)) is None
    books = responses(corpus / "node-warc" / "books.toscrape.warc")
    pages = {u: b for u, (b, _) in books.items() if b.lstrip()[:9].lower() == b"<!doctype"}
    assert pages
    for u, b in pages.items():
        assert rules.after_fetch(200, "text/html; charset=utf-8", b, _hops(u, b)) is None, u


def test_script_made_pages_are() -> None:
    rules = DelegationRules(browser_settings({}))
    url = "http://spa.test/"
    assert rules.after_fetch(200, "text/html", SHELL, _hops(url, SHELL)) == "troublesome:few-links"
    s = page_signals(NEXT_SHELL, _hops(url, NEXT_SHELL).count("L"))
    assert (s.links, s.scripts, s.mount_point) == (5, 1, True)  # the JSON data is no script
    assert rules.after_fetch(200, "text/html", NEXT_SHELL, _hops(url, NEXT_SHELL)) == (
        "troublesome:app-shell"
    )
    assert rules.after_fetch(200, "text/html", NOSCRIPT, _hops(url, NOSCRIPT)) == (
        "troublesome:noscript"
    )
    # not 2xx, not HTML, heuristic off: never
    assert rules.after_fetch(404, "text/html", SHELL, ["E"]) is None
    assert rules.after_fetch(200, "text/html", SHELL, [], last_hop="E") is None  # an iframe
    assert rules.after_fetch(200, "application/json", SHELL, []) is None
    off = DelegationRules(browser_settings({"troublesome": False}))
    assert off.after_fetch(200, "text/html", SHELL, []) is None
    strict = browser_settings({"troublesome": {"max_links": 0, "app_shell": False,
                                               "noscript": False}})  # fmt: skip
    assert strict.troublesome is not None
    assert troublesome(page_signals(NEXT_SHELL, 5), strict.troublesome) is None
    assert troublesome(page_signals(SHELL, 0), strict.troublesome) == "few-links"


def test_a_speculative_page_of_a_rule_goes_to_the_browser_once_fetched() -> None:
    """A page found only in a script's strings (hop X, as the bulk crawler's JS extractor
    reaches script-made links) is left to the bulk fetch, then rendered when it is HTML
    and a regex/hosts rule names it (a new-user trial: with ``hosts`` set only the seed
    was rendered, its script-made pages were fetched as X and never given to the browser)."""
    rules = DelegationRules(browser_settings({"hosts": ["spa.test"], "troublesome": False}))
    page = b"<!doctype html><title>a</title><p>server-made text"
    assert rules.before_fetch("http://spa.test/a.html", "X") is None
    assert rules.after_fetch(200, "text/html", page, [], "X",
                             "http://spa.test/a.html") == "host:spa.test:speculative"
    # not an HTML page, not 2xx, another host, or reached by a link: not this way
    assert rules.after_fetch(200, "image/png", b"\x89PNG", [], "X", "http://spa.test/a.png") is None
    assert rules.after_fetch(404, "text/html", page, [], "X", "http://spa.test/a.html") is None
    assert rules.after_fetch(200, "text/html", page, [], "X", "http://other.test/a.html") is None
    assert rules.after_fetch(200, "text/html", page, [], "L", "http://spa.test/a.html") is None
