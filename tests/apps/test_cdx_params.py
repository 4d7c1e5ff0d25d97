"""Parameter parsing of /{collection}/cdx: every bad value is a ParamError naming the
parameter; wildcards, padding and sort rules as pywb/IA (see cdx_params docstring)."""

from __future__ import annotations

import pytest

from webark.apps.cdx.params import ParamError, ResumeKey, parse_params, ts_seconds
from webark.index.filters import CdxFilter, Collapse


def q(**kw: str):  # type: ignore[no-untyped-def]
    return parse_params(list(kw.items()))


def test_exact_default() -> None:
    p = q(url="http://www.example.com/a?b=2&a=1")
    assert p.match_type == "exact"
    assert p.key == "com,example)/a?a=1&b=2"
    assert (p.rng.start, p.rng.end) == ("com,example)/a?a=1&b=2", "com,example)/a?a=1&b=2!")
    assert p.sort == "asc" and p.output == "cdxj" and p.limit is None and p.simple


@pytest.mark.parametrize(
    ("url", "mt", "start", "end"),
    [
        ("*.example.com", "domain", "com,example)/", "com,example-"),
        ("example.com/path/*", "prefix", "com,example)/path/", "com,example)/path0"),
        ("example.com*", "prefix", "com,example)/", "com,example)0"),
    ],
)
def test_wildcards_without_match_type(url: str, mt: str, start: str, end: str) -> None:
    p = q(url=url)
    assert (p.match_type, p.rng.start, p.rng.end) == (mt, start, end)


def test_wildcard_is_literal_with_match_type() -> None:
    # pywb applies wildcards only when matchType is absent
    assert q(url="example.com/a*", matchType="exact").match_type == "exact"


@pytest.mark.parametrize(
    ("mt", "start", "end"),
    [
        ("host", "com,example)/", "com,example*"),
        ("domain", "com,example)/", "com,example-"),
        ("prefix", "com,example)/a", "com,example)/b"),
    ],
)
def test_match_types(mt: str, start: str, end: str) -> None:
    p = q(url="example.com/a", matchType=mt)
    assert (p.rng.start, p.rng.end) == (start, end)


def test_range_with_empty_url_is_whole_index() -> None:
    p = q(url="", matchType="range")
    assert (p.rng.start, p.rng.end) == ("", None)


def test_from_to_narrow_exact_range_and_pad() -> None:
    p = q(url="example.com", **{"from": "2014", "to": "201502"})
    assert p.from14 == "20140101000000" and p.to14 == "20150231235959"
    assert p.rng.start == "com,example)/ 20140101000000"
    assert p.rng.end == "com,example)/ 20150231235959!"


def test_from_to_carried_for_prefix() -> None:
    p = q(url="example.com/*", **{"from": "2014"})
    assert p.rng.start == "com,example)/" and p.rng.from_ts == "20140101000000"


def test_closest_pads_up_and_implies_sort() -> None:
    p = q(url="example.com", closest="2014")
    assert p.sort == "closest" and p.closest14 == "20141231235959"
    assert p.closest_sec == ts_seconds("20141231235959")
    assert q(url="example.com", closest="20140101120000", sort="closest").sort == "closest"


@pytest.mark.parametrize(
    ("params", "name"),
    [
        ({}, "url"),
        ({"url": ""}, "url"),
        ({"url": "example.com", "matchType": "hostx"}, "matchType"),
        ({"url": "example.com", "matchType": ""}, "matchType"),
        ({"url": "example.com", "from": "2014x"}, "from"),
        ({"url": "example.com", "from": "201401010000000"}, "from"),
        ({"url": "example.com", "to": ""}, "to"),
        ({"url": "example.com", "from": "2016", "to": "2015"}, "from"),
        ({"url": "example.com", "closest": "abc"}, "closest"),
        ({"url": "example.com", "closest": "20141399"}, "closest"),
        ({"url": "example.com", "sort": "closest"}, "closest"),
        ({"url": "example.com", "sort": "up"}, "sort"),
        ({"url": "example.com", "sort": "reverse", "closest": "2014"}, "closest"),
        ({"url": "example.com/*", "closest": "2014"}, "closest"),
        ({"url": "example.com", "limit": "0"}, "limit"),
        ({"url": "example.com", "limit": "-5"}, "limit"),
        ({"url": "example.com", "limit": "ten"}, "limit"),
        ({"url": "example.com", "limit": ""}, "limit"),
        ({"url": "example.com", "filter": ""}, "filter"),
        ({"url": "example.com", "filter": "~mime:(["}, "filter"),
        ({"url": "example.com", "filter": "bad field:x"}, "filter"),
        ({"url": "example.com", "fl": ""}, "fl"),
        ({"url": "example.com", "fl": "url,,mime"}, "fl"),
        ({"url": "example.com", "output": "xml"}, "output"),
        ({"url": "example.com", "output": "link", "fl": "url"}, "fl"),
        ({"url": "example.com", "collapse": "timestamp:0"}, "collapse"),
        ({"url": "example.com", "collapse": "timestamp:x"}, "collapse"),
        ({"url": "example.com", "collapse": ""}, "collapse"),
        ({"url": "example.com", "collapseTime": "15"}, "collapseTime"),
        ({"url": "example.com", "page": "-1"}, "page"),
        ({"url": "example.com", "pageSize": "0"}, "pageSize"),
        ({"url": "example.com", "showNumPages": "maybe"}, "showNumPages"),
        ({"url": "example.com", "resumeKey": "garbage"}, "resumeKey"),
        ({"url": "example.com", "page": "1", "resumeKey": "a)/ 2014 1"}, "page"),
        ({"url": "example.com", "closest": "2014", "page": "0"}, "page"),
        ({"url": "example.com", "output": "link", "showResumeKey": "true"}, "showResumeKey"),
        ({"url": "example.com", "digest": "x"}, "digest"),
        ({"digest": "sha1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", "sort": "reverse"}, "sort"),
        ({"url": "http://exa\x01mple.com/"}, "url"),
    ],
)
def test_bad_parameters_name_the_parameter(params: dict[str, str], name: str) -> None:
    with pytest.raises(ParamError) as err:
        parse_params(list(params.items()))
    assert err.value.param == name
    assert str(err.value).startswith(name + ":")


def test_repeated_single_parameter_is_an_error() -> None:
    with pytest.raises(ParamError) as err:
        parse_params([("url", "a.com"), ("url", "b.com")])
    assert err.value.param == "url"


def test_unknown_parameters_are_ignored() -> None:
    assert q(url="example.com", gzip="false", foo="bar").url == "example.com"


def test_filters_and_collapse_repeat() -> None:
    p = parse_params(
        [("url", "example.com"), ("filter", "!=status:200"), ("filter", "~mimetype:text/.*"),
         ("filter", "html"), ("collapse", "urlkey"), ("collapse", "timestamp:8")]
    )  # fmt: skip
    assert [(f.field, f.mode, f.invert, f.expr) for f in p.filters] == [
        ("status", "exact", True, "200"),
        ("mime", "regex", False, "text/.*"),
        ("", "contains", False, "html"),
    ]
    assert p.collapse == (Collapse("urlkey"), Collapse("timestamp", 8))
    assert not p.simple


def test_collapse_time_is_pywbs_time_and_status() -> None:
    assert q(url="a.com", collapseTime="10").collapse == (Collapse("timestamp", 10, True),)


def test_fl_aliases() -> None:
    assert q(url="a.com", fl="original,statuscode,mimetype,timestamp").fields == (
        "url", "status", "mime", "timestamp")  # fmt: skip


def test_output_text_is_cdxj() -> None:
    assert q(url="a.com", output="text").output == "cdxj"


def test_digest_without_url() -> None:
    p = q(digest="sha1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA")
    assert p.url is None and p.digest and not p.simple


def test_resume_key_round_trip() -> None:
    k = ResumeKey("com,example)/a?b=1 20140101000000", 3)
    from urllib.parse import unquote_plus

    assert ResumeKey.parse(unquote_plus(k.encode())) == k
    assert q(url="a.com", resumeKey="com,example)/ 20140101000000 2").resume == ResumeKey(
        "com,example)/ 20140101000000", 2)  # fmt: skip


def test_filter_whole_line_and_empty_exact() -> None:
    f = CdxFilter.parse("=redirect:")
    assert (f.field, f.mode, f.expr) == ("redirect", "exact", "")
    f = CdxFilter.parse("!screen.css 2014")
    assert (f.field, f.mode, f.invert) == ("", "contains", True)
