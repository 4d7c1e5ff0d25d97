"""field_problems / field_warnings: the WARC 1.1 must/must-not matrix, checked on hand-made
headers and on JWAT's valid-/invalid- test files (netarchivesuite/jwat)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from corpus_location import CORPUS
from webark.warc.headers import WarcHeaders
from webark.warc.validate_fields import CODES, KNOWN_PROFILES, field_problems, field_warnings

JWAT = CORPUS / "jwat" / "warc"

RID = "<urn:uuid:4042c21b-d898-43f0-9c95-b50da2d1aa42>"
RID2 = "<urn:uuid:ff728363-2d5f-4f5f-b832-9552de1a6037>"
SHA1_EMPTY = "sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ"
IPD = "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest"


def base(rtype: str, **extra: str) -> list[tuple[str, str]]:
    fields = [
        ("WARC-Type", rtype),
        ("WARC-Record-ID", RID),
        ("WARC-Date", "2024-03-01T12:00:00Z"),
        ("Content-Length", "10"),
        ("Content-Type", "application/http;msgtype=response"),
    ]
    if rtype != "warcinfo":
        fields.append(("WARC-Target-URI", "http://example.com/"))
    if rtype == "revisit":
        fields += [("WARC-Profile", IPD), ("WARC-Payload-Digest", SHA1_EMPTY)]
    if rtype == "continuation":
        fields += [("WARC-Segment-Origin-ID", RID2), ("WARC-Segment-Number", "2")]
    return fields + [(k.replace("_", "-"), v) for k, v in extra.items()]


def codes(version: str, fields: list[tuple[str, str]]) -> list[str]:
    return [c for c, _ in field_problems(version, WarcHeaders(fields))]


@pytest.mark.parametrize(
    "rtype",
    [
        "warcinfo",
        "response",
        "resource",
        "request",
        "metadata",
        "revisit",
        "conversion",
        "continuation",
    ],
)
def test_minimal_valid_record_of_each_type(rtype: str) -> None:
    assert field_problems("WARC/1.1", WarcHeaders(base(rtype))) == []
    assert field_problems("WARC/1.0", WarcHeaders(base(rtype))) == []


@pytest.mark.parametrize("missing", ["WARC-Type", "WARC-Record-ID", "WARC-Date", "Content-Length"])
def test_mandatory_fields(missing: str) -> None:
    fields = [(n, v) for n, v in base("response") if n != missing]
    problems = field_problems("WARC/1.1", WarcHeaders(fields))
    assert ("missing-field", f"mandatory {missing} missing") in problems


def test_type_specific_mandatory_fields() -> None:
    no_target = [(n, v) for n, v in base("response") if n != "WARC-Target-URI"]
    assert codes("WARC/1.1", no_target) == ["missing-field"]
    no_profile = [(n, v) for n, v in base("revisit") if n != "WARC-Profile"]
    assert field_problems("WARC/1.1", WarcHeaders(no_profile)) == [
        ("missing-field", "revisit record without WARC-Profile")
    ]
    no_digest = [(n, v) for n, v in base("revisit") if n != "WARC-Payload-Digest"]
    assert codes("WARC/1.1", no_digest) == ["revisit-without-payload-digest"]
    # server-not-modified does not need the payload digest
    snm = [(n, v.replace("identical-payload-digest", "server-not-modified")) for n, v in no_digest]
    assert codes("WARC/1.1", snm) == []
    cont = [(n, v) for n, v in base("continuation") if not n.startswith("WARC-Segment")]
    assert codes("WARC/1.1", cont) == ["missing-field", "missing-field"]


def test_angle_brackets_in_target_uri_only_allowed_before_1_1() -> None:
    fields = [
        (n, "<http://example.com/>" if n == "WARC-Target-URI" else v) for n, v in base("response")
    ]
    assert codes("WARC/1.1", fields) == ["bad-target-uri"]
    assert codes("WARC/1.0", fields) == []  # wget 1.14: the 1.0 grammar had uri = <…>


def test_value_formats() -> None:
    bad = {
        "WARC-Record-ID": "urn:uuid:no-brackets",
        "WARC-Date": "2024-03-01 12:00:00",
        "Content-Length": "12a",
        "Content-Type": "gif\\image",
        "WARC-Target-URI": "http://exa mple.com/",
    }
    for name, value in bad.items():
        fields = [(n, value if n == name else v) for n, v in base("response")]
        got = codes("WARC/1.1", fields)
        assert len(got) == 1 and got[0].startswith("bad-"), (name, got)
    for extra, code in [
        (("WARC-IP-Address", "256.1.1.1"), "bad-ip-address"),
        (("WARC-IP-Address", "a.b.c.d"), "bad-ip-address"),
        (("WARC-Block-Digest", "sha1:ZZZ"), "bad-digest"),
        (("WARC-Block-Digest", "sha1 3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ"), "bad-digest"),
        (("WARC-Payload-Digest", "sha256:abcd"), "bad-digest"),
        (("WARC-Truncated", "too long"), "bad-truncated"),
        (("WARC-Concurrent-To", "<zaphod>"), "bad-record-id"),
        (("WARC-Warcinfo-ID", RID + " x"), "bad-record-id"),
    ]:
        assert codes("WARC/1.1", [*base("response"), extra]) == [code], extra
    good = [
        ("WARC-IP-Address", "2001:db8::1"),
        ("WARC-IP-Address", "93.184.216.34"),
        ("WARC-Block-Digest", "sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ"),
        (
            "WARC-Payload-Digest",
            "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
        ),
        ("WARC-Payload-Digest", "sha1:2jmj7l5rSw0yVb/vlWAYkK/YBwk="),  # Base64 (RFC 3548)
        ("WARC-Payload-Digest", "sha1:da39a3ee5e6b4b0d3255bfef95601890afd80709"),  # hex
        ("WARC-Truncated", "length"),
        ("WARC-Truncated", "future-reason"),
        ("X-Custom-Extension", "anything at all"),
    ]
    for extra in good:
        assert codes("WARC/1.1", [*base("response"), extra]) == [], extra


def test_unknown_digest_algorithm_is_a_warning_not_a_problem() -> None:
    fields = [*base("response"), ("WARC-Block-Digest", "blake3:abcdef")]
    assert codes("WARC/1.1", fields) == []
    assert [c for c, _ in field_warnings("WARC/1.1", WarcHeaders(fields))] == [
        "ip-address-recommended",
        "unknown-digest-algorithm",
    ]


def test_date_precision_by_version() -> None:
    for date, ok10, ok11 in [
        ("2024-03-01T12:00:00Z", True, True),
        ("2024-03-01T12:00:00.1Z", False, True),
        ("2024-03-01T12:00:00.123456789Z", False, True),
        ("2024-03-01T12:00:00.1234567890Z", False, False),
        ("2024-03-01T12:00Z", False, False),
        ("2024-02-30T12:00:00Z", False, False),
        ("2024-03-01T12:00:00+01:00", False, False),
    ]:
        fields = [(n, date if n == "WARC-Date" else v) for n, v in base("request")]
        assert (codes("WARC/1.0", fields) == []) is ok10, date
        assert (codes("WARC/1.1", fields) == []) is ok11, date


def test_duplicates_only_for_non_repeatable_standard_fields() -> None:
    assert codes("WARC/1.1", [*base("response"), ("warc-date", "2024-03-01T12:00:00Z")]) == [
        "duplicate-field"
    ]
    assert (
        codes(
            "WARC/1.1",
            [*base("response"), ("WARC-Concurrent-To", RID2), ("WARC-Concurrent-To", RID)],
        )
        == []
    )
    assert codes("WARC/1.1", [*base("response"), ("X-Ext", "a"), ("X-Ext", "b")]) == []


@pytest.mark.parametrize(
    ("rtype", "field", "value"),
    [
        ("warcinfo", "WARC-Target-URI", "http://example.com/"),
        ("warcinfo", "WARC-Concurrent-To", RID2),
        ("warcinfo", "WARC-Warcinfo-ID", RID2),
        ("warcinfo", "WARC-IP-Address", "1.2.3.4"),
        ("warcinfo", "WARC-Payload-Digest", SHA1_EMPTY),
        ("conversion", "WARC-Concurrent-To", RID2),
        ("continuation", "WARC-IP-Address", "1.2.3.4"),
        ("response", "WARC-Refers-To", RID2),
        ("request", "WARC-Refers-To", RID2),
        ("resource", "WARC-Refers-To", RID2),
        ("metadata", "WARC-Payload-Digest", SHA1_EMPTY),
        ("response", "WARC-Filename", "x.warc.gz"),
        ("response", "WARC-Profile", IPD),
        ("response", "WARC-Segment-Origin-ID", RID2),
        ("response", "WARC-Segment-Total-Length", "100"),
    ],
)
def test_must_not_matrix(rtype: str, field: str, value: str) -> None:
    fields = [(n, v) for n, v in base(rtype) if n != "WARC-Target-URI" or rtype != "warcinfo"]
    problems = field_problems("WARC/1.1", WarcHeaders([*fields, (field, value)]))
    assert problems == [("field-not-allowed", f"{field} not allowed in {rtype}")]


@pytest.mark.parametrize(
    ("rtype", "field", "value"),
    [
        ("metadata", "WARC-Refers-To", RID2),
        ("revisit", "WARC-Refers-To", RID2),
        ("conversion", "WARC-Refers-To", RID2),
        ("warcinfo", "WARC-Filename", "x.warc.gz"),
        ("revisit", "WARC-Refers-To-Target-URI", "http://example.com/"),
        ("revisit", "WARC-Refers-To-Date", "2014-01-26T20:06:25Z"),
        ("continuation", "WARC-Segment-Total-Length", "100"),
        ("response", "WARC-Segment-Number", "1"),
        ("metadata", "WARC-Concurrent-To", RID2),
    ],
)
def test_allowed_fields(rtype: str, field: str, value: str) -> None:
    assert codes("WARC/1.1", [*base(rtype), (field, value)]) == []


def test_profiles_and_segments() -> None:
    for profile in KNOWN_PROFILES:
        fields = [(n, profile if n == "WARC-Profile" else v) for n, v in base("revisit")]
        assert codes("WARC/1.1", fields) == []
    agnostic = "http://netpreserve.org/warc/1.0/revisit/uri-agnostic-identical-payload-digest"
    fields = [(n, agnostic if n == "WARC-Profile" else v) for n, v in base("revisit")]
    assert codes("WARC/1.1", fields) == []  # §6.7.3: other profiles may exist
    assert "unknown-profile" in [c for c, _ in field_warnings("WARC/1.1", WarcHeaders(fields))]
    assert codes("WARC/1.1", [*base("response"), ("WARC-Segment-Number", "2")]) == [
        "bad-segment-number"
    ]
    first_again = [(n, "1" if n == "WARC-Segment-Number" else v) for n, v in base("continuation")]
    assert codes("WARC/1.1", first_again) == ["bad-segment-number"]


def test_content_type_needed_for_a_non_empty_block() -> None:
    no_ct = [(n, v) for n, v in base("resource") if n != "Content-Type"]
    assert codes("WARC/1.1", no_ct) == ["missing-content-type"]
    empty = [(n, "0" if n == "Content-Length" else v) for n, v in no_ct]
    assert codes("WARC/1.1", empty) == []
    cont = [(n, v) for n, v in base("continuation") if n != "Content-Type"]
    assert codes("WARC/1.1", cont) == []


def test_header_injection_and_bad_names() -> None:
    evil = [
        (n, "http://example.com/\r\nWARC-Type: evil" if n == "WARC-Target-URI" else v)
        for n, v in base("response")
    ]
    assert "bad-field-value" in codes("WARC/1.1", evil)
    assert codes("WARC/1.1", [*base("response"), ("Bad Name", "x")]) == ["bad-field-name"]
    assert codes("WARC/2.0", base("response")) == ["unknown-version"]
    assert codes("1.1", base("response")) == []
    assert codes(
        "WARC/1.1", [(n, "monkeys" if n == "WARC-Type" else v) for n, v in base("response")]
    ) == ["unknown-type"]


def test_warnings() -> None:
    def warn(version: str, fields: list[tuple[str, str]]) -> list[str]:
        return [c for c, _ in field_warnings(version, WarcHeaders(fields))]

    assert warn("WARC/1.1", base("response")) == ["ip-address-recommended"]
    full = [
        *base("revisit"),
        ("WARC-Refers-To", RID2),
        ("WARC-Refers-To-Target-URI", "http://example.com/"),
        ("WARC-Refers-To-Date", "2024-01-01T00:00:00Z"),
        ("WARC-Truncated", "length"),
    ]
    assert warn("WARC/1.1", full) == []
    assert warn("WARC/1.0", full) == ["profile-version-mismatch"]
    assert warn("WARC/1.1", base("revisit")) == [
        "refers-to-recommended",
        "refers-to-target-recommended",
        "refers-to-target-recommended",
        "revisit-not-truncated",
    ]
    info = [(n, "text/plain" if n == "Content-Type" else v) for n, v in base("warcinfo")]
    assert warn("WARC/1.1", info) == ["content-type-recommended"]


def test_every_code_is_documented() -> None:
    src = Path(field_problems.__code__.co_filename).read_text()
    used = set(re.findall(r'(?:append\(|return )\(\s*"([a-z0-9-]+)"', src))
    assert len(used) > 25
    assert used <= set(CODES), used - set(CODES)


# -- JWAT's test files ---------------------------------------------------------------
def jwat_headers(path: Path) -> list[tuple[str, WarcHeaders]]:
    """Version and fields of every record header (folded lines unfolded); bodies are
    skipped by looking for the next version line, so broken Content-Lengths do not
    matter."""
    text = path.read_bytes().decode("utf-8").replace("\r\n", "\n")
    out = []
    for m in re.finditer(r"(?mi)^(WARC/\d+\.\d+)\n(.*?)\n\n", text, re.S):
        fields: list[tuple[str, str]] = []
        for line in m.group(2).split("\n"):
            if line[:1] in (" ", "\t") and fields:
                name, value = fields[-1]
                fields[-1] = (name, f"{value.strip()} {line.strip()}".strip())
            else:
                name, _, value = line.partition(":")
                fields.append((name, value.strip()))
        out.append((m.group(1), WarcHeaders(fields)))
    return out


@pytest.mark.parametrize(
    "name",
    [
        "valid-warcfile-contenttype-continuation.warc",
        "valid-warcfile-duplicate-concurrentto.warc",
        "valid-warcfile-fields-continuation.warc",
        "valid-warcfile-fields-metainfo.warc",
        "valid-warcfile-fields-warcinfo.warc",
        "valid-warcfile-non-warc-headers.warc",
        "valid-warcfile-upper-lower-case.warc",
        "valid-warcfile-utf8.warc",
    ],
)
def test_jwat_valid_files_have_no_problems(name: str) -> None:
    records = jwat_headers(JWAT / name)
    assert records
    for version, headers in records:
        assert field_problems(version, headers) == []


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("invalid-warcfile-duplicate-fields.warc", {"duplicate-field"}),
        (
            "invalid-warcfile-fields-invalidformat.warc",
            {
                "bad-record-id",
                "bad-date",
                "bad-content-length",
                "bad-content-type",
                "bad-ip-address",
                "bad-digest",
                "bad-target-uri",
                "bad-segment-number",
            },
        ),
        ("invalid-warcfile-fields-empty.warc", {"empty-field"}),
        ("invalid-warcfile-fields-missing.warc", {"empty-field"}),
        ("invalid-warcfile-digest-fields.warc", {"bad-digest"}),
        ("invalid-warcfile-segment-number-continuation.warc", {"bad-segment-number"}),
        ("invalid-warcfile-segment-number-response.warc", {"bad-segment-number"}),
        ("invalid-warcfile-lonely-monkeys.warc", {"missing-field", "unknown-type"}),
        ("invalid-warcfile-lonely-revisit.warc", {"missing-field"}),
        ("invalid-warcfile-lonely-continuation.warc", {"missing-field"}),
        (
            "invalid-warcfile-contenttype-recommended.warc",
            {"missing-content-type", "revisit-without-payload-digest"},
        ),
    ],
)
def test_jwat_invalid_files(name: str, expected: set[str]) -> None:
    found = {
        code
        for version, headers in jwat_headers(JWAT / name)
        for code, _ in field_problems(version, headers)
    }
    assert found == expected


def test_jwat_recommendation_files_give_warnings_only() -> None:
    [(version, headers)] = jwat_headers(
        JWAT / "invalid-warcfile-contenttype-warcinfo-recommended.warc"
    )
    assert field_problems(version, headers) == []
    assert [c for c, _ in field_warnings(version, headers)] == ["content-type-recommended"]
