"""urlcanon's (iipc/urlcanon testdata/) tables that define IA/Google canonicalization,
CDX keys and SURT forms: surt.json, aggressive.json, ssurt.json, idempotence.json.

urlcanon's JSON strings stand for byte strings (a character U+00XX is the byte 0xXX:
``"\\u00e2\\u0098\\u0083.com"`` is UTF-8 ``☃.com``), so inputs and expected values are
turned back into bytes with Latin-1 before they are compared.

The WHATWG-related tables (funky_ipv4, supplemental_whatwg, urltestdata) are in
test_url_normalize.py; parsing.json's SURT ancestry is in test_url_scope.py.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

# as tests/conftest.py: shared/corpus beside the repository, else $WEBARK_CORPUS
from corpus_location import CORPUS
from webark.url import (
    InvalidURLError,
    alpha_reorder_query,
    canonicalize,
    cdx_key,
    google_canonicalize,
    ia_canonicalize,
    massage_host,
    normalize,
    strip_path_session_id,
    surt_form,
    unescape_repeatedly,
)

URLCANON = CORPUS / "urlcanon"


def _bytes(text: str) -> bytes:
    return text.encode("latin-1")


def _as_bytes(value: str | bytes) -> bytes:
    return value if isinstance(value, bytes) else value.encode("utf-8", "surrogateescape")


def _load(name: str) -> Any:
    return json.loads((URLCANON / name).read_text(encoding="utf-8"))


# ------------------------------------------------------------------------ surt.json

NON_UTF8_HOST = (
    "host bytes that are not UTF-8: like surt/pywb we decode them with errors='ignore' "
    "before IDNA (the byte is dropped); urlcanon keeps it (Latin-1). Keys must match pywb"
)
SURT_JSON_XFAIL = {
    ("google", "http://\u0001\u0080.com/"): NON_UTF8_HOST,
    ("googleSupplementalFromSurt", "B\u00fccher.ch:8080"): NON_UTF8_HOST,
}
URL_FUNCTIONS: dict[str, Callable[[bytes], str | bytes]] = {
    "Canonicalizer.DefaultIA": canonicalize,
    "google": google_canonicalize,
    "googleSupplementalFromSurt": google_canonicalize,
    "Canonicalizer.IA": ia_canonicalize,
    "defaultIASurt": cdx_key,
    "unescapeRepeatedly": unescape_repeatedly,  # type: ignore[dict-item]
}
TEXT_FUNCTIONS: dict[str, Callable[[str], str]] = {
    "alphaRorderQuery": alpha_reorder_query,
    "massageHost": massage_host,
    "stripPathSessionId": strip_path_session_id,
}
SURT_JSON = _load("surt.json")


def _surt_json_params() -> list[Any]:
    params = []
    for section, cases in SURT_JSON.items():
        for given, expected in cases.items():
            reason = SURT_JSON_XFAIL.get((section, given))
            marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
            params.append(pytest.param(section, given, expected, marks=marks))
    return params


@pytest.mark.parametrize(("section", "given", "expected"), _surt_json_params())
def test_urlcanon_surt_json(section: str, given: str, expected: str) -> None:
    if section in TEXT_FUNCTIONS:
        assert TEXT_FUNCTIONS[section](given) == expected
    else:
        assert _as_bytes(URL_FUNCTIONS[section](_bytes(given))) == _bytes(expected)


def test_every_surt_json_section_is_mapped() -> None:
    assert set(SURT_JSON) == set(URL_FUNCTIONS) | set(TEXT_FUNCTIONS)


# ------------------------------------------------------------------ aggressive.json
# urlcanon's 'aggressive' canonicalizer goes further than IA (https -> http, ...). Its
# table says which URLs are "the same"; for us the question is whether they get the same
# CDX URL key.

AGGRESSIVE_XFAIL = {
    "http://example.com/?a=1&CFID=3304324&CFTOKEN=57491900&jsessionid=a63098d96360$B0$D9$A"
    "&foo=bar": "IA session-id rules only drop jsessionid=<32 alphanumerics>; this value "
    "is shorter and has '$', so the key keeps it (as surt/pywb/OpenWayback do)",
    "http://example.com/something/;jsessionid=E85FAC04E331FFCA55549B10B7C7A4FA": "IA rules "
    "have no ';jsessionid=' path parameter rule (only query and ASP.NET '(S(...))' paths)",
    "http://example.com/foo?&": "IA keeps empty query arguments ('?&'); only a query "
    "that is empty as a whole is dropped",
    "http://example.com/foo?&&a=1&&&&b=2&c=3&": "IA keeps empty query arguments; they "
    "sort first ('?&&&&&&a=1&b=2&c=3')",
    "http://example.com/foo?c=5&&a=1&B=3&A=2&b=4&C=6&": "IA keeps empty query arguments; "
    "they sort first ('?&&a=1&a=2&...')",
}


def _aggressive_params() -> list[Any]:
    params = []
    for given, expected in _load("aggressive.json").items():
        reason = AGGRESSIVE_XFAIL.get(given)
        marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
        params.append(pytest.param(given, expected, marks=marks))
    return params


@pytest.mark.parametrize(("given", "expected"), _aggressive_params())
def test_urlcanon_aggressive_equivalents_share_a_cdx_key(given: str, expected: str) -> None:
    assert cdx_key(given) == cdx_key(expected)


# ------------------------------------------------------------------------ ssurt.json
# Sections 'surt', 'surtWithoutScheme', 'surtWithoutTrailingComma' are urlcanon's SURT of
# an (uncanonicalized) URL: our surt_form(). 'ssurt', 'ssurtHost', 'reverseHost' are
# urlcanon's own SSURT format, which no index or crawler we interoperate with uses; see
# docs/url-differences.md.

SSURT = _load("ssurt.json")
SURT_FORM_OPTIONS: dict[str, dict[str, bool]] = {
    "surt": {},
    "surtWithoutScheme": {"with_scheme": False},
    "surtWithoutTrailingComma": {"trailing_comma": False},
}


@pytest.mark.parametrize(
    ("section", "given", "expected"),
    [
        pytest.param(section, given, expected, id=f"{section}:{given}")
        for section in SURT_FORM_OPTIONS
        for given, expected in SSURT[section].items()
    ],
)
def test_urlcanon_surt_forms(section: str, given: str, expected: str) -> None:
    assert surt_form(given, **SURT_FORM_OPTIONS[section]) == expected


# ------------------------------------------------------------------ idempotence.json

IDEMPOTENCE = _load("idempotence.json")
SURT_BUG_COMPAT = (
    "bug-compatible with surt: in 'http:/host:80/…' (one slash) the IA parser takes "
    "'host:80' from the path as the host, so ':80' is only seen as a port on a second pass"
)
IDEMPOTENCE_XFAIL: dict[tuple[str, str], str] = {
    ("canonicalize", "http:/日本.jp:80//.././[FÜNKY]"): SURT_BUG_COMPAT,
}


def _idempotence_params() -> list[Any]:
    params = []
    for name in ("canonicalize", "google_canonicalize"):
        for url in IDEMPOTENCE:
            reason = IDEMPOTENCE_XFAIL.get((name, url))
            marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
            params.append(pytest.param(name, url, marks=marks, id=f"{name}:{url!r}"))
    return params


@pytest.mark.parametrize(("name", "url"), _idempotence_params())
def test_urlcanon_idempotence(name: str, url: str) -> None:
    func = {"canonicalize": canonicalize, "google_canonicalize": google_canonicalize}[name]
    once = func(url)
    assert func(once) == once


@pytest.mark.parametrize("url", IDEMPOTENCE)
def test_cdx_key_of_odd_urls_is_stable_text(url: str) -> None:
    key = cdx_key(url)
    assert key and key.isprintable() and " " not in key.strip()
    assert cdx_key(url) == key


# ------------------------------------------------------------------------ notes.txt
# URLs that the WHATWG parser rejects but urlcanon accepts, "expected behaviour
# undecided". Our answer: the CDX key and the IA canonicalizers still give a value (as an
# indexer must, for whatever a WARC holds); normalize() rejects them like WHATWG does.

NOTES = [
    line.strip()
    for line in (URLCANON / "notes.txt").read_text(encoding="utf-8").splitlines()
    if "://" in line or line.startswith("http:")
]


def test_notes_lists_the_undecided_urls() -> None:
    assert len(NOTES) >= 10


@pytest.mark.parametrize("url", NOTES)
def test_undecided_urls_get_a_cdx_key(url: str) -> None:
    raw = _bytes(url.encode("latin-1").decode("unicode_escape"))
    assert cdx_key(raw)
    assert canonicalize(raw).startswith("http:")
    with pytest.raises(InvalidURLError):
        normalize(raw.decode("latin-1"))
