"""Orphan captures after a ``kill -9``: records written but never logged (issue 20,
item 17).

A capture is written (``warcWriter``, or the robots.txt / ``dns:`` prerequisite) a moment
before its crawl.log line; a kill in between leaves its response (or revisit) record in
the WARC with no line, while its URI stays in flight and is fetched again on
``--resume``: the WARCs then hold two captures of it, only the second logged. On resume,
each such *orphan* gets a ``metadata`` record (WARC 1.1 §6.6) whose ``WARC-Refers-To``
is the orphan's ``WARC-Record-ID`` and ``WARC-Target-URI`` its URI, with the fields::

    orphan: not-logged
    reason: written before the crawler was killed; not in crawl.log; fetched again on resume
    warcFilename: WEBARK-…-00000-….warc.gz
    warcFileOffset: 1234

so that indexing, dedup and reduplication tools can tell the orphan from the capture of
record (the one crawl.log points at). Only the WARC files that were open at the kill
(``.open``, repaired on resume) can hold orphans; a record there is one when no crawl.log
line points at it and its URI was in flight at the kill (the frontier put it back) or is
a prerequisite (``dns:``, ``robots.txt``), which is fetched again when not logged. A
response that was logged and then retried (a 503) is no orphan of a kill and is not
marked.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from webark.capture import CaptureMeta
from webark.crawl.context import CrawlContext
from webark.crawl.resume import ResumeLog
from webark.warc.reader import ArchiveReader

__all__ = ["ORPHAN_FIELD", "Orphan", "find_orphans", "mark_orphans"]

log = logging.getLogger(__name__)

ORPHAN_FIELD = ("orphan", "not-logged")
"""The ``application/warc-fields`` line that marks an orphan's metadata record."""

_CAPTURE_TYPES = frozenset({"response", "revisit"})


@dataclass(frozen=True, slots=True)
class Orphan:
    """A capture record no crawl.log line points at.

    Attributes:
        path: the WARC file.
        offset: the record's offset in it (as stored).
        record_id: its ``WARC-Record-ID``.
        target_uri: its ``WARC-Target-URI``.
    """

    path: str
    offset: int
    record_id: str
    target_uri: str


def _prerequisite(uri: str) -> bool:
    return uri.startswith("dns:") or uri.split("?", 1)[0].endswith("/robots.txt")


def find_orphans(paths: Iterable[str], resume_log: ResumeLog,
                 recovered: Iterable[str]) -> list[Orphan]:  # fmt: skip
    """The orphans in the WARC files ``paths`` (those repaired on resume): their
    response and revisit records at offsets no crawl.log line of ``resume_log`` names
    (:meth:`~webark.crawl.resume.ResumeLog.logged_offsets`), whose URI is in
    ``recovered`` (in flight at the kill) or is a prerequisite. A file that cannot be
    read is logged and skipped (the crawl goes on)."""
    again = set(recovered)
    found = []
    for path in paths:
        logged = resume_log.logged_offsets(os.path.basename(path))
        try:
            for rec in ArchiveReader(path):
                uri = rec.target_uri or ""
                if rec.type not in _CAPTURE_TYPES or rec.offset in logged:
                    continue
                if (uri in again or _prerequisite(uri)) and rec.record_id:
                    found.append(Orphan(path, rec.offset, rec.record_id, uri))
        except Exception as e:  # a damaged file: its orphans stay unmarked
            log.warning("resume: orphans of %s not looked for: %s", path, e)
    return found


async def mark_orphans(ctx: CrawlContext, orphans: Iterable[Orphan]) -> int:
    """Write the metadata record of each orphan (module docstring) through the capture
    back end; returns how many were written.

    Raises:
        OSError: the WARC cannot be written (a full disk stops the crawl).
    """
    assert ctx.backend is not None
    n = 0
    for o in orphans:
        fields = [
            ORPHAN_FIELD,
            ("reason", "written before the crawler was killed; not in crawl.log; "
                       "fetched again on resume"),
            ("warcFilename", os.path.basename(o.path)),
            ("warcFileOffset", str(o.offset)),
        ]  # fmt: skip
        record = ctx.backend.series.builder.metadata(o.target_uri, fields, refers_to=o.record_id)
        await ctx.backend.write_record(record, meta=CaptureMeta())
        log.warning("resume: %s at %s:%d was written but not logged before the kill; "
                    "marked as an orphan", o.target_uri, Path(o.path).name, o.offset)  # fmt: skip
        n += 1
    return n
