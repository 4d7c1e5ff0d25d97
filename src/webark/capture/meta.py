"""What goes into the capture back end beside the exchange (:class:`CaptureMeta`) and
what comes out of it (:class:`CaptureResult`). Both are frozen values.

The fields of :class:`CaptureMeta` are those every crawler can tell about a capture: the
bulk crawler knows hop path, via and source tag from its frontier; the archiving proxy
gets them from warcprox's ``Warcprox-Meta`` request header (``warc-prefix``,
``metadata.seed`` → source tag, ``dedup-ok``); the browser crawler from the page it is
rendering.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Literal

from webark.dedup import HitKind
from webark.dedup.policy import DedupPolicy
from webark.warc.builders import MetadataFields, Original
from webark.warc.record import WarcRecord

__all__ = ["CaptureMeta", "CaptureResult", "DigestReading", "RevisitKind"]

RevisitKind = Literal["digest", "server-not-modified"]
"""Why a capture became a revisit: its payload digest was already archived
(``identical-payload-digest`` profile, crawl.log ``duplicate:digest``), or a 304 to a
conditional request (``server-not-modified``, crawl.log
``duplicate:server-not-modified``)."""

DigestReading = Literal["transfer-decoded", "chunked-bytes"]
"""Which reading of a chunked payload a digest is over (warc-specifications issue 22):
``transfer-decoded`` (WARC 1.1, webark's) or ``chunked-bytes`` (wget, warcio, wpull and
warcprox digest the chunk framing too)."""


@dataclass(frozen=True, slots=True)
class CaptureMeta:
    """How one capture came about and how to archive it.

    Attributes:
        via: the URI the captured one was discovered on (``None`` for a seed or a page
            a person typed in).
        hop_path: Heritrix hop path from the seed (``"LLE"``; ``""`` for a seed).
        source_tag: Heritrix source tag (the seed it descends from; warcprox
            ``metadata.seed``), or ``None``.
        worker: the crawl.log ``#thread`` field (worker number; 0 for a proxy client).
        warc_prefix: the WARC series to write into (one series of files per prefix, as
            warcprox's ``warc-prefix``); ``None`` = the back end's default.
        dedup_policy: this capture's dedup policy, instead of the back end's.
        dedup_ok: False when this capture must not become a dedup original (warcprox
            ``dedup-ok: false``); it may still be a revisit of an earlier one.
        outlinks: Heritrix outlink lines (``"URI HOP CONTEXT"``) for the ``metadata``
            record; no metadata record is written for a capture without a hop path,
            via, source tag nor outlinks unless ``metadata_record`` is True.
        metadata_record: write the ``metadata`` record (the bulk crawler always does,
            as Heritrix; the proxy only when the client gave crawl metadata).
        extra_fields: WARC extension fields for the response (or revisit) and request
            records, e.g. ``WARC-Protocol`` (repeatable, higher layer first).
        stats_buckets: capture-statistics buckets this capture counts in besides
            ``__all__`` (warcprox ``stats.buckets``).
        warcinfo: extra ``(name, value)`` pairs for the warcinfo record of the series
            when it is created by this capture (collection metadata).
    """

    via: str | None = None
    hop_path: str = ""
    source_tag: str | None = None
    worker: int = 0
    warc_prefix: str | None = None
    dedup_policy: DedupPolicy | None = None
    dedup_ok: bool = True
    outlinks: tuple[str, ...] = ()
    metadata_record: bool = True
    extra_fields: tuple[tuple[str, str], ...] = ()
    stats_buckets: tuple[str, ...] = ()
    warcinfo: tuple[tuple[str, str], ...] = ()

    def metadata_fields(self) -> MetadataFields | None:
        """The block of the capture's ``metadata`` record (via, hopsFromSeed, sourceTag,
        outlinks; ``fetchTimeMs`` is filled from the exchange), or None when none is to
        be written."""
        if not (self.metadata_record or self.via or self.hop_path or self.source_tag
                or self.outlinks):  # fmt: skip
            return None
        return MetadataFields(
            via=self.via,
            hops_from_seed=self.hop_path or None,
            source_tag=self.source_tag,
            outlinks=self.outlinks,
        )


@dataclass(frozen=True, slots=True)
class CaptureResult:
    """What :meth:`~webark.capture.CaptureBackend.archive` (and its siblings) wrote.

    Attributes:
        records: the records as written, in order (response or revisit, request,
            metadata …), each with ``path`` (final file name), ``offset`` and ``length``
            as stored.
        revisit_of: the original the first record refers to, when it is a revisit.
        revisit_kind: ``"digest"`` or ``"server-not-modified"`` for a revisit, else None.
        hit_kind: how a digest revisit's original matched the URL (``exact-url``,
            ``canonical-url``, ``digest-only``; Heritrix's dedup report), else None.
        digest_reading: the reading of the payload digest that matched the original
            (a revisit of a wget-made capture of a chunked response matches on
            ``chunked-bytes``), else None.
        payload_size: bytes of the payload (transfer coding removed), the crawl.log size.
        indexed_as_original: True when the capture was added to the dedup index as an
            original (it can be referred to by later revisits).
    """

    records: tuple[WarcRecord, ...]
    revisit_of: Original | None = None
    revisit_kind: RevisitKind | None = None
    hit_kind: HitKind | None = None
    digest_reading: DigestReading | None = None
    payload_size: int = 0
    indexed_as_original: bool = False

    @property
    def first(self) -> WarcRecord:
        """The first record (the response or revisit)."""
        return self.records[0]

    @property
    def warc_filename(self) -> str:
        """The base name of the WARC file the first record is in."""
        return os.path.basename(self.first.path or "")

    @property
    def annotation(self) -> str | None:
        """The crawl.log annotation of a revisit (``duplicate:digest``,
        ``duplicate:server-not-modified``), None otherwise."""
        return f"duplicate:{self.revisit_kind}" if self.revisit_kind else None

    def extra_info(self) -> dict[str, Any]:
        """The JSON extra-info column of the capture's crawl.log line, as Heritrix and
        warcprox write it: ``contentSize``, ``warcFilename``, ``warcFileOffset``."""
        return {
            "contentSize": self.payload_size,
            "warcFilename": self.warc_filename,
            "warcFileOffset": self.first.offset,
        }
