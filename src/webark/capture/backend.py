"""The capture back end: one object per job or collection that turns exchanges into WARC
records, deduplicates, keeps the dedup index and the fetch history, and writes the
crawl.log (DESIGN.md "three crawlers, one writer").

:class:`CaptureBackend` is the protocol every crawler uses: the bulk crawler in process,
the archiving proxy (browser and manual crawling) for every exchange it relays.
:class:`WarcCaptureBackend` is its implementation over WARC files, an optional dedup
index and an optional crawl.log.

The invariant that makes dedup safe (DESIGN.md "Storage"; the
:class:`~webark.dedup.DedupIndex` contract) is carried by one method,
:meth:`WarcCaptureBackend.archive`, whose steps are, in order and nowhere else:

1. **dedup decision** — :func:`~webark.capture.dedup.find_original` (the policy of the
   capture, else the back end's);
2. **records** — response or revisit, request, metadata, built once
   (:meth:`~webark.fetch.Exchange.to_records`); a revisit the builder refuses is written
   in full instead;
3. **durable write** — all records of the capture in one write to the WARC series of
   the capture's prefix (:class:`~webark.capture.series.WarcSeries`); a kill before
   its end leaves no part of them after ``webark warc repair``;
4. **dedup index update** — :func:`~webark.capture.dedup.remember`, with the records
   the writer returned (so the index can only name records that are in a file);
5. **sinks** — e.g. a collection index that makes the capture replayable at once.

The crawl.log line is not written by :meth:`archive`: the bulk crawler writes it only
once the URI's outlinks are in the frontier (:meth:`log`, with a line made by
:func:`~webark.capture.crawllog.capture_line`), a proxy right after :meth:`archive`.
"""

from __future__ import annotations

import errno
import logging
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol, runtime_checkable

from webark.capture.crawllog import CrawlLogWriter
from webark.capture.dedup import NO_REVISIT, RevisitChoice, find_original, remember
from webark.capture.meta import CaptureMeta, CaptureResult
from webark.capture.series import SeriesConfig, WarcSeries
from webark.capture.stats import CaptureStats
from webark.core.errors import InvalidRecordError, WebarkError
from webark.crawllog import CrawlLogLine
from webark.dedup import DedupIndex, FetchHistory
from webark.dedup.policy import DedupPolicy
from webark.dedup.sqlite_dedup import SqliteDedupIndex, open_index
from webark.fetch import DnsAnswer, Exchange
from webark.fetch.tls_names import protocol_fields
from webark.warc.reader import ArchiveReader
from webark.warc.record import WarcRecord

__all__ = [
    "CaptureBackend",
    "CaptureConfig",
    "CaptureError",
    "CaptureSink",
    "WarcCaptureBackend",
    "is_disk_full",
]

log = logging.getLogger(__name__)


class CaptureError(WebarkError, ValueError):
    """A capture that cannot be archived (a failed fetch: there is no response to
    write), or a back end used after :meth:`WarcCaptureBackend.aclose`."""


def is_disk_full(e: BaseException) -> bool:
    """True for "no space left" from the file system (``ENOSPC``, ``EDQUOT``) or from
    SQLite (``SQLITE_FULL``, error code 13): a condition to stop on (the back end wrote
    nothing of the capture), not an error of one capture."""
    if isinstance(e, OSError) and e.errno in (errno.ENOSPC, errno.EDQUOT):
        return True
    return isinstance(e, sqlite3.Error) and getattr(e, "sqlite_errorcode", None) == 13


class DedupStore(DedupIndex, FetchHistory, Protocol):
    """A dedup index that also keeps the fetch history (the SQLite index is both)."""


@runtime_checkable
class CaptureSink(Protocol):
    """Told about every capture once its records are written (step 5 of
    :meth:`WarcCaptureBackend.archive`), e.g. to index it into a collection."""

    def written(self, records: Sequence[WarcRecord]) -> None:
        """``records`` (as the writer returned them: path, offset, length) are on disk."""
        ...


@runtime_checkable
class CaptureBackend(Protocol):
    """Where every crawler's captures go (module docstring)."""

    async def archive(self, exchange: Exchange, meta: CaptureMeta) -> CaptureResult:
        """Dedup decision → records → durable write → dedup index update, for one
        successful exchange (module docstring).

        Raises:
            CaptureError: the exchange failed. OSError: the WARC could not be written
                (nothing of the capture is in it; :func:`is_disk_full` tells a full disk).
        """
        ...

    async def archive_dns(self, answer: DnsAnswer, meta: CaptureMeta) -> CaptureResult:
        """The ``dns:`` record of a successful lookup (Heritrix's ``text/dns``)."""
        ...

    async def write_record(self, *records: WarcRecord, meta: CaptureMeta) -> CaptureResult:
        """Records a client built (a screenshot, a ``resource``), written together into
        the series of ``meta.warc_prefix``, checked as every record is."""
        ...

    def validators(self, url: str) -> list[tuple[str, str]]:
        """``If-None-Match`` / ``If-Modified-Since`` request headers from the URL's
        last capture (RFC 9110 §13.1), ``[]`` when none or when conditional requests
        are off."""
        ...

    def log(self, line: CrawlLogLine) -> None:
        """Write a final crawl.log line."""
        ...

    async def aclose(self) -> None:
        """Finish the WARC files, the crawl.log and the dedup index. Idempotent."""
        ...


@dataclass(frozen=True, slots=True)
class CaptureConfig:
    """What a :class:`WarcCaptureBackend` writes and how it deduplicates.

    Attributes:
        series: the WARC files (folder, default prefix, rotation, compression, hybrid,
            warcinfo).
        crawl_log: the crawl.log file, or None for none.
        dedup_index: the SQLite dedup index to open (and own), or None. A back end
            given an index object instead uses that one and does not close it.
        dedup_policy: which captures are deduplicated (a capture's
            ``CaptureMeta.dedup_policy`` overrides it).
        conditional_requests: :meth:`WarcCaptureBackend.validators` answers (a recrawl
            sends ``If-None-Match`` / ``If-Modified-Since``).
        original_dirs: folders where the WARCs of originals may be (besides
            ``series.directory``), for :meth:`WarcCaptureBackend.last_capture_record`.
    """

    series: SeriesConfig
    crawl_log: Path | None = None
    dedup_index: Path | None = None
    dedup_policy: DedupPolicy = field(default_factory=DedupPolicy)
    conditional_requests: bool = True
    original_dirs: tuple[Path, ...] = ()


class WarcCaptureBackend:
    """A :class:`CaptureBackend` writing WARC files (module docstring).

    Args:
        config: what to write where.
        dedup: a dedup index + fetch history to use instead of opening
            ``config.dedup_index`` (not closed by :meth:`aclose`).
        sinks: told about each capture once written.

    Must be used from one asyncio event loop; WARC writing runs in a thread
    (:class:`~webark.warc.writer.AsyncWarcWriter`), the dedup index in the loop.
    """

    def __init__(
        self,
        config: CaptureConfig,
        *,
        dedup: DedupStore | None = None,
        sinks: Sequence[CaptureSink] = (),
    ) -> None:
        self.config = config
        self.series = WarcSeries(config.series)
        self._own_index: SqliteDedupIndex | None = None
        if dedup is None and config.dedup_index is not None:
            config.dedup_index.parent.mkdir(parents=True, exist_ok=True)
            self._own_index = open_index(config.dedup_index, commit_every=1)
        self.dedup: DedupStore | None = dedup if dedup is not None else self._own_index
        self.sinks = tuple(sinks)
        self.stats = CaptureStats()
        self._crawl_log = CrawlLogWriter(config.crawl_log) if config.crawl_log else None
        self._closed = False

    # -- capturing --------------------------------------------------------------------
    async def archive(self, exchange: Exchange, meta: CaptureMeta, *,
                      dedup: DedupStore | None = None) -> CaptureResult:  # fmt: skip
        """See :meth:`CaptureBackend.archive`; the steps are those of the module
        docstring, in this one method. ``dedup``: this capture's dedup index instead
        of the back end's (warcprox ``dedup-buckets``:
        :class:`webark.dedup.buckets.Bucketed`)."""
        if self._closed:
            raise CaptureError("capture back end is closed")
        if not exchange.ok:
            raise CaptureError(f"nothing to archive: the fetch of {exchange.url} failed "
                               f"({exchange.error})")  # fmt: skip
        # 1. dedup decision
        index = dedup if dedup is not None else self.dedup
        policy = meta.dedup_policy or self.config.dedup_policy
        choice = NO_REVISIT if index is None else find_original(exchange, index, index, policy)
        # 2. records
        records, choice = self._records(exchange, meta, choice)
        # 3. durable write
        writer = self.series.writer(meta.warc_prefix, meta.warcinfo)
        written = tuple(await writer.write(*records))
        # 4. dedup index update, from what is now on disk
        indexed = False
        if index is not None:
            indexed = remember(exchange, written[0], choice, index, index,
                               dedup_ok=meta.dedup_ok)  # fmt: skip
        # 5. sinks
        for sink in self.sinks:
            sink.written(written)
        self.stats.records += len(written)
        self.stats.count(exchange.response.size, choice.original is not None,
                         meta.stats_buckets)  # fmt: skip
        return CaptureResult(
            written, choice.original, choice.kind, choice.hit_kind, choice.reading,
            exchange.payload_size, indexed,
        )  # fmt: skip

    def _records(
        self, ex: Exchange, meta: CaptureMeta, choice: RevisitChoice
    ) -> tuple[tuple[WarcRecord, ...], RevisitChoice]:
        """The records of the capture, and the choice they follow (a revisit the record
        builder refuses, e.g. a payload that differs from what the index said, is
        written in full)."""
        builder = self.series.builder
        md = meta.metadata_fields()
        # WARC-Protocol / WARC-Cipher-Suite of a capture over TLS, whichever crawler made it
        extra = protocol_fields(ex) + meta.extra_fields
        try:
            return ex.to_records(
                builder, md, choice.original, extra_fields=extra,
                payload_checked=choice.reading == "chunked-bytes",
            ), choice  # fmt: skip
        except InvalidRecordError as e:
            if choice.original is None:
                raise
            log.warning("revisit of %s refused (%s); writing the full response", ex.url, e)
            full = RevisitChoice(lookup=choice.lookup)
            return ex.to_records(builder, md, None, extra_fields=extra), full

    async def archive_dns(self, answer: DnsAnswer, meta: CaptureMeta) -> CaptureResult:
        """See :meth:`CaptureBackend.archive_dns`.

        Raises:
            FetchError: the lookup failed (there is no record to write).
        """
        record = answer.to_record(self.series.builder)
        written = tuple(await self.series.writer(meta.warc_prefix, meta.warcinfo).write(record))
        self.stats.records += 1
        return CaptureResult(written, payload_size=len(answer.text()))

    async def write_record(self, *records: WarcRecord, meta: CaptureMeta) -> CaptureResult:
        """See :meth:`CaptureBackend.write_record`.

        Raises:
            InvalidRecordError: a record would make the WARC invalid (nothing written).
        """
        if not records:
            raise CaptureError("no record to write")
        writer = self.series.writer(meta.warc_prefix, meta.warcinfo)
        written = tuple(await writer.write(*records))
        for sink in self.sinks:
            sink.written(written)
        self.stats.records += len(written)
        return CaptureResult(written, payload_size=written[0].block.size)

    # -- what crawlers ask ------------------------------------------------------------
    def validators(self, url: str) -> list[tuple[str, str]]:
        """See :meth:`CaptureBackend.validators` (Heritrix ``FetchHTTP``
        sendIfNoneMatch / sendIfModifiedSince with its fetch history)."""
        if self.dedup is None or not self.config.conditional_requests:
            return []
        last = self.dedup.last_capture(url)
        if last is None:
            return []
        out = []
        if last.etag:
            out.append(("If-None-Match", last.etag))
        if last.last_modified:
            out.append(("If-Modified-Since", last.last_modified))
        return out

    def last_capture_record(self, url: str) -> WarcRecord | None:
        """The response record of the last full capture of ``url`` (the one a 304
        revisits), read from the back end's WARC folder or ``config.original_dirs``;
        None when the index has none or its file is not at hand."""
        if self.dedup is None:
            return None
        last = self.dedup.last_capture(url)
        hit = self.dedup.lookup(url, last.digest) if last is not None else None
        if hit is None or not hit.exact_url or not hit.warc_filename or hit.offset is None:
            return None
        dirs = (self.config.series.directory, *self.config.original_dirs)
        found = next((d / hit.warc_filename for d in dirs if (d / hit.warc_filename).is_file()),
                     None)  # fmt: skip
        if found is None:
            return None
        rec = next(iter(ArchiveReader(str(found), start=hit.offset)), None)
        if rec is None or rec.type != "response" or rec.target_uri != hit.original.target_uri:
            return None
        return rec

    def log(self, line: CrawlLogLine) -> None:
        """See :meth:`CaptureBackend.log`.

        Raises:
            CaptureError: the back end has no crawl.log. OSError: the disk is full.
        """
        if self._crawl_log is None:
            raise CaptureError("this capture back end keeps no crawl.log")
        self._crawl_log.write(line)

    # -- state ------------------------------------------------------------------------
    @property
    def paths(self) -> list[str]:
        """Final paths of every WARC file started."""
        return self.series.paths

    def warc_bytes(self) -> int:
        """Bytes of the WARC files on disk (closed and open)."""
        return self.series.bytes_on_disk()

    async def aclose(self) -> None:
        """See :meth:`CaptureBackend.aclose`."""
        if self._closed:
            return
        self._closed = True
        await self.series.aclose()
        if self._crawl_log is not None:
            self._crawl_log.close()
        if self._own_index is not None:
            self._own_index.close()
