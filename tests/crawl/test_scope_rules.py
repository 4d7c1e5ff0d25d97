"""Scope: each decide rule on its own (Heritrix 3 semantics, real URL values)."""

from __future__ import annotations

import re

import pytest

from webark.crawl.curi import CrawlURI
from webark.crawl.scope import (
    AcceptDecideRule,
    ContentTypeMatchesRegexDecideRule,
    DecideRule,
    Decision,
    FetchedDecideRule,
    FetchStatusDecideRule,
    HopsPathMatchesRegexDecideRule,
    MatchesListRegexDecideRule,
    OnDomainsDecideRule,
    OnHostsDecideRule,
    PrerequisiteAcceptDecideRule,
    RejectDecideRule,
    SchemeNotInSetDecideRule,
    SeedAcceptDecideRule,
    SurtPrefixedDecideRule,
    TooManyHopsDecideRule,
    TransclusionDecideRule,
    build_scope,
    host_of,
)

A, R, N = Decision.ACCEPT, Decision.REJECT, Decision.NONE


def c(uri: str, hops: str = "", seed: bool = False) -> CrawlURI:
    return CrawlURI(uri, hops=hops, seed=seed)


def test_rules_satisfy_the_protocols() -> None:
    for rule in (
        AcceptDecideRule(),
        RejectDecideRule(),
        SurtPrefixedDecideRule(["http://(org,example,"]),
        TransclusionDecideRule(),
        MatchesListRegexDecideRule([r".*\.pdf"]),
    ):
        assert isinstance(rule, DecideRule)
    assert isinstance(ContentTypeMatchesRegexDecideRule("video/.*"), FetchedDecideRule)
    assert isinstance(FetchStatusDecideRule([404]), FetchedDecideRule)
    assert not isinstance(TooManyHopsDecideRule(), FetchedDecideRule)


def test_constant_rules_and_only_decision() -> None:
    assert AcceptDecideRule().decide(c("http://a.example/")) is A
    assert RejectDecideRule().decide(c("http://a.example/")) is R
    assert RejectDecideRule().only_decision is R
    assert TooManyHopsDecideRule().only_decision is R
    assert TransclusionDecideRule().only_decision is A


def test_decision_none_is_not_a_rule_decision() -> None:
    with pytest.raises(ValueError, match=r"ACCEPT or Decision\.REJECT"):
        TooManyHopsDecideRule(decision=Decision.NONE)


def test_seed_and_prerequisite_accept() -> None:
    assert SeedAcceptDecideRule().decide(c("http://a.example/", seed=True)) is A
    assert SeedAcceptDecideRule().decide(c("http://a.example/x", "L")) is N
    rule = PrerequisiteAcceptDecideRule()
    assert rule.decide(c("http://other.example/robots.txt", "LP")) is A
    assert rule.decide(c("dns:other.example", "P")) is A
    assert rule.decide(c("http://other.example/robots.txt", "PL")) is N
    assert rule.decide(c("http://a.example/")) is N


class TestSurtPrefixed:
    def test_seed_directory_prefix(self) -> None:
        rule = SurtPrefixedDecideRule(["http://(com,example,www,)/docs/"])
        assert rule.decide(c("http://www.example.com/docs/a.html", "L")) is A
        assert rule.decide(c("https://www.example.com/docs/sub/b.html", "LL")) is A
        assert rule.decide(c("http://www.example.com/other/", "L")) is N
        assert rule.decide(c("http://example.com/docs/a.html", "L")) is N
        assert rule.stats()["matched"] == {"http://(com,example,www,)/docs/": 2}

    def test_reject_decision_negative_prefixes(self) -> None:
        rule = SurtPrefixedDecideRule(["http://(com,example,www,)/private/"], R)
        assert rule.decide(c("http://www.example.com/private/x")) is R
        assert rule.decide(c("http://www.example.com/public/x")) is N

    def test_idn_unicode_partial_label(self) -> None:
        # A prefix written in Unicode, partial label: the seed text's question.
        rule = SurtPrefixedDecideRule(["http://(is,l"])
        assert rule.decide(c("http://landsbókasafn.is/")) is A
        assert rule.decide(c("https://xn--landsbkasafn-5hb.is/um/")) is A
        assert rule.decide(c("http://vedur.is/")) is N

    def test_unparseable_uri_is_no_match(self) -> None:
        rule = SurtPrefixedDecideRule(["http://(com,"])
        assert rule.decide(c("http://[::1/")) is N


@pytest.mark.parametrize(
    ("hops", "expected"),
    [("", N), ("L" * 20, N), ("L" * 21, R), ("L" * 19 + "EE", R), ("E", N)],
)
def test_too_many_hops(hops: str, expected: Decision) -> None:
    assert TooManyHopsDecideRule(20).decide(c("http://a.example/", hops)) is expected


@pytest.mark.parametrize(
    ("hops", "expected"),
    [
        ("", N),  # a seed: nothing to transclude
        ("L", N),  # a plain link
        ("E", A),
        ("LE", A),  # an image on a page reached by a link
        ("LEE", A),  # an image in a frame (CSS in a page…)
        ("LEEE", N),  # three embeds deep: too far
        ("LRE", A),  # redirects do not count
        ("LRRRE", A),
        ("LRRRRR", A),  # five redirects
        ("LRRRRRR", N),  # six: a redirect trap is not followed for ever
        ("L" * 25 + "R" * 30, N),
        ("LR", A),
        ("LX", A),
        ("LXE", A),
        ("LXX", N),  # two speculative hops
        ("EL", N),  # ends in a link
        ("LLEP", A),  # prerequisite of an embed: E + P = 2
        ("LI", A),
        ("LM", N),  # a sitemap entry is navigation (webark; Heritrix would accept)
        ("LME", A),
    ],
)
def test_transclusion_defaults(hops: str, expected: Decision) -> None:
    assert TransclusionDecideRule().decide(c("http://cdn.example.net/i.png", hops)) is expected


def test_redirect_trap_ends_in_the_default_chain() -> None:
    """An in-scope redirect chain ``/r1`` -> ``/r2`` -> ... is accepted by the SURT
    prefix, rejected by TooManyHops after 20 hops, and not accepted again by the
    transclusion rule that follows it (the redirects are capped)."""
    scope = build_scope({}, ["http://trap.example/"])
    assert scope.decide(c("http://trap.example/r20", "L" + "R" * 19)) is A
    assert scope.decide(c("http://trap.example/r21", "L" + "R" * 20)) is R
    assert scope.decide(c("http://trap.example/r60", "L" + "R" * 59)) is R
    # an embed behind a few redirects on another host is still accepted
    assert scope.decide(c("http://cdn.example.net/i.png", "LRRE")) is A


def test_transclusion_settings() -> None:
    assert TransclusionDecideRule(max_redirect_hops=0).decide(c("http://x.example/", "LR")) is N
    assert TransclusionDecideRule(max_trans_hops=1).decide(c("http://x.example/", "LEE")) is N
    assert TransclusionDecideRule(max_speculative_hops=0).decide(c("http://x.example/", "LX")) is N
    heritrix = TransclusionDecideRule(nav_hops="L")
    assert heritrix.decide(c("http://x.example/", "LM")) is A


def test_hops_path_regex_crawlrss() -> None:
    rule = HopsPathMatchesRegexDecideRule(r".R?((E{0,2})|XE?)")
    for hops in ("L", "LR", "LE", "LREE", "LX", "LXE", "I"):
        assert rule.decide(c("http://news.example/", hops)) is A, hops
    for hops in ("", "LL", "LEEE", "LXX", "LRR"):
        assert rule.decide(c("http://news.example/", hops)) is N, hops
    reject = HopsPathMatchesRegexDecideRule(re.compile(r".*X.*"), R)
    assert reject.decide(c("http://news.example/", "LXE")) is R


class TestMatchesListRegex:
    def test_or_counts_first_matching_regex(self) -> None:
        rule = MatchesListRegexDecideRule(
            [r".*/calendar/.*", r".*\?.*sid=.*", r".*\.(?:iso|dmg)"],
        )
        uris = [
            "http://www.example.com/calendar/2020/01/",
            "http://www.example.com/calendar/2020/02/?sid=123",  # both 0 and 1: counts 0
            "http://www.example.com/page?sid=abc",
            "http://www.example.com/dl/ubuntu.iso",
            "http://www.example.com/dl/setup.dmg",
            "http://www.example.com/dl/readme.txt",
        ]
        results = [rule.decide(c(u, "L")) for u in uris]
        assert results == [R, R, R, R, R, N]
        assert rule.stats() == {
            "regexes": [
                {"regex": r".*/calendar/.*", "count": 2},
                {"regex": r".*\?.*sid=.*", "count": 1},
                {"regex": r".*\.(?:iso|dmg)", "count": 2},
            ]
        }

    def test_regexes_match_the_whole_uri(self) -> None:
        rule = MatchesListRegexDecideRule([r"calendar"])  # Java matches(): whole string
        assert rule.decide(c("http://www.example.com/calendar/")) is N

    def test_and_and_negate(self) -> None:
        both = MatchesListRegexDecideRule([r"https://.*", r".*\.pdf"], logical_or=False)
        assert both.decide(c("https://a.example/x.pdf")) is R
        assert both.decide(c("http://a.example/x.pdf")) is N
        not_html = MatchesListRegexDecideRule([r".*\.html?", r".*/"], A, negate=True)
        assert not_html.decide(c("http://a.example/x.pdf")) is A
        assert not_html.decide(c("http://a.example/x.html")) is N
        assert not_html.stats()["regexes"][0]["count"] == 1

    def test_empty_list_never_matches(self) -> None:
        assert MatchesListRegexDecideRule([]).decide(c("http://a.example/")) is N
        assert MatchesListRegexDecideRule([], negate=True).decide(c("http://a.example/")) is N


class TestHostsAndDomains:
    def test_hosts_exact(self) -> None:
        rule = OnHostsDecideRule(["www.example.com", "Bücher.CH"], A)
        assert rule.decide(c("http://WWW.example.com:8080/x")) is A
        assert rule.decide(c("http://xn--bcher-kva.ch/")) is A
        assert rule.decide(c("http://example.com/")) is N
        assert rule.decide(c("http://sub.www.example.com/")) is N
        assert rule.decide(c("mailto:a@example.com")) is N

    def test_not_on_hosts(self) -> None:
        rule = OnHostsDecideRule(["www.example.com"], R, negate=True)
        assert rule.decide(c("http://cdn.example.com/")) is R
        assert rule.decide(c("http://www.example.com/")) is N

    def test_domains_suffix(self) -> None:
        rule = OnDomainsDecideRule(["example.com", ".landsbókasafn.is"], A)
        assert rule.decide(c("http://example.com/")) is A
        assert rule.decide(c("http://a.b.example.com/")) is A
        assert rule.decide(c("http://notexample.com/")) is N
        assert rule.decide(c("http://example.com.evil.net/")) is N
        assert rule.decide(c("http://vefsafn.xn--landsbkasafn-5hb.is/")) is A

    def test_domains_registered(self) -> None:
        rule = OnDomainsDecideRule(["www.bbc.co.uk"], A, registered=True)
        assert rule.domains == frozenset({"bbc.co.uk"})
        assert rule.decide(c("http://news.bbc.co.uk/")) is A
        assert rule.decide(c("http://bbc.co.uk/")) is A
        assert rule.decide(c("http://co.uk/")) is N
        assert rule.decide(c("http://itv.co.uk/")) is N
        suffix = OnDomainsDecideRule(["www.bbc.co.uk"], A)
        assert suffix.decide(c("http://news.bbc.co.uk/")) is N

    def test_not_on_domains(self) -> None:
        rule = OnDomainsDecideRule(["example.org"], R, negate=True)
        assert rule.decide(c("http://www.example.org/")) is N
        assert rule.decide(c("http://www.example.net/")) is R


def test_host_of() -> None:
    assert host_of("http://[2001:db8::1]:8080/") == "2001:db8::1"
    assert host_of("http://example.com./") == "example.com"
    assert host_of("http://[::1/") is None


@pytest.mark.parametrize(
    ("uri", "expected"),
    [
        ("http://a.example/", N),
        ("HTTPS://a.example/", N),
        ("dns:a.example", N),
        ("ftp://a.example/file", R),
        ("mailto:someone@a.example", R),
        ("javascript:void(0)", R),
        ("data:image/png;base64,AAAA", R),
    ],
)
def test_scheme_not_in_set(uri: str, expected: Decision) -> None:
    assert SchemeNotInSetDecideRule().decide(c(uri)) is expected


def test_scheme_set_configurable() -> None:
    rule = SchemeNotInSetDecideRule(["http", "https", "ftp"])
    assert rule.decide(c("ftp://a.example/f")) is N
    assert rule.decide(c("dns:a.example")) is R


def test_content_type_after_fetch() -> None:
    rule = ContentTypeMatchesRegexDecideRule(r"video/.*|application/x-iso9660-image")
    curi = c("http://a.example/v.mp4", "LE")
    assert rule.decide(curi) is N  # nothing known before the fetch
    assert rule.decide_fetched(curi, "video/mp4", 200) is R
    assert rule.decide_fetched(curi, "Video/MP4; codecs=avc1", 200) is R
    assert rule.decide_fetched(curi, "text/html; charset=utf-8", 200) is N
    assert rule.decide_fetched(curi, None, 200) is N
    keep_html = ContentTypeMatchesRegexDecideRule(r"text/html", A, negate=True)
    assert keep_html.decide_fetched(curi, "image/png", 200) is A
    assert keep_html.decide_fetched(curi, "text/html", 200) is N


def test_fetch_status() -> None:
    rule = FetchStatusDecideRule([404, 410, (500, 599), -404])
    curi = c("http://a.example/x")
    assert rule.decide(curi) is N
    assert [rule.decide_fetched(curi, "text/html", s) for s in (200, 404, 410, 503, 599, 600)] == [
        N,
        R,
        R,
        R,
        R,
        N,
    ]
    assert rule.decide_fetched(curi, None, -404) is R
    with pytest.raises(ValueError, match="low > high"):
        FetchStatusDecideRule([(599, 500)])
