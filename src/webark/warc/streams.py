"""The "logical stream" of a (W)ARC file: its decompressed bytes, plus the map from
decompressed positions to the compressed members (gzip members, zstd frames) they came
from, so that the careful reader can report offsets *as stored*.

Compression is detected from magic bytes, not from the file name:
gzip ``1f 8b``, zstd frame ``28 b5 2f fd``, zstd skippable frame ``5? 2a 4d 18``
(the IIPC proposal puts a dictionary in the skippable frame ``0x184D2A5D``).
"""

from __future__ import annotations

import os
import struct
import zlib
from dataclasses import dataclass
from typing import BinaryIO, Literal, Protocol

import zstandard

from webark.warc.record import Severity

Compression = Literal["none", "gzip", "zstd"]

GZIP_MAGIC = b"\x1f\x8b"
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
ZSTD_DICT_MAGIC = 0x184D2A5D
_CHUNK = 1 << 16
_END_SLACK = 1 << 16


def read_zstd_dictionary(f: BinaryIO) -> bytes | None:
    """The dictionary a ``.warc.zst`` file carries in a leading skippable frame with
    magic 0x184D2A5D (IIPC proposal), or None. Leaves ``f`` positioned at its start."""
    f.seek(0)
    head = f.read(8)
    data = None
    if len(head) == 8:
        magic, size = struct.unpack("<II", head)
        if magic == ZSTD_DICT_MAGIC:
            data = f.read(size)
    f.seek(0)
    return data


def zstd_dictionary(data: bytes) -> zstandard.ZstdCompressionDict:
    """The dictionary object for the content of a 0x184D2A5D skippable frame (raw, or
    itself zstd-compressed as the IIPC proposal allows)."""
    if data[:4] == ZSTD_MAGIC:
        data = zstandard.ZstdDecompressor().decompress(data, max_output_size=1 << 28)
    return zstandard.ZstdCompressionDict(data)


def detect_compression(head: bytes) -> Compression:
    """Compression of a file from its first bytes (at least 4)."""
    if head[:2] == GZIP_MAGIC:
        return "gzip"
    if head[:4] == ZSTD_MAGIC:
        return "zstd"
    if len(head) >= 4 and (struct.unpack("<I", head[:4])[0] & 0xFFFFFFF0) == 0x184D2A50:
        return "zstd"
    return "none"


@dataclass(slots=True)
class Member:
    """One compressed member: ``[c_start, c_end)`` in the file holds the decompressed
    bytes ``[u_start, u_end)`` of the logical stream (u_end/c_end grow while reading)."""

    c_start: int
    u_start: int
    c_end: int = -1
    u_end: int = -1
    ws: int = 0
    """Leading CR/LF bytes of the member's content (a member that starts with the
    previous record's CRLF CRLF is still a seek point for the record after them)."""
    ws_done: bool = False


class ProblemSink(Protocol):
    """``sink(code, message, offset, severity="error", between_records=False)`` receives
    stream-level problems (bad gzip member, NUL bytes between members …);
    ``between_records`` marks those that belong to no record (the careful reader then
    reports them at file level). The stream passes every argument by position, so
    ``lambda *a: None`` is a valid sink."""

    def __call__(self, code: str, message: str, offset: int | None,
                 severity: Severity = "error", between_records: bool = False) -> None: ...


class LogicalStream:
    """Sequential reader of the decompressed content of a file, with member tracking.

    Args:
        f: binary file object positioned at ``base`` (the file offset of its first byte).
        compression: as returned by :func:`detect_compression`.
        on_problem: called for a corrupt or truncated member; reading then resumes at
            the next member magic found after the bad one.
        base: file offset of ``f``'s current position.
    """

    def __init__(self, f: BinaryIO, compression: Compression, on_problem: ProblemSink,
                 base: int = 0):
        self._f = f
        self.compression = compression
        self._on_problem = on_problem
        self._buf = bytearray()
        self._buf_upos = 0  # logical position of _buf[0]
        self._upos_read = 0  # logical bytes produced so far (end of _buf)
        self._cpos = base  # file position of the next compressed byte to feed
        self._pending = b""  # compressed bytes read from f but not yet fed
        self.members: list[Member] = []
        self._dec: object | None = None
        self._eof = False
        self._zdict: zstandard.ZstdCompressionDict | None = None
        self._nul_start = -1  # file offset where a run of NUL bytes between members began
        if compression == "none":
            self.members.append(Member(base, 0))

    # -- decompression ------------------------------------------------------------------
    def _raw(self, n: int) -> bytes:
        if self._pending:
            data, self._pending = self._pending, b""
            return data
        return self._f.read(n)

    def _fill(self) -> bool:
        """Produce more logical bytes; False at end of file."""
        if self._eof:
            return False
        if self.compression == "none":
            data = self._f.read(_CHUNK)
            if not data:
                self._eof = True
                m = self.members[-1]
                m.u_end = self._upos_read
                m.c_end = m.c_start + self._upos_read
                return False
            self._push(data)
            return True
        return self._fill_compressed()

    def _push(self, data: bytes) -> None:
        self._buf += data
        self._upos_read += len(data)

    def _new_decoder(self) -> object:
        if self.compression == "gzip":
            return zlib.decompressobj(zlib.MAX_WBITS | 16)
        dctx = zstandard.ZstdDecompressor(dict_data=self._zdict) if self._zdict else \
            zstandard.ZstdDecompressor()
        return dctx.decompressobj()

    def _fill_compressed(self) -> bool:
        while True:
            chunk = self._raw(_CHUNK)
            if not chunk:
                if self._dec is not None:
                    m = self.members[-1]
                    self._dec = None
                    nxt = self._find_magic(m.c_start + 1, self._cpos)
                    if nxt >= 0:
                        # a member cut short and followed by others (a file appended to
                        # after a crash): its tail swallowed them; go back to the next one
                        self._on_problem("truncated-member",
                                         f"{self.compression} member cut short: the member "
                                         f"at {nxt} starts inside it", m.c_start)
                        m.c_end, m.u_end = nxt, self._upos_read
                        self._f.seek(nxt)
                        self._cpos = nxt
                        continue
                    self._on_problem("truncated-member",
                                     f"{self.compression} member ends before its end marker",
                                     m.c_start)
                    m.c_end, m.u_end = self._cpos, self._upos_read
                self._end_nul_run(at_eof=True)
                self._eof = True
                return False
            if self._dec is None:
                # start of a member: skip NUL bytes (reported) / detect dictionary frames
                stripped = chunk.lstrip(b"\x00")
                if len(stripped) != len(chunk):
                    if self._nul_start < 0:
                        self._nul_start = self._cpos
                    self._cpos += len(chunk) - len(stripped)
                    chunk = stripped
                    if not chunk:
                        continue
                self._end_nul_run(at_eof=False)
                if self.compression == "zstd" and len(chunk) >= 8:
                    magic = struct.unpack("<I", chunk[:4])[0]
                    if (magic & 0xFFFFFFF0) == 0x184D2A50:
                        size = struct.unpack("<I", chunk[4:8])[0]
                        while len(chunk) < 8 + size:
                            more = self._f.read(8 + size - len(chunk))
                            if not more:
                                break
                            chunk += more
                        if magic == ZSTD_DICT_MAGIC:
                            self._load_dict(chunk[8 : 8 + size])
                        self._cpos += 8 + size
                        self._pending = chunk[8 + size :]
                        continue
                expect = GZIP_MAGIC if self.compression == "gzip" else ZSTD_MAGIC
                if not chunk.startswith(expect[: len(chunk)]):
                    self._resync_member(chunk, f"no {self.compression} magic")
                    continue
                self._dec = self._new_decoder()
                self.members.append(Member(self._cpos, self._upos_read))
            dec = self._dec
            try:
                out = dec.decompress(chunk)  # type: ignore[attr-defined]
            except (zlib.error, zstandard.ZstdError) as e:
                m = self.members[-1]
                # a member that already produced bytes is kept (closed where the next
                # member starts) so that those bytes still map to its offset
                produced = self._upos_read > m.u_start
                if not produced:
                    self.members.pop()
                self._dec = None
                self._on_problem("bad-member", f"corrupt {self.compression} member: {e}",
                                 m.c_start)
                self._f.seek(m.c_start + 1)
                self._cpos = m.c_start + 1
                self._pending = b""
                self._resync_member(b"", "after corrupt member")
                if produced:
                    m.c_end, m.u_end = self._cpos, self._upos_read
                continue
            if out:
                m = self.members[-1]
                if not m.ws_done:
                    rest = out.lstrip(b"\r\n")
                    m.ws += len(out) - len(rest)
                    m.ws_done = bool(rest)
                self._push(out)
            if getattr(dec, "eof", False):
                unused = dec.unused_data  # type: ignore[attr-defined]
                consumed = len(chunk) - len(unused)
                self._cpos += consumed
                m = self.members[-1]
                m.c_end, m.u_end = self._cpos, self._upos_read
                self._dec = None
                self._pending = unused
                if out:
                    return True
                continue
            self._cpos += len(chunk)
            if out:
                return True

    def _end_nul_run(self, at_eof: bool) -> None:
        """Report the run of NUL bytes that ends at ``_cpos``, if any: an error when more
        data follows (a zeroed stretch of the file: disk or tape damage, a record lost),
        a warning when it only pads the end of the file."""
        start, self._nul_start = self._nul_start, -1
        if start < 0:
            return
        n = self._cpos - start
        if at_eof:
            self._on_problem("nul-padding",
                             f"{n} NUL bytes at {start}-{self._cpos} pad the end of the "
                             "file", start, "warning", True)
        else:
            where = "between" if self.members else "before the first"
            self._on_problem("nul-bytes",
                             f"{n} NUL bytes at {start}-{self._cpos} {where} "
                             f"{self.compression} members, data follows: a zeroed stretch "
                             "of the file (records there are lost)", start, "error", True)

    def use_dictionary(self, data: bytes) -> None:
        """Decompress zstd frames with this dictionary (the content of a 0x184D2A5D
        skippable frame, raw or itself zstd-compressed)."""
        self._load_dict(data)

    def _load_dict(self, data: bytes) -> None:
        self._zdict = zstd_dictionary(data)

    def _find_magic(self, start: int, end: int) -> int:
        """File offset of the first member magic in ``[start, end)``, or -1."""
        expect = GZIP_MAGIC + b"\x08" if self.compression == "gzip" else ZSTD_MAGIC
        pos = start
        while pos < end:
            self._f.seek(pos)
            window = self._f.read(min(_CHUNK, end - pos) + len(expect) - 1)
            i = window.find(expect)
            while i >= 0 and pos + i < end:
                if self._plausible_member(pos + i):
                    return pos + i
                i = window.find(expect, i + 1)
            if len(window) < len(expect):
                break
            pos += len(window) - len(expect) + 1
        return -1

    def _plausible_member(self, pos: int) -> bool:
        """Whether the bytes at ``pos`` decompress without error for a while (a magic
        number found by scanning may be a chance match inside compressed data)."""
        self._f.seek(pos)
        probe = self._f.read(1 << 12)
        try:
            self._new_decoder().decompress(probe)  # type: ignore[attr-defined]
        except (zlib.error, zstandard.ZstdError):
            return False
        return True

    def _resync_member(self, chunk: bytes, why: str) -> None:
        """Scan forward in the compressed file for the next member magic."""
        start = self._cpos
        expect = GZIP_MAGIC + b"\x08" if self.compression == "gzip" else ZSTD_MAGIC
        window = chunk
        pos = self._cpos
        while True:
            i = window.find(expect)
            if i >= 0:
                self._cpos = pos + i
                self._pending = window[i:]
                break
            keep = window[-(len(expect) - 1) :] if window else b""
            more = self._f.read(_CHUNK)
            if not more:
                self._cpos = pos + len(window)
                self._pending = b""
                self._eof = True
                break
            pos += len(window) - len(keep)
            window = keep + more
        if self._cpos > start:
            self._on_problem("garbage-between-members",
                             f"{self._cpos - start} bytes that are not a {self.compression} "
                             f"member skipped ({why})", start)

    # -- logical reading ----------------------------------------------------------------
    def tell(self) -> int:
        """Logical (decompressed) position of the next byte :meth:`read` returns."""
        return self._buf_upos

    def _ensure(self, n: int) -> None:
        while len(self._buf) < n and self._fill():
            pass

    def peek(self, n: int) -> bytes:
        self._ensure(n)
        return bytes(self._buf[:n])

    def read(self, n: int) -> bytes:
        self._ensure(n)
        out = bytes(self._buf[:n])
        del self._buf[:n]
        self._buf_upos += len(out)
        return out

    def skip(self, n: int) -> int:
        """Advance ``n`` logical bytes without producing them; returns the bytes skipped
        (fewer at end of file). For uncompressed files this is a seek of the underlying
        file; compressed streams are read through."""
        if self.compression != "none" or n <= len(self._buf):
            return len(self.read(n))
        have = len(self._buf)
        here = self._f.tell()
        size = os.fstat(self._f.fileno()).st_size
        step = max(0, min(n - have, size - here))
        self._f.seek(here + step)
        del self._buf[:]
        self._buf_upos += have + step
        self._upos_read = self._buf_upos
        return have + step

    def unread(self, data: bytes) -> None:
        """Put ``data`` (the bytes just read) back in front of the stream."""
        self._buf[:0] = data
        self._buf_upos -= len(data)

    def readline(self, limit: int = 1 << 16) -> bytes:
        while True:
            i = self._buf.find(b"\n", 0, limit)
            if i >= 0:
                return self.read(i + 1)
            if len(self._buf) >= limit or not self._fill():
                return self.read(min(len(self._buf), limit))

    def find(self, needle: bytes, max_scan: int = 1 << 30) -> int:
        """Advance to the next occurrence of ``needle`` (logical position returned, the
        stream positioned on it) or to EOF (-1)."""
        scanned = 0
        while True:
            i = self._buf.find(needle)
            if i >= 0:
                self.read(i)
                return self._buf_upos
            drop = max(0, len(self._buf) - len(needle) + 1)
            self.read(drop)
            scanned += drop
            if (scanned > max_scan or not self._fill()) and len(self._buf) < len(needle):
                self.read(len(self._buf))
                return -1

    # -- mapping to stored offsets ------------------------------------------------------
    def member_at(self, upos: int) -> Member | None:
        """The member that produced logical position ``upos``."""
        for m in reversed(self.members):
            if m.u_start <= upos:
                return m
        return None

    def stored_offset(self, upos: int) -> tuple[int, bool]:
        """``(file offset, exact)``: for plain files the byte offset itself; for
        compressed files the start of the member holding ``upos`` and whether ``upos`` is
        that member's first byte (only then can a reader seek to the record)."""
        if self.compression == "none":
            return self.members[0].c_start + upos, True
        m = self.member_at(upos)
        if m is None:
            return 0, False
        return m.c_start, m.u_start == upos

    def stored_end(self, upos_end: int) -> int:
        """File offset just after the member holding logical byte ``upos_end - 1``, or -1
        when that member goes on with more than blank lines after ``upos_end`` (it holds
        more than one record: whole-file compression). ``upos_end`` must not be before
        :meth:`tell`."""
        if self.compression == "none":
            return self.members[0].c_start + upos_end
        m = self.member_at(max(upos_end - 1, 0))
        if m is None:
            return -1
        # finish the member if it ends soon (a per-record member ends right after the
        # record); never decompress a whole-file member into memory
        while m.c_end < 0 and self._upos_read < upos_end + _END_SLACK and self._fill():
            pass
        if m.c_end < 0:
            return self._cpos if self._eof else -1
        after = bytes(self._buf[max(upos_end - self._buf_upos, 0) : m.u_end - self._buf_upos])
        return m.c_end if not after.strip(b"\r\n") else -1

    def forget_before(self, upos: int) -> None:
        """Drop member bookkeeping that ends before ``upos`` (bounded memory)."""
        if len(self.members) > 64:
            keep = [m for m in self.members if m.u_end < 0 or m.u_end > upos]
            self.members = keep or self.members[-1:]

