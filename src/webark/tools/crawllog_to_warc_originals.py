"""Finding the original capture of a crawl.log duplicate in an index, by payload digest.

A deduplicated crawl.log line says "this payload was already archived" but, in ARC-era
crawls, no record says where. :class:`OriginalFinder` looks the line's digest up in an
:class:`~webark.index.source.IndexSource` (a collection's SQLite store, a sorted CDX/CDXJ
file with its ``.digests`` side index, a merged source) and picks the capture a revisit
record should refer to:

1. the capture the DeDuplicator named, when the annotation is
   ``duplicate:"<arcfile>,<offset>"`` and a candidate has that file name and offset;
2. else a capture of the same URL (exact-URL dedup, DESIGN.md "Revisit records");
3. else any capture of the digest (URL-agnostic: ``WARC-Refers-To-Target-URI`` then
   differs from ``WARC-Target-URI``, as the IIPC arbitrary-duplicates proposal allows).

Within each tier the earliest capture wins (webark's dedup default), and captures later
than the duplicate itself are never chosen (an original cannot postdate its revisit).
Revisit lines of the index are not originals.

When a :class:`~webark.index.locations.LocationResolver` is given, the original's WARC
is opened at its offset to read its ``WARC-Record-ID`` (for ``WARC-Refers-To``); ARC
records have no record id, so none is written for them.
"""

from __future__ import annotations

import logging
import os
from collections import OrderedDict
from dataclasses import dataclass

from webark.cdx.line import CdxLine
from webark.core.timestamps import format_w3c_date, from_timestamp14
from webark.index.locations import LocationResolver, WarcNotFound
from webark.index.sorted_file import DIGEST_SUFFIX, SortedCdxFile, build_digest_index
from webark.index.source import IndexSource, IndexUnavailable
from webark.warc.builders import Original
from webark.warc.reader import ArchiveReader

log = logging.getLogger(__name__)

CACHE_SIZE = 65_536
"""Lookups remembered (most recent first); bounds memory on very long logs."""


@dataclass(frozen=True, slots=True)
class Wanted:
    """What a crawl.log duplicate line tells about its original.

    Attributes:
        url: the URI of the duplicate line (column 4).
        digest: its payload digest as a WARC label (``sha1:BASE32``).
        timestamp: 14-digit UTC time of the duplicate capture; later captures are not
            originals.
        filename: (W)ARC file named by a DeDuplicator ``duplicate:"<file>,<offset>"``
            annotation, else None.
        offset: the offset named there, else None.
    """

    url: str
    digest: str
    timestamp: str
    filename: str | None = None
    offset: int | None = None


def _is_revisit(line: CdxLine) -> bool:
    return line.record_type == "revisit" or line.mime == "warc/revisit"


def choose_original(candidates: list[CdxLine], wanted: Wanted) -> CdxLine | None:
    """The capture a revisit of ``wanted`` should refer to, among ``candidates`` (index
    lines with the same payload digest), by the tiers of the module docstring; None when
    no candidate is an original captured no later than ``wanted.timestamp``."""
    usable = [c for c in candidates if not _is_revisit(c) and c.timestamp[:14] <= wanted.timestamp]
    if not usable:
        return None
    if wanted.filename is not None:
        named = [c for c in usable if c.filename == wanted.filename and c.offset == wanted.offset]
        if named:
            return named[0]
    same_url = [c for c in usable if c.url == wanted.url]
    pool = same_url or usable
    return min(pool, key=lambda c: (c.timestamp, c.filename, c.offset))


def original_date(line: CdxLine) -> str:
    """``WARC-Refers-To-Date`` for an index line: its full WARC-Date when the index kept
    it (CDXJ), else the 14-digit timestamp as W3C-DTF (``2007-12-27T10:45:27Z``)."""
    if line.date:
        return line.date
    return format_w3c_date(from_timestamp14(line.timestamp))


def sorted_cdx_with_digests(path: str | os.PathLike[str],
                            workdir: str | os.PathLike[str]) -> SortedCdxFile:
    """A sorted CDX/CDXJ file ready for digest lookups: its own ``PATH.digests`` side
    index when there is one, else one built now in ``workdir`` (one pass over the file,
    an external sort), so that each lookup is a binary search rather than a scan of
    the whole index. Nothing is written beside ``path``.

    Raises:
        OSError: the file cannot be read or the side index written.
    """
    p = os.fspath(path)
    check_cdx_text(p)
    if os.path.exists(p + DIGEST_SUFFIX):
        return SortedCdxFile(p)
    side = os.path.join(os.fspath(workdir), os.path.basename(p) + DIGEST_SUFFIX)
    try:
        build_digest_index(p, side)
    except (UnicodeError, ValueError) as e:
        raise NotACdxFile(f"{p}: not a CDX/CDXJ index ({e})") from e
    return SortedCdxFile(p, digest_index=side)


class NotACdxFile(IndexUnavailable):
    """The file given as a CDX/CDXJ index is something else (a WARC, a gzipped CDX,
    binary data): the message names it and says what to give instead."""


def check_cdx_text(path: str) -> None:
    """Look at the first 4 KiB of ``path``: a plain-text CDX/CDXJ index is needed.

    Raises:
        NotACdxFile: gzip data (a WARC or a ``.cdx.gz``), a WARC/ARC file, or NUL
            bytes.
        OSError: the file cannot be read.
    """
    with open(path, "rb") as f:
        head = f.read(4096)
    if head[:2] == b"\x1f\x8b":
        raise NotACdxFile(f"{path}: gzip data, not a plain CDX/CDXJ index (a WARC? "
                          "index it with `webark index --sort`; a .cdx.gz: gunzip it)")
    if head.startswith((b"WARC/", b"filedesc://")):
        raise NotACdxFile(f"{path}: a WARC/ARC file, not a CDX/CDXJ index (index it with "
                          "`webark index --sort -o FILE.cdxj`)")
    if b"\0" in head:
        raise NotACdxFile(f"{path}: binary data, not a CDX/CDXJ index")


class OriginalFinder:
    """Resolves duplicates to originals through an index (see the module docstring).

    Args:
        source: the index to search by digest.
        warcs: where the indexed (W)ARC files are, to read the original's
            ``WARC-Record-ID``; None: no ``WARC-Refers-To`` is written.

    Attributes:
        lookups: digest lookups made (cache misses).
        record_ids_read: original records opened to read their id.
        missing_warcs: WARC file names that could not be found (each counted once).
    """

    def __init__(self, source: IndexSource, warcs: LocationResolver | None = None):
        self.source = source
        self.warcs = warcs
        self.lookups = 0
        self.record_ids_read = 0
        self.missing_warcs: set[str] = set()
        self._cache: OrderedDict[tuple[str, str, str | None, int | None], CdxLine | None] = (
            OrderedDict()
        )
        self._ids: OrderedDict[tuple[str, int], str | None] = OrderedDict()

    def find(self, wanted: Wanted) -> Original | None:
        """The original of ``wanted`` as a :class:`~webark.warc.builders.Original`
        (target URI, date, record id when readable, payload digest), or None.

        Raises:
            IndexUnavailable: the index cannot be read.
        """
        key = (wanted.url, wanted.digest, wanted.filename, wanted.offset)
        if key in self._cache:
            self._cache.move_to_end(key)
            line = self._cache[key]
            if line is not None and line.timestamp[:14] > wanted.timestamp:
                line = None
        else:
            self.lookups += 1
            line = choose_original(list(self.source.by_digest(wanted.digest)), wanted)
            self._cache[key] = line
            if len(self._cache) > CACHE_SIZE:
                self._cache.popitem(last=False)
        if line is None:
            return None
        return Original(
            target_uri=line.url,
            date=original_date(line),
            record_id=self._record_id(line),
            payload_digest=wanted.digest,
        )

    def _record_id(self, line: CdxLine) -> str | None:
        if self.warcs is None or line.filename in ("", "-") or line.offset < 0:
            return None
        key = (line.filename, line.offset)
        if key in self._ids:
            return self._ids[key]
        rid: str | None = None
        try:
            path = self.warcs.resolve(line.filename)
            self.record_ids_read += 1
            reader = ArchiveReader(path, start=line.offset)
            rec = next(iter(reader), None)
            if rec is not None and rec.offset == line.offset and not rec.is_arc:
                rid = rec.record_id
        except WarcNotFound:
            if line.filename not in self.missing_warcs:
                log.warning("original WARC %s not found: no WARC-Refers-To", line.filename)
            self.missing_warcs.add(line.filename)
        except ValueError:  # byte ranges are not supported for ARC files: no record id
            rid = None
        self._ids[key] = rid
        if len(self._ids) > CACHE_SIZE:
            self._ids.popitem(last=False)
        return rid


__all__ = [
    "CACHE_SIZE",
    "IndexUnavailable",
    "OriginalFinder",
    "Wanted",
    "choose_original",
    "original_date",
    "sorted_cdx_with_digests",
]
