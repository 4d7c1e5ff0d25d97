"""cdx_key(): the CDX URL key (pywb / OpenWayback / OutbackCDX compatible)."""

from __future__ import annotations

import pytest

from webark.url import cdx_key
from webark.url.surt import _cdx_key_cached


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("http://www.Example.com/path?b=1&a=2", "com,example)/path?a=2&b=1"),
        (
            "https://www2.example.com:443/A/?PHPSESSID=0123456789abcdefghijklemopqrstuv",
            "com,example)/a",
        ),
        ("http://example.com:8080/", "com,example:8080)/"),
        ("https://example.com:80/", "com,example:80)/"),
        ("http://example.com/a/./b/../c//d/", "com,example)/a/c/d"),
        ("http://example.com/%7Euser/%2541", "com,example)/~user/a"),
        ("http://example.com/caf%C3%A9?q=%E2%98%83", "com,example)/caf%c3%a9?q=%e2%98%83"),
        ("http://Bücher.example/", "example,xn--bcher-kva)/"),
        ("http://example.com/#section", "com,example)/"),
        ("http://3279880203/", "11,0,127,195)/"),
        ("http://192.168.1.254/info/", "254,1,168,192)/info"),
        ("http://[2001:db8::1]:8080/x", "2001:db8::1:8080)/x"),
        (
            "http://example.com/?jsessionid=0123456789abcdefghijklemopqrstuv&x=y",
            "com,example)/?x=y",
        ),
        ("http://example.com/(S(4hqa0555fwsecu455xqckv45))/mileg.aspx", "com,example)/mileg.aspx"),
        ("dns:www.archive.org", "dns:www.archive.org"),
        (
            "urn:uuid:6D3F4E2B-0000-4000-8000-000000000000",
            "urn:uuid:6d3f4e2b-0000-4000-8000-000000000000",
        ),
        ("warcinfo:foo.warc.gz", "warcinfo:foo.warc.gz"),
        (
            "metadata://netarkivet.dk/crawl/setup/order.xml?heritrixVersion=1.14.4",
            "dk,netarkivet)/crawl/setup/order.xml?heritrixversion=1.14.4",
        ),
        (
            "filedesc://IAH-20080430204825-00000-blackbook.arc",
            "filedesc://IAH-20080430204825-00000-blackbook.arc",
        ),
        ("", "-"),
        (None, "-"),
        ("   ", "-"),
    ],
)
def test_cdx_key(url: str | None, expected: str) -> None:
    assert cdx_key(url) == expected


def test_options() -> None:
    url = "http://www.example.com:8080/a"
    assert cdx_key(url, with_scheme=True) == "http://(com,example:8080)/a"
    assert cdx_key(url, trailing_comma=True) == "com,example:8080,)/a"
    assert cdx_key(url, host_massage=False) == "com,example,www:8080)/a"
    assert cdx_key("http://10.0.0.1/", reverse_ipaddr=False) == "10.0.0.1)/"
    assert cdx_key("http://10.0.0.1/") == "1,0,0,10)/"
    assert cdx_key("dns:example.com", with_scheme=True, trailing_comma=True) == "dns:example.com"


def test_bytes_in_bytes_out() -> None:
    assert cdx_key(b"http://www.example.com/caf\xe9") == b"com,example)/caf%e9"
    assert cdx_key(b"") == b"-"
    assert cdx_key(b"filedesc://x.arc") == b"filedesc://x.arc"


def test_text_with_surrogate_escapes_keeps_its_bytes() -> None:
    raw = b"http://example.com/caf\xe9"
    text = raw.decode("utf-8", "surrogateescape")
    assert cdx_key(text) == cdx_key(raw).decode("ascii") == "com,example)/caf%e9"


@pytest.mark.parametrize(
    "url",
    [
        "http://x:3000.cu",
        "http://example.com:99999/",
        "http://example.com:x/",
        "http://::1/",
        "http://%%300/",
        "http:%00%01",
        "http://\u0001\u0080.com/",
        "http:// leadingspace.com/",
        "\u0000 \u0000",
        "http://[::1",
        "http://\ud800/",
    ],
)
def test_malformed_urls_get_a_key(url: str) -> None:
    key = cdx_key(url)
    assert isinstance(key, str)
    assert key


def test_invalid_port_keeps_the_text_in_the_host() -> None:
    # python surt raises ValueError here; we give a key that keeps the URLs apart
    assert cdx_key("http://example.com:99999/a") == "com,example:99999)/a"
    assert cdx_key("http://example.com:x/a") == "com:x,example)/a"  # not a port


def test_results_are_memoized() -> None:
    _cdx_key_cached.cache_clear()
    cdx_key("http://www.example.com/memo")
    cdx_key("http://www.example.com/memo")
    info = _cdx_key_cached.cache_info()
    assert (info.hits, info.misses) == (1, 1)
    assert info.maxsize == 1 << 16
