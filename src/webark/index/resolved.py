"""A capture ready to replay: the record chosen, its original for a revisit, status,
headers, and the payload as a stream or a byte range.

:func:`resolve_capture` turns an index line into a :class:`ResolvedCapture`:

* **response**: status and HTTP headers from the record, payload from its body;
* **revisit**: status and headers from the revisit (this capture's own head), payload
  from its original (:class:`~webark.index.revisits.RevisitResolver`); a revisit whose
  block has no HTTP head takes status and headers from the original (pywb does the
  same); a revisit of the empty payload needs no original (empty body);
* **resource**: status 200, ``Content-Type`` (the record's) and ``Content-Length``
  synthesized, payload = the block.

The payload is transfer-decoded (chunk framing removed) with its content-coding kept
as stored (WARC 1.1 payload definition), so a ``Transfer-Encoding: chunked`` header in
:attr:`ResolvedCapture.headers` no longer describes the body: the app drops or renames
it (R1's ``rewrite_headers``).

Range requests: :meth:`ResolvedCapture.payload_range` reads only the bytes asked for
straight from the WARC file when it is uncompressed and the body is not chunked (the
seed texts' reason for uncompressed WARCs of video); otherwise it seeks in the loaded
payload.
"""

from __future__ import annotations

import io
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import BinaryIO

from webark.cdx.line import CdxLine
from webark.core.errors import FormatError, StorageError
from webark.index.record_loader import RecordLoader
from webark.index.revisits import RevisitResolver, is_empty_payload_digest, revisit_digest
from webark.url import InvalidURLError, cdx_key, join
from webark.warc.freshen import freshen_fields
from webark.warc.payload import dechunk
from webark.warc.record import WarcRecord

_READ = 1 << 16  # bytes per read of payload ranges


class UnresolvedRevisit(StorageError, LookupError):
    """A revisit whose original cannot be found (or loaded) and whose payload digest is
    not the empty-payload digest. The message names the revisit's URL, timestamp,
    digest, file and offset."""

    def __init__(self, line: CdxLine, digest: str | None):
        self.line = line
        self.digest = digest
        super().__init__(
            f"revisit of {line.url} at {line.timestamp} ({line.filename} @ {line.offset}): "
            f"no original with payload digest {digest or '(none)'}"
        )


class NotReplayable(FormatError):
    """The line points at a record that cannot be replayed (request, metadata,
    warcinfo …): the index line and the WARC disagree, or the index holds all records.
    A :class:`~webark.core.errors.FormatError` (with ``path`` and ``offset``), so replay
    falls through to the next capture as for any record that does not load."""

    def __init__(self, line: CdxLine, record: WarcRecord):
        self.line = line
        super().__init__(
            f"a {record.type or 'typeless'} record cannot be replayed "
            f"({line.url} {line.timestamp})",
            record.path,
            record.offset,
        )


@dataclass
class ResolvedCapture:
    """A capture resolved for replay.

    Attributes:
        line: the index line chosen.
        record: the record of ``line`` (response, revisit or resource): source of the
            status and HTTP headers.
        original: the original's record, the payload source of a revisit (None for
            other records, and for a revisit of the empty payload).
        status: HTTP status (200 for resource records).
        headers: ``(name, value)`` HTTP headers as recorded (values ISO-8859-1 decoded),
            or the synthesized ``Content-Type``/``Content-Length`` of a resource.
        payload_length: bytes of the transfer-decoded payload (None if unknown).
    """

    line: CdxLine
    record: WarcRecord
    original: WarcRecord | None
    status: int
    headers: list[tuple[str, str]]
    payload_length: int | None
    _empty: bool = field(default=False, repr=False)
    _decoded: bytes | None = field(default=None, repr=False)

    # -- payload ---------------------------------------------------------------------
    @property
    def payload_record(self) -> WarcRecord | None:
        """The record whose body is served: the original of a revisit, else
        :attr:`record`; None for an empty-payload revisit."""
        if self._empty:
            return None
        if self.record.type == "revisit":
            return self.original
        return self.record

    def payload_stream(self) -> BinaryIO:
        """A new seekable stream over the payload: transfer-decoded, content-coding as
        stored (gzip stays gzip). Large non-chunked payloads are read from the spooled
        block without loading them into memory."""
        if self._decoded is not None:
            return io.BytesIO(self._decoded)
        rec = self.payload_record
        if rec is None:
            return io.BytesIO(b"")
        return rec.payload_stream()

    def payload_range(self, start: int, end: int) -> Iterator[bytes]:
        """The payload bytes ``start``..``end`` (inclusive, 0-based, HTTP ``Range:
        bytes=start-end`` semantics; the caller clamps ``end`` to ``payload_length - 1``;
        past the end, fewer bytes come).

        For an uncompressed WARC whose body is not chunked the bytes are read straight
        from the file at ``record offset + WARC header length + HTTP head length + start``
        (nothing else is read); otherwise the payload stream is positioned at ``start``.

        Raises:
            ValueError: ``start < 0`` or ``end < start``.
            OSError: the WARC cannot be read.
        """
        if start < 0 or end < start:
            raise ValueError(f"bad byte range {start}-{end}")
        n = end - start + 1
        if self.payload_length is not None:
            n = min(n, self.payload_length - start)  # never past the payload
        if n <= 0:
            return
        at = self.payload_file_offset()
        rec = self.payload_record
        if at is not None and rec is not None:
            with open(rec.path, "rb") as f:
                yield from _read_n(f, at + start, n)
            return
        with self.payload_stream() as s:
            yield from _read_n(s, start, n)

    def payload_file_offset(self) -> int | None:
        """Absolute offset in the WARC file of the first payload byte, when the payload
        can be read there directly: an uncompressed WARC record (not ARC) with its full
        block on disk and no chunked transfer-coding. None otherwise.

        Computed as ``offset + (length - block size)`` (the stored length of an
        uncompressed record is WARC header + block, DESIGN-NOTES "Lengths as stored")
        plus the HTTP head length, and checked against the first bytes of the block."""
        rec = self.payload_record
        if rec is None or rec.is_arc or rec.offset < 0 or rec.length <= 0:
            return None
        h = rec.http
        if h is not None and h.is_chunked:
            return None
        clen = rec.headers.content_length
        if clen is None or clen != rec.block.size:
            return None  # truncated or padded: the stored bytes are not the block
        block_at = rec.offset + rec.length - rec.block.size
        if block_at <= rec.offset or not os.path.isfile(rec.path):
            return None
        probe = min(rec.block.size, 16)
        with open(rec.path, "rb") as f:
            f.seek(rec.offset)
            if f.read(5).upper() != b"WARC/":
                return None  # compressed: offsets are those of members
            f.seek(block_at)
            if f.read(probe) != rec.block.head(probe):
                return None
        return block_at + rec.payload_offset

    # -- redirects -------------------------------------------------------------------
    def header(self, name: str) -> str | None:
        """The first value of HTTP header ``name`` (case-insensitive), or None."""
        low = name.lower()
        return next((v for n, v in self.headers if n.lower() == low), None)

    def is_self_redirect(self) -> bool:
        """True for a 3xx whose ``Location``, resolved against the capture's URL, has
        the same CDX URL key as the capture, or differs from it only by a trailing
        ``/`` of the path (``/a/`` ↔ ``/a``; CDX keys drop that slash already, the
        comparison does not rely on it), or by scheme/``www``, which CDX keys ignore.
        Replay then falls through to the next closest capture (pywb
        ``is_self_redirect``; reference "A self-redirect … falls through")."""
        target = redirect_target_key(self)
        if target is None:
            return False
        try:
            own = cdx_key(self.line.url)  # not line.urlkey: POST keys, ng-format keys
        except (InvalidURLError, ValueError):
            own = self.line.urlkey
        return _slashless(target) == _slashless(own)


def _slashless(key: str) -> str:
    path, q, query = key.partition("?")
    if path.endswith("/") and not path.endswith(")/"):
        path = path[:-1]
    return path + q + query


def redirect_target_key(resolved: ResolvedCapture) -> str | None:
    """CDX URL key of the ``Location`` of a 3xx capture, resolved against the capture's
    URL (``webark.url.join``); None when not a 3xx, no Location, or an unparseable one."""
    if not 300 <= resolved.status < 400:
        return None
    loc = resolved.header("Location")
    if not loc:
        return None
    try:
        return cdx_key(join(resolved.line.url, loc.strip()))
    except (InvalidURLError, ValueError):
        return None


def _read_n(f: BinaryIO, start: int, n: int) -> Iterator[bytes]:
    f.seek(start)
    while n > 0:
        data = f.read(min(n, _READ))
        if not data:
            return
        n -= len(data)
        yield data


def resolve_capture(
    line: CdxLine, loader: RecordLoader, revisits: RevisitResolver
) -> ResolvedCapture:
    """Load ``line``'s record and, for a revisit, its original.

    Returns:
        A :class:`ResolvedCapture`.

    Raises:
        WarcNotFound: the WARC of ``line`` cannot be found.
        FormatError: no record at ``line``'s offset (file and offset in the message).
        UnresolvedRevisit: a revisit with no loadable original and a payload digest
            that is not the empty payload's (or none at all).
        NotReplayable: the record is a request, metadata, warcinfo … record.
        IndexUnavailable: the index cannot be read (while looking for an original).
    """
    record = loader.load(line)
    rtype = record.type
    if rtype == "revisit":
        found = revisits.original(line, record)
        digest = revisit_digest(line, record)
        if found is None:
            if not is_empty_payload_digest(digest):
                raise UnresolvedRevisit(line, digest)
            return _build(line, record, None, empty=True)
        return _build(line, record, found[1])
    if rtype in ("response", "resource"):  # ARC records read as response
        return _build(line, record, None)
    raise NotReplayable(line, record)


def resolve_record(line: CdxLine, record: WarcRecord) -> ResolvedCapture:
    """A :class:`ResolvedCapture` of a ``response`` or ``resource`` record in hand
    (e.g. built in memory and never written: record mode's ``Recorder-Skip``), as
    :func:`resolve_capture` makes of a loaded one; ``line`` describes it (its
    ``url``, ``timestamp``, ``mime``).

    Raises:
        NotReplayable: any other record type (a revisit needs its original).
    """
    if record.type not in ("response", "resource"):
        raise NotReplayable(line, record)
    return _build(line, record, None)


def _build(
    line: CdxLine, record: WarcRecord, original: WarcRecord | None, *, empty: bool = False
) -> ResolvedCapture:
    head = record.http
    if head is None and record.type == "revisit" and original is not None:
        head = original.http  # a revisit without its own HTTP head
    payload_rec = None if empty else (original if record.type == "revisit" else record)
    decoded: bytes | None = None
    length: int | None = 0
    if payload_rec is not None:
        ph = payload_rec.http
        if ph is not None and ph.is_chunked:
            decoded, _ok = dechunk(payload_rec.block.read_all()[ph.head_length :])
            length = len(decoded)
        else:
            length = payload_rec.block.size - payload_rec.payload_offset
    if (
        head is not None and head.status == 304 and record.type == "revisit"
        and original is not None and original.http is not None
        and original.http.status is not None
    ):  # server-not-modified: the original's response, freshened by the 304
        status = original.http.status
        headers = freshen_fields(original.http.headers, head.headers)
    elif head is not None and head.status is not None:
        status, headers = head.status, list(head.headers)
    else:
        ctype = record.headers.content_type or "application/octet-stream"
        status = 200
        headers = [("Content-Type", ctype), ("Content-Length", str(length or 0))]
    return ResolvedCapture(
        line, record, original, status, headers, length, _empty=empty, _decoded=decoded
    )
