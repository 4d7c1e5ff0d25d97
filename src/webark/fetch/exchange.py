"""The result of one HTTP fetch: :class:`Exchange`, with the exact bytes sent and
received, what was parsed from them, timing, truncation and failure; and its WARC
records (:func:`exchange_records`, the one place they are built).

The records of one capture (DESIGN.md "Formats → WARC"): ``response`` (or ``revisit``)
then ``request`` (``WARC-Concurrent-To`` the first) then ``metadata`` when given, all
with the fetch start as WARC-Date and the server address as WARC-IP-Address. A
truncated capture gets ``WARC-Truncated: length`` or ``time`` on its response record.
The metadata record gets ``fetchTimeMs`` from the exchange unless the caller set it.
A fetch that opened a TLS connection adds the server's certificate chain as a last
``metadata`` record (:mod:`webark.fetch.certificates`).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from webark.fetch.certificates import certificate_record
from webark.fetch.codes import FetchError, FetchFailure
from webark.warc.builders import MetadataFields, Original, RecordBuilder
from webark.warc.record import Block, WarcRecord

Truncation = Literal["length", "time"]
"""Why a kept capture is incomplete: ``"length"`` (max size) or ``"time"`` (total timeout);
the ``WARC-Truncated`` values of WARC 1.1 §5.13."""

_ANNOTATIONS: dict[str, str] = {"length": "lenTrunc", "time": "timeTrunc"}
_MIME = re.compile(r"[^\s;,]+")


@dataclass(frozen=True)
class Exchange:
    """One HTTP request and its response, as they went over the wire.

    A successful exchange (``error is None``) has a response head; its ``response``
    block holds the bytes received exactly (status line, header fields with their case,
    order and folding, the body with any chunk framing), cut short only when
    ``truncated`` says so. A failed exchange has ``status`` < 0 and ``error`` set; its
    ``response`` holds whatever arrived before the failure (for diagnosis, not for WARCs).

    Attributes:
        url: the URL fetched, as given.
        ip_address: the server address connected to (None if no connection was made).
        request: the request bytes as sent (request line, headers, body).
        response: the response bytes as received: in memory, or in a temporary file
            when larger than ``FetchLimits.spool_threshold``. Interim 1xx responses are
            not part of it (see ``informational``).
        status: the crawl.log status: the HTTP status code, or the negative Heritrix
            code of the failure (:mod:`webark.fetch.codes`).
        started: when the fetch began (aware UTC datetime): WARC-Date of the records,
            crawl.log fetch-begin time.
        duration_ms: milliseconds from the start until the response was read (or the
            fetch failed): crawl.log duration, metadata ``fetchTimeMs``.
        http_status: status code of the response head, None if no head was received.
        reason: the reason phrase, decoded from ISO-8859-1.
        http_version: the protocol version of the response, e.g. ``"1.1"``.
        headers: the response header fields as ``(name, value)``: names with the case
            the server sent, values ISO-8859-1-decoded, obs-folded lines joined.
        head_length: bytes of the response head (status line, fields and blank line).
        payload_digest: digest label of the payload (the body with the transfer-coding
            removed and the content-coding kept), e.g. ``sha1:…``; None when failed.
        payload_size: bytes of that payload.
        truncated: ``"length"`` or ``"time"`` when the capture is cut short, else None.
        error: why the fetch failed, None when it succeeded.
        informational: the raw bytes of interim 1xx responses (e.g. ``103 Early
            Hints``) that preceded the final response; usually empty.
        connection_reused: whether a kept-alive connection was used.
        tls_version: the TLS version of an https fetch as Python's ``ssl`` names it
            (``"TLSv1.3"``), None over plain TCP.
        cipher: the cipher suite of an https fetch, OpenSSL's name
            (``"TLS_AES_256_GCM_SHA384"``, ``"ECDHE-RSA-AES128-GCM-SHA256"``).
        tls_chain: the certificates the server sent (DER, leaf first) when this fetch
            opened a new TLS connection; ``()`` on a reused connection or plain TCP
            (:mod:`webark.fetch.certificates`: one chain record per connection).
    """

    url: str
    ip_address: str | None
    request: bytes
    response: Block
    status: int
    started: datetime
    duration_ms: int
    http_status: int | None = None
    reason: str = ""
    http_version: str = ""
    headers: tuple[tuple[str, str], ...] = ()
    head_length: int = 0
    payload_digest: str | None = None
    payload_size: int = 0
    truncated: Truncation | None = None
    error: FetchFailure | None = None
    informational: bytes = b""
    connection_reused: bool = False
    tls_version: str | None = None
    cipher: str | None = None
    tls_chain: tuple[bytes, ...] = ()

    @property
    def ok(self) -> bool:
        """True when a response was received (any HTTP status, possibly truncated)."""
        return self.error is None

    @property
    def response_bytes(self) -> bytes:
        """The response bytes in memory (avoid for spooled, very large responses)."""
        return self.response.read_all()

    def header(self, name: str, default: str | None = None) -> str | None:
        """First value of response header ``name`` (case-insensitive)."""
        low = name.lower()
        for n, v in self.headers:
            if n.lower() == low:
                return v
        return default

    def header_values(self, name: str) -> list[str]:
        """Every value of response header ``name`` (case-insensitive), in order."""
        low = name.lower()
        return [v for n, v in self.headers if n.lower() == low]

    @property
    def content_type(self) -> str | None:
        """The Content-Type header value, as sent."""
        return self.header("Content-Type")

    @property
    def mime(self) -> str | None:
        """The media type without parameters, lowercased (crawl.log MIME field): the
        ``Content-Type`` value up to the first whitespace, ``;`` or ``,`` (Heritrix
        ``MimetypeUtils.truncate``, ``^([^\\s;,]+)``), so a value such as ``text/html
        foo`` cannot add fields to a crawl.log line. None when there is no such type."""
        ct = self.content_type
        m = _MIME.match(ct.strip()) if ct else None
        return m.group().lower() if m else None

    @property
    def annotations(self) -> tuple[str, ...]:
        """crawl.log annotations of this fetch: ``lenTrunc`` / ``timeTrunc`` for a
        truncated capture, ``err=KIND`` for a failure."""
        out: list[str] = []
        if self.truncated:
            out.append(_ANNOTATIONS[self.truncated])
        if self.error is not None:
            out.append(f"err={self.error.kind}")
        return tuple(out)

    def to_records(
        self,
        builder: RecordBuilder,
        metadata: MetadataFields | None = None,
        original: Original | None = None,
        *,
        extra_fields: Sequence[tuple[str, str]] = (),
        payload_checked: bool = False,
    ) -> tuple[WarcRecord, ...]:
        """The WARC records of this capture (see :func:`exchange_records`): response —
        or revisit when ``original`` is given —, request, metadata, then the server's
        certificate chain when the fetch opened a TLS connection.

        Raises:
            FetchError: the fetch failed (no response to record).
            InvalidRecordError: as :meth:`RecordBuilder.revisit`.
        """
        return exchange_records(self, builder, metadata, original, extra_fields=extra_fields,
                                payload_checked=payload_checked)  # fmt: skip


def exchange_records(
    exchange: Exchange,
    builder: RecordBuilder,
    metadata: MetadataFields | None = None,
    original: Original | None = None,
    *,
    extra_fields: Sequence[tuple[str, str]] = (),
    payload_checked: bool = False,
) -> tuple[WarcRecord, ...]:
    """Records of one capture, ready for one ``WarcWriter.write(*records)`` call.

    Args:
        exchange: a successful fetch (``exchange.ok``).
        builder: the writer's builder (version, digest algorithm, record ids).
        metadata: crawl metadata (via, hopsFromSeed, outlinks …) for a metadata record;
            ``fetch_time_ms`` is filled from ``exchange.duration_ms`` when None.
        original: the earlier capture this one duplicates: a revisit record is written
            instead of the response (profile ``server-not-modified`` for a 304,
            ``identical-payload-digest`` otherwise), its block the response head only.
        extra_fields: extension fields for the response/revisit and request records.
            A fetch that opened a TLS connection (``exchange.tls_chain``) also gets the
            chain's metadata record (:func:`~webark.fetch.certificates.certificate_record`).
        payload_checked: the caller has checked that the payload is the original's under
            another reading of its digest than the builder's (a chunked body digested
            with its chunk framing, as wget writes it): the revisit is built from the
            response head alone and carries ``original.payload_digest``.

    Raises:
        FetchError: the exchange failed: Heritrix writes no records for negative
            statuses, and there is no response to write.
        InvalidRecordError: as :meth:`RecordBuilder.revisit` (e.g. a payload that is not
            identical to the original's).
    """
    if exchange.error is not None:
        raise FetchError(f"no WARC records for failed fetch of {exchange.url}: {exchange.error}")
    when = exchange.started
    ip = exchange.ip_address
    if original is None:
        first = builder.response(
            exchange.url,
            exchange.response,
            date=when,
            ip_address=ip,
            truncated=exchange.truncated,
            extra_fields=extra_fields,
        )
    else:
        block = exchange.response
        if payload_checked:
            block = Block(block.head(exchange.head_length))
        first = builder.revisit(
            exchange.url,
            block,
            original,
            date=when,
            ip_address=ip,
            extra_fields=extra_fields,
        )
    link = [first.record_id or ""]
    out = [
        first,
        builder.request(
            exchange.url,
            exchange.request,
            date=when,
            ip_address=ip,
            concurrent_to=link,
            extra_fields=extra_fields,
        ),
    ]
    if metadata is not None:
        if metadata.fetch_time_ms is None:
            metadata = dataclasses.replace(metadata, fetch_time_ms=exchange.duration_ms)
        out.append(builder.metadata(exchange.url, metadata, date=when, concurrent_to=link))
    if exchange.tls_chain:
        out.append(certificate_record(builder, exchange.url, exchange.tls_chain,
                                      concurrent_to=link[0], date=when))  # fmt: skip
    return tuple(out)
