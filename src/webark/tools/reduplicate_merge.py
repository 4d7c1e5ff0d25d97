"""Turn one revisit and its original's payload into a full ``response`` record.

The new record (WARC 1.1 §6.3) keeps everything the revisit says about *this* capture
and takes the payload from the original:

* **WARC fields** of the revisit, in their order (WARC-Record-ID kept, so the
  WARC-Concurrent-To of the capture's request and metadata records still point at it;
  WARC-Date, WARC-Target-URI, WARC-IP-Address, extension fields), with WARC-Type
  ``response``; dropped: WARC-Profile, WARC-Truncated (the revisit's ``length``; the
  original's truncation is carried over instead), the digests, Content-Type/Length,
  WARC-Warcinfo-ID (the writer links the new file's warcinfo) and the revisit's
  WARC-Refers-To fields, which are written anew for the original:
  ``WARC-Refers-To-Target-URI`` and ``WARC-Refers-To-Date``. WARC 1.1 §5.11 forbids
  ``WARC-Refers-To`` on response records (``webark warc check`` calls it an error), so
  the original's record id goes into the extension field ``WebArk-Original-Record-ID``.
* **HTTP head** of the revisit (identical-payload-digest). For a
  ``server-not-modified`` revisit (a 304) the head is the original's with the fields of
  the 304 replacing theirs, as a cache freshens a stored response (RFC 9111 §4.3.4;
  Content-Length, framing and hop-by-hop fields excepted). A revisit without an HTTP
  head (some writers leave the block empty) takes the original's head; with neither
  (a resource original), a minimal ``HTTP/1.1 200 OK`` head is synthesized.
* **Body** of the original as stored, with chunk framing removed when the head
  written is not chunked. A plain body under a chunked head stays plain (see
  :func:`_body_bytes`).

Digests are recomputed: WARC-Block-Digest over the new block; the payload is checked
against the revisit's WARC-Payload-Digest under both readings ``webark warc check``
accepts (transfer-decoded body, chunked bytes: warc-specifications issue 22). When one
matches, that value is written as WARC-Payload-Digest (so the CDX digest of the
capture does not change) and ``WebArk-Reduplication: verified``; otherwise the digest
of the body as written and ``WebArk-Reduplication: unverified; …`` with the reason.
"""

from __future__ import annotations

from dataclasses import dataclass

from webark.core.digests import Digest, normalize_algorithm
from webark.core.errors import DigestError
from webark.warc.builders import HTTP_RESPONSE
from webark.warc.freshen import freshen_head
from webark.warc.headers import WarcHeaders
from webark.warc.http import parse_http_head
from webark.warc.payload import dechunk
from webark.warc.record import Block, WarcRecord

DROPPED_FIELDS = frozenset(
    {
        "warc-type", "warc-profile", "warc-truncated", "warc-refers-to",
        "warc-refers-to-target-uri", "warc-refers-to-date", "warc-block-digest",
        "warc-payload-digest", "content-type", "content-length", "warc-warcinfo-id",
    }
)
"""Revisit fields not copied to the response (replaced or meaningless there)."""

ORIGINAL_ID_FIELD = "WebArk-Original-Record-ID"
STATUS_FIELD = "WebArk-Reduplication"

# RFC 9111 §3.2: fields a 304 does not update in the stored response
@dataclass(frozen=True, slots=True)
class OriginalPayload:
    """What the merge needs of an original.

    Attributes:
        record_id, target_uri, date: its WARC-Record-ID, WARC-Target-URI, WARC-Date.
        head: its HTTP head bytes (None for a record without one).
        body: its body as stored after the head.
        chunked: ``body`` carries valid chunk framing.
        truncated: its WARC-Truncated value, if any.
        declared_chunked: its head says ``Transfer-Encoding: chunked`` (some writers,
            pywb's among them, store a de-chunked body under that header: warc.md
            interop bug 3; such a body is copied as it is under a head that says the
            same).
    """

    record_id: str | None
    target_uri: str | None
    date: str | None
    head: bytes | None
    body: Block
    chunked: bool
    truncated: str | None = None
    declared_chunked: bool = False


@dataclass(frozen=True, slots=True)
class Merged:
    """The response record built, whether its payload matched the revisit's digest
    (``verified``), under which reading (``reading``) and, when not, why
    (``problem``)."""

    record: WarcRecord
    verified: bool
    reading: str | None
    problem: str | None


def _synthesized_head(length: int) -> bytes:
    return (
        f"HTTP/1.1 200 OK\r\nContent-Length: {length}\r\n\r\n".encode("ascii")
    )


def _body_bytes(orig: OriginalPayload, want_chunked: bool) -> bytes:
    """The original's body for a head that is (``want_chunked``) or is not chunked: as
    stored, except that valid chunk framing is removed under a head that is not chunked.
    A plain body is not put into chunks under a chunked head: it stays plain, the form
    pywb and other recorders store bodies in (warc.md interop bug 3), which
    ``webark warc check`` verifies as ``dechunked-body-under-chunked-header`` and
    ``warcio check`` as plain bytes; adding framing would make the two disagree
    (warc-specifications issue 22)."""
    data = orig.body.read_all()
    if not want_chunked and orig.chunked:
        return dechunk(data)[0]
    return data


def merge_revisit(
    revisit: WarcRecord,
    original: OriginalPayload,
    *,
    rule: str,
) -> Merged:
    """The full response for ``revisit`` with ``original``'s payload (module docstring).

    Args:
        revisit: the revisit record as read.
        original: the payload source (for an ``empty-payload`` revisit: an empty body,
            no head, ids None).
        rule: how the original was found (``url-digest``, ``refers-to``, ``digest``,
            ``empty-payload``), written in ``WebArk-Reduplication``.

    Returns:
        A :class:`Merged` whose record passes :meth:`WarcWriter.write`'s checks.
    """
    rh = revisit.http
    rev_head = revisit.block.head(rh.head_length) if rh is not None else None
    profile = (revisit.headers.profile or "").strip()
    not_modified = profile.endswith("/server-not-modified") or (
        rh is not None and rh.status == 304
    )
    if rev_head is not None and not_modified and original.head is not None:
        head = freshen_head(original.head, rev_head)
    elif rev_head is not None:
        head = rev_head
    elif original.head is not None:
        head = original.head
    else:
        head = _synthesized_head(original.body.size)
    parsed = parse_http_head(head, expect_request=False)
    want_chunked = bool(parsed is not None and parsed.is_chunked)
    block = Block(head + _body_bytes(original, want_chunked))

    expected = revisit.headers.payload_digest
    want: Digest | None = None
    if expected:
        try:
            want = Digest.parse(expected)
        except DigestError:
            expected = None
    algorithm = normalize_algorithm(want.algorithm if want is not None else "sha1")
    probe = WarcRecord(WarcHeaders([("WARC-Type", "response"),
                                    ("Content-Type", HTTP_RESPONSE)]), block)
    readings = probe.payload_digests(algorithm)
    verified, reading, problem = False, None, None
    payload_label = Digest(algorithm, readings[0][1]).label()
    if expected and want is not None:
        for name, raw in readings:
            if raw == want.raw:
                verified, reading, payload_label = True, name, expected.strip()
                break
        else:
            problem = (
                f"payload digest {payload_label} of the original's body does not match "
                f"the revisit's {expected.strip()}"
            )
    else:
        problem = "the revisit has no WARC-Payload-Digest to check the payload against"

    fields: list[tuple[str, str]] = []
    for name, value in revisit.headers.fields:
        low = name.lower()
        if low == "warc-type":
            fields.append((name, "response"))
        elif low not in DROPPED_FIELDS and low not in (
            ORIGINAL_ID_FIELD.lower(), STATUS_FIELD.lower()
        ):
            fields.append((name, value))
    if original.target_uri:
        fields.append(("WARC-Refers-To-Target-URI", original.target_uri))
    if original.date:
        fields.append(("WARC-Refers-To-Date", original.date))
    if original.record_id:
        fields.append((ORIGINAL_ID_FIELD, original.record_id))
    if original.truncated:
        fields.append(("WARC-Truncated", original.truncated))
    status = "verified" if verified else f"unverified; {problem}"
    fields.append((STATUS_FIELD, f"{status}; rule={rule}; profile={profile or '-'}"))
    fields.append(("WARC-Block-Digest", Digest(algorithm, block.digest(algorithm)).label()))
    fields.append(("WARC-Payload-Digest", payload_label))
    fields.append(("Content-Type", HTTP_RESPONSE))
    fields.append(("Content-Length", str(block.size)))
    version = revisit.version if revisit.version in ("WARC/1.0", "WARC/1.1") else "WARC/1.1"
    record = WarcRecord(WarcHeaders(fields), block, version=version)
    return Merged(record, verified, reading, problem)
