"""The rules in which the two reference indexers disagree, as objects.

Two established indexers define what a CDX line holds, and they disagree in details
(which records, the status of revisits, the ``sha1:`` label, default MIME types).
:attr:`IndexOptions.compat <webark.cdx.options.IndexOptions.compat>` picks one of the
:class:`CompatRules` below, so every gold file of both is reproduced:

:class:`CdxjIndexerRules` (webrecorder cdxj-indexer 1.5): records response, revisit,
    resource, metadata (resource/metadata of type ``application/warc-fields`` left out);
    MIME of response/request from the HTTP Content-Type, of other records from the WARC
    Content-Type; status of responses *and revisits*; digest as the WARC has it
    (``sha1:…``).
:class:`PywbRules` (pywb 2.x ``cdx-indexer``, the classic CDX of OpenWayback): every
    record but request, warcinfo and ``application/warc-fields`` ones (``text/anvl``
    metadata never); MIME ``unk`` when unknown, ``warc/revisit`` for revisits; status
    only for responses (``-`` for revisits, ``200`` for responses without an HTTP
    head); digest without the ``sha1:`` label, computed when missing.

Differences from both that are bugs of theirs are listed in
``docs/cdx-gold-differences.md``. The POST/PUT fold itself is one rule for both
(:mod:`webark.cdx.post`); only the request body it reads differs
(:meth:`CompatRules.request_body`).
"""

from __future__ import annotations

import contextlib
import re
from abc import ABC, abstractmethod
from typing import TYPE_CHECKING

from webark.cdx.options import DEFAULT_RECORDS, Compat, IndexOptions
from webark.warc.http import RawHttpHead
from webark.warc.payload import dechunk, decode_content
from webark.warc.record import WarcRecord

if TYPE_CHECKING:
    from webark.cdx.core import Entry, RecordIndexer

__all__ = ["CdxjIndexerRules", "CompatRules", "PywbRules", "mime_cdxj", "rules_for"]

_MIME_PYWB = re.compile(r"[; ]")
_MIME_CDXJ = re.compile(r"[;\s]")
_WARC_FIELDS = "application/warc-fields"


def mime_cdxj(ct: str) -> str:
    """cdxj-indexer's MIME of a Content-Type: up to the first ``;`` or whitespace."""
    m = ct.partition(";")[0].strip()
    if " " in m or "\t" in m or "\n" in m or "\r" in m or "\x0b" in m or "\x0c" in m:
        m = _MIME_CDXJ.split(ct, 1)[0].strip()
    return m or "-"


class CompatRules(ABC):
    """What one reference indexer writes; subclasses fill in each rule.

    Args:
        options: the :class:`IndexOptions` (records, all_records, post_append, minimal,
            arc2warc are read).
    """

    name: Compat

    def __init__(self, options: IndexOptions):
        self.o = options
        self.types: frozenset[str] | None
        self.default_types = False
        if options.records is not None:
            self.types = frozenset(t.lower() for t in options.records)
        elif options.all_records:
            self.types = None
        else:
            self.types = self.default_records()
            self.default_types = True

    @abstractmethod
    def default_records(self) -> frozenset[str] | None:
        """The record types indexed by default (None: all, filtered by :meth:`selected`)."""

    def in_stream(self, rec: WarcRecord, rtype: str) -> bool:
        """Is the record one the indexer sees at all (the sequence in which requests
        pair up with their responses)?"""
        return True

    @abstractmethod
    def selected(self, rec: WarcRecord, rtype: str) -> bool:
        """Is a line written for this record?"""

    @abstractmethod
    def mime(self, ix: RecordIndexer, e: Entry, arc_ct: str) -> str:
        """The ``mime`` field (``arc_ct``: the ARC header line's content type)."""

    def drops(self, rtype: str, mime: str) -> bool:
        """True when the record is left out after all, given its MIME."""
        return False

    @abstractmethod
    def status(self, ix: RecordIndexer, e: Entry) -> str:
        """The ``status`` field."""

    @abstractmethod
    def digest(self, ix: RecordIndexer, e: Entry) -> str:
        """The ``digest`` field."""

    def record_extra(self, rec: WarcRecord) -> dict[str, str]:
        """Extra fields written for every record (before the requested ``fields``)."""
        return {}

    @abstractmethod
    def pair_roles(self, a: Entry, b: Entry) -> tuple[Entry, Entry] | None:
        """``(request, response)`` when neighbours ``a``, ``b`` (same URL, ``b``
        concurrent to ``a``) pair up, else None."""

    request_fields_to_response = False
    """Does the response line get the request's ``req.http:*`` fields when paired?"""

    @abstractmethod
    def request_body(self, head: RawHttpHead, data: bytes) -> bytes:
        """The request body folded into the key; ``data``: the block after the head."""

    @abstractmethod
    def fold_extra(self, extra: dict[str, str], method: str, query: str) -> None:
        """Add the ``method``/``requestBody`` fields of a folded response, in order."""


class CdxjIndexerRules(CompatRules):
    """webrecorder cdxj-indexer 1.5 (``cdxj_indexer/main.py``)."""

    name: Compat = "cdxj-indexer"
    request_fields_to_response = True

    def default_records(self) -> frozenset[str] | None:
        return DEFAULT_RECORDS

    def selected(self, rec: WarcRecord, rtype: str) -> bool:
        types = self.types
        if types is not None and rtype not in types:
            return False
        return not (
            self.default_types
            and rtype in ("resource", "metadata")
            and rec.headers.get("content-type") == _WARC_FIELDS
        )

    def mime(self, ix: RecordIndexer, e: Entry, arc_ct: str) -> str:
        rtype = e.rtype
        if rtype == "revisit":
            return "warc/revisit"
        ct: str | None
        if rtype in ("response", "request"):
            head = ix.head(e)
            ct = head.get(b"content-type") if head is not None else None
        elif e.rec.is_arc:
            ct = arc_ct
        else:
            ct = e.rec.headers.get("content-type")
        return mime_cdxj(ct) if ct else "-"

    def status(self, ix: RecordIndexer, e: Entry) -> str:
        if e.rtype in ("response", "revisit") and not self.o.minimal:
            head = ix.head(e)
            if head is not None:
                return head.status() or "-"
        return "-"

    def digest(self, ix: RecordIndexer, e: Entry) -> str:
        digest = e.rec.headers.get("warc-payload-digest")
        if digest:
            return digest
        if e.rtype not in ("warcinfo", "revisit"):
            return "sha1:" + ix.computed_digest(e)
        return "-"

    def pair_roles(self, a: Entry, b: Entry) -> tuple[Entry, Entry] | None:
        if a.rtype == "response" and b.rtype == "request":
            return b, a
        if a.rtype == "request" and b.rtype == "response":
            return a, b
        return None

    def request_body(self, head: RawHttpHead, data: bytes) -> bytes:
        """cdxj-indexer reads the de-chunked, content-decoded body (8192 bytes when
        there is no Content-Length)."""
        length_s = head.get(b"content-length")
        te = (head.get(b"transfer-encoding") or "").lower()
        if "chunked" in te:
            data = dechunk(data)[0]
        ce = head.get(b"content-encoding")
        if ce:
            with contextlib.suppress(ValueError, OSError):
                data = decode_content(data, ce.strip().lower())
        if length_s is None:
            return data[:8192]
        try:
            return data[: int(length_s)]
        except ValueError:
            return b""

    def fold_extra(self, extra: dict[str, str], method: str, query: str) -> None:
        extra["requestBody"] = query
        extra["method"] = method


class PywbRules(CompatRules):
    """pywb 2.x ``cdx-indexer`` (``pywb/indexer/archiveindexer.py``)."""

    name: Compat = "pywb"

    def default_records(self) -> frozenset[str] | None:
        return None

    def in_stream(self, rec: WarcRecord, rtype: str) -> bool:
        """pywb's index entries (``create_record_iter``)."""
        if rec.is_arc:
            return rtype != "warcinfo"
        if self.types is not None:
            return rtype in self.types or (rtype == "request" and self.o.post_append)
        a = self.o.all_records
        if rtype in ("request", "warcinfo") and not a and not self.o.post_append:
            return False
        return a or rec.headers.get("content-type") != _WARC_FIELDS

    def selected(self, rec: WarcRecord, rtype: str) -> bool:
        # the writer drops warcinfo and entries without URL
        if not rec.headers.get("warc-target-uri"):
            return False
        if self.types is not None:
            return rtype in self.types
        if rtype == "warcinfo" or not self.in_stream(rec, rtype):
            return False
        return rtype != "request" or self.o.all_records

    def mime(self, ix: RecordIndexer, e: Entry, arc_ct: str) -> str:
        rtype = e.rtype
        if rtype == "revisit":
            return "warc/revisit"
        if self.o.minimal:
            return "-"
        is_arc = e.rec.is_arc
        ct: str | None
        if is_arc and not self.o.arc2warc:
            ct = arc_ct
            return _MIME_PYWB.split(ct, 1)[0] if ct else "unk"
        head = ix.head(e)
        if head is not None:
            ct = head.get(b"content-type")
        elif is_arc:
            ct = arc_ct
        else:
            ct = e.rec.headers.get("content-type")
        if ct:
            return _MIME_PYWB.split(ct, 1)[0]
        return "-" if rtype == "request" else "unk"

    def drops(self, rtype: str, mime: str) -> bool:
        return rtype == "metadata" and mime == "text/anvl"  # Heritrix 1 (WARC 0.17)

    def status(self, ix: RecordIndexer, e: Entry) -> str:
        if (e.rtype == "response" or e.rec.is_arc) and not self.o.minimal:
            head = ix.head(e)
            if head is None:
                return "200"
            statusline = head.tokens()[1]
            status = statusline.split(" ", 1)[0] or "-"
            return "-" if status == "204" and "Error" in statusline else status
        return "-"

    def digest(self, ix: RecordIndexer, e: Entry) -> str:
        digest = e.rec.headers.get("warc-payload-digest")
        if digest and digest.startswith("sha1:"):
            digest = digest[5:]
        if e.rec.is_arc or (not digest and e.rtype not in ("revisit", "request", "warcinfo")):
            return ix.computed_digest(e)
        return digest or "-"

    def record_extra(self, rec: WarcRecord) -> dict[str, str]:
        extra: dict[str, str] = {}
        if self.o.minimal:
            return extra
        h = rec.headers
        detected = h.get("warc-identified-payload-type")
        if detected and not rec.is_arc:
            extra["mime-detected"] = detected
        meta = h.get("warc-json-metadata")
        if meta:
            extra["metadata"] = meta
        return extra

    def pair_roles(self, a: Entry, b: Entry) -> tuple[Entry, Entry] | None:
        if b.rtype == "request" and a.rtype != "request":
            return b, a
        if a.rtype == "request" and b.rtype != "request":
            return a, b
        return None

    def request_body(self, head: RawHttpHead, data: bytes) -> bytes:
        """pywb reads Content-Length bytes of the raw (still chunked) body."""
        try:
            n = int(head.get(b"content-length") or "")
        except ValueError:
            return b""
        return data[: max(n, 0)]

    def fold_extra(self, extra: dict[str, str], method: str, query: str) -> None:
        extra["method"] = method
        if query:
            extra["requestBody"] = query


def rules_for(options: IndexOptions) -> CompatRules:
    """The :class:`CompatRules` of ``options.compat``."""
    return PywbRules(options) if options.compat == "pywb" else CdxjIndexerRules(options)
