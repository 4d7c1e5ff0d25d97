"""The google/robotstxt test suite (robots_test.cc, transcribed into the corpus) run
against RobotsPolicy. Cases we answer differently are strict xfails, each listed with
its reason in docs/robots-differences.md."""

from __future__ import annotations

import json
from typing import Any

import pytest

from corpus_location import CORPUS
from webark.robots import (
    RobotsPolicy,
    decode_robots,
    is_valid_product_token,
    parse_robots,
    path_params_query,
)

_CASES_DOC = json.loads((CORPUS / "robots" / "google_robotstxt_cases.json").read_text("utf-8"))
CASES: list[dict[str, Any]] = _CASES_DOC["cases"]
EXTRAS: dict[str, Any] = json.loads(
    (CORPUS / "robots" / "google_robotstxt_extras.json").read_text("utf-8")
)

# index -> (rule_name, reason); the rule name guards against a reshuffled corpus file
DIFFERENCES: dict[int, tuple[str, str]] = {
    40: (
        "GoogleOnly_AcceptUserAgentUpToFirstSpace",
        "user_agent may be a whole User-Agent header: a group applies when its product "
        "token occurs in it ('foo' in 'Foo Bar'), as in protego and Heritrix; Google "
        "requires the caller to pass exactly one product token",
    ),
    63: (
        "ID_Encoding",
        "RFC 9309 2.2.2: non-ASCII octets of URL and rule are both percent-encoded before "
        "matching, so /foo/bar/ツ matches 'Allow: /foo/bar/ツ'; Google's library expects the "
        "caller to pass an already-encoded URL",
    ),
    65: (
        "ID_Encoding",
        "as case 63: the unencoded URL /foo/bar/ツ is encoded to /foo/bar/%E3%83%84 before "
        "matching and so matches 'Allow: /foo/bar/%E3%83%84'",
    ),
    66: (
        "ID_Encoding",
        "percent-encoded unreserved characters are equivalent to the characters (RFC 3986 "
        "6.2.2.2, RFC 9309 2.2.2 example table): 'Allow: /foo/bar/%62%61%7A' matches "
        "/foo/bar/baz; Google's test asserts the opposite and calls the input illegal",
    ),
}


def _case_params() -> list[Any]:
    params = []
    for i, case in enumerate(CASES):
        marks = []
        if i in DIFFERENCES:
            rule, reason = DIFFERENCES[i]
            assert case["rule_name"] == rule, f"corpus changed: case {i} is {case['rule_name']}"
            marks.append(pytest.mark.xfail(strict=True, reason=reason))
        params.append(pytest.param(case, id=f"{i:03d}-{case['rule_name']}", marks=marks))
    return params


def test_case_count() -> None:
    assert len(CASES) == 145


@pytest.mark.parametrize("case", _case_params())
def test_google_case(case: dict[str, Any]) -> None:
    policy = RobotsPolicy.from_text(case["robots_txt"])
    assert policy.allowed(case["url"], case["user_agent"]) is case["expected_allowed"]


@pytest.mark.parametrize(
    "case",
    EXTRAS["is_valid_user_agent_to_obey"],
    ids=lambda c: repr(c["user_agent"]),
)
def test_valid_product_token(case: dict[str, Any]) -> None:
    assert is_valid_product_token(case["user_agent"]) is case["expected_valid"]


@pytest.mark.parametrize("case", EXTRAS["get_path_params_query"], ids=lambda c: repr(c["url"]))
def test_path_params_query(case: dict[str, Any]) -> None:
    assert path_params_query(case["url"]) == case["expected_path"]


def _body(case: dict[str, Any]) -> bytes:
    if case["robots_txt"] is not None:
        return str(case["robots_txt"]).encode("utf-8")
    return bytes.fromhex(case["robots_txt_hex"])


@pytest.mark.parametrize(
    "case",
    EXTRAS["parse_report"],
    ids=lambda c: (
        f"{c['rule_name']}-{c['field']}-{(c['robots_txt'] or c['robots_txt_hex'])[:12]!r}"
    ),
)
def test_parse_report(case: dict[str, Any]) -> None:
    parsed = parse_robots(decode_robots(_body(case)))
    got = {
        "valid_directives": parsed.valid_directives,
        "unknown_directives": parsed.unknown_directives,
        "last_line_seen": parsed.lines,
        "sitemap": parsed.sitemaps[0] if parsed.sitemaps else None,
    }[case["field"]]
    assert got == case["expected"]


# MaybeEscapePattern (Google's pattern escaping) is internal to the matcher; its four
# cases are checked through the decisions they lead to.
@pytest.mark.parametrize(
    ("pattern", "url", "allowed"),
    [
        # kept as written: an absolute URL as a rule matches no path
        ("http://www.example.com", "http://www.example.com/", True),
        ("/a/b/c", "http://h/a/b/c/d", False),
        # non-ASCII is percent-encoded as UTF-8: á -> %C3%A1 (both spellings match)
        ("/\u00e1", "http://h/%C3%A1", False),
        ("/\u00e1", "http://h/\u00e1", False),
        # escapes compare case-insensitively: %aa == %AA
        ("/%aa", "http://h/%AA", False),
        ("/%AA", "http://h/%aa", False),
    ],
)
def test_pattern_escaping(pattern: str, url: str, allowed: bool) -> None:
    policy = RobotsPolicy.from_text(f"User-agent: *\nDisallow: {pattern}\n")
    assert policy.allowed(url, "FooBot") is allowed
