"""The case tables of the python ``surt`` library (internetarchive/surt tests/test_surt.py),
transcribed in the corpus as ``surt/surt_function_cases.tsv`` and
``surt/surt_test_cases.json``, run against webark.url.

Each transcribed function maps to its webark counterpart (see ``FUNCTIONS``). Cases where
we deliberately differ are strict xfails and are listed in docs/url-differences.md.
"""

from __future__ import annotations

import csv
import json
from typing import Any

import pytest

# as tests/conftest.py: shared/corpus beside the repository, else $WEBARK_CORPUS
from corpus_location import CORPUS
from webark.url import (
    alpha_reorder_query,
    attempt_ip_formats,
    canonicalize,
    cdx_key,
    default_port,
    google_canonicalize,
    host_to_surt,
    ia_canonicalize,
    massage_host,
    parse_ia_url,
    public_prefix,
    registered_domain,
    strip_path_session_id,
    strip_query_session_id,
    surt_form,
    unescape_repeatedly,
)

SURT_DIR = CORPUS / "surt"

# Upstream marks this case xfail: the expected value is the behaviour surt's authors
# would like, not what surt (and therefore pywb) computes. We compute what pywb computes.
KNOWN_SURT_BUG = (
    "bug-compatible with surt/pywb: %26 in a query value is decoded before the query is "
    "sorted, so 'type=a+b+%26+c' splits at the decoded '&'; existing CDX keys have it"
)


def _load_tsv() -> list[tuple[str | None, dict[str, Any], str, str]]:
    rows = []
    with open(SURT_DIR / "surt_function_cases.tsv", encoding="utf-8", newline="") as f:
        for row in csv.reader(f, delimiter="\t", quoting=csv.QUOTE_NONE):
            if not row or row[0].startswith("#"):
                continue
            url, options, expected, note = (row + [""] * 4)[:4]
            rows.append((None if url == "<None>" else url, json.loads(options), expected, note))
    return rows


TSV_ROWS = _load_tsv()
JSON_CASES: list[dict[str, Any]] = json.loads(
    (SURT_DIR / "surt_test_cases.json").read_text(encoding="utf-8")
)


def _surt_call(url: str | None, options: dict[str, Any]) -> str:
    options = dict(options)
    if options.pop("canonicalizer", None) is not None:
        # surt.surt(url, canonicalizer=identity): SURT of the URL as given
        assert url is not None
        return surt_form(
            url,
            with_scheme=options.get("with_scheme", False),
            trailing_comma=options.get("trailing_comma", False),
            reverse_ipaddr=options.get("reverse_ipaddr", True),
        )
    return cdx_key(url, **options)


def _tsv_params() -> list[Any]:
    params = []
    for url, options, expected, note in TSV_ROWS:
        marks = []
        if note.startswith("marked pytest xfail upstream"):
            marks.append(pytest.mark.xfail(strict=True, reason=KNOWN_SURT_BUG))
        params.append(pytest.param(url, options, expected, marks=marks))
    return params


@pytest.mark.parametrize(("url", "options", "expected"), _tsv_params())
def test_surt_function_cases(url: str | None, options: dict[str, Any], expected: str) -> None:
    assert _surt_call(url, options) == expected


def test_known_surt_bug_is_what_surt_computes() -> None:
    # the value pywb/surt 0.3.1 produce for the upstream-xfail case (checked with the
    # surt package in test_url_peer_surt.py); we keep it
    url = "http://example.com/script?type=a+b+%26+c&grape=wine"
    assert cdx_key(url) == "com,example)/script?+c&grape=wine&type=a+b+"


def test_json_surt_facts_are_the_tsv_facts() -> None:
    """The 53 ``surt()`` facts of the JSON table are the TSV rows, so running the TSV runs
    them all (the JSON is used below for every other function)."""
    from_json = [
        (c["input"], c["options"], c["expected"]) for c in JSON_CASES if c["function"] == "surt"
    ]
    from_tsv = [(url, options, expected) for url, options, expected, _ in TSV_ROWS]
    assert from_json == from_tsv


def _geturl(url: str) -> str:
    return parse_ia_url(url).geturl()


def _scheme(url: str) -> bytes:
    return parse_ia_url(url).scheme


def _ia(url: str, **options: Any) -> str:
    return ia_canonicalize(url, **options)


def _default_ia(url: str, **options: Any) -> str:
    return canonicalize(url, **options)


FUNCTIONS: dict[str, Any] = {
    "handyurl.parse(url).geturl()": _geturl,
    "handyurl.parse(url).scheme": _scheme,
    "handyurl(host=...).getPublicSuffix()": registered_domain,
    "handyurl(host=...).getPublicPrefix()": public_prefix,
    "DefaultIAURLCanonicalizer.canonicalize(handyurl.parse(url)).getURLString()": _default_ia,
    "GoogleURLCanonicalizer.canonicalize(handyurl.parse(url)).getURLString()": (
        google_canonicalize
    ),
    "GoogleURLCanonicalizer.attemptIPFormats": attempt_ip_formats,
    "GoogleURLCanonicalizer.unescapeRepeatedly": unescape_repeatedly,
    "IAURLCanonicalizer.canonicalize(handyurl.parse(url)).getURLString()": _ia,
    "IAURLCanonicalizer.alphaReorderQuery": alpha_reorder_query,
    "IAURLCanonicalizer.massageHost": massage_host,
    "IAURLCanonicalizer.getDefaultPort": default_port,
    "URLRegexTransformer.stripPathSessionID": strip_path_session_id,
    "URLRegexTransformer.stripQuerySessionID": strip_query_session_id,
    "URLRegexTransformer.hostToSURT": host_to_surt,
}


def _json_params() -> list[Any]:
    params = []
    for i, case in enumerate(JSON_CASES):
        if case["function"] == "surt":
            continue
        params.append(pytest.param(case, id=f"{i}-{case['function'].split('(')[0]}"))
    return params


@pytest.mark.parametrize("case", _json_params())
def test_surt_library_function_cases(case: dict[str, Any]) -> None:
    func = FUNCTIONS[case["function"]]
    expected = case["expected"]
    got = func(case["input"], **case["options"])
    if case["function"] == "handyurl.parse(url).scheme":
        expected = expected.encode("ascii")  # a bytes API upstream and here
    if case.get("compare") == "is":
        assert got is expected
    else:
        assert got == expected


def test_every_transcribed_function_is_mapped() -> None:
    assert {c["function"] for c in JSON_CASES} - {"surt"} == set(FUNCTIONS)
