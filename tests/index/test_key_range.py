"""key_range: the resolution API's url/matchType/from/to → KeyRange (pywb's
calc_search_range and CDXQuery; expected values transcribed from pywb's doctests)."""

from __future__ import annotations

import pytest

from webark.index.source import (
    KeyRange,
    digest_key,
    in_time,
    is_cdx_key,
    key_range,
    pad_from,
    pad_to,
    resolve_match,
)


@pytest.mark.parametrize(
    ("url", "match", "start", "end"),
    [
        # pywb/utils/canonicalize.py calc_search_range doctests
        (
            "http://example.com/path/file.html",
            "exact",
            "com,example)/path/file.html",
            "com,example)/path/file.html!",
        ),
        (
            "http://example.com/path/file.html",
            "prefix",
            "com,example)/path/file.html",
            "com,example)/path/file.htmm",
        ),
        ("http://example.com/path/", "prefix", "com,example)/path/", "com,example)/path0"),
        ("http://example.com/path?", "prefix", "com,example)/path?", "com,example)/path@"),
        ("http://example.com/path/?", "prefix", "com,example)/path?", "com,example)/path@"),
        ("http://example.com/path/file.html", "host", "com,example)/", "com,example*"),
        ("http://example.com/path/file.html", "domain", "com,example)/", "com,example-"),
        ("com", "domain", "com,", "com-"),
        # CDXQuery wildcards (pywb test_zipnum: '*.iana.org/path_part_ignored/')
        ("*.iana.org/path_part_ignored/", None, "org,iana)/", "org,iana-"),
        ("http://iana.org/time-zones*", None, "org,iana)/time-zones", "org,iana)/time-zonet"),
        ("http://iana.org/time-zones/*", None, "org,iana)/time-zones/", "org,iana)/time-zones0"),
        (
            "http://www.example.com/path?b=1&a=2",
            None,
            "com,example)/path?a=2&b=1",
            "com,example)/path?a=2&b=1!",
        ),
        # keys are taken as they are
        ("com,example)/a?b", "exact", "com,example)/a?b", "com,example)/a?b!"),
        ("com,example)/", "host", "com,example)/", "com,example*"),
    ],
)
def test_ranges_like_pywb(url: str, match: str | None, start: str, end: str) -> None:
    assert key_range(url, match) == KeyRange(start, end)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("url", "match", "want"),
    [
        (" *.example.com ", None, ("example.com", "domain")),
        ("example.com/*", None, ("example.com/", "prefix")),
        ("http://example.com/a", None, ("http://example.com/a", "exact")),
        ("*", None, ("", "prefix")),
        # a given matchType takes the URL literally (pywb CDXQuery)
        ("*.example.com", "host", ("*.example.com", "host")),
        ("example.com/a*", "exact", ("example.com/a*", "exact")),
    ],
)
def test_resolve_match(url: str, match: str | None, want: tuple[str, str]) -> None:
    assert resolve_match(url, match) == want  # type: ignore[arg-type]
    if want[0]:  # key_range resolves the same way
        assert key_range(url, match) == key_range(*want)  # type: ignore[arg-type]


def test_exact_from_to_narrow_the_range() -> None:
    r = key_range("http://example.com/", "exact", from_ts="2014", to_ts="201402")
    assert r.start == "com,example)/ 20140101000000"
    assert r.end == "com,example)/ 20140231235959!"
    assert (r.from_ts, r.to_ts) == ("20140101000000", "20140231235959")
    # a line at the last second of `to` is inside: " " (0x20) < "!" (0x21)
    assert r.start <= "com,example)/ 20140228235959 {...}" < r.end
    assert r.end <= "com,example)/ 20140301000000"


def test_prefix_from_to_only_filter() -> None:
    r = key_range("example.com/*", from_ts="2010", to_ts="2011")
    assert (r.start, r.end) == ("com,example)/", "com,example)0")
    assert (r.from_ts, r.to_ts) == ("20100101000000", "20111231235959")
    assert in_time(r, "20100101000000") and in_time(r, "20111231235959")
    assert not in_time(r, "20091231235959") and not in_time(r, "20120101000000")
    assert in_time(r, "20110615120000123")  # 17 digits: compared on 14


def test_range_match_type() -> None:
    assert key_range("com,example)/a", "range", end="com,example)/m") == KeyRange(
        "com,example)/a", "com,example)/m"
    )
    assert key_range("http://example.com/a", "range").end is None


def test_padding() -> None:
    assert pad_from("2") == "20000101000000"
    assert pad_to("2") == "29991231235959"
    assert pad_from("20140126200624") == pad_to("20140126200624") == "20140126200624"
    for bad in ("", "2014-01", "201401262006241", "２０１４"):
        with pytest.raises(ValueError):
            pad_from(bad)
    with pytest.raises(ValueError):
        key_range("http://example.com/", to_ts="x")
    with pytest.raises(ValueError):
        key_range("http://example.com/", "fuzzy")  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        key_range("  ")


def test_is_cdx_key() -> None:
    assert is_cdx_key("com,example)/")
    assert is_cdx_key("com,example:8080)/x")
    assert not is_cdx_key("http://example.com/a)/b")
    assert not is_cdx_key("example.com/a)/b")


def test_digest_key_accepts_every_encoding() -> None:
    b32 = "sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ"
    assert digest_key("3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ") == b32
    assert digest_key("sha1:da39a3ee5e6b4b0d3255bfef95601890afd80709") == b32  # hex
    assert digest_key("SHA-1:2jmj7l5rSw0yVb/vlWAYkK/YBwk=") == b32  # base64
    assert digest_key(" - ") == "-"
