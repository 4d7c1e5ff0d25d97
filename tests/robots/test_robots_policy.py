"""RobotsPolicy: HTTP status semantics, crawl modes, decoding limits, groups, delays."""

from __future__ import annotations

import codecs
import doctest
import importlib

import pytest

from webark.robots import (
    MAX_LINE_BYTES,
    MAX_ROBOTS_BYTES,
    RobotsMode,
    RobotsPolicy,
    RobotsStatus,
    decode_robots,
    status_for_http,
)

UA = "webark"
BLOCK_ALL = b"User-agent: *\nDisallow: /\n"


@pytest.mark.parametrize(
    ("http_status", "status"),
    [
        (200, RobotsStatus.PARSED),
        (204, RobotsStatus.PARSED),
        (301, RobotsStatus.UNAVAILABLE),  # redirects not followed to the end
        (401, RobotsStatus.UNAVAILABLE),
        (403, RobotsStatus.UNAVAILABLE),
        (404, RobotsStatus.UNAVAILABLE),
        (410, RobotsStatus.UNAVAILABLE),
        (429, RobotsStatus.UNREACHABLE),
        (500, RobotsStatus.UNREACHABLE),
        (503, RobotsStatus.UNREACHABLE),
        (None, RobotsStatus.UNREACHABLE),
        (100, RobotsStatus.UNREACHABLE),
        (999, RobotsStatus.UNREACHABLE),
    ],
)
def test_http_status_semantics(http_status: int | None, status: RobotsStatus) -> None:
    assert status_for_http(http_status) is status
    policy = RobotsPolicy.from_response(http_status, BLOCK_ALL)
    assert policy.status is status
    expected = {
        RobotsStatus.PARSED: False,  # the body says Disallow: /
        RobotsStatus.UNAVAILABLE: True,  # body ignored: allow all
        RobotsStatus.UNREACHABLE: False,  # disallow all
    }[status]
    assert policy.allowed("http://h/page", UA) is expected
    # robots.txt itself is always allowed, so it can be fetched again
    assert policy.allowed("http://h/robots.txt", UA)
    if status is RobotsStatus.PARSED:
        assert not policy.allowed("http://h/robots.txt.bak", UA)


def test_unreachable_has_no_delay_or_sitemaps() -> None:
    body = b"User-agent: *\nCrawl-delay: 5\nSitemap: http://h/s.xml\n"
    assert RobotsPolicy.from_response(200, body).crawl_delay(UA) == 5.0
    for p in (RobotsPolicy.from_response(503, body), RobotsPolicy.disallow_all()):
        assert p.crawl_delay(UA) is None and p.sitemaps == [] and p.body == b""
    assert RobotsPolicy.allow_all().allowed("http://h/x", UA)


@pytest.mark.parametrize(
    ("mode", "hop", "expected"),
    [
        (RobotsMode.OBEY, None, False),
        (RobotsMode.OBEY, "E", False),
        (RobotsMode.IGNORE, None, True),
        (RobotsMode.IGNORE, "L", True),
        (RobotsMode.OBEY_BUT_ALLOW_EMBEDS, "E", True),
        (RobotsMode.OBEY_BUT_ALLOW_EMBEDS, "X", True),
        (RobotsMode.OBEY_BUT_ALLOW_EMBEDS, "LLE", True),  # a whole hop path: last hop
        (RobotsMode.OBEY_BUT_ALLOW_EMBEDS, "LEL", False),
        (RobotsMode.OBEY_BUT_ALLOW_EMBEDS, "L", False),
        (RobotsMode.OBEY_BUT_ALLOW_EMBEDS, "R", False),
        (RobotsMode.OBEY_BUT_ALLOW_EMBEDS, None, False),
        ("obey-but-allow-embeds", "E", True),
        ("ignore", None, True),
    ],
)
def test_modes(mode: RobotsMode | str, hop: str | None, expected: bool) -> None:
    for policy in (RobotsPolicy.from_bytes(BLOCK_ALL), RobotsPolicy.disallow_all()):
        assert policy.allowed("http://h/img.png", UA, hop, mode=mode) is expected


def test_unknown_mode() -> None:
    with pytest.raises(ValueError):
        RobotsPolicy.allow_all().allowed("http://h/", UA, mode="classic")


def test_user_agent_matching() -> None:
    p = RobotsPolicy.from_text(
        "User-agent: webark\nDisallow: /private/\n\n"
        "User-agent: Googlebot/2.1\nDisallow: /g/\n\n"
        "User-agent: *\nDisallow: /\n"
    )
    assert p.allowed("http://h/page", "webark")
    assert p.allowed("http://h/page", "WebArk")
    assert not p.allowed("http://h/private/x", "webark")
    # a whole User-Agent header works too
    header = "Mozilla/5.0 (compatible; webark/0.1; +https://example.org/bot)"
    assert p.allowed("http://h/page", header)
    assert not p.allowed("http://h/private/x", header)
    # robots.txt token 'Googlebot/2.1' is read as 'Googlebot'
    assert not p.allowed("http://h/g/x", "Googlebot")
    assert p.allowed("http://h/page", "Googlebot")
    # no group: the '*' group
    assert not p.allowed("http://h/page", "otherbot")


def test_unknown_lines_do_not_close_a_group_but_crawl_delay_does() -> None:
    p = RobotsPolicy.from_text(
        "User-agent: a\nCrawl-delay: 7\nUser-agent: b\nCrawl-delay: 2\nDisallow: /b/\n"
        "User-agent: c\nFoo: bar\nUser-agent: d\nDisallow: /cd/\n"
    )
    assert p.crawl_delay("a") == 7.0 and p.crawl_delay("b") == 2.0
    assert p.allowed("http://h/b/x", "a") and not p.allowed("http://h/b/x", "b")
    assert not p.allowed("http://h/cd/x", "c") and not p.allowed("http://h/cd/x", "d")
    assert p.parsed.unknown_directives == 1


def test_rules_before_any_user_agent_are_ignored() -> None:
    p = RobotsPolicy.from_text("Disallow: /\nSitemap: http://h/s.xml\nUser-agent: x\nAllow: /\n")
    assert p.allowed("http://h/page", UA)
    assert p.sitemaps == ["http://h/s.xml"]


def test_crawl_delay_values() -> None:
    p = RobotsPolicy.from_text(
        "User-agent: a\nCrawl-delay: 0.5\n\nUser-agent: b\nCrawl-delay: soon\n\n"
        "User-agent: c\nCrawl-delay: -3\n\nUser-agent: *\nCrawl-delay: 300\n"
    )
    assert p.crawl_delay("a") == 0.5
    assert p.crawl_delay("b") is None
    assert p.crawl_delay("c") is None
    assert p.crawl_delay("other") == 300.0


def test_wildcards_and_precedence() -> None:
    p = RobotsPolicy.from_text(
        "User-agent: *\nDisallow: /*.pdf$\nDisallow: /shop\nAllow: /shop/public\nAllow: /page$\n"
        "Disallow: /page\n"
    )
    assert not p.allowed("http://h/a/b.pdf", UA)
    assert p.allowed("http://h/a/b.pdf?x=1", UA)
    assert not p.allowed("http://h/shop/cart", UA)
    assert p.allowed("http://h/shop/public/x", UA)
    assert p.allowed("http://h/page", UA)
    assert not p.allowed("http://h/page2", UA)


def test_disallow_all_with_empty_value_is_allow_all() -> None:
    p = RobotsPolicy.from_text("User-agent: *\nDisallow:\n")
    assert p.allowed("http://h/anything", UA)


# ---- decoding -----------------------------------------------------------------------------


def test_utf8_bom_and_partial_bom() -> None:
    for prefix in (codecs.BOM_UTF8, b"\xef\xbb", b"\xef"):
        p = RobotsPolicy.from_bytes(prefix + BLOCK_ALL)
        assert not p.allowed("http://h/x", UA), prefix


@pytest.mark.parametrize("codec", ["utf-16", "utf-16-be", "utf-32"])
def test_utf16_and_utf32_with_bom(codec: str) -> None:
    text = "User-agent: *\r\nDisallow: /caf\u00e9/\r\n"
    body = text.encode(codec)
    if codec == "utf-16-be":
        body = codecs.BOM_UTF16_BE + body
    p = RobotsPolicy.from_bytes(body)
    assert not p.allowed("http://h/caf%C3%A9/menu", UA)
    assert p.allowed("http://h/other", UA)


def test_latin1_line_fallback() -> None:
    body = b"User-agent: *\nDisallow: /caf\xe9/\nDisallow: /na\xc3\xafve/\n"
    p = RobotsPolicy.from_bytes(body)
    assert p.decoded.encoding == "utf-8+latin-1"
    # the Latin-1 line is read as U+00E9 and matched in its UTF-8 percent-encoding
    assert not p.allowed("http://h/caf%C3%A9/x", UA)
    # the UTF-8 line of the same file is still read as UTF-8
    assert not p.allowed("http://h/na%C3%AFve/x", UA)


def test_size_cap_keeps_whole_lines() -> None:
    head = b"User-agent: *\nDisallow: /a\n"
    filler = b"# " + b"x" * 98 + b"\n"
    body = head + filler * (MAX_ROBOTS_BYTES // len(filler)) + b"Disallow: /late\n"
    assert len(body) > MAX_ROBOTS_BYTES
    p = RobotsPolicy.from_bytes(body)
    assert p.decoded.truncated
    assert not p.allowed("http://h/a", UA)
    assert p.allowed("http://h/late", UA)  # after 500 KiB: ignored
    # a line cut by the cap is dropped, not shortened into a broader rule
    cut = head + b"#" * (MAX_ROBOTS_BYTES - len(head) - 3) + b"\nDisallow: /abc/def\n"
    assert decode_robots(cut).lines[-1].startswith("#")


def test_long_line_is_cut() -> None:
    long_path = "/x/" + "a" * (MAX_LINE_BYTES + 100)
    p = RobotsPolicy.from_text(f"User-agent: *\nDisallow: {long_path}/qux\n")
    assert p.decoded.long_lines == 1
    # the rule is cut at MAX_LINE_BYTES and so matches this URL
    assert not p.allowed("http://h" + long_path + "/fux", UA)


def test_splitlines_characters_do_not_split_rules() -> None:
    # \x85 (NEL) and U+2028 are line breaks for str.splitlines(), not for robots.txt
    p = RobotsPolicy.from_text("User-agent: *\nDisallow: /a\u2028b\n")
    assert not p.allowed("http://h/a%E2%80%A8b", UA)
    assert p.allowed("http://h/a", UA)


def test_binary_garbage() -> None:
    p = RobotsPolicy.from_bytes(bytes(range(256)) * 10)
    assert p.allowed("http://h/x", UA)
    assert p.parsed.groups == ()


def test_repr() -> None:
    assert "parsed" in repr(RobotsPolicy.from_bytes(BLOCK_ALL))


@pytest.mark.parametrize("name", ["webark.robots.text", "webark.robots.cache"])
def test_docstring_examples(name: str) -> None:
    result = doctest.testmod(importlib.import_module(name))
    assert result.failed == 0 and result.attempted > 0
