"""The core of the CDX indexer: (W)ARC records → :class:`~webark.cdx.line.CdxLine` s.

:func:`index_records` is a pure function (no output, no global state) from records in
file order to lines; a record read from a byte range of a file (``offset_base``, or a
reader started mid-file) gives the line of the whole file. So any driver can map it over
WARCs or parts of them: :class:`~webark.cdx.file_index.FileIndex` (one file),
:mod:`webark.cdx.parallel` (one file over forked processes), :mod:`webark.spark` (a
cluster). The rules of the two reference indexers are in :mod:`webark.cdx.compat`, the
request/response pairing and POST folding in :mod:`webark.cdx.pairing`, the direct CDXJ
text of response records in :mod:`webark.cdx.text`.
"""

from __future__ import annotations

import base64
import hashlib
import os
from collections.abc import Iterable, Iterator
from dataclasses import replace
from typing import TYPE_CHECKING, Literal, cast

from webark.cdx.compat import rules_for
from webark.cdx.head import read_head
from webark.cdx.line import CdxLine
from webark.cdx.options import FIELD_OUT, IndexOptions
from webark.core.timestamps import w3c_to_timestamp14
from webark.url import cdx_key, to_scope_surt
from webark.url.errors import InvalidURLError
from webark.warc.http import RawHttpHead
from webark.warc.record import Problem, WarcRecord

if TYPE_CHECKING:
    from webark.cdx.text import CdxjText

__all__ = ["Entry", "RecordIndexer", "cdx_timestamp", "index_records"]

HTTP_TYPES = ("response", "request", "revisit")
"""Record types whose block starts with an HTTP head (http/https targets)."""


def cdx_timestamp(date: str | None) -> str | None:
    """The 14-digit CDX timestamp of a WARC-Date (any W3C-DTF precision), or None when
    it is missing or not a date."""
    if not date:
        return None
    n = len(date)
    if n >= 20 and date[-1] == "Z" and date[10] == "T" and date[19] in ".Z":
        # YYYY-MM-DDThh:mm:ss[.fff…]Z: the common case, no parsing needed
        ts = date[0:4] + date[5:7] + date[8:10] + date[11:13] + date[14:16] + date[17:19]
        if ts.isdigit() and (n == 20 or date[20:-1].isdigit()):
            return ts
    try:
        return w3c_to_timestamp14(date)
    except (ValueError, OverflowError):
        return None


def _sha1_b32(data: bytes) -> str:
    return base64.b32encode(hashlib.sha1(data).digest()).decode("ascii")


def _arc_fields(rec: WarcRecord) -> tuple[str, str]:
    """``(archive-date, content-type)`` of an ARC record's original header line."""
    line = rec.headers.get("ARC-Header-Line") or ""
    parts = line.rsplit(" ", 4)
    if len(parts) == 5:
        return parts[2], parts[3]
    return "", rec.headers.get("ARC-Content-Type") or ""


class Entry:
    """A line being built, with what pairing needs (mutable until finished).

    Attributes:
        rec, rtype, url: the record, its type (lowercase), its target URI.
        line: the line built (None: none yet, or the record gives none).
        emit: is a line written for the record (it may only pair with another)?
        head: the HTTP head once read (:meth:`RecordIndexer.head`).
        payload_at: index of the first payload byte in the block (0: no head).
        extra: ``req.http:*`` values copied from the paired request.
        text: the CDXJ line when written directly (:mod:`webark.cdx.text`).
    """

    __slots__ = (
        "emit", "extra", "head", "head_done", "line", "payload_at", "rec", "rtype", "text", "url"
    )

    def __init__(
        self, rec: WarcRecord, rtype: str, url: str | None, line: CdxLine | None, emit: bool
    ):
        self.rec = rec
        self.rtype = rtype
        self.url = url
        self.line = line
        self.emit = emit
        self.head: RawHttpHead | None = None
        self.head_done = False
        self.payload_at = 0
        self.extra: dict[str, str] = {}
        self.text: str | None = None


class RecordIndexer:
    """Builds the lines of the records of one file (or byte range of one).

    Args:
        filename: the ``filename`` written in every line.
        options: :class:`IndexOptions`.
        problems: where records that cannot be indexed are reported (or None).
        offset_base: added to every record offset.
    """

    def __init__(
        self,
        filename: str,
        options: IndexOptions,
        problems: list[Problem] | None,
        offset_base: int = 0,
    ):
        self.o = options
        self.filename = filename
        self.problems = problems
        self.base = offset_base
        self.rules = rules_for(options)
        self.extra_fields = options.extra_fields
        self.pairing = options.needs_pairing
        self.unaddressable = False
        self.text: CdxjText | None = None  # set by webark.cdx.text.CdxjText.attach

    # -- one record ---------------------------------------------------------------------
    def entry(self, rec: WarcRecord, emit: bool) -> Entry:
        """The entry of ``rec``, its line (or text) built when ``emit``."""
        rtype = rec.type
        e = Entry(rec, rtype, rec.headers.target_uri, None, emit)
        if emit:
            text = self.text
            if text is not None and (rtype == "response" or rtype == "revisit"):
                e.text = text.response(e)
                if e.text is not None:
                    return e
            e.line = self.build(e)
            if e.line is None:
                e.emit = False
        return e

    def head(self, e: Entry) -> RawHttpHead | None:
        """The entry's HTTP head (read once; None without one, or with ``minimal``)."""
        if not e.head_done:
            e.head_done = True
            rec = e.rec
            uri = e.url or ""
            ok = (
                not self.o.minimal
                and (rec.is_arc or e.rtype in HTTP_TYPES)
                and uri.startswith(("http:", "https:"))
            )
            head = read_head(rec) if ok else None
            if head is not None:
                e.payload_at = head.end
                if head.empty:
                    head = None
            e.head = head
        return e.head

    def problem(
        self,
        rec: WarcRecord,
        code: str,
        msg: str,
        severity: Literal["error", "warning"] = "warning",
    ) -> None:
        if self.problems is not None:
            self.problems.append(
                Problem(
                    severity,
                    code,
                    msg,
                    rec.path,
                    rec.offset + self.base if rec.offset >= 0 else None,
                )
            )

    def build(self, e: Entry) -> CdxLine | None:
        """The line of the entry's record, or None (reported when it is an error)."""
        rec = e.rec
        if rec.offset < 0 or rec.length < 0:
            if not self.unaddressable:
                self.unaddressable = True
                self.problem(
                    rec,
                    "cdx-not-addressable",
                    "records have no offset/length as stored (whole-file gzip?): "
                    "not indexed; `webark warc recompress` makes them addressable",
                    "error",
                )
            return None
        h = rec.headers
        o = self.o
        rules = self.rules
        rtype = e.rtype
        is_arc = rec.is_arc
        url = e.url
        if url is not None and (" " in url):
            url = url.replace(" ", "%20")
        if is_arc and url is not None:
            url = (
                url.replace("\r", "%0D")
                .replace("\n", "%0A")
                .replace("\x0c", "%0C")
                .replace("\x00", "%00")
            )
        date = h.get("warc-date")
        if is_arc:
            arc_date, arc_ct = _arc_fields(rec)
            ts = arc_date[:14] if arc_date[:14].isdigit() else cdx_timestamp(date)
        else:
            arc_ct = ""
            ts = cdx_timestamp(date)
        if ts is None:
            self.problem(
                rec, "cdx-bad-date", f"WARC-Date {date!r} is not a date: record not indexed"
            )
            return None
        mime = rules.mime(self, e, arc_ct)
        if rules.drops(rtype, mime):
            return None
        status = rules.status(self, e)
        digest = rules.digest(self, e)
        if o.scope_keys:
            try:
                surt = to_scope_surt(url) if url else "-"
            except (InvalidURLError, ValueError):
                from webark.cdx.formats import _scope_fallback

                surt = _scope_fallback(url or "-")
            urlkey = surt
        else:
            surt = ""
            urlkey = cdx_key(url) if url else "-"
        extra = rules.record_extra(rec)
        for name in self.extra_fields:
            v = self.field_value(e, name)
            if v is not None:
                extra[FIELD_OUT.get(name, name)] = v
        if o.revisit_refs and rtype == "revisit":
            ref_uri = h.get("warc-refers-to-target-uri")
            ref_date = h.get("warc-refers-to-date")
            if ref_uri:
                extra["refersToUri"] = ref_uri
            if ref_date:
                extra["refersToDate"] = ref_date
        redirect = "-"
        if o.redirects and status[:1] == "3":
            head = self.head(e)
            loc = head.get(b"location") if head is not None else None
            if loc:
                redirect = loc.replace(" ", "%20")
        off = rec.offset
        return CdxLine(
            urlkey=urlkey,
            timestamp=ts,
            url=url or "-",
            mime=mime,
            status=status,
            digest=digest,
            length=rec.length,
            offset=off + self.base if off >= 0 else off,
            filename=self.filename,
            redirect=redirect,
            record_type=rtype,
            date=date or "",
            extra=extra,
            surt=surt,
        )

    def computed_digest(self, e: Entry) -> str:
        """SHA-1 (Base32) of the raw payload: the block after the HTTP head, not
        de-chunked (both peers hash warcio's raw stream), or the whole block."""
        data = e.rec.block.read_all()
        self.head(e)
        return _sha1_b32(data[e.payload_at :] if e.payload_at else data)

    def field_value(self, e: Entry, name: str) -> str | None:
        """Value of a cdxj-indexer field (internal name) for this record."""
        rec = e.rec
        if name == "record-digest":
            return self.record_digest(rec)
        if name.startswith("req.http:"):
            return e.extra.get(name)  # filled in by pairing
        if name.startswith("http:"):
            if e.rtype not in HTTP_TYPES:
                return None
            head = self.head(e)
            return head.get(name[5:].lower().encode("latin-1")) if head is not None else None
        return rec.headers.get(name)

    def record_digest(self, rec: WarcRecord) -> str | None:
        """``sha256:`` (hex) of the record as stored, None when it has no place."""
        if rec.offset < 0 or rec.length < 0 or rec.path == "<memory>":
            return None
        with open(rec.path, "rb") as f:
            data = os.pread(f.fileno(), rec.length, rec.offset)
        return "sha256:" + hashlib.sha256(data).hexdigest()

    def request_fields(self, req: Entry, target: Entry) -> None:
        """Copy the request's ``req.http:*`` fields into ``target``'s extra values."""
        head = self.head(req)
        if head is None:
            return
        for name in self.extra_fields:
            if name.startswith("req.http:"):
                if name == "req.http:method":
                    v: str | None = head.tokens()[0]
                else:
                    v = head.get(name[9:].lower().encode("latin-1"))
                if v is not None:
                    target.extra[name] = v

    # -- the loop -------------------------------------------------------------------------
    def run(self, records: Iterable[WarcRecord]) -> Iterator[CdxLine | str]:
        """The lines of ``records``: :class:`CdxLine` s, and in text mode
        (:mod:`webark.cdx.text`) CDXJ ``str`` lines for response and revisit records."""
        if self.pairing:
            from webark.cdx.pairing import run_paired

            yield from run_paired(self, records)
            return
        selected, entry = self.rules.selected, self.entry
        for rec in records:
            if selected(rec, rec.type):
                e = entry(rec, True)
                if e.text is not None:
                    yield e.text
                elif e.line is not None:
                    yield e.line

    def finish(self, e: Entry) -> CdxLine | str | None:
        """The entry's final line (or text), None when it writes none."""
        if e.text is not None:
            return e.text
        if not e.emit or e.line is None:
            return None
        line = e.line
        if e.extra and self.extra_fields:
            # cdxj-indexer's key order: the fields in order, then the post-append keys
            out: dict[str, str] = {}
            for name in self.extra_fields:
                k = FIELD_OUT.get(name, name)
                v = line.extra.get(k)
                if v is None:
                    v = e.extra.get(name)
                if v is not None:
                    out[k] = v
            for k, v in line.extra.items():
                out.setdefault(k, v)
            line = replace(line, extra=out)
        return line


def index_records(
    records: Iterable[WarcRecord],
    filename: str,
    options: IndexOptions | None = None,
    *,
    problems: list[Problem] | None = None,
    offset_base: int = 0,
) -> Iterator[CdxLine]:
    """Map (W)ARC records to CDX lines, in record order.

    Args:
        records: records in file order (e.g. an :class:`ArchiveReader`).
        filename: the ``filename`` written in every line.
        options: what to index (:class:`IndexOptions`; default: cdxj-indexer's
            defaults).
        problems: if given, records that cannot be indexed (no usable WARC-Date) are
            reported here as ``warning`` problems (the reader's problems are not).
        offset_base: added to every record offset (records read from a part of a file).

    Yields:
        :class:`CdxLine` s; offsets and lengths in bytes as stored (compressed).

    Pure: reads only the records (and, for ``digest_records``, the stored bytes of
    each record from ``record.path``).

    Source: pywb ``pywb/indexer/archiveindexer.py`` and cdxj-indexer
    ``cdxj_indexer/main.py`` (see :mod:`webark.cdx.compat`); CDX field meanings from
    the IA CDX file format.
    """
    ix = RecordIndexer(filename, options or IndexOptions(), problems, offset_base)
    yield from cast("Iterator[CdxLine]", ix.run(records))  # not in text mode: all CdxLine
