"""normalize() and join(): WHATWG URL parsing + RFC 3986 percent-encoding normalization.

Tables: WHATWG web-platform-tests urltestdata.json (as vendored by urlcanon),
urlcanon funky_ipv4.json and supplemental_whatwg.json, RFC 3986 §5.4 examples, and the
inputs of every urlcanon table as an idempotence corpus.

The vendored urltestdata.json and urlcanon's WHATWG tables predate some changes of the
WHATWG URL Standard; normalize()/join() follow the current standard (as browsers and
ada do), so those cases are strict xfails grouped by the change that explains them
(docs/url-differences.md, "WHATWG tables").
"""

from __future__ import annotations

import json
import socket
from typing import Any

import pytest

# as tests/conftest.py: shared/corpus beside the repository, else $WEBARK_CORPUS
from corpus_location import CORPUS
from webark.url import InvalidURLError, join, join_normalized, normalize, normalize_percent_encoding

URLCANON = CORPUS / "urlcanon"


def _load(name: str) -> Any:
    return json.loads((URLCANON / name).read_text(encoding="utf-8"))


def _text(value: str) -> str:
    """urlcanon writes byte strings as Latin-1 characters; give the UTF-8 text they
    encode when they do encode UTF-8 text (``"â\\x98\\x83"`` → ``"☃"``)."""
    try:
        return value.encode("latin-1").decode("utf-8")
    except (UnicodeEncodeError, UnicodeDecodeError):
        return value


def _expected_normal_form(href: str) -> str:
    """What normalize() claims for a URL the WHATWG serializer wrote: same URL without
    the fragment, with RFC 3986 §6.2.2 percent-encoding normalization."""
    return normalize_percent_encoding(href.partition("#")[0])


# ---------------------------------------------------------------- plain behaviour


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("HTTP://www.Example.COM:80/a/./b/../c?q=%7e#top", "http://www.example.com/a/c?q=~"),
        ("https://example.com:443", "https://example.com/"),
        ("http://example.com:8080/", "http://example.com:8080/"),
        ("http://Bücher.ch/x y", "http://xn--bcher-kva.ch/x%20y"),
        ("http://landsbókasafn.is/", "http://xn--landsbkasafn-5hb.is/"),
        ("http://0x7f.1/", "http://127.0.0.1/"),
        ("http://example.com/%7euser/%2fa%2Fb%41", "http://example.com/~user/%2Fa%2FbA"),
        ("http://example.com/?q=%e2%98%83", "http://example.com/?q=%E2%98%83"),
        ("http://example.com/a#", "http://example.com/a"),
        ("http://example.com/a?#f", "http://example.com/a?"),
        ("http://user:pw@example.com/", "http://user:pw@example.com/"),
        ("  http://example.com/\t", "http://example.com/"),
        ("http://[2001:DB8::1]:80/", "http://[2001:db8::1]/"),
        ("dns:www.archive.org", "dns:www.archive.org"),
    ],
)
def test_normalize(given: str, expected: str) -> None:
    assert normalize(given) == expected


@pytest.mark.parametrize(
    "bad", ["", "/relative/path", "example.com", "http://[::1", "http://exa mple.com/", "http://%/"]
)
def test_normalize_rejects(bad: str) -> None:
    with pytest.raises(InvalidURLError) as info:
        normalize(bad)
    assert isinstance(info.value, ValueError)
    assert info.value.url == bad


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("/%7euser/%2fa%2Fb%41", "/~user/%2Fa%2FbA"),
        ("%41%42%5a%61%7A%30%39%2D%2E%5F%7E", "ABZaz09-._~"),
        ("%2F%3a%40%25%20", "%2F%3A%40%25%20"),
        ("100%", "100%"),
        ("%%36%31", "%%36%31"),  # decoding would create the escape %61
        ("%%36%31%7e", "%%36%31~"),
        ("%2%35", "%2%35"),
        ("no escapes", "no escapes"),
    ],
)
def test_normalize_percent_encoding(given: str, expected: str) -> None:
    assert normalize_percent_encoding(given) == expected
    assert normalize_percent_encoding(expected) == expected


# RFC 3986 §5.4.1 and §5.4.2 (base "http://a/b/c/d;p?q"). Where the WHATWG standard
# differs from the RFC the WHATWG result is given and the RFC one noted.
RFC3986_BASE = "http://a/b/c/d;p?q"
RFC3986_EXAMPLES = [
    ("g:h", "g:h"),
    ("g", "http://a/b/c/g"),
    ("./g", "http://a/b/c/g"),
    ("g/", "http://a/b/c/g/"),
    ("/g", "http://a/g"),
    ("//g", "http://g/"),  # RFC: "http://g" (WHATWG serializes an empty path as "/")
    ("?y", "http://a/b/c/d;p?y"),
    ("g?y", "http://a/b/c/g?y"),
    ("#s", "http://a/b/c/d;p?q#s"),
    ("g#s", "http://a/b/c/g#s"),
    ("g?y#s", "http://a/b/c/g?y#s"),
    (";x", "http://a/b/c/;x"),
    ("g;x", "http://a/b/c/g;x"),
    ("g;x?y#s", "http://a/b/c/g;x?y#s"),
    ("", "http://a/b/c/d;p?q"),
    (".", "http://a/b/c/"),
    ("./", "http://a/b/c/"),
    ("..", "http://a/b/"),
    ("../", "http://a/b/"),
    ("../g", "http://a/b/g"),
    ("../..", "http://a/"),
    ("../../", "http://a/"),
    ("../../g", "http://a/g"),
    ("../../../g", "http://a/g"),
    ("../../../../g", "http://a/g"),
    ("/./g", "http://a/g"),
    ("/../g", "http://a/g"),
    ("g.", "http://a/b/c/g."),
    (".g", "http://a/b/c/.g"),
    ("g..", "http://a/b/c/g.."),
    ("..g", "http://a/b/c/..g"),
    ("./../g", "http://a/b/g"),
    ("./g/.", "http://a/b/c/g/"),
    ("g/./h", "http://a/b/c/g/h"),
    ("g/../h", "http://a/b/c/h"),
    ("g;x=1/./y", "http://a/b/c/g;x=1/y"),
    ("g;x=1/../y", "http://a/b/c/y"),
    ("g?y/./x", "http://a/b/c/g?y/./x"),
    ("g?y/../x", "http://a/b/c/g?y/../x"),
    ("g#s/./x", "http://a/b/c/g#s/./x"),
    ("g#s/../x", "http://a/b/c/g#s/../x"),
    ("http:g", "http://a/b/c/g"),  # the RFC's "for backward compatibility" reading
]


@pytest.mark.parametrize(("ref", "expected"), RFC3986_EXAMPLES)
def test_join_rfc3986_examples(ref: str, expected: str) -> None:
    assert join(RFC3986_BASE, ref) == expected


def test_join_keeps_fragment_and_rejects_bad_input() -> None:
    assert join("http://example.com/a/b", "c#frag") == "http://example.com/a/c#frag"
    assert normalize(join("http://example.com/a/b", "c#frag")) == "http://example.com/a/c"
    with pytest.raises(InvalidURLError):
        join("not a base", "x")
    with pytest.raises(InvalidURLError):
        join("http://example.com/", "http://[::1")


# --------------------------------------------------------------- WHATWG: urltestdata

WPT = [e for e in _load("urltestdata.json") if isinstance(e, dict)]

FRAGMENT_SPACE = (
    "current WHATWG URL Standard: the fragment percent-encode set includes space "
    "(the vendored WPT snapshot predates that change)"
)
GOPHER = (
    "current WHATWG URL Standard: gopher is no longer a special scheme (no default "
    "port 70, no authority implied); the vendored WPT snapshot predates that change"
)
FORBIDDEN_HOST = (
    "current WHATWG URL Standard: C0 controls and '<>^|%' are forbidden host code "
    "points, also in opaque hosts, so this is a failure now"
)
ENDS_IN_NUMBER = (
    "current WHATWG URL Standard: a host whose last label is a number is parsed as "
    "IPv4 ('ends in a number' rule) and fails here; the snapshot took it as a domain"
)
WPT_JOIN_XFAIL = {
    ("http://f:21/ b ? d # e ", "http://example.org/foo/bar"): FRAGMENT_SPACE,
    ("lolscheme:x x#x x", "about:blank"): FRAGMENT_SPACE,
    ("http://www.google.com/foo?bar=baz# »", "about:blank"): FRAGMENT_SPACE,
    ("data:test# »", "about:blank"): FRAGMENT_SPACE,
    ("gopher:/example.com/", "http://example.org/foo/bar"): GOPHER,
    ("gopher:example.com/", "http://example.org/foo/bar"): GOPHER,
    ("gopher://foo:70/", "about:blank"): GOPHER,
    ("gopher:/example.com/", "about:blank"): GOPHER,
    ("gopher:example.com/", "about:blank"): GOPHER,
    ("sc://\u001f!\"$&'()*+,-.;<=>^_`{|}~/", "about:blank"): FORBIDDEN_HOST,
    ("http://256.256.256.256.256", "http://other.com/"): ENDS_IN_NUMBER,
}
WPT_NORMALIZE_XFAIL = {
    "sc://%1F!\"$&'()*+,-.;<=>^_`{|}~/": FORBIDDEN_HOST,
    "http://256.256.256.256.256/": ENDS_IN_NUMBER,
}


def _wpt_join_params() -> list[Any]:
    params = []
    for i, e in enumerate(WPT):
        reason = WPT_JOIN_XFAIL.get((e["input"], e["base"]))
        marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
        params.append(pytest.param(e, marks=marks, id=f"{i}:{e['input']!r}"))
    return params


@pytest.mark.parametrize("entry", _wpt_join_params())
def test_wpt_join(entry: dict[str, Any]) -> None:
    if entry.get("failure"):
        with pytest.raises(InvalidURLError):
            join(entry["base"], entry["input"])
    else:
        assert join(entry["base"], entry["input"]) == entry["href"]


def _wpt_http_joins() -> list[Any]:
    """Every (base, input) of the WPT table that joins to an http(s) URL normalize()
    accepts, with the two-parse result as the expectation."""
    out = []
    for i, e in enumerate(WPT):
        try:
            joined = join(e["base"], e["input"]) if e.get("base") else None
            expected = normalize(joined) if joined else None
        except InvalidURLError:
            continue
        if expected and expected.startswith(("http://", "https://")):
            out.append(pytest.param(e["base"], e["input"], expected, id=f"{i}:{e['input']!r}"))
    return out


@pytest.mark.parametrize(("base", "ref", "expected"), _wpt_http_joins())
def test_join_normalized_is_normalize_of_join(base: str, ref: str, expected: str) -> None:
    """The crawler's one-parse resolution gives what normalize(join()) gives."""
    assert join_normalized(base, ref) == expected


def test_join_normalized_table_is_not_trivial() -> None:
    cases = _wpt_http_joins()
    assert len(cases) > 150
    assert any("#" in c.values[1] for c in cases)  # fragments in the references


def _wpt_href_params() -> list[Any]:
    params = []
    for i, e in enumerate(WPT):
        if e.get("failure"):
            continue
        reason = WPT_NORMALIZE_XFAIL.get(e["href"])
        marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
        params.append(pytest.param(e["href"], marks=marks, id=f"{i}:{e['href']!r}"))
    return params


@pytest.mark.parametrize("href", _wpt_href_params())
def test_wpt_normalize_of_serialized_url(href: str) -> None:
    """A URL as the WHATWG serializer writes it changes only by the two steps normalize()
    adds: fragment removal and percent-encoding normalization."""
    assert normalize(href) == _expected_normal_form(href)


# --------------------------------------------------------- urlcanon: funky_ipv4.json


@pytest.mark.parametrize(("host", "expected"), list(_load("funky_ipv4.json").items()))
def test_funky_ipv4_hosts(host: str, expected: str | None) -> None:
    """WHATWG IPv4 parsing of hosts such as ``0xa.07.9999``; ``null`` means "not an IPv4
    address": under the current standard the URL is then either rejected (the host ends
    in a number) or the host stays a domain name."""
    try:
        got = normalize(f"http://{host}/")
    except InvalidURLError:
        assert expected is None
        return
    if expected is None:
        assert got == f"http://{host.lower()}/"
        assert not got.removeprefix("http://").rstrip("/").replace(".", "").isdigit()
    else:
        assert got == f"http://{expected}/"


# ------------------------------------------------- urlcanon: supplemental_whatwg.json

PERCENT_IN_HOST = (
    "current WHATWG URL Standard: '%' (or a space, after percent-decoding) is a "
    "forbidden domain code point, so the URL is rejected; urlcanon's table predates that"
)
DOTS_HOST = (
    "current WHATWG URL Standard: a host of dots ('.', '..', '...' after "
    "percent-decoding) is a domain, not 0.0.0.0 (empty labels are no IPv4 numbers)"
)
NEEDS_SCHEME = (
    "normalize() takes absolute URLs only and raises InvalidURLError; urlcanon passes "
    "scheme-less text through unchanged"
)
SUPPLEMENTAL_XFAIL = {
    "http://09/": ENDS_IN_NUMBER,
    "www.google.com": NEEDS_SCHEME,
    "www.google.com/": NEEDS_SCHEME,
    "file://%": PERCENT_IN_HOST,
    "file://%/a/b": PERCENT_IN_HOST,
    "http://%/": PERCENT_IN_HOST,
    "http:/%/": PERCENT_IN_HOST,
    "http:%/": PERCENT_IN_HOST,
    "http://info@merseburger.de%20/": PERCENT_IN_HOST,
    **{
        f"{prefix}{dots}/a/b": DOTS_HOST
        for prefix in ("http:", "http:/", "http://", "http:///")
        for dots in ("%2e", "%2e%2e", "%2e%2e%2e")
    },
    **{f"file://{dots}/a/b": DOTS_HOST for dots in ("%2e", "%2e%2e", "%2e%2e%2e")},
}


def _supplemental_params() -> list[Any]:
    params = []
    for given, expected in _load("supplemental_whatwg.json").items():
        reason = SUPPLEMENTAL_XFAIL.get(_text(given))
        marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
        params.append(pytest.param(_text(given), _text(expected), marks=marks))
    return params


@pytest.mark.parametrize(("given", "expected"), _supplemental_params())
def test_supplemental_whatwg(given: str, expected: str) -> None:
    assert normalize(given) == _expected_normal_form(expected)


def test_every_supplemental_xfail_is_in_the_table() -> None:
    given = {_text(k) for k in _load("supplemental_whatwg.json")}
    assert set(SUPPLEMENTAL_XFAIL) <= given


# ------------------------------------------------------------------- idempotence


def _all_corpus_inputs() -> list[str]:
    inputs: list[str] = []
    for name in ("semantic_precise.json", "supplemental_whatwg.json", "aggressive.json"):
        inputs += [_text(k) for k in _load(name)]
    inputs += list(_load("parsing.json"))
    inputs += _load("idempotence.json")
    inputs += [e["input"] for e in WPT]
    return list(dict.fromkeys(inputs))


@pytest.mark.parametrize("url", _all_corpus_inputs())
def test_normalize_is_idempotent(url: str) -> None:
    try:
        once = normalize(url)
    except InvalidURLError:
        return
    assert normalize(once) == once


def test_normalize_and_join_need_no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_network(*args: object, **kwargs: object) -> None:
        raise AssertionError("network access")

    monkeypatch.setattr(socket, "getaddrinfo", no_network)
    monkeypatch.setattr(socket, "create_connection", no_network)
    assert normalize("http://bücher.example/") == "http://xn--bcher-kva.example/"
    assert join("http://a/b/", "../c") == "http://a/c"
