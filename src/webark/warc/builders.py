"""Record construction (WARC 1.1 §6): one method per record type that fills every field the
type needs, so callers never have to know the per-type rules.

A :class:`RecordBuilder` makes complete, frozen :class:`~webark.warc.record.WarcRecord`
objects: WARC-Type, WARC-Record-ID, WARC-Date, WARC-Target-URI, the digests,
Content-Type and Content-Length. Only ``WARC-Warcinfo-ID`` is left to the writer, which
knows which file (and so which warcinfo) a record lands in. Records are checked against
:func:`~webark.warc.validate_fields.field_problems` when written, not here.

Digests (DESIGN.md "Formats → WARC", warc-specifications issue 22):

- ``WARC-Block-Digest`` over the exact block bytes (chunk framing included);
- ``WARC-Payload-Digest`` over the payload: for HTTP records the entity body with the
  transfer-coding removed and the content-coding kept; for resource and conversion
  records the block. wget, warcio and wpull digest the chunked bytes instead, so
  ``warcio check`` and fastwarc's ``verify_payload_digest()`` report a mismatch on the
  chunked responses we write (a known difference of those tools, not of ours).

Field order follows Heritrix 3: type, id, date, target, IP, links, profile, truncation,
digests, Content-Type, Content-Length.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from webark.core.digests import Digest, Hasher, normalize_algorithm, same_digest
from webark.core.errors import InvalidRecordError
from webark.core.ids import Clock, RecordIdFactory, new_record_id, utc_now
from webark.core.timestamps import format_w3c_date
from webark.warc.fields import WARC_FIELDS, MetadataFields, WarcinfoFields, warc_fields_block
from webark.warc.headers import WarcHeaders
from webark.warc.http import parse_http_head
from webark.warc.record import HEAD_PEEK, Block, WarcRecord

__all__ = [
    "HTTP_REQUEST", "HTTP_RESPONSE", "PEM_CHAIN", "WARC_FIELDS", "BlockData", "MetadataFields",
    "Original", "RecordBuilder", "RevisitProfile", "WarcinfoFields", "profile_uri",
    "warc_fields_block",
]  # fmt: skip
# WARC_FIELDS, MetadataFields, WarcinfoFields and warc_fields_block live in
# webark.warc.fields; they stay importable from here, where the builders use them.

HTTP_RESPONSE = "application/http;msgtype=response"
"""Content-Type of response and revisit records with an HTTP block (WARC 1.1 §6.3.2)."""
HTTP_REQUEST = "application/http;msgtype=request"
"""Content-Type of request records with an HTTP block (WARC 1.1 §6.5.2)."""
PEM_CHAIN = "application/pem-certificate-chain"
"""Content-Type of a metadata record holding a server's TLS certificate chain, PEM, leaf
first (RFC 8555 §9.1; :mod:`webark.fetch.certificates`)."""

BlockData = bytes | bytearray | memoryview | Block
"""A block given as bytes, or a :class:`~webark.warc.record.Block` (may be spooled to disk)."""

RevisitProfile = Literal["identical-payload-digest", "server-not-modified"]

def profile_uri(profile: str, version: str = "WARC/1.1") -> str:
    """The revisit profile URI for ``version``: ``"identical-payload-digest"`` →
    ``http://netpreserve.org/warc/1.1/revisit/identical-payload-digest`` (WARC 1.1 §6.7).
    A full URI is returned unchanged."""
    if "/" in profile:
        return profile
    return f"http://netpreserve.org/warc/{version.removeprefix('WARC/')}/revisit/{profile}"


@dataclass(frozen=True, slots=True)
class Original:
    """The earlier capture a revisit refers to, as a dedup index returns it.

    Attributes:
        target_uri: its WARC-Target-URI (→ ``WARC-Refers-To-Target-URI``).
        date: its WARC-Date, as a string (kept verbatim) or an aware datetime
            (→ ``WARC-Refers-To-Date``).
        record_id: its WARC-Record-ID (→ ``WARC-Refers-To``), when known.
        payload_digest: its WARC-Payload-Digest, when known.
    """

    target_uri: str
    date: str | datetime
    record_id: str | None = None
    payload_digest: str | None = None


def _as_block(data: BlockData) -> Block:
    return data if isinstance(data, Block) else Block(bytes(data))


@dataclass(frozen=True)
class RecordBuilder:
    """Builds complete WARC records of one WARC version.

    Attributes:
        version: ``"WARC/1.1"`` (default) or ``"WARC/1.0"``.
        digest_algorithm: ``"sha1"`` (Base32 labels, the default) or ``"sha256"`` (hex).
        clock: source of WARC-Date when no date is given (aware UTC datetimes).
        record_ids: source of WARC-Record-IDs.
        date_precision: fractional-second digits of WARC-Date, 0–6 (WARC/1.1 only; 1.0
            requires whole seconds, §5.4).
    """

    version: str = "WARC/1.1"
    digest_algorithm: str = "sha1"
    clock: Clock = utc_now
    record_ids: RecordIdFactory = new_record_id
    date_precision: int = 0

    def __post_init__(self) -> None:
        if self.version not in ("WARC/1.0", "WARC/1.1"):
            raise ValueError(f"cannot write {self.version!r} records (WARC/1.0 or WARC/1.1)")
        Hasher(self.digest_algorithm)  # raises DigestError for an unknown algorithm
        if not 0 <= self.date_precision <= 6:
            raise ValueError("date_precision must be 0..6")

    # -- helpers ----------------------------------------------------------------------
    def format_date(self, date: datetime | None = None) -> str:
        """WARC-Date of ``date`` (``clock()`` when None) at this builder's precision."""
        precision = self.date_precision if self.version == "WARC/1.1" else 0
        return format_w3c_date(date if date is not None else self.clock(), precision)

    def _digest(self, block: Block) -> str:
        """Block digest label; the block remembers the digest, so the writer's check of
        it costs nothing (:meth:`Block.digest`)."""
        return Digest(self._algorithm, block.digest(self._algorithm)).label()

    @property
    def _algorithm(self) -> str:
        return normalize_algorithm(self.digest_algorithm)

    def _payload_digest(self, rtype: str, block: Block, content_type: str) -> str | None:
        """Digest of the HTTP entity body with chunking removed (the body as is when it
        is not validly chunked); None when the block holds no HTTP message (e.g. an empty
        block). Hashed in place, without copying the body."""
        probe = WarcRecord(
            WarcHeaders([("WARC-Type", rtype), ("Content-Type", content_type)]), block
        )
        if probe.http is None:
            return None
        return Digest(self._algorithm, probe.payload_digests(self._algorithm)[0][1]).label()

    def _record(
        self,
        rtype: str,
        block: Block,
        content_type: str | None,
        date: str,
        fields: Sequence[tuple[str, str | None]],
        payload_digest: str | None,
        extra_fields: Iterable[tuple[str, str]],
        block_digest: str | None = None,
    ) -> WarcRecord:
        headers = WarcHeaders(
            [("WARC-Type", rtype), ("WARC-Record-ID", self.record_ids()), ("WARC-Date", date)]
        )
        for name, value in fields:
            if value is not None:
                headers.add(name, value)
        for name, value in extra_fields:
            headers.add(name, value)
        headers.add("WARC-Block-Digest", block_digest or self._digest(block))
        if payload_digest is not None:
            headers.add("WARC-Payload-Digest", payload_digest)
        if content_type is not None:
            headers.add("Content-Type", content_type)
        headers.add("Content-Length", str(block.size))
        return WarcRecord(headers, block, version=self.version)

    # -- record types -----------------------------------------------------------------
    def warcinfo(
        self, fields: WarcinfoFields, filename: str, *, date: datetime | None = None
    ) -> WarcRecord:
        """A warcinfo record (WARC 1.1 §6.1) for the file named ``filename`` (the final
        name, without ``.open``)."""
        block = Block(warc_fields_block(fields.pairs(self.version)))
        return self._record(
            "warcinfo",
            block,
            WARC_FIELDS,
            self.format_date(date),
            [("WARC-Filename", filename)],
            None,
            (),
        )

    def response(
        self,
        target_uri: str,
        block: BlockData,
        *,
        date: datetime | None = None,
        ip_address: str | None = None,
        concurrent_to: Sequence[str] = (),
        truncated: str | None = None,
        content_type: str = HTTP_RESPONSE,
        extra_fields: Iterable[tuple[str, str]] = (),
    ) -> WarcRecord:
        """A response record (WARC 1.1 §6.3) whose block is the HTTP response exactly as
        received (status line, headers, body with any chunk framing).

        Args:
            target_uri: the URI fetched (no angle brackets).
            block: the wire bytes of the response.
            date: when the capture began (default: ``clock()``).
            ip_address: the server's IP address (WARC-IP-Address, recommended).
            concurrent_to: record ids of the same capture (WARC-Concurrent-To).
            truncated: WARC-Truncated reason (``length``, ``time``, ``disconnect``,
                ``unspecified``) when the body was cut short.
            content_type: the block's type; keep the default for HTTP.
            extra_fields: extension fields, e.g. ``("WARC-Protocol", "h2")``.
        """
        blk = _as_block(block)
        return self._record(
            "response",
            blk,
            content_type,
            self.format_date(date),
            [
                ("WARC-Target-URI", target_uri),
                ("WARC-IP-Address", ip_address),
                *(("WARC-Concurrent-To", c) for c in concurrent_to),
                ("WARC-Truncated", truncated),
            ],
            self._payload_digest("response", blk, content_type),
            extra_fields,
        )

    def request(
        self,
        target_uri: str,
        block: BlockData,
        *,
        date: datetime | None = None,
        ip_address: str | None = None,
        concurrent_to: Sequence[str] = (),
        content_type: str = HTTP_REQUEST,
        extra_fields: Iterable[tuple[str, str]] = (),
    ) -> WarcRecord:
        """A request record (WARC 1.1 §6.5) whose block is the HTTP request as sent.
        Arguments as for :meth:`response`."""
        blk = _as_block(block)
        return self._record(
            "request",
            blk,
            content_type,
            self.format_date(date),
            [
                ("WARC-Target-URI", target_uri),
                ("WARC-IP-Address", ip_address),
                *(("WARC-Concurrent-To", c) for c in concurrent_to),
            ],
            self._payload_digest("request", blk, content_type),
            extra_fields,
        )

    def metadata(
        self,
        target_uri: str | None,
        fields: MetadataFields | Iterable[tuple[str, str]],
        *,
        date: datetime | None = None,
        concurrent_to: Sequence[str] = (),
        refers_to: str | None = None,
        extra_fields: Iterable[tuple[str, str]] = (),
    ) -> WarcRecord:
        """A metadata record (WARC 1.1 §6.6) with an ``application/warc-fields`` block
        (via, hopsFromSeed, sourceTag, fetchTimeMs, outlink …).

        Raises:
            InvalidRecordError: a field name or value that cannot be written.
        """
        pairs = fields.pairs() if isinstance(fields, MetadataFields) else list(fields)
        return self.metadata_block(target_uri, warc_fields_block(pairs), WARC_FIELDS,
                                   date=date, concurrent_to=concurrent_to,
                                   refers_to=refers_to, extra_fields=extra_fields)  # fmt: skip

    def metadata_block(
        self,
        target_uri: str | None,
        block: BlockData,
        content_type: str,
        *,
        date: datetime | None = None,
        concurrent_to: Sequence[str] = (),
        refers_to: str | None = None,
        extra_fields: Iterable[tuple[str, str]] = (),
    ) -> WarcRecord:
        """A metadata record (WARC 1.1 §6.6) whose block is ``block`` as given, of media
        type ``content_type``, e.g. a server's certificate chain
        (``application/pem-certificate-chain``, :mod:`webark.fetch.certificates`)."""
        return self._record(
            "metadata",
            _as_block(block),
            content_type,
            self.format_date(date),
            [
                ("WARC-Target-URI", target_uri),
                *(("WARC-Concurrent-To", c) for c in concurrent_to),
                ("WARC-Refers-To", refers_to),
            ],
            None,
            extra_fields,
        )

    def resource(
        self,
        target_uri: str,
        block: BlockData,
        content_type: str,
        *,
        date: datetime | None = None,
        ip_address: str | None = None,
        concurrent_to: Sequence[str] = (),
        truncated: str | None = None,
        extra_fields: Iterable[tuple[str, str]] = (),
    ) -> WarcRecord:
        """A resource record (WARC 1.1 §6.4): the block is the payload, e.g. a screenshot
        (``image/png``) of ``target_uri``, a ``text/dns`` lookup or a local file."""
        blk = _as_block(block)
        digest = self._digest(blk)
        return self._record(
            "resource",
            blk,
            content_type,
            self.format_date(date),
            [
                ("WARC-Target-URI", target_uri),
                ("WARC-IP-Address", ip_address),
                *(("WARC-Concurrent-To", c) for c in concurrent_to),
                ("WARC-Truncated", truncated),
            ],
            digest,
            extra_fields,
            block_digest=digest,
        )

    def conversion(
        self,
        target_uri: str,
        block: BlockData,
        content_type: str,
        *,
        refers_to: str | None,
        date: datetime | None = None,
        extra_fields: Iterable[tuple[str, str]] = (),
    ) -> WarcRecord:
        """A conversion record (WARC 1.1 §6.8): ``block`` is another record's content in a
        new format; ``refers_to`` is that record's id (should be given where practical)."""
        blk = _as_block(block)
        digest = self._digest(blk)
        return self._record(
            "conversion",
            blk,
            content_type,
            self.format_date(date),
            [("WARC-Target-URI", target_uri), ("WARC-Refers-To", refers_to)],
            digest,
            extra_fields,
            block_digest=digest,
        )

    def revisit(
        self,
        target_uri: str,
        block: BlockData,
        original: Original,
        *,
        profile: RevisitProfile | None = None,
        date: datetime | None = None,
        ip_address: str | None = None,
        concurrent_to: Sequence[str] = (),
        extra_fields: Iterable[tuple[str, str]] = (),
    ) -> WarcRecord:
        """A revisit record (WARC 1.1 §6.7, IIPC "recording arbitrary duplicates").

        The block keeps the HTTP response head only (reversible dedup: status and headers
        of this capture survive); the body, if given, is dropped and ``WARC-Truncated:
        length`` written. WARC-Refers-To, WARC-Refers-To-Target-URI and
        WARC-Refers-To-Date come from ``original``.

        Args:
            target_uri: the URI fetched now.
            block: this capture's HTTP response (whole or head only), or b"".
            original: the capture this one duplicates.
            profile: ``"identical-payload-digest"`` or ``"server-not-modified"``; by
                default the latter for a 304 status, the former otherwise.
            date, ip_address, concurrent_to, extra_fields: as for :meth:`response`.

        Raises:
            InvalidRecordError: identical-payload-digest with no payload digest known (no
                body given and none in ``original``), or a body whose digest differs from
                ``original.payload_digest``; a non-empty block that is not an HTTP
                response.
        """
        data = _as_block(block)
        head_bytes = data.head(HEAD_PEEK)
        head = parse_http_head(head_bytes, expect_request=False) if head_bytes else None
        if head_bytes and head is None:
            raise InvalidRecordError(f"revisit of {target_uri}: block is not an HTTP response")
        if profile is None:
            profile = (
                "server-not-modified"
                if head and head.status == 304
                else ("identical-payload-digest")
            )
        body_digest = None
        kept = Block(head_bytes[: head.head_length] if head else b"")
        cut = data.size > kept.size
        if cut:
            body_digest = self._payload_digest("revisit", data, HTTP_RESPONSE)
        payload = original.payload_digest or body_digest
        if (
            body_digest
            and original.payload_digest
            and not same_digest(body_digest, original.payload_digest)
        ):
            if profile == "identical-payload-digest":
                raise InvalidRecordError(
                    f"revisit of {target_uri}: payload {body_digest} is not identical to the "
                    f"original's {original.payload_digest}"
                )
            payload = original.payload_digest
        if profile == "identical-payload-digest" and payload is None:
            raise InvalidRecordError(
                f"identical-payload-digest revisit of {target_uri} needs a payload digest"
            )
        truncated = cut or (profile == "identical-payload-digest" and kept.size > 0)
        rdate = original.date if isinstance(original.date, str) else self.format_date(original.date)
        return self._record(
            "revisit",
            kept,
            HTTP_RESPONSE if kept.size else None,
            self.format_date(date),
            [
                ("WARC-Target-URI", target_uri),
                ("WARC-IP-Address", ip_address),
                *(("WARC-Concurrent-To", c) for c in concurrent_to),
                ("WARC-Refers-To", original.record_id),
                ("WARC-Refers-To-Target-URI", original.target_uri),
                ("WARC-Refers-To-Date", rdate),
                ("WARC-Profile", profile_uri(profile, self.version)),
                ("WARC-Truncated", "length" if truncated else None),
            ],
            payload,
            extra_fields,
        )

    def exchange(
        self,
        target_uri: str,
        response: BlockData,
        request: BlockData,
        *,
        ip_address: str | None = None,
        metadata: MetadataFields | None = None,
        original: Original | None = None,
        date: datetime | None = None,
        extra_fields: Iterable[tuple[str, str]] = (),
    ) -> tuple[WarcRecord, ...]:
        """The records of one HTTP capture, in DESIGN.md order: response (or revisit, when
        ``original`` is given), request, then metadata if given. All share one WARC-Date
        (WARC 1.1 §5.4); request and metadata carry ``WARC-Concurrent-To`` the first
        record. Write them with one ``WarcWriter.write(*records)`` call so they stay
        together.

        Raises:
            InvalidRecordError: as :meth:`revisit`.
        """
        when = date if date is not None else self.clock()
        if original is None:
            first = self.response(
                target_uri,
                response,
                date=when,
                ip_address=ip_address,
                extra_fields=extra_fields,
            )
        else:
            first = self.revisit(
                target_uri,
                response,
                original,
                date=when,
                ip_address=ip_address,
                extra_fields=extra_fields,
            )
        link = [first.record_id or ""]
        out = [
            first,
            self.request(
                target_uri,
                request,
                date=when,
                ip_address=ip_address,
                concurrent_to=link,
                extra_fields=extra_fields,
            ),
        ]
        if metadata is not None:
            out.append(self.metadata(target_uri, metadata, date=when, concurrent_to=link))
        return tuple(out)
