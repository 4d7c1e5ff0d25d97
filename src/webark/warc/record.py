"""The record model shared by every reader and writer: :class:`WarcRecord` (frozen),
its :class:`Block` storage, and :class:`Problem` reports.

A record read from a file knows where it was: ``path``, ``offset`` and ``length`` as
stored (the compressed member for ``.warc.gz``), so that ``webark warc extract`` and CDX
lines can point back at it.
"""

from __future__ import annotations

import io
import os
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from functools import cached_property
from typing import BinaryIO, Literal

from webark.warc.headers import WarcHeaders
from webark.warc.http import HttpHead, parse_http_head
from webark.warc.payload import dechunk, decode_content

SPOOL_LIMIT = 16 * 1024 * 1024
"""Blocks larger than this (bytes) are kept in a temporary file, not in memory."""

HEAD_PEEK = 1 << 20
"""Bytes of a block examined to find an HTTP head (1 MiB)."""

Severity = Literal["error", "warning", "forgiven"]


@dataclass(frozen=True, slots=True)
class Problem:
    """Something wrong (``error``), suspicious (``warning``) or non-conformant but read
    anyway (``forgiven``) at a place in a file.

    Attributes:
        severity: ``"error"``, ``"warning"`` or ``"forgiven"``.
        code: stable short identifier, e.g. ``"content-length-mismatch"``.
        message: human-readable detail.
        path: file name.
        offset: byte offset of the record (as stored), or None for file-level problems.
    """

    severity: Severity
    code: str
    message: str
    path: str
    offset: int | None

    def __str__(self) -> str:
        where = self.path if self.offset is None else f"{self.path} @ {self.offset}"
        return f"{where}: {self.severity}: {self.code}: {self.message}"

    def to_json(self) -> dict[str, object]:
        return {
            "severity": self.severity, "code": self.code, "message": self.message,
            "path": self.path, "offset": self.offset,
        }


class _FileWindow(io.RawIOBase):
    """Read-only, seekable view of ``size`` bytes at ``start`` of a file (by path)."""

    def __init__(self, path: str, start: int, size: int):
        self._f = open(path, "rb")  # noqa: SIM115 - closed with the window
        self._start = start
        self._size = size
        self._pos = 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._pos

    def seek(self, pos: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self._pos, io.SEEK_END: self._size}[whence]
        self._pos = max(0, base + pos)
        return self._pos

    def readinto(self, b: bytearray | memoryview) -> int:  # type: ignore[override]
        n = min(len(b), self._size - self._pos)
        if n <= 0:
            return 0
        self._f.seek(self._start + self._pos)
        got = self._f.readinto(memoryview(b)[:n])
        self._pos += got
        return got

    def close(self) -> None:
        self._f.close()
        super().close()


class Block:
    """The block of a record: the bytes after the record header (WARC 1.1 §4).

    Small blocks live in memory; blocks over :data:`SPOOL_LIMIT` in a temporary file that
    is deleted with the object; a *window* block (:meth:`window`) is a range of the
    uncompressed WARC file itself, read only when asked (replay of a single large record
    without copying it).
    """

    __slots__ = ("_data", "_digests", "_file", "_window", "size")

    def __init__(self, data: bytes = b"", file: BinaryIO | None = None, size: int | None = None):
        self._data = data
        self._file = file
        self._window: tuple[str, int] | None = None
        self.size = len(data) if file is None else int(size or 0)
        self._digests: dict[tuple[str, int, bool], bytes | None] | None = None

    @classmethod
    def window(cls, path: str, start: int, size: int) -> Block:
        """A block that is ``size`` bytes at file offset ``start`` of the uncompressed
        file ``path``, read lazily (each :meth:`open` opens the file again). The file
        must not change while the block is in use."""
        self = cls()
        self._window = (path, start)
        self.size = size
        return self

    def digest(self, algorithm: str, start: int = 0) -> bytes:
        """The raw ``hashlib`` digest of the block bytes from ``start`` to the end.

        Computed once per ``(algorithm, start)`` and remembered (a block never changes),
        so the builder that writes a digest and the writer that verifies it hash the
        block once. In-memory blocks are hashed without a copy, spooled ones 1 MiB at a
        time."""
        key = (algorithm, start, False)
        memo = self._digests
        if memo is not None and key in memo:
            return memo[key] or b""
        import hashlib  # here: loading OpenSSL costs readers that never hash 4 MB RSS

        h = hashlib.new(algorithm)
        if self.in_memory:
            h.update(memoryview(self._data)[start:])
        else:
            with self.open() as f:
                f.seek(start)
                while piece := f.read(1 << 20):
                    h.update(piece)
        raw = h.digest()
        self._remember(key, raw)
        return raw

    def dechunked_digest(self, algorithm: str, start: int) -> bytes | None:
        """The raw digest of the bytes from ``start`` with HTTP chunked framing removed,
        or None when they are not chunked (remembered as :meth:`digest`)."""
        key = (algorithm, start, True)
        memo = self._digests
        if memo is not None and key in memo:
            return memo[key]
        import hashlib

        decoded, ok = dechunk(self.read_all()[start:])
        raw = hashlib.new(algorithm, decoded).digest() if ok else None
        self._remember(key, raw)
        return raw

    def seed_digest(self, algorithm: str, start: int, raw: bytes) -> None:
        """Tell the block the raw ``algorithm`` digest of its bytes from ``start`` to the
        end, hashed by whoever produced them (a fetcher hashing the body as it arrives),
        so :meth:`digest` does not hash them again. The caller guarantees the value;
        ``algorithm`` is a :func:`hashlib.new` name (``"sha1"``)."""
        self._remember((algorithm, start, False), raw)

    def _remember(self, key: tuple[str, int, bool], raw: bytes | None) -> None:
        if self._digests is None:
            self._digests = {}
        self._digests[key] = raw

    @classmethod
    def from_reader(cls, read: Callable[[int], bytes], limit: int = SPOOL_LIMIT) -> Block:
        """Build a block by calling ``read(n)`` until it returns b''."""
        first = read(limit + 1)
        if len(first) <= limit:
            rest = read(1)
            if not rest:
                return cls(first)
            first += rest
        # the temporary file lives as long as the Block: no context manager here
        tmp = tempfile.TemporaryFile(prefix="webark-block-")  # noqa: SIM115
        tmp.write(first)
        size = len(first)
        while True:
            chunk = read(1 << 20)
            if not chunk:
                break
            tmp.write(chunk)
            size += len(chunk)
        tmp.seek(0)
        return cls(file=tmp, size=size)

    @property
    def file_window(self) -> tuple[str, int] | None:
        """``(path, start offset)`` of a window block (:meth:`window`), else None."""
        return self._window

    @property
    def in_memory(self) -> bool:
        return self._file is None and self._window is None

    def open(self) -> BinaryIO:
        """A new readable, seekable stream over the block."""
        if self._window is not None:
            path, start = self._window
            return io.BufferedReader(_FileWindow(path, start, self.size), 1 << 16)
        if self._file is None:
            return io.BytesIO(self._data)
        fd = os.dup(self._file.fileno())
        f = os.fdopen(fd, "rb")
        f.seek(0)
        return f

    def head(self, n: int) -> bytes:
        """The first ``n`` bytes (or fewer)."""
        if self.in_memory:
            return self._data[:n]
        with self.open() as f:
            return f.read(n)

    def read_all(self) -> bytes:
        """The whole block in memory (avoid for huge records; prefer :meth:`open`)."""
        if self.in_memory:
            return self._data
        with self.open() as f:
            return f.read()

    def copy_to(self, out: BinaryIO) -> int:
        """Write the block to ``out``; returns the number of bytes written."""
        if self.in_memory:
            out.write(self._data)
            return len(self._data)
        with self.open() as f:
            shutil.copyfileobj(f, out, 1 << 20)
        return self.size


_HTTP_TYPES = frozenset({"response", "request", "revisit"})


@dataclass(frozen=True)
class WarcRecord:
    """One WARC (or ARC, seen as WARC) record.

    Attributes:
        headers: the named fields (typed access: ``headers.target_uri`` …).
        block: the block bytes exactly as stored (after decompression of the file).
        version: version line without CRLF, e.g. ``"WARC/1.1"``, ``"WARC/0.17"`` or
            ``"ARC/1.0"`` for ARC records (whose headers are mapped to WARC fields).
        path: file the record came from (``"<memory>"`` for records built in memory).
        offset: byte offset of the record in the file as stored (compressed); -1 if none.
        length: bytes the record occupies in the file as stored, or -1 if unknown.
        forgiven: problems noticed while reading this record that did not stop it.
    """

    headers: WarcHeaders
    block: Block
    version: str = "WARC/1.1"
    path: str = "<memory>"
    offset: int = -1
    length: int = -1
    forgiven: tuple[Problem, ...] = field(default=())

    @classmethod
    def trusted(cls, headers: WarcHeaders, block: Block, version: str, path: str,
                offset: int, length: int) -> WarcRecord:
        """Build a record without the frozen-dataclass ``__init__`` (about 1 µs less per
        record); for readers, which pass values of the right types."""
        self = object.__new__(cls)
        d = self.__dict__
        d["headers"] = headers
        d["block"] = block
        d["version"] = version
        d["path"] = path
        d["offset"] = offset
        d["length"] = length
        d["forgiven"] = ()
        return self

    # -- standard fields --------------------------------------------------------------
    @property
    def type(self) -> str:
        """WARC-Type lowercased (``"response"``, ``"revisit"`` …; ``""`` if missing)."""
        return self.headers.record_type or ""

    @property
    def target_uri(self) -> str | None:
        return self.headers.target_uri

    @property
    def record_id(self) -> str | None:
        return self.headers.record_id

    @property
    def date(self) -> datetime | None:
        return self.headers.date

    @property
    def content_length(self) -> int:
        """Block length in bytes as actually read (may differ from the header when the
        record was truncated)."""
        return self.block.size

    @property
    def is_truncated(self) -> bool:
        """True when fewer block bytes were read than the header's ``Content-Length``
        (WARC 1.1 §5.3; an ARC header's length): the file ends inside the record."""
        declared = self.headers.content_length
        return declared is not None and self.block.size < declared

    @property
    def is_arc(self) -> bool:
        return self.version.startswith("ARC")

    # -- HTTP ---------------------------------------------------------------------------
    @cached_property
    def http(self) -> HttpHead | None:
        """Parsed HTTP head for request/response/revisit records whose block holds an
        HTTP message (``application/http`` or an ARC response), else None."""
        if self.type not in _HTTP_TYPES:
            return None
        ct = (self.headers.content_type or "").lower()
        if ct and "application/http" not in ct and not self.is_arc:
            return None
        uri = self.target_uri or ""
        if uri.startswith(("dns:", "filedesc:", "whois:")):
            return None
        head = self.block.head(HEAD_PEEK)
        if not head:
            return None
        return parse_http_head(head, expect_request=self.type == "request")

    @property
    def http_status(self) -> int | None:
        h = self.http
        return h.status if h is not None else None

    @property
    def payload_offset(self) -> int:
        """Offset of the payload (entity body) inside the block: after the HTTP head for
        HTTP records, 0 otherwise (resource, metadata, …)."""
        h = self.http
        return h.head_length if h is not None else 0

    def payload(self, decode_content_encoding: bool = False) -> bytes:
        """The payload bytes: HTTP body with the transfer-coding removed (and, on
        request, the content-coding undone), or the whole block for non-HTTP records.

        Raises:
            ValueError: ``decode_content_encoding`` and the body is not valid for its
                declared Content-Encoding.
        """
        h = self.http
        data = self.block.read_all()
        if h is None:
            return data
        body = data[h.head_length :]
        if h.is_chunked:
            body, _ok = dechunk(body)
        if decode_content_encoding:
            body = decode_content(body, h.content_encoding)
        return body

    def payload_stream(self, decode_content_encoding: bool = False) -> BinaryIO:
        """A stream over :meth:`payload`. For large non-chunked, non-decoded payloads the
        stream reads the spooled block without loading it into memory."""
        h = self.http
        if not self.block.in_memory and (h is None or (not h.is_chunked and not (
            decode_content_encoding and h.content_encoding
        ))):
            f = self.block.open()
            f.seek(h.head_length if h else 0)
            return f
        return io.BytesIO(self.payload(decode_content_encoding))

    def block_stream(self) -> BinaryIO:
        """A stream over the raw block bytes."""
        return self.block.open()

    def payload_digests(self, algorithm: str) -> list[tuple[str, bytes]]:
        """Raw digests of the payload under each reading a checker accepts, the
        standard's first (DESIGN.md, warc-specifications issue 22), as ``(reading,
        digest)``: ``"transfer-decoded"`` (the HTTP entity body with chunking removed, or
        the whole block for non-HTTP records); for a chunked body also
        ``"chunked-bytes"`` (what wget, warcio and wpull digest); for a body declared
        chunked that is not, only ``"dechunked-body-under-chunked-header"`` (warc.md
        interop bug 3). Blocks remember their digests (:meth:`Block.digest`)."""
        h = self.http
        if h is None:
            return [("transfer-decoded", self.block.digest(algorithm))]
        start = h.head_length
        if not h.is_chunked:
            return [("transfer-decoded", self.block.digest(algorithm, start))]
        decoded = self.block.dechunked_digest(algorithm, start)
        raw = self.block.digest(algorithm, start)
        if decoded is None:
            return [("dechunked-body-under-chunked-header", raw)]
        return [("transfer-decoded", decoded), ("chunked-bytes", raw)]

    @property
    def payload_was_dechunked_ok(self) -> bool | None:
        """None if the body is not declared chunked; else whether the chunked framing was
        valid (False: a de-chunked body under a chunked header, interop bug 3)."""
        h = self.http
        if h is None or not h.is_chunked:
            return None
        return dechunk(self.block.read_all()[h.head_length :])[1]
