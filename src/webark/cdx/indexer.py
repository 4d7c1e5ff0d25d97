"""The WARC → CDX indexer: a pure function from (W)ARC records to :class:`CdxLine` s.

:func:`index_records` maps records (from any :class:`~webark.warc.record.WarcRecord`
iterable) to CDX lines; :func:`index_file` does it for a (W)ARC path with
:class:`~webark.warc.reader.ArchiveReader` and keeps the reader's problem reports. Both
are pure (no output, no global state) so the same function can be mapped over WARC
paths by Spark (DESIGN.md "Beyond one machine"). :func:`index_file_text` adds the
formatting and, for large files, splits one file over several processes (see
:mod:`webark.cdx.parallel`).

Two established indexers define what a CDX line holds, and they disagree in details
(which records, the status of revisits, the ``sha1:`` label, default MIME types). The
``compat`` option picks one, so every gold file of both is reproduced:

``"cdxj-indexer"`` (webrecorder cdxj-indexer 1.5): records response, revisit, resource,
    metadata (resource/metadata of type ``application/warc-fields`` left out); MIME of
    response/request from the HTTP Content-Type, of other records from the WARC
    Content-Type; status of responses *and revisits*; digest as the WARC has it
    (``sha1:…``).
``"pywb"`` (pywb 2.x ``cdx-indexer``, the classic CDX of OpenWayback): every record
    but request, warcinfo and ``application/warc-fields`` ones (``text/anvl``
    metadata never); MIME ``unk`` when unknown, ``warc/revisit`` for revisits; status
    only for responses (``-`` for revisits, ``200`` for responses without an HTTP
    head); digest without the ``sha1:`` label, computed when missing.

Differences from both that are bugs of theirs are listed in
``docs/cdx-gold-differences.md``.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import itertools
import os
import re
from collections.abc import Callable, Generator, Iterable, Iterator
from dataclasses import dataclass, replace
from typing import Literal, cast, get_args

from webark.cdx.formats import _SAFE_JSON, _q
from webark.cdx.line import CdxLine
from webark.cdx.post import FOLDED_METHODS, method_query, method_url
from webark.core.timestamps import w3c_to_timestamp14
from webark.url import cdx_key, to_scope_surt
from webark.url.errors import InvalidURLError
from webark.warc.payload import dechunk, decode_content
from webark.warc.reader import ArchiveReader
from webark.warc.record import Problem, WarcRecord

__all__ = [
    "CHUNK_BYTES",
    "COMPATS",
    "DEFAULT_RECORDS",
    "Compat",
    "FileIndex",
    "IndexOptions",
    "TextChunk",
    "index_file",
    "index_file_text",
    "index_records",
    "split_points",
]

Compat = Literal["cdxj-indexer", "pywb"]
COMPATS: tuple[str, ...] = get_args(Compat)

DEFAULT_RECORDS = frozenset({"response", "revisit", "resource", "metadata"})
"""cdxj-indexer's default record types (``DEFAULT_RECORDS``)."""

_HEAD_PEEK = 4096
"""Bytes of a block looked at first for the HTTP head (grown when the head is longer)."""

# cdxj-indexer field names: what a user writes → the internal name, and back
_FIELD_IN = {
    "url": "warc-target-uri",
    "status": "http:status",
    "digest": "warc-payload-digest",
    "referrer": "req.http:referer",
    "method": "req.http:method",
    "recordDigest": "record-digest",
}
_FIELD_OUT = {v: k for k, v in _FIELD_IN.items()}
_STANDARD = {"url", "mime", "status", "digest", "length", "offset", "filename"}


@dataclass(frozen=True, slots=True)
class IndexOptions:
    """What to index and how (all flags default to the peers' defaults).

    Attributes:
        compat: ``"cdxj-indexer"`` or ``"pywb"`` (module docstring).
        records: WARC types to index (e.g. ``{"request"}``); None: the compat's default
            set. Explicit sets are taken as given (no ``warc-fields`` filtering), as
            cdxj-indexer's ``records=``.
        all_records: every record (cdxj-indexer ``records="all"``; pywb
            ``include_all``: requests and ``warc-fields`` records too, warcinfo never).
        post_append: fold POST/PUT bodies into the key (pywb ``append_post``,
            cdxj-indexer ``post_append``); adds ``method`` and ``requestBody`` fields.
        fields: extra CDXJ fields, cdxj-indexer names: ``method``, ``referrer``
            (from the request of the capture), ``http:NAME`` (HTTP header),
            ``req.http:NAME`` (request header), ``recordDigest``, any WARC field name.
        replace_fields: write only ``fields`` (cdxj-indexer ``replace_fields``).
        digest_records: add ``recordDigest``: ``sha256:`` of the record as stored
            (cdxj-indexer ``digest_records``).
        minimal: pywb ``minimal``: no HTTP parsing, no MIME (but ``warc/revisit``) or
            status; a missing digest is the SHA-1 of the whole block.
        arc2warc: pywb ``arc2warc``: ARC records are read as converted WARC response
            records (MIME from the HTTP head instead of the ARC header line).
        filename: write this file name instead of the input's (cdxj-indexer
            ``filename``).
        dir_root: write file names relative to this directory (pywb/cdxj-indexer
            ``dir_root``); default: the base name.
        scope_keys: set ``surt`` (and make it the ``urlkey``) to the Heritrix scope SURT
            instead of computing the CDX key (for the ``ng`` format).
        revisit_refs: add ``refersToUri``/``refersToDate`` of revisits to ``extra``.
        redirects: set ``redirect`` to the Location of 3xx responses.

    Raises:
        ValueError: unknown compat, ``minimal`` with ``post_append`` (pywb refuses it),
            ``replace_fields`` without ``fields``.
    """

    compat: Compat = "cdxj-indexer"
    records: frozenset[str] | None = None
    all_records: bool = False
    post_append: bool = False
    fields: tuple[str, ...] = ()
    replace_fields: bool = False
    digest_records: bool = False
    minimal: bool = False
    arc2warc: bool = False
    filename: str | None = None
    dir_root: str | None = None
    scope_keys: bool = False
    revisit_refs: bool = False
    redirects: bool = False

    def __post_init__(self) -> None:
        if self.compat not in COMPATS:
            raise ValueError(f"unknown compat {self.compat!r} (one of {', '.join(COMPATS)})")
        if self.minimal and self.post_append:
            raise ValueError("minimal and post_append cannot be used together (as in pywb)")
        if self.replace_fields and not self.fields:
            raise ValueError("replace_fields needs fields")

    @property
    def output_fields(self) -> tuple[str, ...] | None:
        """The CDXJ keys to write when ``replace_fields`` (else None: all)."""
        if not self.replace_fields:
            return None
        names = list(self.fields)
        if self.digest_records and "recordDigest" not in names:
            names.insert(0, "recordDigest")
        return tuple(_FIELD_OUT.get(_FIELD_IN.get(n, n), n) for n in names)

    @property
    def needs_pairing(self) -> bool:
        """True when a record's line depends on its neighbour (request ↔ response)."""
        return self.post_append or any(
            _FIELD_IN.get(f, f).startswith("req.http:") for f in self.fields
        )

    def file_name(self, path: str | os.PathLike[str]) -> str:
        """The ``filename`` written for ``path`` (forced name, relative to
        ``dir_root``, or the base name)."""
        if self.filename is not None:
            return self.filename
        p = os.fspath(path)
        if self.dir_root is not None:
            rel = os.path.relpath(p, self.dir_root)
            return rel.replace(os.sep, "/") if os.sep != "/" else rel
        return os.path.basename(p)

    @classmethod
    def for_format(cls, fmt: str, compat: Compat | None = None, **kw: object) -> IndexOptions:
        """Options webark uses for output format ``fmt``: pywb compat for ``cdx11``/
        ``cdx9`` (byte-identical to pywb's classic CDX), cdxj-indexer compat for
        ``cdxj`` and ``ng``; ``ng`` also gets scope-SURT keys, revisit references and
        redirects. ``kw`` are further :class:`IndexOptions` fields."""
        if compat is None:
            compat = "pywb" if fmt in ("cdx11", "cdx9") else "cdxj-indexer"
        extra: dict[str, object] = {}
        if fmt == "ng":
            extra = {"scope_keys": True, "revisit_refs": True, "redirects": True}
        extra.update(kw)
        return cls(compat=compat, **extra)  # type: ignore[arg-type]


# -- HTTP head -------------------------------------------------------------------------------
class _Head:
    """The HTTP head at the start of a block, read only as far as needed."""

    __slots__ = ("_low", "empty", "end", "first", "raw")

    def __init__(self, raw: bytes, end: int):
        self.raw = raw  # start line + header lines, without the blank line
        self.end = end  # index of the first payload byte in the block
        nl = raw.find(b"\n")
        first = self.first = (raw if nl < 0 else raw[:nl]).rstrip()
        self._low: bytes | None = None
        # warcio: an empty status line without header lines is no head at all (but
        # its lines are still consumed before the payload)
        self.empty = b" " not in first.lstrip() and (nl < 0 or raw.find(b":", nl) < 0)

    def get(self, name: bytes) -> str | None:
        """First value of header ``name`` (lowercase bytes), stripped; None if absent."""
        low = self._low
        if low is None:
            low = self._low = self.raw.lower()
        i = low.find(b"\n" + name + b":")
        if i < 0:
            return None
        start = i + len(name) + 2
        j = self.raw.find(b"\n", start)
        v = (self.raw[start:] if j < 0 else self.raw[start:j]).strip()
        try:
            return v.decode("utf-8")
        except UnicodeDecodeError:
            return v.decode("latin-1")

    def tokens(self) -> tuple[str, str]:
        """``(first token, rest)`` of the start line as warcio splits it: protocol and
        status line of a response, method and target of a request."""
        try:
            line = self.first.decode("utf-8")
        except UnicodeDecodeError:
            line = self.first.decode("latin-1")
        proto, _, rest = line.partition(" ")
        return proto, rest.strip()

    def status(self) -> str:
        """warcio's ``get_statuscode()``: first word after the protocol ('' if none)."""
        code = self.first.partition(b" ")[2].strip().partition(b" ")[0]
        if code.isascii():
            return code.decode("ascii")
        return self.tokens()[1].split(" ", 1)[0]


def _head_end(data: bytes) -> int:
    """Index after the blank line that ends an HTTP head (CRLF or LF-only lines), -1."""
    i = data.find(b"\r\n\r\n")
    lim = len(data) if i < 0 else i
    j = data.find(b"\n\n", 0, lim)
    k = data.find(b"\n\r\n", 0, lim)
    if j >= 0 and (k < 0 or j < k):
        return j + 2
    if k >= 0:
        return k + 3
    return -1 if i < 0 else i + 4


def _read_head(rec: WarcRecord) -> _Head | None:
    block = rec.block
    if block.size == 0:
        return None
    # in-memory blocks are read without a copy; spooled ones by their first bytes
    data = block.read_all() if block.in_memory else block.head(_HEAD_PEEK)
    end = _head_end(data)
    if end < 0 and block.size > len(data):
        data = block.read_all()
        end = _head_end(data)
    if end < 0:
        return _Head(data.rstrip(b"\r\n"), len(data))
    return _Head(data[:end].rstrip(b"\r\n"), end)


# -- the indexer ---------------------------------------------------------------------------
_MIME_PYWB = re.compile(r"[; ]")
_MIME_CDXJ = re.compile(r"[;\s]")
_HTTP_TYPES = ("response", "request", "revisit")


def _mime_cdxj(ct: str) -> str:
    """cdxj-indexer: Content-Type up to the first ``;`` or whitespace."""
    m = ct.partition(";")[0].strip()
    if " " in m or "\t" in m or "\n" in m or "\r" in m or "\x0b" in m or "\x0c" in m:
        m = _MIME_CDXJ.split(ct, 1)[0].strip()
    return m or "-"


def _timestamp(date: str | None) -> str | None:
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


class _Entry:
    """A line being built, with what pairing needs (mutable until frozen)."""

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
        self.head: _Head | None = None
        self.head_done = False
        self.payload_at = 0
        self.extra: dict[str, str] = {}
        self.text: str | None = None  # the CDXJ line, when written directly (text mode)


class _Indexer:
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
        self.pywb = options.compat == "pywb"
        o = options
        if o.records is not None:
            self.types: frozenset[str] | None = frozenset(t.lower() for t in o.records)
            self.default_types = False
        elif o.all_records:
            self.types = None
            self.default_types = False
        else:
            self.types = None if self.pywb else DEFAULT_RECORDS
            self.default_types = True
        # extra fields (cdxj-indexer): internal names in output order
        names: list[str] = []
        if o.digest_records:
            names.append("record-digest")
        for f in o.fields:
            n = _FIELD_IN.get(f, f)
            if n not in names:
                names.append(n)
        self.extra_fields = [n for n in names if _FIELD_OUT.get(n, n) not in _STANDARD]
        self.pairing = o.needs_pairing
        self.unaddressable = False
        # text mode (set by _text_lines): response records go straight to CDXJ text
        self.text_responses = False  # response and revisit records
        self.quoted_filename = ""

    # -- selection --------------------------------------------------------------------
    def selected(self, rec: WarcRecord, rtype: str) -> bool:
        """Is a line written for this record? (pywb: also see :meth:`pywb_stream`)"""
        types = self.types
        if not self.pywb:
            if types is not None and rtype not in types:
                return False
            return not (
                self.default_types
                and rtype in ("resource", "metadata")
                and rec.headers.get("content-type") == "application/warc-fields"
            )
        # pywb: the writer drops warcinfo and entries without URL
        if not rec.headers.get("warc-target-uri"):
            return False
        if types is not None:
            return rtype in types
        if rtype == "warcinfo" or not self.pywb_stream(rec, rtype):
            return False
        return rtype != "request" or self.o.all_records

    def pywb_stream(self, rec: WarcRecord, rtype: str) -> bool:
        """Is the record one of pywb's index entries (``create_record_iter``), the
        sequence in which requests pair up with their responses?"""
        if rec.is_arc:
            return rtype != "warcinfo"
        if self.types is not None:
            return rtype in self.types or (rtype == "request" and self.o.post_append)
        a = self.o.all_records
        if rtype in ("request", "warcinfo") and not a and not self.o.post_append:
            return False
        return a or rec.headers.get("content-type") != "application/warc-fields"

    # -- one record ---------------------------------------------------------------------
    def head(self, e: _Entry) -> _Head | None:
        if not e.head_done:
            e.head_done = True
            rec = e.rec
            uri = e.url or ""
            ok = (
                not self.o.minimal
                and (rec.is_arc or e.rtype in _HTTP_TYPES)
                and uri.startswith(("http:", "https:"))
            )
            head = _read_head(rec) if ok else None
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

    def build(self, e: _Entry) -> CdxLine | None:
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
        rtype = e.rtype
        pywb = self.pywb
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
        # timestamp
        date = h.get("warc-date")
        if is_arc:
            arc_date, arc_ct = _arc_fields(rec)
            ts: str | None = arc_date[:14] if arc_date[:14].isdigit() else _timestamp(date)
        else:
            arc_ct = ""
            ts = _timestamp(date)
        if ts is None:
            self.problem(
                rec, "cdx-bad-date", f"WARC-Date {date!r} is not a date: record not indexed"
            )
            return None
        # mime
        head = None
        ct: str | None
        arc_as_arc = is_arc and not o.arc2warc
        if rtype == "revisit":
            mime = "warc/revisit"
        elif pywb:
            if o.minimal:
                mime = "-"
            elif arc_as_arc:
                ct = arc_ct
                mime = _MIME_PYWB.split(ct, 1)[0] if ct else "unk"
            else:
                head = self.head(e)
                if head is not None:
                    ct = head.get(b"content-type")
                elif is_arc:
                    ct = arc_ct
                else:
                    ct = h.get("content-type")
                mime = _MIME_PYWB.split(ct, 1)[0] if ct else "-" if rtype == "request" else "unk"
        else:
            if rtype in ("response", "request"):
                head = self.head(e)
                ct = head.get(b"content-type") if head is not None else None
            elif is_arc:
                ct = arc_ct
            else:
                ct = h.get("content-type")
            mime = _mime_cdxj(ct) if ct else "-"
        if pywb and rtype == "metadata" and mime == "text/anvl":
            return None  # pywb never indexes Heritrix 1 (WARC 0.17) metadata
        # status
        status = "-"
        if pywb:
            if (rtype == "response" or is_arc) and not o.minimal:
                head = self.head(e)
                if head is None:
                    status = "200"
                else:
                    statusline = head.tokens()[1]
                    status = statusline.split(" ", 1)[0] or "-"
                    if status == "204" and "Error" in statusline:
                        status = "-"
        elif rtype in ("response", "revisit") and not o.minimal:
            head = self.head(e)
            if head is not None:
                status = head.status() or "-"
        # digest
        digest = h.get("warc-payload-digest")
        if pywb:
            if digest and digest.startswith("sha1:"):
                digest = digest[5:]
            if is_arc or (not digest and rtype not in ("revisit", "request", "warcinfo")):
                digest = self.computed_digest(e)
            elif not digest:
                digest = "-"
        elif not digest:
            if rtype not in ("warcinfo", "revisit"):
                digest = "sha1:" + self.computed_digest(e)
            else:
                digest = "-"
        # key
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
        # extra fields
        extra: dict[str, str] = {}
        if pywb and not o.minimal:
            detected = h.get("warc-identified-payload-type")
            if detected and not is_arc:
                extra["mime-detected"] = detected
            meta = h.get("warc-json-metadata")
            if meta:
                extra["metadata"] = meta
        for name in self.extra_fields:
            v = self.field_value(e, name)
            if v is not None:
                extra[_FIELD_OUT.get(name, name)] = v
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

    def enable_text(self, fmt: str, fields: tuple[str, ...] | None) -> bool:
        """Switch on direct CDXJ text for response and revisit records when
        ``fmt``/``fields``/the
        options make that line exactly ``format_cdxj(build(e))`` with no extra field:
        cdxj-indexer compat, default JSON keys, no extra field, key or ng option.
        Returns whether it is on (lines are then ``str`` or :class:`CdxLine`)."""
        o = self.o
        self.text_responses = (
            fmt == "cdxj"
            and fields is None
            and not self.pywb
            and not self.extra_fields
            and not (o.scope_keys or o.revisit_refs or o.redirects or o.minimal)
        )
        fn = self.filename
        self.quoted_filename = "" if not fn or fn == "-" else ', "filename": ' + _q(fn)
        return self.text_responses

    def response_text(self, e: _Entry) -> str | None:
        """The CDXJ line of a WARC response or revisit record, byte for byte
        ``format_cdxj(self.build(e))``, or None when :meth:`build` must decide (no
        offset, an ARC record, no usable date: problems are reported there)."""
        rec = e.rec
        off = rec.offset
        length = rec.length
        if off < 0 or length < 0 or rec.version[:3] == "ARC":
            return None
        h = rec.headers
        ts = _timestamp(h.get("warc-date"))
        if ts is None:
            return None
        url = e.url
        if e.rtype == "revisit":
            # build(): MIME warc/revisit, status from the HTTP head, no computed digest
            head = self.head(e)
            status = (head.status() or "-") if head is not None else "-"
            return self._cdxj(url, "warc/revisit", status, h.get("warc-payload-digest") or "-",
                              ts, off, length)
        block = rec.block
        mime = status = "-"
        data = block.read_all() if block.in_memory and url and url[:4] == "http" else b""
        i = data.find(b"\r\n\r\n")
        if i > 0 and url.startswith(("http:", "https:")):  # type: ignore[union-attr]
            # the usual HTTP head (CRLF lines): what _read_head + _Head give, inline
            if data.find(b"\n\n", 0, i) >= 0 or data.find(b"\n\r\n", 0, i) >= 0:
                head = self.head(e)
                if head is not None:
                    ct = head.get(b"content-type")
                    mime = _mime_cdxj(ct) if ct else "-"
                    status = head.status() or "-"
            else:
                raw = data[:i].rstrip(b"\r\n")
                nl = raw.find(b"\n")
                first = (raw if nl < 0 else raw[:nl]).rstrip()
                if b" " in first.lstrip() or (nl >= 0 and raw.find(b":", nl) >= 0):
                    j = raw.lower().find(b"\ncontent-type:")
                    if j >= 0:
                        j += 14
                        k = raw.find(b"\n", j)
                        v = (raw[j:] if k < 0 else raw[j:k]).strip()
                        try:
                            ct = v.decode("utf-8")
                        except UnicodeDecodeError:
                            ct = v.decode("latin-1")
                        if ct:
                            mime = _mime_cdxj(ct)
                    code = first.partition(b" ")[2].strip().partition(b" ")[0]
                    if code.isascii():
                        status = code.decode("ascii") or "-"
                    else:
                        status = _Head(raw, i + 4).status() or "-"
        else:
            head = self.head(e)
            if head is not None:
                ct = head.get(b"content-type")
                mime = _mime_cdxj(ct) if ct else "-"
                status = head.status() or "-"
        digest = h.get("warc-payload-digest") or "sha1:" + self.computed_digest(e)
        return self._cdxj(url, mime, status, digest, ts, off, length)

    def _cdxj(
        self, url: str | None, mime: str, status: str, digest: str, ts: str, off: int, length: int
    ) -> str:
        """``format_cdxj`` of the line build() makes from these values (no extra field)."""
        if url:
            if " " in url:
                url = url.replace(" ", "%20")
            key = cdx_key(url)
        else:
            url = key = "-"
        off += self.base
        if (
            url != "-"
            and mime != "-"
            and status != "-"
            and digest != "-"
            and off >= 0
            and _SAFE_JSON.match(url + mime + status + digest)
        ):
            return (
                f'{key} {ts} {{"url": "{url}", "mime": "{mime}", "status": "{status}", '
                f'"digest": "{digest}", "length": "{length}", "offset": "{off}"'
                f"{self.quoted_filename}}}"
            )
        parts = []
        if url != "-":
            parts.append('"url": ' + _q(url))
        if mime != "-":
            parts.append('"mime": ' + _q(mime))
        if status != "-":
            parts.append('"status": ' + _q(status))
        if digest != "-":
            parts.append('"digest": ' + _q(digest))
        parts.append(f'"length": "{length}"')
        if off >= 0:
            parts.append(f'"offset": "{off}"')
        return f"{key} {ts} {{{', '.join(parts)}{self.quoted_filename}}}"

    def computed_digest(self, e: _Entry) -> str:
        """SHA-1 (Base32) of the raw payload: the block after the HTTP head, not
        de-chunked (both peers hash warcio's raw stream), or the whole block."""
        data = e.rec.block.read_all()
        self.head(e)
        return _sha1_b32(data[e.payload_at :] if e.payload_at else data)

    def field_value(self, e: _Entry, name: str) -> str | None:
        """Value of a cdxj-indexer field (internal name) for this record."""
        rec = e.rec
        if name == "record-digest":
            return self.record_digest(rec)
        if name.startswith("req.http:"):
            return e.extra.get(name)  # filled in by pairing (or below for requests)
        if name.startswith("http:"):
            if e.rtype not in _HTTP_TYPES:
                return None
            head = self.head(e)
            return head.get(name[5:].lower().encode("latin-1")) if head is not None else None
        return rec.headers.get(name)

    def record_digest(self, rec: WarcRecord) -> str | None:
        if rec.offset < 0 or rec.length < 0 or rec.path == "<memory>":
            return None
        with open(rec.path, "rb") as f:
            data = os.pread(f.fileno(), rec.length, rec.offset)
        return "sha256:" + hashlib.sha256(data).hexdigest()

    # -- request fields and POST folding -------------------------------------------------
    def request_fields(self, req: _Entry, target: _Entry) -> None:
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

    def request_body(self, req: _Entry) -> bytes:
        """The request body: pywb reads Content-Length bytes of the raw (still chunked)
        body; cdxj-indexer reads the de-chunked, content-decoded body (8192 bytes when
        there is no Content-Length)."""
        head = self.head(req)
        assert head is not None
        data = req.rec.block.read_all()[head.end :]
        length_s = head.get(b"content-length")
        if self.pywb:
            try:
                n = int(length_s or "")
            except ValueError:
                return b""
            return data[: max(n, 0)]
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

    def fold(self, req: _Entry, resp: _Entry) -> None:
        """Apply the POST/PUT fold of ``req`` to both lines (pywb/cdxj-indexer), with
        :func:`webark.cdx.post.method_url` (replay looks requests up with it too)."""
        head = self.head(req)
        if head is None:
            return
        upper = head.tokens()[0].upper()
        compat = "pywb" if self.pywb else "cdxj-indexer"
        body = self.request_body(req) if upper in FOLDED_METHODS else b""
        content_type = head.get(b"content-type")
        query = method_query(upper, content_type, body, compat=compat)
        if query is None:
            return
        for e in (resp, req):
            if e.line is None:
                continue
            new_url = method_url(e.line.url, upper, content_type, body, compat=compat)
            assert new_url is not None  # folded, as method_query said
            if self.o.scope_keys:
                try:
                    key = to_scope_surt(new_url)
                except (InvalidURLError, ValueError):
                    key = e.line.surt
                e.line = replace(e.line, urlkey=key, surt=key, method=upper)
            else:
                e.line = replace(e.line, urlkey=cdx_key(new_url), method=upper)
        if resp.line is not None:
            extra = dict(resp.line.extra)
            if self.pywb:
                extra["method"] = upper
                if query:
                    extra["requestBody"] = query
            else:
                extra["requestBody"] = query
                extra["method"] = upper
            resp.line = replace(resp.line, extra=extra)

    # -- loops ------------------------------------------------------------------------------
    def run(self, records: Iterable[WarcRecord]) -> Iterator[CdxLine | str]:
        """The lines of ``records``: :class:`CdxLine` s, and in text mode
        (:meth:`enable_text`) CDXJ ``str`` lines for response and revisit records."""
        if self.pairing:
            yield from self._run_paired(records)
            return
        selected, build = self.selected, self.build
        text = self.response_text if self.text_responses else None
        for rec in records:
            rtype = rec.type
            if selected(rec, rtype):
                e = _Entry(rec, rtype, rec.headers.target_uri, None, True)
                if text is not None and (rtype == "response" or rtype == "revisit"):
                    t = text(e)
                    if t is not None:
                        yield t
                        continue
                line = build(e)
                if line is not None:
                    yield line

    def _entry(self, rec: WarcRecord, rtype: str, emit: bool) -> _Entry:
        e = _Entry(rec, rtype, rec.headers.target_uri, None, emit)
        if emit:
            if self.text_responses and (rtype == "response" or rtype == "revisit"):
                e.text = self.response_text(e)
                if e.text is not None:
                    return e
            e.line = self.build(e)
            if e.line is None:
                e.emit = False
        return e

    def _as_line(self, e: _Entry) -> None:
        """Turn a text-mode entry back into a :class:`CdxLine` (before folding)."""
        if e.text is not None:
            e.text = None
            e.line = self.build(e)
            if e.line is None:
                e.emit = False

    def _finish(self, e: _Entry) -> CdxLine | str | None:
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
                k = _FIELD_OUT.get(name, name)
                v = line.extra.get(k)
                if v is None:
                    v = e.extra.get(name)
                if v is not None:
                    out[k] = v
            for k, v in line.extra.items():
                out.setdefault(k, v)
            line = replace(line, extra=out)
        return line

    def _run_paired(self, records: Iterable[WarcRecord]) -> Iterator[CdxLine | str]:
        prev: _Entry | None = None
        pywb, finish, entry, selected, pair = (
            self.pywb, self._finish, self._entry, self.selected, self._pair
        )
        for rec in records:
            rtype = rec.type
            if pywb and not self.pywb_stream(rec, rtype):
                continue
            e = entry(rec, rtype, selected(rec, rtype))
            if rtype == "request":
                self.request_fields(e, e)
            if prev is not None and pair(prev, e):
                if (out := finish(prev)) is not None:
                    yield out
                if (out := finish(e)) is not None:
                    yield out
                prev = None
                continue
            if prev is not None and (out := finish(prev)) is not None:
                yield out
            prev = e
        if prev is not None and (out := finish(prev)) is not None:
            yield out

    def _pair(self, a: _Entry, b: _Entry) -> bool:
        """pywb ``join_request_records`` / cdxj-indexer ``concur_req_resp``."""
        if a.url != b.url:  # the records' target URIs
            return False
        ha, hb = a.rec.headers, b.rec.headers
        if hb.get("warc-concurrent-to") != ha.get("warc-record-id"):
            return False
        ta, tb = a.rtype, b.rtype
        if self.pywb:
            if tb == "request" and ta != "request":
                req, resp = b, a
            elif ta == "request" and tb != "request":
                req, resp = a, b
            else:
                return False
        else:
            if ta == "response" and tb == "request":
                req, resp = b, a
            elif ta == "request" and tb == "response":
                req, resp = a, b
            else:
                return False
            if self.head(req) is None:
                return True
            self.request_fields(req, resp)
        if self.o.post_append and self.head(req) is not None:
            self._as_line(req)
            self._as_line(resp)
            self.fold(req, resp)
        return True


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
    ``cdxj_indexer/main.py`` (see module docstring); CDX field meanings from the
    IA CDX file format.
    """
    ix = _Indexer(filename, options or IndexOptions(), problems, offset_base)
    yield from cast("Iterator[CdxLine]", ix.run(records))  # not in text mode: all CdxLine


class FileIndex:
    """The CDX lines of one (W)ARC file; iterate to index it.

    ``FileIndex(path, options)`` reads the file with :class:`ArchiveReader` (which
    resynchronises after broken records) and yields :class:`CdxLine` s.

    Args:
        path: the file to read.
        options: :class:`IndexOptions`.
        filename: the ``filename`` to write (default ``options.file_name(path)``).
        offset_base: added to every offset (``path`` holds a part of a bigger file).
        display_path: the file name used in problem reports (default ``path``).
        start, end: index only the records that start in ``[start, end)`` (offsets stay
            those of the whole file; see :class:`ArchiveReader`; not for ARC files).

    Attributes (valid during and after iteration):
        problems: the reader's problems (broken records with file and offset) and the
            indexer's (records without a usable date).
        records_read: records the reader produced.
        lines: lines yielded.
        first_offset, last_offset, last_length: where the first and last records read
            are (-1 before any).
        reader: the :class:`ArchiveReader` (engine, format, compression).

    Iteration raises ``OSError`` only when the file cannot be read.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        options: IndexOptions | None = None,
        *,
        filename: str | None = None,
        offset_base: int = 0,
        display_path: str | None = None,
        start: int = 0,
        end: int | None = None,
    ):
        self.path = os.fspath(path)
        self.options = options or IndexOptions()
        self.filename = filename if filename is not None else self.options.file_name(self.path)
        self.offset_base = offset_base
        self.display_path = display_path or self.path
        self.reader = ArchiveReader(self.path, start=start, end=end)
        self.indexer_problems: list[Problem] = []
        self.lines = 0
        self.first_offset = self.last_offset = self.last_length = -1

    @property
    def problems(self) -> list[Problem]:
        base, where = self.offset_base, self.display_path
        out = [
            replace(p, path=where, offset=None if p.offset is None else p.offset + base)
            if (base or where != self.path)
            else p
            for p in self.reader.problems
        ]
        out += [replace(p, path=where) if where != self.path else p for p in self.indexer_problems]
        return out

    @property
    def records_read(self) -> int:
        return self.reader.records_read

    def _records(self) -> Iterator[WarcRecord]:
        base = self.offset_base
        for rec in self.reader:
            if self.first_offset < 0:
                self.first_offset = rec.offset + base
            self.last_offset = rec.offset + base
            self.last_length = rec.length
            yield rec

    def __iter__(self) -> Iterator[CdxLine]:
        for line in index_records(
            self._records(),
            self.filename,
            self.options,
            problems=self.indexer_problems,
            offset_base=self.offset_base,
        ):
            self.lines += 1
            yield line

    def text_lines(self, fmt: str = "cdxj", fields: tuple[str, ...] | None = None) -> Iterator[str]:
        """The lines as text: ``formatter(fmt, fields)(line)`` for every line of
        ``iter(self)``, in order, without a line end. Response and revisit records of
        plain CDXJ output are written without building a :class:`CdxLine` (a few µs
        less per record, see bench/README.md); the text is the same."""
        from webark.cdx.formats import formatter

        write = formatter(fmt, fields)  # type: ignore[arg-type]
        ix = _Indexer(self.filename, self.options, self.indexer_problems, self.offset_base)
        ix.enable_text(fmt, fields)
        for item in ix.run(self._records()):
            self.lines += 1
            yield item if type(item) is str else write(item)  # type: ignore[arg-type]


def index_file(path: str | os.PathLike[str], options: IndexOptions | None = None) -> FileIndex:
    """Index one (W)ARC file: ``for line in index_file("x.warc.gz"): …``.

    Returns a :class:`FileIndex` (iterable of :class:`CdxLine`, with ``problems``).
    The file name written is ``options.file_name(path)``.
    """
    return FileIndex(path, options)


# -- text output, one file split over several processes ----------------------------------------
#
# A worker indexes a byte range of the file with ``ArchiveReader(path, start=…, end=…)``
# (offsets are those of the whole file; nothing is copied). Ranges start at record
# boundaries found by :func:`split_points`; a range is only trusted when its worker read
# it cleanly (first record at its start, last
# record ending at its end, no error or warning problem), otherwise the file is indexed
# sequentially from the first untrusted range on. The output is therefore the same as
# :func:`index_file`'s. See docs/cdx-ng.md ("Speed"). This process indexes ranges too
# (the first one, so its lines are written while the others finish) and the others are
# plain ``os.fork`` children that pickle their chunks to temporary files: no
# multiprocessing import, pool threads or result pipes (see bench/README.md, index.py).

CHUNK_BYTES = 64 * 1024 * 1024
"""Largest byte range given to one worker (several ranges per worker show progress and
balance the load)."""

PARALLEL_MIN_BYTES = 8 * 1024 * 1024
"""Files smaller than this are indexed in one process (forking costs more)."""

_GZIP_MAGIC = b"\x1f\x8b\x08"
_SCAN = 1 << 20


class TextChunk:
    """Formatted lines of a part of a file, in file order.

    Attributes:
        lines: the lines, without line ends (``list[str]``).
        problems: problems found in that part (file name and offsets as in the file).
        records: records read.
        start, end: the byte range of the file covered.

    A chunk made by a worker process holds its lines already encoded (:meth:`encoded`),
    so the process that writes them neither unpickles nor encodes them again;
    ``lines`` is then decoded from those bytes when first asked for.
    """

    __slots__ = ("_data", "_lines", "end", "problems", "records", "start")

    def __init__(
        self,
        lines: list[str] | None,
        problems: list[Problem],
        records: int,
        start: int,
        end: int,
        data: bytes | None = None,
    ):
        self._lines = lines
        self._data = data
        self.problems = problems
        self.records = records
        self.start = start
        self.end = end

    @property
    def lines(self) -> list[str]:
        if self._lines is None:
            text = (self._data or b"").decode("utf-8", "surrogateescape")
            self._lines = text.split("\n")[:-1]
        return self._lines

    @property
    def data(self) -> bytes | None:
        """The encoded lines (:meth:`encoded`) if the chunk holds them, else None."""
        return self._data

    def encoded(self) -> bytes:
        """The lines as written to a file: each followed by ``\\n``, UTF-8 (bytes that
        were not UTF-8 in the WARC, kept as surrogate escapes, written back as they were).

        Raises:
            UnicodeEncodeError: a line holds a lone surrogate of another origin.
        """
        if self._data is None:
            self._data = "".join(f"{s}\n" for s in self.lines).encode("utf-8", "surrogateescape")
        return self._data

    def pack(self) -> None:
        """Keep only the encoded form (before pickling: about half the work for the
        receiver), unless a line holds a line end (``lines`` could not be split back)
        or cannot be encoded."""
        lines = self._lines
        if lines is None:
            return
        try:
            data = self.encoded()
        except UnicodeEncodeError:
            return
        if data.count(b"\n") == len(lines):
            self._lines = None

    def __getstate__(self) -> tuple[object, ...]:
        return (self._lines, self._data, self.problems, self.records, self.start, self.end)

    def __setstate__(self, state: tuple[object, ...]) -> None:
        (self._lines, self._data, self.problems, self.records, self.start, self.end) = state  # type: ignore[assignment]


def _record_head_gzip(f: int, pos: int, size: int) -> tuple[bytes, int] | None:
    """Decompressed start of the gzip member at ``pos`` and where the member ends (-1 if
    not read to its end), or None when no WARC record's member starts there."""
    import zlib

    d = zlib.decompressobj(16 + zlib.MAX_WBITS)
    out = b""
    p = pos
    while p < size:
        data = os.pread(f, 1 << 16, p)
        if not data:
            break
        try:
            out += d.decompress(data, 1 << 16) if len(out) < 8192 else d.decompress(data)
        except zlib.error:
            return None
        if d.eof:
            return out, p + len(data) - len(d.unused_data) - len(d.unconsumed_tail)
        consumed = len(data) - len(d.unconsumed_tail)
        p += consumed
        if len(out) >= 8192 and not out.startswith(b"WARC/"):
            return None
    return (out, -1) if out.startswith(b"WARC/") else None


def _neutral(head: bytes) -> tuple[bool, int] | None:
    """``(can a range start here, block length)`` for a WARC header block, or None if it
    is not one. A range must not start with a record that may be the second of a
    request/response pair (it has WARC-Concurrent-To), so pairs never straddle ranges."""
    end = head.find(b"\r\n\r\n")
    if not head.startswith(b"WARC/") or end < 0:
        return None
    rtype = b""
    clen = -1
    concurrent = False
    for line in head[:end].split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        n = name.strip().lower()
        if n == b"warc-type":
            rtype = value.strip().lower()
        elif n == b"content-length" and value.strip().isdigit():
            clen = int(value)
        elif n == b"warc-concurrent-to":
            concurrent = True
    if not rtype or clen < 0:
        return None
    return not (concurrent and rtype in (b"request", b"response", b"revisit")), clen


def split_points(path: str | os.PathLike[str], parts: int) -> list[int] | None:
    """Byte offsets ``[0, s1, …, size]`` splitting a per-record-gzip or uncompressed WARC
    into about ``parts`` ranges that start at records (never inside a request/response
    pair). None when the file cannot be split (ARC, zstd, whole-file gzip, no record
    boundary found near a target)."""
    p = os.fspath(path)
    size = os.path.getsize(p)
    if parts < 2 or size == 0:
        return None
    fd = os.open(p, os.O_RDONLY)
    try:
        magic = os.pread(fd, 5, 0)
        gz = magic[:3] == _GZIP_MAGIC
        if not gz and magic != b"WARC/":
            return None
        if gz:
            first = _record_head_gzip(fd, 0, size)
            if first is None or first[1] < 0 or first[1] >= size:
                return None  # not one member per record
        points = [0]
        for k in range(1, parts):
            target = max(size * k // parts, points[-1] + 1)
            pos = _find_boundary(fd, target, size, gz)
            if pos is None:
                return None
            if pos > points[-1] and pos < size:
                points.append(pos)
        points.append(size)
        return points if len(points) > 2 else None
    finally:
        os.close(fd)


def _find_boundary(fd: int, target: int, size: int, gz: bool) -> int | None:
    """The first record at or after ``target`` where a range may start, or None."""
    window = os.pread(fd, _SCAN, target)
    needle = _GZIP_MAGIC if gz else b"\r\n\r\nWARC/"
    i = window.find(needle)
    tries = 0
    while i >= 0 and tries < 64:
        pos = target + i + (0 if gz else 4)
        found = _walk_from(fd, pos, size, gz)
        if found is not None:
            return found
        i = window.find(needle, i + 1)
        tries += 1
    return None


def _walk_from(fd: int, pos: int, size: int, gz: bool) -> int | None:
    """From a candidate record start, step over records that cannot start a range."""
    for _ in range(16):
        if pos >= size:
            return None
        if gz:
            got = _record_head_gzip(fd, pos, size)
            if got is None:
                return None
            head, member_end = got
            info = _neutral(head)
            if info is None:
                return None
            if info[0]:
                return pos
            if member_end < 0:
                return None
            pos = member_end
        else:
            head = os.pread(fd, 1 << 16, pos)
            info = _neutral(head)
            if info is None:
                return None
            if info[0]:
                return pos
            nxt = pos + head.find(b"\r\n\r\n") + 4 + info[1]
            gap = os.pread(fd, 64, nxt)
            stripped = gap.lstrip(b"\r\n")
            if not stripped.startswith(b"WARC/"):
                return None
            pos = nxt + len(gap) - len(stripped)
    return None


def _index_range(
    path: str,
    start: int,
    end: int,
    slot: int,
    options: IndexOptions,
    fmt: str,
    fields: tuple[str, ...] | None,
    filename: str,
    slots: memoryview | None = None,
    tick: Callable[[], None] | None = None,
) -> tuple[TextChunk, bool]:
    """Index ``path[start:end]``; returns the chunk and whether it is clean. Every 256
    lines the bytes done are written to ``slots[slot]`` and ``tick`` is called."""
    n = end - start
    fi = FileIndex(path, options, filename=filename, start=start, end=end)
    lines: list[str] = []
    append = lines.append
    for i, text in enumerate(fi.text_lines(fmt, fields)):
        append(text)
        if not i & 255:
            if slots is not None:
                slots[slot] = max(fi.last_offset - start, 0)
            if tick is not None:
                tick()
    last_offset, last_length = fi.last_offset, fi.last_length
    problems = fi.problems
    clean = (
        fi.reader.format == "warc"
        and fi.first_offset in (start, -1)
        and not any(p.severity != "forgiven" for p in problems)
    )
    if clean and fi.records_read:
        tail = end - (last_offset + last_length)
        gz = fi.reader.compression == "gzip"
        clean = tail == 0 if gz else 0 <= tail <= 4096
    if slots is not None:
        slots[slot] = n
    return TextChunk(lines, problems, fi.records_read, start, end), clean


def _child_ranges(
    mine: list[int],
    ranges: list[tuple[int, int]],
    tmp: str,
    done_w: int,
    args: tuple[str, IndexOptions, str, tuple[str, ...] | None, str],
    slots: memoryview,
) -> None:
    """Forked worker: index the ranges ``mine``; each result is pickled to
    ``tmp/<range>`` and announced by one byte on ``done_w`` (a failure pickles None)."""
    import pickle

    path, options, fmt, fields, filename = args
    for i in mine:
        a, b = ranges[i]
        try:
            result: object = _index_range(path, a, b, i, options, fmt, fields, filename, slots)
            result[0].pack()  # type: ignore[index]
        except Exception:  # an ARC range (ValueError), … : the parent reads it itself
            result = None
        with open(os.path.join(tmp, str(i)), "wb") as f:
            pickle.dump(result, f, protocol=pickle.HIGHEST_PROTOCOL)
        os.write(done_w, b".")
        if result is None:
            return


def _parallel(
    path: str,
    ranges: list[tuple[int, int]],
    jobs: int,
    args: tuple[str, IndexOptions, str, tuple[str, ...] | None, str],
    progress: Callable[[int], None] | None,
) -> Generator[tuple[int, TextChunk | None, bool], None, None]:
    """``(range index, chunk, clean)`` for every range, in order (chunk None: the worker
    failed). Range ``i`` is indexed by process ``i % jobs``: this process takes
    ``0, jobs, …`` (so the first lines are ready without waiting for a worker), ``jobs -
    1`` forked children the others. Children pickle their chunks to files in a
    temporary directory (no pipe to drain while this process works) and are killed if
    the caller stops early."""
    import mmap
    import pickle
    import shutil
    import signal
    import tempfile

    shared = mmap.mmap(-1, 8 * len(ranges))  # anonymous, MAP_SHARED: seen by children
    slots = memoryview(shared).cast("q")
    tmp = tempfile.mkdtemp(prefix="webark-index-")
    kids: dict[int, tuple[int, int]] = {}  # worker number → (pid, read end of its pipe)

    def tick() -> None:
        if progress is not None:
            progress(sum(slots))

    try:
        for k in range(1, jobs):
            mine = list(range(k, len(ranges), jobs))
            if not mine:
                break
            r, w = os.pipe()
            pid = os.fork()
            if pid == 0:  # child: never returns into the caller's frames
                code = 0
                try:
                    os.close(r)
                    _child_ranges(mine, ranges, tmp, w, args, slots)
                except BaseException:
                    code = 1
                finally:
                    os._exit(code)
            os.close(w)
            kids[k] = (pid, r)
        for i, (a, b) in enumerate(ranges):
            k = i % jobs
            if k == 0 or k not in kids:
                try:
                    chunk, clean = _index_range(path, a, b, i, *args[1:], slots, tick)
                except Exception:
                    yield i, None, False
                    return
                tick()
                yield i, chunk, clean
                continue
            if os.read(kids[k][1], 1) != b".":  # the worker died
                yield i, None, False
                return
            with open(os.path.join(tmp, str(i)), "rb") as f:
                got = pickle.load(f)
            os.unlink(os.path.join(tmp, str(i)))
            tick()
            if got is None:
                yield i, None, False
                return
            yield i, got[0], got[1]
    finally:
        for pid, r in kids.values():
            with contextlib.suppress(OSError):
                os.close(r)
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)  # done already, or no longer needed
            with contextlib.suppress(OSError):
                os.waitpid(pid, 0)
        shutil.rmtree(tmp, ignore_errors=True)
        slots.release()
        shared.close()


def index_file_text(
    path: str | os.PathLike[str],
    options: IndexOptions | None = None,
    fmt: str = "cdxj",
    *,
    jobs: int = 1,
    progress: Callable[[int], None] | None = None,
) -> Iterator[TextChunk]:
    """Index one (W)ARC file to formatted lines, in file order, with ``jobs`` processes.

    Args:
        path: the file.
        options: :class:`IndexOptions` (default: cdxj-indexer's defaults).
        fmt: ``cdxj``, ``cdx11``, ``cdx9`` or ``ng`` (:mod:`webark.cdx.formats`).
        jobs: processes to use (this one and ``jobs - 1`` forked ones); files smaller
            than :data:`PARALLEL_MIN_BYTES`, ARC, zstd and whole-file gzip files use one.
        progress: called (in this process) with the bytes of the file done so far.

    Yields:
        :class:`TextChunk` s covering the file in order (several for long files even
        with one process, so output can be written as it comes).

    Raises:
        OSError: the file cannot be read.

    The lines are exactly those of ``[formatter(fmt)(l) for l in index_file(path,
    options)]`` (see the comment above :data:`CHUNK_BYTES` for how that is ensured).
    """
    opts = options or IndexOptions()
    p = os.fspath(path)
    size = os.path.getsize(p)
    fields = opts.output_fields
    filename = opts.file_name(p)
    points = None
    if jobs > 1 and size >= PARALLEL_MIN_BYTES and hasattr(os, "fork"):
        parts = max(jobs, -(-size // CHUNK_BYTES))
        parts = -(-parts // jobs) * jobs
        points = split_points(p, parts)
    if points is None:
        yield from _sequential(p, opts, fmt, filename, progress, 0)
        return
    ranges = list(itertools.pairwise(points))
    results = _parallel(p, ranges, jobs, (p, opts, fmt, fields, filename), progress)
    try:
        for i, chunk, clean in results:
            if chunk is None or not clean:
                results.close()  # stop the workers before reading the rest here
                yield from _sequential(p, opts, fmt, filename, progress, ranges[i][0])
                return
            yield chunk
    finally:
        results.close()


def _sequential(
    path: str,
    options: IndexOptions,
    fmt: str,
    filename: str,
    progress: Callable[[int], None] | None,
    skip_before: int,
) -> Iterator[TextChunk]:
    """Index ``path`` in this process; lines (and problems) of records before
    ``skip_before`` are dropped (they were produced by clean parallel ranges)."""
    from webark.cdx.formats import formatter

    fields = options.output_fields
    fi = FileIndex(path, options, filename=filename)
    lines: list[str] = []
    start = skip_before
    last = skip_before
    texts: Iterator[tuple[int, str]]
    if skip_before > 0:
        write = formatter(fmt, fields)  # type: ignore[arg-type]
        texts = ((line.offset, write(line)) for line in fi)
    else:
        texts = ((0, text) for text in fi.text_lines(fmt, fields))
    for i, (offset, text) in enumerate(texts):
        if offset >= skip_before or offset < 0:
            lines.append(text)
        if not i & 255:
            last = max(fi.last_offset if skip_before == 0 else offset, last)
            if progress is not None:
                progress(last)
            if len(lines) >= 65536:
                yield TextChunk(lines, [], 0, start, last)
                lines = []
                start = last
    problems = [pr for pr in fi.problems if pr.offset is None or pr.offset >= skip_before]
    end = os.path.getsize(path)
    if progress is not None:
        progress(end)
    yield TextChunk(lines, problems, fi.records_read, start, end)
