"""Scope: the decide-rule sequence, the Heritrix default chain, config and its errors."""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

import pytest

from webark.crawl.curi import CrawlURI
from webark.crawl.scope import (
    SCOPE_KEYS,
    AcceptDecideRule,
    DecideRuleSequence,
    Decision,
    MatchesListRegexDecideRule,
    RejectDecideRule,
    ScopeConfigError,
    SurtPrefixedDecideRule,
    TooManyHopsDecideRule,
    build_scope,
    seed_surt_prefixes,
)

A, R, N = Decision.ACCEPT, Decision.REJECT, Decision.NONE
SEED = "http://www.example.com/docs/"
DEEP19 = "".join(f"d{i}/" for i in range(19))  # 19 distinct directories
DEEP18 = DEEP19[: DEEP19.index("d18/")]


class Recorder:
    """A rule that records what it was asked and answers a fixed decision."""

    def __init__(self, answer: Decision, only: Decision | None = None) -> None:
        self.answer = answer
        self.only_decision = only
        self.asked: list[str] = []

    def decide(self, curi: CrawlURI) -> Decision:
        self.asked.append(curi.uri)
        return self.answer


def c(uri: str, hops: str = "", seed: bool = False) -> CrawlURI:
    return CrawlURI(uri, hops=hops, seed=seed)


class TestSequence:
    def test_last_non_none_wins(self) -> None:
        seq = DecideRuleSequence([Recorder(R), Recorder(A), Recorder(N)])
        assert seq.decide(c("http://a.example/")) is A
        seq = DecideRuleSequence([Recorder(A), Recorder(R), Recorder(N)])
        assert seq.decide(c("http://a.example/")) is R
        assert DecideRuleSequence([]).decide(c("http://a.example/")) is N
        assert DecideRuleSequence([Recorder(N)]).decide_with_rule(c("http://a.example/")) == (
            N,
            None,
        )

    def test_rule_that_cannot_change_the_decision_is_skipped(self) -> None:
        skipped = Recorder(R, only=R)
        asked = Recorder(R, only=R)
        seq = DecideRuleSequence([RejectDecideRule(), skipped, AcceptDecideRule(), asked])
        assert seq.decide(c("http://a.example/")) is R
        assert skipped.asked == []
        assert asked.asked == ["http://a.example/"]

    def test_duplicate_names_are_made_unique(self) -> None:
        seq = DecideRuleSequence([RejectDecideRule(), RejectDecideRule(), Recorder(A)])
        assert seq.names == ["RejectDecideRule", "RejectDecideRule#2", "Recorder"]

    def test_nested_sequence(self) -> None:
        inner = DecideRuleSequence(
            [TooManyHopsDecideRule(1), MatchesListRegexDecideRule([r".*\.exe"])], name="inner"
        )
        outer = DecideRuleSequence([AcceptDecideRule(), inner])
        assert outer.decide(c("http://a.example/x", "L")) is A
        assert outer.decide(c("http://a.example/x", "LL")) is R
        assert outer.decide_with_rule(c("http://a.example/x.exe", "L")) == (R, "inner")
        assert outer.stats()["rules"][1]["details"]["name"] == "inner"

    def test_stats_are_plain_data(self) -> None:
        seq = DecideRuleSequence(
            [
                RejectDecideRule(name="reject_by_default"),
                SurtPrefixedDecideRule(["http://(com,example,"], name="surt_prefixes"),
                MatchesListRegexDecideRule([r".*\.iso", r".*/tmp/.*"], name="reject_regex"),
            ]
        )
        for uri in (
            "http://example.com/a.iso",
            "http://example.com/tmp/x",
            "http://example.com/b.iso",
            "http://example.com/ok",
            "http://example.org/c.iso",  # rejected by default already: regex not asked
        ):
            seq.decide(c(uri, "L"))
        stats = seq.stats()
        json.dumps(stats)
        assert stats["decisions"] == {"ACCEPT": 1, "REJECT": 4, "NONE": 0}
        by_name = {r["name"]: r for r in stats["rules"]}
        assert by_name["reject_regex"]["evaluated"] == 4
        assert by_name["reject_regex"]["rejected"] == 3
        assert by_name["reject_regex"]["decided_reject"] == 3
        assert by_name["reject_regex"]["details"]["regexes"] == [
            {"regex": r".*\.iso", "count": 2},
            {"regex": r".*/tmp/.*", "count": 1},
        ]
        assert by_name["reject_by_default"]["decided_reject"] == 1
        assert by_name["surt_prefixes"]["decided_accept"] == 1


def decide(scope: DecideRuleSequence, uri: str, hops: str) -> tuple[Decision, str | None]:
    return scope.decide_with_rule(CrawlURI(uri, hops=hops))


class TestDefaultChain:
    """Seed http://www.example.com/docs/ with the defaults (Heritrix's profile scope)."""

    @pytest.fixture
    def scope(self) -> DecideRuleSequence:
        return build_scope({}, [SEED])

    def test_rule_order(self, scope: DecideRuleSequence) -> None:
        assert scope.names == [
            "reject_by_default",
            "surt_prefixes",
            "max_hops",
            "transclusion",
            "max_repetitions",
            "max_path_depth",
            "prerequisites",
            "schemes",
        ]

    @pytest.mark.parametrize(
        ("uri", "hops", "decision", "rule"),
        [
            (SEED, "", A, "surt_prefixes"),
            ("http://www.example.com/docs/a.html", "L", A, "surt_prefixes"),
            ("https://www.example.com/docs/guide/b.html", "LL", A, "surt_prefixes"),
            ("http://www.example.com/docs", "L", R, "reject_by_default"),  # not under /docs/
            ("http://www.example.com/other/", "L", R, "reject_by_default"),
            ("http://example.com/docs/a.html", "L", R, "reject_by_default"),
            ("http://www.example.com.evil.net/docs/", "L", R, "reject_by_default"),
            # embeds of out-of-scope resources: transclusion
            ("http://www.example.com/static/logo.png", "E", A, "transclusion"),
            ("http://cdn.example.net/img/photo.jpg", "LE", A, "transclusion"),
            ("http://cdn.example.net/css/bg.png", "LEE", A, "transclusion"),
            ("http://cdn.example.net/frame/x.png", "LEEE", R, "reject_by_default"),
            ("http://ads.example.net/x.js", "LXX", R, "reject_by_default"),
            ("http://www.example.com/old", "LR", A, "transclusion"),
            # but a link from an embed is not an embed
            ("http://cdn.example.net/about.html", "LEL", R, "reject_by_default"),
            # prerequisites of in-scope URIs
            ("http://cdn.example.net/robots.txt", "LEP", A, "transclusion"),
            ("dns:cdn.example.net", "LEP", A, "transclusion"),
            ("http://www.example.com/robots.txt", "LLLLP", A, "transclusion"),
            ("http://cdn.example.net/robots.txt", "LEEP", A, "prerequisites"),
            # hops
            ("http://www.example.com/docs/deep.html", "L" * 20, A, "surt_prefixes"),
            ("http://www.example.com/docs/deeper.html", "L" * 21, R, "max_hops"),
            # Heritrix order: transclusion comes after max_hops and overrides it
            ("http://cdn.example.net/deeper.png", "L" * 20 + "E", A, "transclusion"),
            ("http://www.example.com/docs/deeper.png", "L" * 19 + "EEE", R, "max_hops"),
            # traps inside the scope
            ("http://www.example.com/docs/a/a/a/index.html", "LLLL", R, "max_repetitions"),
            (
                "http://www.example.com/docs/" + DEEP19 + "x.html",
                "L",
                R,
                "max_path_depth",
            ),
            (
                "http://www.example.com/docs/" + DEEP18 + "x.html",
                "L",
                A,
                "surt_prefixes",
            ),
            # schemes
            ("ftp://www.example.com/docs/file.txt", "LE", R, "schemes"),
            ("mailto:docs@example.com", "LE", R, "schemes"),
        ],
    )
    def test_cases(
        self, scope: DecideRuleSequence, uri: str, hops: str, decision: Decision, rule: str
    ) -> None:
        assert decide(scope, uri, hops) == (decision, rule)

    def test_idn_seed_and_unicode_prefix(self) -> None:
        scope = build_scope({"surt_prefixes": ["http://(is,l"]}, ["https://vedur.is/"])
        assert decide(scope, "http://landsbókasafn.is/", "L") == (A, "surt_prefixes")
        assert decide(scope, "http://xn--landsbkasafn-5hb.is/x", "L") == (A, "surt_prefixes")
        assert decide(scope, "https://vedur.is/spa/", "L") == (A, "surt_prefixes")
        # a seed with a "/" after the host covers that host only (Heritrix)
        assert decide(scope, "http://www.vedur.is/", "L") == (R, "reject_by_default")
        assert decide(build_scope({}, ["vedur.is"]), "http://www.vedur.is/", "L")[0] is A
        assert decide(scope, "http://mbl.is/", "L") == (R, "reject_by_default")
        idn_seed = build_scope({}, ["http://bücher.ch/"])
        assert decide(idn_seed, "http://xn--bcher-kva.ch/a", "L")[0] is A
        assert decide(idn_seed, "https://Bücher.ch/b", "L")[0] is A
        assert decide(build_scope({}, ["bücher.ch"]), "http://www.bücher.ch/a", "L")[0] is A


class TestConfig:
    def test_options_build_the_rules(self) -> None:
        scope = build_scope(
            {
                "surt_prefixes": ["http://(org,example,", "+news.example.net"],
                "reject_surt_prefixes": ["http://(com,example,www,)/docs/private/"],
                "accept_hosts": ["static.example.org"],
                "accept_domains": ["example.edu"],
                "reject_hosts": ["ads.example.org"],
                "reject_regex": [r".*\.(?:iso|exe)", r".*[?&]sessionid=.*"],
                "accept_hops_regex": r".R?((E{0,2})|XE?)",
                "max_hops": 3,
                "query_explosion": {"budget": 10, "date_like_only": True},
                "reject_content_types": ["video/.*"],
                "reject_status": [404, "500-599"],
            },
            [SEED],
        )
        assert scope.names == [
            "reject_by_default",
            "surt_prefixes",
            "accept_domains",
            "accept_hosts",
            "accept_hops_regex",
            "max_hops",
            "transclusion",
            "reject_surt_prefixes",
            "reject_hosts",
            "reject_regex",
            "max_repetitions",
            "max_path_depth",
            "query_explosion",
            "prerequisites",
            "schemes",
            "reject_content_types",
            "reject_status",
        ]
        cases = [
            ("http://www.example.org/", "LL", A),
            ("http://ads.example.org/x", "L", R),
            ("http://news.example.net/today", "LL", A),
            ("http://static.example.org/x.css", "LLL", A),
            ("http://www.example.edu/x", "L", A),
            ("http://www.example.com/docs/private/a", "L", R),
            ("http://www.example.com/docs/setup.exe", "L", R),
            ("http://www.example.com/docs/a?x=1&sessionid=9", "L", R),
            ("http://www.example.com/docs/a", "LLLL", R),  # max_hops 3
            ("http://elsewhere.example/feed-item", "L", A),  # accept_hops_regex
        ]
        for uri, hops, expected in cases:
            assert scope.decide(CrawlURI(uri, hops=hops)) is expected, (uri, hops)
        fetched = CrawlURI("http://www.example.com/docs/v.mp4", hops="LE")
        assert scope.decide(fetched) is A
        assert scope.decide_fetched(fetched, "video/mp4", 200) is R
        assert scope.decide_fetched(fetched, "text/html", 200) is A
        assert scope.decide_fetched(fetched, "text/html", 404) is R
        assert scope.decide_fetched(fetched, "text/html", 503) is R
        stats = scope.stats()
        assert stats["fetched_decisions"] == {"ACCEPT": 1, "REJECT": 3, "NONE": 0}
        regex = next(r for r in stats["rules"] if r["name"] == "reject_regex")
        assert [x["count"] for x in regex["details"]["regexes"]] == [1, 1]

    def test_calendar_trap_through_config(self) -> None:
        scope = build_scope({"query_explosion": {"budget": 30}}, ["http://www.example.com/"])
        start = dt.date(2020, 1, 1)
        results = [
            scope.decide(
                CrawlURI(f"http://www.example.com/cal?date={start + dt.timedelta(days=i)}", "LL")
            )
            for i in range(3653)  # 2020-01-01 … 2029-12-31
        ]
        assert results.count(A) == 30
        assert results.count(R) == 3653 - 30
        rule = next(r for r in scope.stats()["rules"] if r["name"] == "query_explosion")
        assert rule["decided_reject"] == 3623
        assert rule["details"]["over_budget"] == {"http://www.example.com/cal": 3623}

    def test_query_explosion_true_and_out_of_scope_spends_no_budget(self) -> None:
        scope = build_scope({"query_explosion": True}, ["http://www.example.com/"])
        for i in range(500):
            scope.decide(CrawlURI(f"http://elsewhere.example/cal?d={i}", "L"))
        rule = next(r for r in scope.stats()["rules"] if r["name"] == "query_explosion")
        assert rule["evaluated"] == 0
        assert rule["details"]["paths_tracked"] == 0

    def test_registered_domains(self) -> None:
        scope = build_scope(
            {"accept_seed_registered_domains": True}, ["http://www.bbc.co.uk/news/"]
        )
        assert scope.decide(CrawlURI("http://downloads.bbc.co.uk/a", hops="L")) is A
        assert scope.decide(CrawlURI("http://www.itv.co.uk/a", hops="L")) is R
        scope = build_scope({"accept_domains": ["www.bbc.co.uk"], "domain_match": "registered"}, [])
        assert scope.decide(CrawlURI("http://news.bbc.co.uk/", hops="L")) is A

    def test_switches_off(self) -> None:
        scope = build_scope(
            {
                "max_hops": None,
                "max_trans_hops": 0,
                "max_repetitions": 0,
                "max_path_depth": None,
                "seeds_as_surt_prefixes": False,
                "schemes": ["http", "https", "dns", "ftp"],
            },
            [SEED, "+example.org"],
        )
        assert scope.names == ["reject_by_default", "surt_prefixes", "prerequisites", "schemes"]
        assert list(scope.rules[1].prefixes) == ["http://(org,example,"]  # type: ignore[attr-defined]
        assert scope.decide(CrawlURI("http://www.example.org/a/a/a/", "L" * 50)) is A
        # SURT prefixes read https as http, but no other scheme: ftp is not covered
        assert scope.decide(CrawlURI("ftp://www.example.org/f", "L")) is R

    def test_seed_file_lines(self) -> None:
        prefixes = seed_surt_prefixes(
            ["# seeds", "", "http://www.example.com/docs/  # the docs", "+http://(org,example,"]
        )
        assert list(prefixes) == ["http://(com,example,www,)/docs/", "http://(org,example,"]

    def test_none_config_is_the_default(self) -> None:
        assert build_scope(None, [SEED]).names == build_scope({}, [SEED]).names

    def test_every_key_is_documented(self) -> None:
        assert all(SCOPE_KEYS.values())


@pytest.mark.parametrize(
    ("config", "key", "message"),
    [
        ({"max_hop": 5}, "max_hop", "did you mean 'max_hops'?"),
        ({"max_hops": "twenty"}, "max_hops", "expected an integer >= 0 or null"),
        ({"max_hops": -1}, "max_hops", "write e.g. 'max_hops: 20'"),
        ({"max_hops": True}, "max_hops", "expected an integer"),
        ({"max_trans_hops": None}, "max_trans_hops", "expected an integer >= 0, got None"),
        ({"reject_regex": [r".*\.iso", r".*(", "ok"]}, "reject_regex[1]", "invalid regex '.*('"),
        ({"reject_regex": r".*\.iso"}, "reject_regex", "expected a list, got str"),
        ({"reject_regex": [3]}, "reject_regex[0]", "expected a non-empty string"),
        ({"accept_hops_regex": "L{2"}, "accept_hops_regex", ""),
        ({"accept_hops_regex": "(L"}, "accept_hops_regex", "missing )"),
        ({"surt_prefixes": ["http://[::1"]}, "surt_prefixes[0]", "SURT prefix like"),
        ({"seeds_as_surt_prefixes": "yes"}, "seeds_as_surt_prefixes", "true or false"),
        ({"domain_match": "exact"}, "domain_match", "'suffix' or 'registered'"),
        ({"schemes": []}, "schemes", "reject everything"),
        ({"reject_status": ["5xx"]}, "reject_status[0]", "'500-599'"),
        ({"reject_status": ["599-500"]}, "reject_status[0]", "low <= high"),
        ({"reject_content_types": ["video/(mp4"]}, "reject_content_types[0]", "invalid regex"),
        ({"query_explosion": {"budgit": 5}}, "query_explosion.budgit", "known: budget"),
        ({"query_explosion": {"budget": 0}}, "query_explosion.budget", ">= 1"),
        ({"query_explosion": 100}, "query_explosion", "expected a mapping"),
    ],
)
def test_config_errors_name_the_key(config: dict[str, Any], key: str, message: str) -> None:
    if key == "accept_hops_regex" and not message:
        build_scope(config, [SEED])  # "L{2" is a literal in Python's re: no error
        return
    with pytest.raises(ScopeConfigError) as info:
        build_scope(config, [SEED])
    assert info.value.key == key
    assert message in str(info.value)
    assert str(info.value).startswith(f"scope: {key}: ")


def test_bad_seed_names_its_index() -> None:
    with pytest.raises(ScopeConfigError) as info:
        build_scope({}, [SEED, "http://[::1/"])
    assert info.value.key == "seeds[1]"
    assert isinstance(info.value, ValueError)


def test_not_a_mapping() -> None:
    with pytest.raises(ScopeConfigError, match="expected a mapping"):
        build_scope(["max_hops", 3], [SEED])  # type: ignore[arg-type]
