"""Scope: crawler-trap defences on generated trap URLs."""

from __future__ import annotations

import datetime as dt
import itertools
import re
import time

import pytest

from webark.crawl.curi import CrawlURI
from webark.crawl.scope import (
    Decision,
    PathologicalPathDecideRule,
    QueryExplosionDecideRule,
    TooManyPathSegmentsDecideRule,
    has_repeated_segments,
)

A, R, N = Decision.ACCEPT, Decision.REJECT, Decision.NONE


def c(uri: str, hops: str = "L") -> CrawlURI:
    return CrawlURI(uri, hops=hops)


def heritrix_regex(uri: str, max_repetitions: int) -> bool:
    """Heritrix PathologicalPathDecideRule's own regex, as the oracle."""
    return re.fullmatch(rf".*?/(.*?/)\1{{{max_repetitions},}}.*", uri, re.DOTALL) is not None


class TestPathologicalPath:
    @pytest.mark.parametrize(
        ("uri", "expected"),
        [
            ("http://example.com/a/a/a/boo.html", R),  # Heritrix's doc example
            ("http://example.com/a/a/boo.html", N),
            ("http://example.com/a/b/a/b/a/b/", R),  # a run of two segments, 3 times
            ("http://example.com/a/b/a/b/", N),
            ("http://example.com/docs/img/img/img/img/x.png", R),
            ("http://example.com/a/a/a", N),  # the last piece is no segment ("/" after)
            ("http://example.com/x///y", N),  # empty segment twice
            ("http://example.com/x////y", R),  # empty segment three times
            ("http://example.com/?p=x/a/a/a/", R),  # Heritrix tests the whole URI
            ("http://a/a/a/", R),  # …host included
            ("http://example.com/2020/01/01/2020/01/01/post", N),
        ],
    )
    def test_cases(self, uri: str, expected: Decision) -> None:
        assert PathologicalPathDecideRule().decide(c(uri)) is expected
        assert (expected is R) == heritrix_regex(uri, 2)

    def test_generated_trap_grows_until_rejected(self) -> None:
        # A relative link "a/" on /a/ pages: /a/, /a/a/, /a/a/a/ …
        rule = PathologicalPathDecideRule()
        uri = "http://trap.example/"
        depth_rejected = None
        for depth in range(1, 10):
            uri += "a/"
            if rule.decide(c(uri)) is R:
                depth_rejected = depth
                break
        assert depth_rejected == 3

    def test_same_as_heritrix_regex_on_generated_paths(self) -> None:
        segments = ["a", "b", ""]
        for reps in (1, 2, 3):
            for n in range(1, 7):
                for combo in itertools.product(segments, repeat=n):
                    uri = "http://h.example/" + "/".join(combo) + "/end"
                    assert has_repeated_segments(uri, reps) == heritrix_regex(uri, reps), (
                        uri,
                        reps,
                    )

    def test_zero_disables_and_negative_is_an_error(self) -> None:
        assert PathologicalPathDecideRule(0).decide(c("http://e.example/a/a/a/a/a/")) is N
        with pytest.raises(ValueError, match="max_repetitions"):
            PathologicalPathDecideRule(-1)

    def test_long_distinct_path_is_fast(self) -> None:
        uri = "http://e.example/" + "/".join(f"s{i}" for i in range(1000)) + "/"
        uri_dup = uri + "s0/x"  # one duplicate segment far apart: no quick exit
        start = time.perf_counter()
        assert PathologicalPathDecideRule().decide(c(uri)) is N
        assert PathologicalPathDecideRule().decide(c(uri_dup)) is N
        assert time.perf_counter() - start < 1.0


class TestTooManyPathSegments:
    @pytest.mark.parametrize(("slashes", "expected"), [(1, N), (20, N), (21, R), (40, R)])
    def test_depth(self, slashes: int, expected: Decision) -> None:
        path = "/d" * (slashes - 1) + "/index.html"
        uri = "http://www.example.com" + path
        assert uri.count("/") == slashes + 2
        assert TooManyPathSegmentsDecideRule().decide(c(uri)) is expected

    def test_query_and_authority_do_not_count(self) -> None:
        uri = "http://www.example.com/search?path=" + "/x" * 30
        assert TooManyPathSegmentsDecideRule().decide(c(uri)) is N
        assert TooManyPathSegmentsDecideRule(2).decide(c("http://e.example/a/b/c")) is R
        assert TooManyPathSegmentsDecideRule(3).decide(c("http://e.example/a/b/c")) is N


def calendar_urls(start: dt.date, days: int, path: str = "/cal") -> list[str]:
    return [
        f"http://www.example.com{path}?date={(start + dt.timedelta(days=i)).isoformat()}"
        for i in range(days)
    ]


class TestQueryExplosion:
    def test_calendar_trap_2020_to_2030(self) -> None:
        rule = QueryExplosionDecideRule(budget=100)
        urls = calendar_urls(
            dt.date(2020, 1, 1), (dt.date(2030, 12, 31) - dt.date(2020, 1, 1)).days
        )
        results = [rule.decide(c(u)) for u in urls]
        assert results[:100] == [N] * 100
        assert set(results[100:]) == {R}
        stats = rule.stats()
        assert stats["decided"] == len(urls) - 100
        assert stats["over_budget"] == {"http://www.example.com/cal": len(urls) - 100}
        # Accepted ones stay accepted when seen again; rejected ones stay rejected.
        assert rule.decide(c(urls[0])) is N
        assert rule.decide(c(urls[500])) is R

    def test_paths_are_separate_and_plain_urls_ignored(self) -> None:
        rule = QueryExplosionDecideRule(budget=2)
        assert [rule.decide(c(u)) for u in calendar_urls(dt.date(2024, 1, 1), 3)] == [N, N, R]
        other = calendar_urls(dt.date(2024, 1, 1), 2, path="/events")
        assert [rule.decide(c(u)) for u in other] == [N, N]
        assert rule.decide(c("http://www.example.com/cal")) is N  # no query
        assert rule.decide(c("http://other.example/cal?date=2024-01-03")) is N  # other host

    def test_date_like_only(self) -> None:
        rule = QueryExplosionDecideRule(budget=3, date_like_only=True)
        pages = [f"http://shop.example/index.php?id={i}" for i in range(50)]
        assert {rule.decide(c(u)) for u in pages} == {N}
        queries = [
            "date=2021-03-04",
            "day=20210305",
            "month=2021-04",
            "y=2021&m=5",
            "ts=1700000000",
            "d=06.05.2021",
        ]
        results = [rule.decide(c(f"http://shop.example/index.php?{q}")) for q in queries]
        assert results == [N, N, N, R, R, R]
        assert rule.stats()["paths_tracked"] == 1

    def test_state_is_bounded(self) -> None:
        rule = QueryExplosionDecideRule(budget=5, max_paths=100, report_paths=3)
        for p in range(1000):
            for q in range(8):
                rule.decide(c(f"http://e.example/p{p}?page={q}"))
        stats = rule.stats()
        assert stats["paths_tracked"] == 100
        assert stats["paths_evicted"] == 900
        assert stats["decided"] == 1000 * 3
        assert len(stats["over_budget"]) == 3
        assert all(len(s) <= 5 for s in rule._paths.values())

    def test_recently_used_path_is_kept(self) -> None:
        rule = QueryExplosionDecideRule(budget=1, max_paths=2)
        rule.decide(c("http://e.example/cal?d=1"))
        rule.decide(c("http://e.example/b?x=1"))
        rule.decide(c("http://e.example/cal?d=1"))  # touch /cal
        rule.decide(c("http://e.example/c?x=1"))  # evicts /b, not /cal
        assert rule.decide(c("http://e.example/cal?d=2")) is R
        assert rule.decide(c("http://e.example/b?x=2")) is N  # forgotten: budget anew

    def test_bad_settings(self) -> None:
        with pytest.raises(ValueError, match="budget"):
            QueryExplosionDecideRule(budget=0)
        with pytest.raises(ValueError, match="max_paths"):
            QueryExplosionDecideRule(max_paths=0)
        assert QueryExplosionDecideRule().only_decision is R
        assert QueryExplosionDecideRule(decision=A).decide(c("http://[::1/?a=1")) is N
