"""An :class:`~webark.fetch.exchange.Exchange` turned into WARC records with
:class:`~webark.warc.builders.RecordBuilder`.

The records of one capture (DESIGN.md "Formats → WARC"): ``response`` (or ``revisit``)
then ``request`` (``WARC-Concurrent-To`` the first) then ``metadata`` when given, all
with the fetch start as WARC-Date and the server address as WARC-IP-Address. A
truncated capture gets ``WARC-Truncated: length`` or ``time`` on its response record.
The metadata record gets ``fetchTimeMs`` from the exchange unless the caller set it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import TYPE_CHECKING

from webark.fetch.codes import FetchError
from webark.warc.builders import MetadataFields, Original, RecordBuilder
from webark.warc.record import WarcRecord

if TYPE_CHECKING:
    from webark.fetch.exchange import Exchange


def exchange_records(
    exchange: Exchange,
    builder: RecordBuilder,
    metadata: MetadataFields | None = None,
    original: Original | None = None,
    *,
    extra_fields: Sequence[tuple[str, str]] = (),
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
        first = builder.revisit(
            exchange.url,
            exchange.response,
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
    return tuple(out)
