"""Reading (W)ARC files: one iterator for WARC 1.0/1.1 (and 0.17/0.18), ARC v1,
per-record gzip, uncompressed, whole-file gzip and ``.warc.zst``.

Two engines, one result:

* the **fast path** runs fastwarc's C++ parser (FastWARC 2.x) and adds cheap framing
  checks per record (a gzip member or ``WARC/`` line really starts at each offset, the
  block has its Content-Length, an uncompressed record ends with CRLF CRLF);
* the **careful path** (:mod:`webark.warc.framing`) is pure Python, checks everything,
  reports problems with file and offset and resynchronises after a broken record.

The fast path hands over to the careful path at the first record it cannot vouch for and
the careful path reads the rest of the file, so a broken record costs speed only from
that point on, and nothing after it is lost. ARC files are read by
:mod:`webark.warc.arc` (its own framing over the same logical stream). See
DESIGN-NOTES.md for why.
"""

from __future__ import annotations

import mmap
import os
import zlib
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any, BinaryIO

import zstandard
from fastwarc.warc import ArchiveIterator as FastIterator
from fastwarc.warc import WarcHeader, WarcRecordType

from webark.warc.arc import ArcReader, looks_like_arc
from webark.warc.headers import WarcHeaders
from webark.warc.record import SPOOL_LIMIT, Block, Problem, WarcRecord
from webark.warc.streams import (
    Compression,
    LogicalStream,
    detect_compression,
    read_zstd_dictionary,
    zstd_dictionary,
)

if TYPE_CHECKING:
    from webark.warc.framing import CarefulReader

_HEAD_PROBE = 1 << 16
"""Bytes read at the start of a file to detect its compression (past NUL bytes)."""


class ArchiveReader:
    """Iterate the records of one (W)ARC file, in file order.

    Args:
        path: file to read (any of the formats above; detected from content, not name).
        careful: use the careful parser for the whole file (``webark warc check`` does).
        start, end: read only the records whose stored offset is in ``[start, end)``
            (``end=None``: to the end of the file). ``start`` must be where a record
            starts (a gzip member or zstd frame, or a ``WARC/`` line); the last record
            is read to its end even past ``end``. Offsets stay those of the whole file,
            so a file split at record starts reads, range after range, like the whole
            file. Not supported for ARC files (``ValueError`` when iterating).

    Attributes (valid during and after iteration):
        problems: every :class:`Problem` found so far, file-level ones included.
        format: ``"warc"`` or ``"arc"`` (after the first record).
        compression: ``"none"``, ``"gzip"`` or ``"zstd"``.
        seekable: False when offsets do not point at records (whole-file gzip).
        engine: ``"fast"``, ``"careful"`` or ``"fast+careful"`` (handed over mid-file),
            ``"arc"`` for ARC files.

    Records are yielded even when broken (their problems are in ``record.forgiven``);
    iteration itself never raises for bad content, only ``OSError`` for I/O failures.
    """

    def __init__(self, path: str | os.PathLike[str], careful: bool = False,
                 start: int = 0, end: int | None = None):
        if start < 0 or (end is not None and end < start):
            raise ValueError(f"bad byte range {start}-{end}")
        self.path = os.fspath(path)
        self.careful = careful
        self.start = start
        self.end = end
        self.problems: list[Problem] = []
        self.format = "warc"
        self.compression: Compression = "none"
        self.seekable = True
        self.engine = "careful" if careful else "fast"
        self.records_read = 0

    def __iter__(self) -> Iterator[WarcRecord]:
        with open(self.path, "rb") as f:
            head = f.read(_HEAD_PROBE)
            f.seek(0)
            # NUL bytes before the first gzip member / zstd frame (a zeroed start) must
            # not hide the compression: the careful reader reports and skips them
            self.compression = detect_compression(head.lstrip(b"\x00")[:8] or head[:8])
            if self._is_arc(f):
                self.format = "arc"
                if self.start != 0 or self.end is not None:
                    raise ValueError("byte ranges are not supported for ARC files")
                yield from self._iter_arc(f)
                return
            if self.end is not None and self.end <= self.start:
                return
            if self.careful or self.compression == "zstd":
                self.engine = "careful"
                yield from self._iter_careful(f, self.start)
                return
            yield from self._iter_fast(f)

    # -- format detection -----------------------------------------------------------------
    def _is_arc(self, f: BinaryIO) -> bool:
        probe = LogicalStream(f, self.compression, lambda *a: None)
        head = probe.peek(256)
        f.seek(0)
        return looks_like_arc(head)

    def _iter_arc(self, f: BinaryIO) -> Iterator[WarcRecord]:
        self.engine = "arc"
        if self.compression == "zstd":
            self.problems.append(Problem("error", "arc-zstd", "zstd-compressed ARC files "
                                         "do not exist; not read", self.path, 0))
            return
        arc = ArcReader(f, self.path, self.compression)
        seen = 0
        for rec in arc:
            self.problems.extend(arc.problems[seen:])
            seen = len(arc.problems)
            self.records_read += 1
            yield rec
        self.problems.extend(arc.problems[seen:])
        if self.compression != "none" and arc.not_seekable:
            self.seekable = False

    def _iter_careful(self, f: BinaryIO, base: int) -> Iterator[WarcRecord]:
        zdict = None
        if self.compression == "zstd" and base > 0:
            # frames compressed with the file's dictionary (stored at its start)
            zdict = read_zstd_dictionary(f)
        f.seek(base)
        # imported here: files the fast path reads whole never load it (~3 ms of start-up)
        from webark.warc.framing import CarefulReader

        reader = CarefulReader(f, self.path, self.compression, base=base, end=self.end)
        if zdict is not None:
            reader.stream.use_dictionary(zdict)
        seen = len(reader.problems)
        for rec in reader:
            self._take(reader, seen)
            seen = len(reader.problems)
            self.records_read += 1
            yield rec
        self._take(reader, seen)
        if reader.not_seekable:
            self.seekable = False

    def _take(self, reader: CarefulReader, seen: int) -> None:
        self.problems.extend(reader.problems[seen:])

    # -- fast path --------------------------------------------------------------------------
    def _iter_fast(self, f: BinaryIO) -> Iterator[WarcRecord]:
        gz = self.compression == "gzip"
        size = os.fstat(f.fileno()).st_size
        view = _FileView(f.fileno(), size, use_mmap=not gz)
        try:
            yield from self._fast_records(f, view, gz, size)
        finally:
            view.close()

    def _fast_records(self, f: BinaryIO, view: _FileView, gz: bool, size: int
                      ) -> Iterator[WarcRecord]:
        # Hot loop: per record only what is needed to vouch for the framing (see the
        # module docstring); measured in bench/warc_read.py.
        get = view.get
        path = self.path
        make = WarcRecord.trusted
        magic_want = b"\x1f\x8b" if gz else b"WARC/"
        mlen = len(magic_want)
        start = self.start
        stop = self.end if self.end is not None else size + 1
        f.seek(start)
        it = FastIterator(f, record_types=WarcRecordType.any_type, parse_http=False,
                          inplace=True)
        # fastwarc's stream_pos: absolute (it counts from the file's position when the
        # iterator starts) in FastWARC 2.x; checked on the first record in case a
        # version counts from 0
        shift = -1
        # (version line, fields, block, offset, end of block in the file if uncompressed)
        prev: tuple[str, Sequence[tuple[str, str]], Block, int, int] | None = None
        handover: int | None = None
        iterator = iter(it)
        while True:
            try:
                r = next(iterator)
            except StopIteration:
                break
            except Exception:  # fastwarc raises OSError/ValueError on framing errors
                handover = prev[3] if prev else start
                prev = None
                break
            if shift < 0:
                shift = start if r.stream_pos < start else 0
            pos = r.stream_pos + shift
            # cheap framing checks: does a record really start here?
            if (prev is not None and pos <= prev[3]) or get(pos, pos + mlen) != magic_want:
                handover = prev[3] if prev else pos
                prev = None
                break
            if prev is not None:
                # uncompressed: the previous block must be followed by exactly CRLF CRLF
                # (and blank lines) up to this record, else its length is not known
                if not gz and not view.ends_cleanly(prev[4], pos):
                    handover = prev[3]
                    prev = None
                    break
                version, fields, block, offset, end = prev
                self.records_read += 1
                yield make(WarcHeaders(fields), block, version, path, offset,
                           pos - offset if gz else end - offset)
                prev = None
            if pos >= stop:
                # the first record of the next range: the previous one was vouched for
                break
            hdr = r.headers
            # fastwarc turns header bytes that are not UTF-8 into U+FFFD: leave such
            # records to the careful reader, which keeps the bytes and reports them
            # (uncompressed files: checked on the raw header in head_length below)
            if gz and not (raw := hdr.__getstate__()[0]).isascii() and not _utf8_ok(raw):
                handover = pos
                prev = None
                break
            # fastwarc reports 0 for a missing or invalid Content-Length: check the text
            clen = r.content_length
            if clen == 0:
                clen_s = hdr.get(_CONTENT_LENGTH)
                if clen_s is None or not clen_s.strip().isdigit():
                    handover = pos
                    prev = None
                    break
            try:
                block = Block(r.reader.read()) if clen <= SPOOL_LIMIT else \
                    Block.from_reader(r.reader.read, SPOOL_LIMIT)
            except Exception:  # a corrupt gzip member inside the block (OSError)
                handover = pos
                prev = None
                break
            if block.size != clen:
                handover = pos
                prev = None
                break
            end = -1
            if not gz:
                head_len = view.head_length(pos)
                if head_len is None:
                    handover = pos
                    prev = None
                    break
                end = pos + head_len + clen
            prev = (hdr.status_line or "", hdr.astuples(), block, pos, end)
        if prev is not None:
            # the last record must end the file: fastwarc silently ignores a truncated
            # last gzip member, so find where the last member really ends
            end = view.gzip_member_end(prev[3]) if gz else prev[4]
            ok = (end >= 0 and view.zeros_only(end, size)) if gz else \
                view.ends_cleanly(end, size)
            if ok:
                version, fields, block, offset, _end = prev
                if gz and end < size:
                    # as the careful reader (streams.LogicalStream) reports it
                    self.problems.append(Problem(
                        "warning", "nul-padding",
                        f"{size - end} NUL bytes at {end}-{size} pad the end of the file",
                        path, end))
                self.records_read += 1
                yield make(WarcHeaders(fields), block, version, path, offset, end - offset)
            else:
                handover = prev[3]
        if handover is not None and handover < min(size, stop):
            self.engine = "fast+careful"
            yield from self._iter_careful(f, handover)


_MAX_GAP = 1 << 12
_CONTENT_LENGTH = WarcHeader.CONTENT_LENGTH


def _utf8_ok(raw: bytes) -> bool:
    """Whether a raw WARC header is UTF-8 (``isascii`` first: about 30 ns for a usual
    header, the decode only for the rare non-ASCII one)."""
    if raw.isascii():
        return True
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


class _FileView:
    """Random access to the stored bytes of the file being read.

    Uncompressed files make three checks per record, so they use an mmap (one slice per
    check; pages already read are released every 64 MiB so that the resident size does
    not grow with the file). Compressed files make one 5-byte check per record and use
    ``os.pread`` of a 64 KiB window (one call serves the checks of the records in it, a
    few µs less per record): an mmap would touch every page and count the whole file as
    resident."""

    RELEASE_EVERY = 64 << 20
    WINDOW = 1 << 16

    def __init__(self, fd: int, size: int, use_mmap: bool = True):
        self.fd = fd
        self.mm: mmap.mmap | None = None
        self._released = 0
        self._buf = b""
        self._buf_at = 0
        if size > 0 and use_mmap:
            try:
                self.mm = mmap.mmap(fd, 0, access=mmap.ACCESS_READ)
            except (OSError, ValueError):
                self.mm = None

    def close(self) -> None:
        if self.mm is not None:
            self.mm.close()
            self.mm = None

    def get(self, start: int, stop: int) -> bytes:
        mm = self.mm
        if mm is not None:
            if start - self._released > self.RELEASE_EVERY:
                self._release(start)
            return mm[start:stop]
        i = start - self._buf_at
        if i < 0 or stop - self._buf_at > len(self._buf):
            self._buf = os.pread(self.fd, max(stop - start, self.WINDOW), start)
            self._buf_at = start
            i = 0
        return self._buf[i : i + stop - start]

    def _release(self, upto: int) -> None:
        assert self.mm is not None
        upto -= upto % mmap.PAGESIZE
        self.mm.madvise(mmap.MADV_DONTNEED, self._released, upto - self._released)
        self._released = upto

    def head_length(self, pos: int) -> int | None:
        """Length of the WARC header (version line to the empty line) of the uncompressed
        record at ``pos``, or None when it is not made of plain CRLF lines (LF-only or
        CR CR LF endings, folded values, over 1 MiB) or is not UTF-8: fastwarc splits
        lines at CRLF only and would misread such a header, and replaces bytes that are
        not UTF-8 by U+FFFD, so it is left to the careful reader."""
        if self.mm is not None:
            i = self.mm.find(b"\r\n\r\n", pos, pos + (1 << 20) + 4)
            head = self.mm[pos : i + 2] if i >= 0 else b""
        else:
            data = os.pread(self.fd, (1 << 20) + 4, pos)
            i = data.find(b"\r\n\r\n")
            head = data[: i + 2] if i >= 0 else b""
            i = pos + i if i >= 0 else -1
        if i < 0:
            return None
        crlf = head.count(b"\r\n")
        if head.count(b"\n") != crlf or head.count(b"\r") != crlf:
            return None
        if b"\r\n " in head or b"\r\n\t" in head or not (head.isascii() or _utf8_ok(head)):
            return None
        return i - pos + 4

    def ends_cleanly(self, end: int, next_pos: int) -> bool:
        """True when the bytes from the end of a block to ``next_pos`` (the next record
        or the end of the file) are CRLF CRLF, optionally followed by more blank lines."""
        gap = next_pos - end
        if gap < 4 or gap > _MAX_GAP:
            return False
        data = self.get(end, next_pos)
        return data[:4] == b"\r\n\r\n" and not data[4:].strip(b"\r\n")

    def gzip_member_end(self, pos: int) -> int:
        """File offset just after the gzip member that starts at ``pos``, or -1 when it
        is corrupt or truncated (output discarded, 1 MiB at a time)."""
        d = zlib.decompressobj(zlib.MAX_WBITS | 16)
        buf = b""
        while True:
            if not buf:
                buf = self.get(pos, pos + (1 << 16))
                if not buf:
                    return -1
            try:
                d.decompress(buf, 1 << 20)
            except zlib.error:
                return -1
            if d.eof:
                return pos + len(buf) - len(d.unused_data)
            tail = d.unconsumed_tail
            pos += len(buf) - len(tail)
            buf = tail

    def zeros_only(self, start: int, end: int) -> bool:
        """True when ``[start, end)`` is empty or zero padding (the careful reader skips
        such padding too)."""
        return end - start <= _MAX_GAP and not self.get(start, end).strip(b"\x00")


def iter_records(path: str | os.PathLike[str], careful: bool = False) -> Iterator[WarcRecord]:
    """Iterate the records of a (W)ARC file (see :class:`ArchiveReader`)."""
    return iter(ArchiveReader(path, careful=careful))


#: Blocks larger than this (bytes) in uncompressed files are read lazily by
#: :func:`read_record_at` (a window on the file instead of a copy).
WINDOW_OVER = 1 << 20


def read_record_at(path: str | os.PathLike[str], offset: int) -> WarcRecord:
    """Read the one record that starts at ``offset`` (as stored) in ``path``.

    Works for uncompressed files, per-record gzip and zstd; ARC records are found by
    scanning (ARC files are small in practice). In an uncompressed file a block over
    :data:`WINDOW_OVER` bytes is not read: the record's block is a window on the file
    (:meth:`Block.window`), so replaying a range of a 1 GB video record reads only that
    range.

    Raises:
        webark.core.errors.FormatError: no record starts at that offset.
    """
    from webark.core.errors import FormatError

    p = os.fspath(path)
    with open(p, "rb") as f:
        compression = detect_compression(f.read(8))
        f.seek(0)
        probe = LogicalStream(f, compression, lambda *a: None)
        if looks_like_arc(probe.peek(256)):
            f.seek(offset)
            compression = detect_compression(f.read(8))
            f.seek(offset)
            if compression == "zstd":
                raise FormatError("no ARC record starts here", p, offset)
            arc = ArcReader(f, p, compression, base=offset, window_over=WINDOW_OVER)
            for rec in arc:
                if rec.offset == offset:
                    return rec
                break
            raise FormatError("no ARC record starts here", p, offset)
        zdict = read_zstd_dictionary(f) if compression == "zstd" else None
        f.seek(offset)
        if offset != 0:
            compression = detect_compression(f.read(8))
            f.seek(offset)
        from webark.warc.framing import CarefulReader

        reader = CarefulReader(f, p, compression, base=offset, window_over=WINDOW_OVER)
        if zdict is not None and compression == "zstd":
            # frames compressed with the file's dictionary cannot be read without it
            reader.stream.use_dictionary(zdict)
        for rec in reader:
            if rec.offset != offset:
                break
            return rec
        raise FormatError("no WARC record starts here", p, offset)



def stored_record_bytes(rec: WarcRecord) -> bytes | None:
    """The bytes of ``rec`` exactly as stored in its file, decompressed: for a ``.warc.gz``
    or ``.warc.zst`` the content of its member(s) (version line, fields as written, block,
    CRLF CRLF); for an uncompressed file the ``length`` bytes at ``offset``. None when the
    record cannot be cut out on its own (unknown length: whole-file gzip; ARC records; a
    file that changed since it was read).
    """
    if rec.offset < 0 or rec.length <= 0 or rec.path == "<memory>" or rec.is_arc:
        return None
    with open(rec.path, "rb") as f:
        f.seek(rec.offset)
        stored = f.read(rec.length)
        compression = detect_compression(stored[:8])
        zdict = read_zstd_dictionary(f) if compression == "zstd" else None
    if len(stored) != rec.length:
        return None
    if compression == "none":
        return stored
    out: list[bytes] = []
    data = stored
    while data:
        if compression == "gzip":
            d: Any = zlib.decompressobj(zlib.MAX_WBITS | 16)
        else:
            dctx = zstandard.ZstdDecompressor(dict_data=zstd_dictionary(zdict)) \
                if zdict is not None else zstandard.ZstdDecompressor()
            d = dctx.decompressobj()
        try:
            out.append(d.decompress(data))
        except (zlib.error, zstandard.ZstdError):
            return None
        if not d.eof:
            return None
        data = d.unused_data.lstrip(b"\x00")
    return b"".join(out)
