"""Protego's own test facts (corpus robots/protego_test_cases.json) run against
RobotsPolicy, which uses protego for matching but parses groups itself. Differences
are strict xfails, each listed in docs/robots-differences.md."""

from __future__ import annotations

import json
from typing import Any

import pytest

from corpus_location import CORPUS
from webark.robots import RobotsPolicy

FACTS: list[dict[str, Any]] = json.loads(
    (CORPUS / "robots" / "protego_test_cases.json").read_text("utf-8")
)

_TRANSCRIPTION = (
    "corpus transcription error: upstream asserts `start_time`/`end_time` `is not None` "
    "for this agent (and its .hour/.minute facts, which pass, give the window); the "
    "transcribed expectation is None"
)
_GROUPING = (
    "RFC 9309 2.2.4 / Google ID_LineSyntax_Groups_OtherRules: an unknown line does not "
    "close a group, so '*' shares the 'Disallow: /' of the following ia_archiver line; "
    "protego ends the group at the unknown line"
)

# index -> (upstream test name, kind, reason); names guard against a reshuffled file
DIFFERENCES: dict[int, tuple[str, str, str]] = {
    75: ("test_request_rate", "request_rate.start_time", _TRANSCRIPTION),
    76: ("test_request_rate", "request_rate.end_time", _TRANSCRIPTION),
    98: ("test_request_rate_bare_number", "request_rate.start_time", _TRANSCRIPTION),
    101: ("test_request_rate_bare_number", "request_rate.end_time", _TRANSCRIPTION),
    313: ("test_generosity", "request_rate.start_time", _TRANSCRIPTION),
    314: ("test_generosity", "request_rate.end_time", _TRANSCRIPTION),
    301: ("test_grouping_unknown_keys", "can_fetch", _GROUPING),
    302: ("test_grouping_unknown_keys", "can_fetch", _GROUPING),
    303: ("test_grouping_unknown_keys", "can_fetch", _GROUPING),
}


def _params() -> list[Any]:
    params = []
    for i, fact in enumerate(FACTS):
        marks = []
        if i in DIFFERENCES:
            test, kind, reason = DIFFERENCES[i]
            assert (fact["test"], fact["kind"]) == (test, kind), f"corpus changed at {i}"
            marks.append(pytest.mark.xfail(strict=True, reason=reason))
        params.append(pytest.param(fact, id=f"{i:03d}-{fact['test']}-{fact['kind']}", marks=marks))
    return params


def test_fact_count() -> None:
    assert len(FACTS) == 464


def _attr_path(value: Any, kind: str) -> Any:
    for name in kind.split(".")[1:]:
        value = getattr(value, name)
    return value


@pytest.mark.parametrize("fact", _params())
def test_protego_fact(fact: dict[str, Any]) -> None:
    policy = RobotsPolicy.from_text(fact["robots_txt"])
    kind: str = fact["kind"]
    expected = fact["expected"]
    if kind == "can_fetch":
        assert policy.allowed(fact["url"], fact["user_agent"]) is expected
    elif kind == "crawl_delay":
        assert policy.crawl_delay(fact["user_agent"]) == expected
    elif kind == "sitemaps":
        assert policy.sitemaps == expected
    elif kind == "sitemaps_count":
        assert len(policy.sitemaps) == expected
    elif kind == "sitemaps_contains":
        assert expected in policy.sitemaps
    elif kind == "preferred_host":
        assert policy.preferred_host == expected
    elif kind == "total_line_seen":
        assert policy.parsed.lines == expected
    elif kind == "total_directive_seen":
        assert policy.parsed.valid_directives == expected
    elif kind.startswith(("request_rate", "visit_time")):
        method = kind.split(".")[0]
        value = getattr(policy, method)(fact["user_agent"])
        if expected == "not None":
            assert value is not None
            return
        got = _attr_path(value, kind)
        if isinstance(expected, str):
            assert got.isoformat() == expected
        else:
            assert got == expected
    else:  # pragma: no cover - a new kind in the corpus must be handled here
        pytest.fail(f"unknown fact kind {kind!r}")
