"""The WARC named-field rules (WARC 1.1 §4–§7, ISO 28500:2017): which fields each record
type must and must not carry, and the syntax of each standard field's value.

Two pure functions, shared by the writer (which refuses a record with any *problem*) and
``webark warc check`` (which reports both lists):

- :func:`field_problems` — violations of a "shall" / "shall not" of the standard (plus
  the project rule that a non-empty block has a Content-Type, warc.md "Every record").
- :func:`field_warnings` — departures from a "should" / "recommended", which real
  archives commit all the time (Heritrix, wget and pywb revisits without
  ``WARC-Truncated``, responses without ``WARC-IP-Address`` …).

Each finding is a ``(code, message)`` pair; :data:`CODES` documents every code. Both
functions look at the named fields only: the block (its length against Content-Length,
its digests) is the caller's business.

WARC/0.17 and WARC/0.18 records are checked by the WARC/1.0 rules.
"""

from __future__ import annotations

import ipaddress
import re
from datetime import datetime

from webark.core.digests import Digest, normalize_algorithm
from webark.core.errors import DigestError
from webark.warc.builders import PEM_CHAIN as PEM_CERTIFICATE_CHAIN
from webark.warc.headers import REPEATABLE_FIELDS, STANDARD_FIELDS, WarcHeaders

Finding = tuple[str, str]

RECORD_TYPES = frozenset(
    {
        "warcinfo",
        "response",
        "resource",
        "request",
        "metadata",
        "revisit",
        "conversion",
        "continuation",
    }
)
"""The eight record types of WARC 1.1 §6 (other types are ``unknown-type``)."""

REVISIT_PROFILE_NAMES = ("identical-payload-digest", "server-not-modified")

KNOWN_PROFILES = frozenset(
    f"http://netpreserve.org/warc/{v}/revisit/{name}"
    for v in ("0.17", "0.18", "1.0", "1.1")
    for name in REVISIT_PROFILE_NAMES
)
"""Revisit profiles of WARC 1.1 §6.7 and of the earlier drafts (1.0, and 0.17/0.18 as
written by Heritrix 1.x and pywb's live recorder). pywb's
``…/1.0/revisit/uri-agnostic-identical-payload-digest`` is not among them: it was never
standardized (the IIPC proposal keeps ``identical-payload-digest`` and adds
``WARC-Refers-To-Target-URI`` / ``WARC-Refers-To-Date`` instead); using it is a warning."""

KNOWN_VERSIONS = frozenset({"WARC/0.17", "WARC/0.18", "WARC/1.0", "WARC/1.1"})

CODES: dict[str, str] = {
    # problems (shall / shall not)
    "unknown-version": "version line is not WARC/1.1, 1.0, 0.18 or 0.17 (§4)",
    "bad-field-name": "field name is not an RFC 2616 token (§4)",
    "bad-field-value": "field value contains CR, LF or another control character (§4)",
    "missing-field": "a mandatory field is absent (§5.2–5.5, §6)",
    "empty-field": "a standard field with an empty value (§5: every defined field has one)",
    "duplicate-field": "a standard field other than WARC-Concurrent-To is repeated (§5.1)",
    "field-not-allowed": "a field that the record type shall not carry (§5, §6)",
    "unknown-type": "WARC-Type is not one of the eight types (§5.5)",
    "bad-record-id": "a record-id field is not '<' absolute-URI '>' without whitespace (§5.2)",
    "bad-date": "WARC-Date (or WARC-Refers-To-Date) is not YYYY-MM-DDThh:mm:ss[.f{1,9}]Z "
    "(fraction only from WARC/1.1 on) or not a real date (§5.4)",
    "bad-content-length": "Content-Length is not 1*DIGIT (§5.3)",
    "missing-content-type": "a non-empty block without Content-Type (§5.6; a 'should' in "
    "the standard, a must for webark, warc.md)",
    "bad-content-type": "Content-Type is not a media-type type/subtype[;params] (§5.6)",
    "bad-ip-address": "WARC-IP-Address is not a dotted quad or an RFC 4291 IPv6 address (§5.9)",
    "bad-digest": "a digest is not algorithm:value, or the value does not decode to the "
    "algorithm's size (§5.8, §5.9)",
    "bad-target-uri": "WARC-Target-URI (or WARC-Refers-To-Target-URI) is not an absolute "
    "URI without whitespace; from WARC/1.1 on, without angle brackets (§5.11)",
    "bad-truncated": "WARC-Truncated is not a token (§5.13)",
    "revisit-without-payload-digest": "identical-payload-digest revisit without "
    "WARC-Payload-Digest (§6.7.2)",
    "bad-segment-number": "WARC-Segment-Number is not a positive integer, not 1 on a "
    "first segment or below 2 on a continuation (§5.17, §7)",
    "bad-segment-total-length": "WARC-Segment-Total-Length is not 1*DIGIT (§5.19)",
    # warnings (should / recommended)
    "content-type-recommended": "warcinfo/metadata block not application/warc-fields (a "
    "metadata record of a TLS certificate chain, application/pem-certificate-chain, "
    "excepted), or HTTP block not application/http (§6.1, §6.2, §6.5)",
    "ip-address-recommended": "response/request without WARC-IP-Address (§6.2, §6.4)",
    "refers-to-recommended": "revisit or conversion without WARC-Refers-To (§6.7, §6.8)",
    "refers-to-target-recommended": "identical-payload-digest revisit without "
    "WARC-Refers-To-Target-URI / WARC-Refers-To-Date (IIPC arbitrary-duplicates proposal)",
    "revisit-not-truncated": "identical-payload-digest revisit with a block but without "
    "'WARC-Truncated: length' (§6.7.2)",
    "unknown-profile": "a revisit profile other than those of §6.7 (allowed by §6.7.3, but "
    "readers that do not know it shall not interpret the record)",
    "profile-version-mismatch": "revisit profile URI of another WARC version than the record",
    "unknown-digest-algorithm": "digest algorithm webark cannot compute (value not checked)",
}
"""Every code :func:`field_problems` and :func:`field_warnings` can return, with the rule
it stands for (section numbers of WARC 1.1, ISO 28500:2017)."""

_TOKEN_RE = re.compile(r"^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$")
_DIGEST_VALUE_RE = re.compile(r"^[A-Za-z0-9+/=_\-]+$")  # RFC 3548 Base16/32/64 alphabets
_CTL_RE = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")
_DATE_RE = re.compile(
    r"^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?Z$", re.IGNORECASE
)
_URI_RE = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*:[^\s<>\"]*$")
_MEDIA_TYPE_RE = re.compile(
    r"^[!#$%&'*+\-.^_`|~0-9A-Za-z]+/[!#$%&'*+\-.^_`|~0-9A-Za-z]+"
    r"(\s*;\s*[!#$%&'*+\-.^_`|~0-9A-Za-z]+=([!#$%&'*+\-.^_`|~0-9A-Za-z]+|\"([^\"\\]|\\.)*\"))*"
    r"\s*;?\s*$"
)

_ID_FIELDS = ("WARC-Record-ID", "WARC-Refers-To", "WARC-Warcinfo-ID", "WARC-Segment-Origin-ID")
_NEED_TARGET = frozenset(
    {"response", "resource", "request", "revisit", "conversion", "continuation"}
)
# field (lowercase) -> record types that shall not carry it (§5.7–§5.19)
_NOT_ON: dict[str, frozenset[str]] = {
    "warc-concurrent-to": frozenset({"warcinfo", "conversion", "continuation"}),
    "warc-ip-address": frozenset({"warcinfo", "conversion", "continuation"}),
    "warc-refers-to": frozenset({"warcinfo", "response", "resource", "request", "continuation"}),
    "warc-target-uri": frozenset({"warcinfo"}),
    "warc-warcinfo-id": frozenset({"warcinfo"}),
    "warc-payload-digest": frozenset({"warcinfo", "metadata"}),
    "warc-identified-payload-type": frozenset({"warcinfo", "metadata"}),
}
# field (lowercase) -> the only record types that may carry it
_ONLY_ON: dict[str, frozenset[str]] = {
    "warc-filename": frozenset({"warcinfo"}),
    "warc-profile": frozenset({"revisit"}),
    "warc-segment-origin-id": frozenset({"continuation"}),
    "warc-segment-total-length": frozenset({"continuation"}),
}
_CANONICAL = {n.lower(): n for n in STANDARD_FIELDS}


def _version(version: str) -> str:
    v = version.strip()
    return f"WARC/{v[5:]}" if v.upper().startswith("WARC/") else f"WARC/{v}"


def _is_11_or_later(version: str) -> bool:
    try:
        major, minor = version[5:].split(".", 1)
        return (int(major), int(minor)) >= (1, 1)
    except ValueError:
        return False


def is_warc_date(value: str, allow_fraction: bool = True) -> bool:
    """True when ``value`` is a WARC-Date: ``YYYY-MM-DDThh:mm:ssZ`` or, with
    ``allow_fraction`` (WARC/1.1 §5.4), with 1–9 fractional digits — and a real instant."""
    m = _DATE_RE.match(value)
    if m is None or (m.group(7) and not allow_fraction):
        return False
    try:
        y, mo, d, h, mi, sec = (int(g) for g in m.groups()[:6])
        datetime(y, mo, d, h, mi, sec)
    except ValueError:
        return False
    return True


def _known_algorithm(algo: str) -> bool:
    try:
        normalize_algorithm(algo)
    except DigestError:
        return False
    return True


def _digest_problem(name: str, value: str) -> Finding | None:
    algo, sep, enc = value.partition(":")
    if not sep or not _TOKEN_RE.match(algo) or not _DIGEST_VALUE_RE.match(enc):
        return ("bad-digest", f"{name}: {value!r} is not algorithm:value")
    if not _known_algorithm(algo):
        return None  # §5.8 "recommends no particular algorithm": only a warning
    try:
        Digest.parse(value)
    except DigestError as e:
        return ("bad-digest", f"{name}: {e}")
    return None


def _target_problem(name: str, value: str, version_11: bool) -> Finding | None:
    v = value
    if len(v) > 1 and v[0] == "<" and v[-1] == ">":
        if version_11:
            return ("bad-target-uri", f"{name} in angle brackets (WARC/1.1 §5.11): {value!r}")
        v = v[1:-1]  # WARC/1.0's grammar (uri = "<" URI ">") allowed them
    if not _URI_RE.match(v):
        return ("bad-target-uri", f"{name} is not an absolute URI without whitespace: {value!r}")
    return None


def field_problems(version: str, headers: WarcHeaders) -> list[Finding]:
    """Check the named fields of one record against the "shall" rules of WARC 1.1.

    Args:
        version: the record's version line, ``"WARC/1.1"`` (``"1.1"`` is accepted too).
        headers: the record's named fields.

    Returns:
        ``(code, message)`` pairs in field order (codes in :data:`CODES`); empty when the
        fields are valid. Never raises for bad input.

    Covers: known version; field-name tokens and control characters in values; mandatory
    WARC-Record-ID, Content-Length, WARC-Date, WARC-Type (§5.2–5.5) and Content-Type on a
    non-empty non-continuation block (§5.6); repetition of standard fields (§5.1, except
    WARC-Concurrent-To and WARC-Protocol); value syntax of record ids, dates (second
    precision in 1.0, 1–9 fraction digits allowed in 1.1), Content-Length, Content-Type,
    IP address, digests, target URIs (no ``<>`` in 1.1), WARC-Truncated; the per-type
    must/must-not matrix of §5.7–§5.19 and §6 (Target-URI, Concurrent-To, IP-Address,
    Refers-To, Warcinfo-ID, Filename, Profile, payload fields, segment fields); revisit
    WARC-Profile and, for identical-payload-digest, WARC-Payload-Digest (§6.7); segment
    numbering (§7: first segment 1, continuation ≥ 2 with Segment-Origin-ID). A profile
    outside :data:`KNOWN_PROFILES` is only a warning: §6.7.3 lets other documents define
    profiles (pywb writes ``uri-agnostic-identical-payload-digest``).
    """
    out: list[Finding] = []
    ver = _version(version)
    if ver not in KNOWN_VERSIONS:
        out.append(("unknown-version", f"unknown WARC version {version!r}"))
    v11 = _is_11_or_later(ver)

    values: dict[str, list[str]] = {}
    for name, raw in headers:
        if not _TOKEN_RE.match(name):
            out.append(("bad-field-name", f"field name {name!r} is not a token"))
        if _CTL_RE.search(raw):
            out.append(("bad-field-value", f"{name}: control character in {raw!r}"))
        low = name.lower()
        value = raw.strip()
        if not value and low in _CANONICAL:
            out.append(("empty-field", f"{_CANONICAL[low]} has an empty value"))
        values.setdefault(low, []).append(value)
    for low, vals in values.items():
        if len(vals) > 1 and low in _CANONICAL and low not in REPEATABLE_FIELDS:
            out.append(("duplicate-field", f"{_CANONICAL[low]} appears {len(vals)} times"))

    def first(name: str) -> str:
        """First value of a field, '' when absent or empty (already reported)."""
        vals = values.get(name.lower())
        return vals[0] if vals else ""

    for name in ("WARC-Record-ID", "Content-Length", "WARC-Date", "WARC-Type"):
        if name.lower() not in values:
            out.append(("missing-field", f"mandatory {name} missing"))

    rtype = first("WARC-Type").lower()
    known_type = rtype in RECORD_TYPES
    if rtype and not known_type:
        out.append(("unknown-type", f"unknown WARC-Type {rtype!r}"))

    # -- value syntax ---------------------------------------------------------------
    for name in (*_ID_FIELDS, "WARC-Concurrent-To"):
        for val in values.get(name.lower(), []):
            if val and not (val[:1] == "<" and val[-1:] == ">" and _URI_RE.match(val[1:-1])):
                out.append(("bad-record-id", f"{name} is not <URI>: {val!r}"))
    date = first("WARC-Date")
    if date and not is_warc_date(date, allow_fraction=v11):
        out.append(("bad-date", f"WARC-Date {date!r} is not a {ver} date"))
    rdate = first("WARC-Refers-To-Date")
    if rdate and not is_warc_date(rdate):
        out.append(("bad-date", f"WARC-Refers-To-Date {rdate!r} is not a W3C-DTF UTC date"))
    length = first("Content-Length")
    if length and not length.isdigit():
        out.append(("bad-content-length", f"Content-Length {length!r} is not digits"))
    ctype = first("Content-Type")
    if ctype and not _MEDIA_TYPE_RE.match(ctype):
        out.append(("bad-content-type", f"Content-Type {ctype!r} is not a media type"))
    if (
        length.isdigit()
        and int(length) > 0
        and "content-type" not in values
        and rtype != "continuation"
    ):
        out.append(("missing-content-type", f"{length}-byte block without Content-Type"))
    ip = first("WARC-IP-Address")
    if ip:
        try:
            ipaddress.ip_address(ip)
        except ValueError:
            out.append(("bad-ip-address", f"WARC-IP-Address {ip!r} is not an IP address"))
    for name in ("WARC-Block-Digest", "WARC-Payload-Digest"):
        val = first(name)
        if val and (p := _digest_problem(name, val)) is not None:
            out.append(p)
    for name in ("WARC-Target-URI", "WARC-Refers-To-Target-URI"):
        val = first(name)
        if val and (p := _target_problem(name, val, v11)) is not None:
            out.append(p)
    trunc = first("WARC-Truncated")
    if trunc and not _TOKEN_RE.match(trunc):
        out.append(("bad-truncated", f"WARC-Truncated {trunc!r} is not a token"))
    total = first("WARC-Segment-Total-Length")
    if total and not total.isdigit():
        out.append(("bad-segment-total-length", f"WARC-Segment-Total-Length {total!r}"))

    if not known_type:
        return out

    # -- per-type matrix ------------------------------------------------------------
    for low, types in _NOT_ON.items():
        if low in values and rtype in types:
            out.append(("field-not-allowed", f"{_CANONICAL[low]} not allowed in {rtype}"))
    for low, types in _ONLY_ON.items():
        if low in values and rtype not in types:
            out.append(("field-not-allowed", f"{_CANONICAL[low]} not allowed in {rtype}"))
    if rtype in _NEED_TARGET and "warc-target-uri" not in values:
        out.append(("missing-field", f"{rtype} record without WARC-Target-URI"))

    if rtype == "revisit":
        profile = first("WARC-Profile")
        if "warc-profile" not in values:
            out.append(("missing-field", "revisit record without WARC-Profile"))
        elif profile.endswith("/identical-payload-digest") and not first("WARC-Payload-Digest"):
            out.append(
                (
                    "revisit-without-payload-digest",
                    "identical-payload-digest revisit without WARC-Payload-Digest",
                )
            )

    seg = first("WARC-Segment-Number")
    if rtype == "continuation":
        if "warc-segment-origin-id" not in values:
            out.append(("missing-field", "continuation without WARC-Segment-Origin-ID"))
        if "warc-segment-number" not in values:
            out.append(("missing-field", "continuation without WARC-Segment-Number"))
        elif seg and (not seg.isdigit() or int(seg) < 2):
            out.append(("bad-segment-number", f"continuation WARC-Segment-Number {seg!r} < 2"))
    elif seg and seg != "1":
        out.append(
            (
                "bad-segment-number",
                f"WARC-Segment-Number {seg!r} in a {rtype} record (a first segment is 1)",
            )
        )
    return out


def field_warnings(version: str, headers: WarcHeaders) -> list[Finding]:
    """Departures from the "should" rules of WARC 1.1 and the IIPC dedup proposal (codes in
    :data:`CODES`): what ``webark warc check`` reports as warnings. Never raises.

    Covers: Content-Type of warcinfo/metadata (``application/warc-fields``) and of HTTP
    request/response/revisit blocks (``application/http``); WARC-IP-Address on HTTP
    request/response; WARC-Refers-To on revisit and conversion; WARC-Refers-To-Target-URI
    and WARC-Refers-To-Date and ``WARC-Truncated: length`` on identical-payload-digest
    revisits; a revisit profile outside :data:`KNOWN_PROFILES` or of another WARC version;
    digest algorithms webark cannot compute.
    """
    out: list[Finding] = []
    ver = _version(version)
    rtype = (headers.get("WARC-Type") or "").strip().lower()
    ctype = (headers.get("Content-Type") or "").strip().lower()
    uri = headers.target_uri or ""
    length = (headers.get("Content-Length") or "").strip()
    http = uri.startswith(("http:", "https:"))
    if (
        rtype in ("warcinfo", "metadata")
        and ctype
        and not ctype.startswith("application/warc-fields")
        and not (rtype == "metadata" and ctype.startswith(PEM_CERTIFICATE_CHAIN))
    ):
        out.append(("content-type-recommended", f"{rtype} with Content-Type {ctype!r}"))
    if (
        rtype in ("request", "response", "revisit")
        and http
        and ctype
        and not ctype.startswith("application/http")
    ):
        out.append(("content-type-recommended", f"HTTP {rtype} with Content-Type {ctype!r}"))
    if rtype in ("request", "response") and http and "WARC-IP-Address" not in headers:
        out.append(("ip-address-recommended", f"HTTP {rtype} without WARC-IP-Address"))
    if rtype in ("revisit", "conversion") and "WARC-Refers-To" not in headers:
        out.append(("refers-to-recommended", f"{rtype} without WARC-Refers-To"))
    profile = (headers.get("WARC-Profile") or "").strip()
    if rtype == "revisit" and profile.endswith("/identical-payload-digest"):
        for name in ("WARC-Refers-To-Target-URI", "WARC-Refers-To-Date"):
            if name not in headers:
                out.append(("refers-to-target-recommended", f"revisit without {name}"))
        if length not in ("", "0") and (headers.get("WARC-Truncated") or "").strip() != "length":
            out.append(
                (
                    "revisit-not-truncated",
                    "identical-payload-digest revisit with a block, without "
                    "'WARC-Truncated: length'",
                )
            )
    if rtype == "revisit" and profile and profile not in KNOWN_PROFILES:
        out.append(("unknown-profile", f"unknown revisit profile {profile!r}"))
    if profile in KNOWN_PROFILES and f"/warc/{ver[5:]}/" not in profile:
        out.append(("profile-version-mismatch", f"{ver} record with profile {profile!r}"))
    for name in ("WARC-Block-Digest", "WARC-Payload-Digest"):
        algo, sep, _ = (headers.get(name) or "").strip().partition(":")
        if sep and _TOKEN_RE.match(algo) and not _known_algorithm(algo):
            out.append(("unknown-digest-algorithm", f"{name}: {algo!r}"))
    return out
