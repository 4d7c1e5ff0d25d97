"""Scope SURTs, SURT prefixes from seeds, SurtPrefixSet, IDN prefix matching.

Reference values: Heritrix 3 ``SurtPrefixSetTest`` (commons/src/test/java/org/archive/
util/SurtPrefixSetTest.java), Heritrix's documented seed → prefix rules, and urlcanon's
parsing.json ``surt_ancestry`` lists.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

# as tests/conftest.py: shared/corpus beside the repository, else $WEBARK_CORPUS
from corpus_location import CORPUS
from webark.url import (
    InvalidURLError,
    SurtPrefixSet,
    as_prefix,
    candidate_surts,
    surt_form,
    surt_prefix_from_seed,
    to_scope_surt,
)


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("http://www.example.com/path", "http://(com,example,www,)/path"),
        ("http://www.Example.com/Path?Q=1#frag", "http://(com,example,www,)/path?q=1"),
        ("https://example.com:8443", "https://(com,example,:8443)/"),
        ("http://example.com:80/", "http://(com,example,)/"),
        ("http://user:pw@example.com/", "http://(com,example,)/"),
        ("http://127.0.0.1/x", "http://(127.0.0.1)/x"),
        ("http://[2001:db8::1]:8080/", "http://([2001:db8::1]:8080)/"),
        ("http://landsbókasafn.is/", "http://(is,xn--landsbkasafn-5hb,)/"),
        ("ftp://ftp.example.org/pub/", "ftp://(org,example,ftp,)/pub/"),
        ("dns:www.example.com", "dns:www.example.com"),
    ],
)
def test_to_scope_surt(url: str, expected: str) -> None:
    assert to_scope_surt(url) == expected


def test_to_scope_surt_rejects_unparsable_url() -> None:
    with pytest.raises(InvalidURLError):
        to_scope_surt("http://[::1")


@pytest.mark.parametrize(
    ("given", "options", "expected"),
    [
        ("http://www.example.com/a/b.html", {}, "http://(com,example,www,)/a/b.html"),
        ("http://Foo.Example.org/P", {"preserve_case": True}, "http://(org,Example,Foo,)/P"),
        ("http://10.1.2.3/", {"reverse_ipaddr": True}, "http://(3,2,1,10,)/"),
        ("http://example.com:81/", {"with_scheme": False}, "com,example,:81)/"),
        ("http://example.com/", {"trailing_comma": False}, "http://(com,example)/"),
        ("file:///a/b/c", {}, "file:///a/b/c"),
        ("mailto:a@example.com", {}, "mailto:a@example.com"),
    ],
)
def test_surt_form(given: str, options: dict[str, bool], expected: str) -> None:
    assert surt_form(given, **options) == expected


# Heritrix SurtPrefixSetTest.testImportFromUris
HERITRIX_SEED_PREFIXES = [
    ("http://www.archive.org/index.html", "http://(org,archive,www,)/"),
    ("http://timmknibbs4senate.blogspot.com/", "http://(com,blogspot,timmknibbs4senate,)/"),
    ("https://one.two.three", "http://(three,two,one,"),
    ("https://xone.two.three/a/b/c/", "http://(three,two,xone,)/a/b/c/"),
    ("https://yone.two.three/a/b/c", "http://(three,two,yone,)/a/b/"),
]
OTHER_SEED_PREFIXES = [
    ("http://www.example.com/a/b.html", "http://(com,example,www,)/a/"),
    ("http://www.example.com", "http://(com,example,www,"),
    ("http://www.example.com/", "http://(com,example,www,)/"),
    ("www.example.com", "http://(com,example,www,"),
    ("example.com:8080/x/", "http://(com,example,:8080)/x/"),
    ("  http://WWW.Example.COM/A/B  ", "http://(com,example,www,)/a/"),
    ("http://example.com/a?b=c", "http://(com,example,)/"),
    ("http://landsbókasafn.is", "http://(is,xn--landsbkasafn-5hb,"),
]


@pytest.mark.parametrize(("seed", "expected"), HERITRIX_SEED_PREFIXES + OTHER_SEED_PREFIXES)
def test_surt_prefix_from_seed(seed: str, expected: str) -> None:
    assert surt_prefix_from_seed(seed) == expected


@pytest.mark.parametrize(
    ("surt", "expected"),
    [
        ("http://(org,archive,www,)/index.html", "http://(org,archive,www,)/"),
        ("http://(org,archive,www,)", "http://(org,archive,www,"),
        ("http://(org,archive,www,)/a/b/", "http://(org,archive,www,)/a/b/"),
        ("http://(com,example,:8080)", "http://(com,example,:8080"),
    ],
)
def test_as_prefix(surt: str, expected: str) -> None:
    assert as_prefix(surt) == expected


def test_heritrix_surt_prefix_set_misc() -> None:
    """Heritrix SurtPrefixSetTest.testMisc, with our set keeping redundant prefixes
    (Heritrix's view is without_redundant())."""
    listing = [
        "# a test set of surt prefixes ",
        "http://(org,archive,",
        "http://(org,example,www,)",
        "http://(org,example,home,)/pages/",
        "http://(is,bok, # is redundant",
        "http://(is,",
        "http://(is,bok,www # is redundant",
    ]
    surts = SurtPrefixSet()
    for line in listing:
        entry = line.split("#")[0].strip()
        if entry:
            surts.add(entry)
    heritrix_view = surts.without_redundant()
    for kept in (
        "http://(org,archive,",
        "http://(org,example,www,)",
        "http://(org,example,home,)/pages/",
        "http://(is,",
    ):
        assert kept in heritrix_view
    assert "http://(is,bok," not in heritrix_view
    assert "http://(is,bok,www" not in heritrix_view
    assert "http://(is,bok," in surts  # kept here, for longest-prefix matching
    assert surts.longest_prefix(to_scope_surt("http://example.is/foo")) == "http://(is,"
    assert surts.longest_prefix(to_scope_surt("http://www.bok.is/")) == "http://(is,bok,www"
    assert surts.longest_prefix(to_scope_surt("http://home.example.org/foo")) is None


def test_longest_prefix_matching() -> None:
    prefixes = SurtPrefixSet(
        [
            "http://(com,",
            "http://(com,example,",
            "http://(com,example,www,)/",
            "http://(com,example,www,)/a/",
            "http://(com,example,www,)/a/b/",
            "http://(com,examplf,",
            "http://(com,example,wwx,",
        ]
    )
    assert prefixes.match("http://www.example.com/a/b/c") == "http://(com,example,www,)/a/b/"
    assert prefixes.match("http://www.example.com/a/c") == "http://(com,example,www,)/a/"
    assert prefixes.match("http://www.example.com/b") == "http://(com,example,www,)/"
    assert prefixes.match("http://sub.www.example.com/") == "http://(com,example,"
    assert prefixes.match("http://example.com/") == "http://(com,example,"
    assert prefixes.match("http://examplecom.com/") == "http://(com,"
    assert prefixes.match("http://wwx.example.com/") == "http://(com,example,wwx,"
    assert prefixes.match("http://example.org/") is None
    assert len(prefixes) == 7


def test_closing_comma_separates_domains() -> None:
    prefixes = SurtPrefixSet([surt_prefix_from_seed("http://example.com")])
    assert prefixes.accepts("http://example.com/")
    assert prefixes.accepts("http://www.example.com/x")
    assert not prefixes.accepts("http://example.community/")
    assert not prefixes.accepts("http://badexample.com/")


def test_https_is_treated_as_http() -> None:
    prefixes = SurtPrefixSet()
    prefixes.add_seed("https://www.example.com/a/")
    prefixes.add("https://(org,example,")
    assert list(prefixes) == ["http://(com,example,www,)/a/", "http://(org,example,"]
    assert prefixes.accepts("http://www.example.com/a/x")
    assert prefixes.accepts("https://www.example.com/a/x")
    assert prefixes.accepts("https://www.example.org/")
    assert not prefixes.accepts("ftp://www.example.com/a/x")


def test_from_lines_seeds_file() -> None:
    prefixes = SurtPrefixSet.from_lines(
        [
            "# seeds",
            "",
            "http://www.example.com/a/b.html   # a seed, comment after whitespace",
            "+http://(is,l",
            "+example.org",
            "+HTTP://(NET,EXAMPLE,)/Caps/",
        ]
    )
    assert list(prefixes) == [
        "http://(com,example,www,)/a/",
        "http://(is,l",
        "http://(net,example,)/caps/",
        "http://(org,example,",
    ]
    only_directives = SurtPrefixSet.from_lines(
        ["http://www.example.com/", "+example.org"], seeds_as_prefixes=False
    )
    assert list(only_directives) == ["http://(org,example,"]
    assert not prefixes.add_directive("http://not.a.directive/")


def test_duplicates_and_membership() -> None:
    prefixes = SurtPrefixSet(["http://(com,example,", "HTTP://(COM,EXAMPLE,"])
    assert len(prefixes) == 1
    assert "http://(com,example," in prefixes
    assert "https://(com,example," in prefixes
    assert 42 not in prefixes
    assert repr(prefixes) == "SurtPrefixSet(['http://(com,example,'])"


# ------------------------------------------------------------------------- IDN


def test_candidate_surts_give_punycode_and_unicode_forms() -> None:
    assert candidate_surts("https://landsbókasafn.is/x") == (
        "http://(is,xn--landsbkasafn-5hb,)/x",
        "http://(is,landsbókasafn,)/x",
    )
    assert candidate_surts("http://xn--landsbkasafn-5hb.is:8080/") == (
        "http://(is,xn--landsbkasafn-5hb,:8080)/",
        "http://(is,landsbókasafn,:8080)/",
    )
    assert candidate_surts("http://example.is/") == ("http://(is,example,)/",)


@pytest.mark.parametrize(
    "url",
    [
        "http://landsbókasafn.is/",
        "http://xn--landsbkasafn-5hb.is/",
        "https://www.landsbókasafn.is/x",
        "http://LANDSBÓKASAFN.IS/",
    ],
)
def test_unicode_prefix_matches_idn_host_in_any_form(url: str) -> None:
    """The seed text's question: should landsbókasafn.is match http://(is,l ? Yes."""
    prefixes = SurtPrefixSet(["http://(is,l"])
    assert prefixes.match(url) == "http://(is,l"


def test_heritrix_tests_only_the_punycode_form() -> None:
    # What Heritrix does: it compares the punycode SURT only, which does not start with
    # "http://(is,l" -- documented in docs/url-differences.md.
    assert not to_scope_surt("http://landsbókasafn.is/").startswith("http://(is,l")
    assert SurtPrefixSet(["http://(is,x"]).accepts("http://landsbókasafn.is/")


def test_idn_seed_prefix_matches_both_forms() -> None:
    prefixes = SurtPrefixSet()
    assert prefixes.add_seed("http://landsbókasafn.is/") == "http://(is,xn--landsbkasafn-5hb,)/"
    assert prefixes.accepts("http://xn--landsbkasafn-5hb.is/a")
    assert prefixes.accepts("http://landsbókasafn.is/a")
    unicode_prefixes = SurtPrefixSet(["http://(is,landsbókasafn,"])
    assert unicode_prefixes.accepts("http://xn--landsbkasafn-5hb.is/a")
    assert unicode_prefixes.accepts("http://www.landsbókasafn.is/")
    assert not unicode_prefixes.accepts("http://landsbokasafn.is/")


def test_nfc_normalization_of_unicode_prefixes() -> None:
    decomposed = "http://(is,landsbo\u0301kasafn,"  # o + combining acute accent
    assert SurtPrefixSet([decomposed]).accepts("http://landsbókasafn.is/")


# ---------------------------------------------------- urlcanon parsing.json ancestry
# For every well-formed URL, each SURT "ancestor" urlcanon lists must be a SURT prefix
# that matches the URL. Entries with malformed slashes ("http:/a", "http:\\a") are
# urlcanon parse-tree tests: their ancestry keeps the raw slashes, which our scope SURT
# (computed from the WHATWG-normalized URL) does not; see docs/url-differences.md.

PARSING = json.loads((CORPUS / "urlcanon" / "parsing.json").read_text(encoding="utf-8"))
NO_FRAGMENT = (
    "scope SURTs are computed from the normalized URL, which has no fragment (a "
    "fragment is never fetched), so a prefix ending in '#x' matches nothing"
)


def _ancestry_params() -> list[Any]:
    params = []
    for url, parsed in PARSING.items():
        if not (re.match(r"https?://[^/\\]", url) and url.isprintable()):
            continue
        for ancestor in parsed["surt_ancestry"]:
            marks = []
            if "#" in ancestor:
                marks.append(pytest.mark.xfail(strict=True, reason=NO_FRAGMENT))
            params.append(pytest.param(url, ancestor, marks=marks))
    return params


@pytest.mark.parametrize(("url", "ancestor"), _ancestry_params())
def test_urlcanon_surt_ancestors_match(url: str, ancestor: str) -> None:
    assert SurtPrefixSet([ancestor]).match(url) == ancestor
