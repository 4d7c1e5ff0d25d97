"""A sorted CDX/CDXJ file as an :class:`~webark.index.source.IndexSource`: binary search
over byte offsets, never reading the whole file (multi-GB indexes work in constant
memory).

The file is a text file of CDX lines sorted byte-wise (``LC_ALL=C sort``), in any of the
formats the CDX parser reads (classic CDX 11/9 fields, CDXJ); a `` CDX …`` header line and
``!``-prefixed meta lines (pywb's ``!meta``) sort first and are skipped. This is what
pywb's ``CDXFile`` / ``binsearch.iter_range`` and OpenWayback's ``CDXIndex`` do.

How a query reads the file (:class:`SortedLines`, the one binary search of webark;
ZipNum summaries, path indexes and digest side indexes use it too):

* the file is mapped into memory (``mmap``) and the mapping kept between queries (the
  file is stat'ed before a query, or once per ``recheck`` seconds, and re-mapped when it
  was replaced); files that cannot be mapped are read by positional reads instead;
* :meth:`SortedLines.find` binary-searches the first line ``>= key`` over byte offsets:
  each probe takes the line around the middle of the interval (a blank line: the next
  non-blank one) and compares it, about ``log2(lines)`` probes; the probe lines of the
  first levels (the same for every key) are cached per mapping. A mapped lookup in a
  1-million-line file takes ~20 µs, by positional reads (one :data:`PROBE_SIZE` block
  per probe, a few cached blocks) ~100 µs;
* the matching lines are then read forward in growing chunks (8 KiB up to 1 MiB) until
  a line ``>= end``, or, for ``reverse=True``, backwards line by line from the end of
  the range (found by a second binary search) down to the first line ``< start``.

Lookup by payload digest (:meth:`SortedCdxFile.by_digest`) needs either a full scan
(O(file size)) or a *digest side index*: a second sorted file ``<index>.digests`` with
lines ``sha1:BASE32 OFFSET`` (the canonical digest of every line that has one and the
byte offset of that line in the index, 15 digits zero-padded so that the text order is
the index order), built by :func:`build_digest_index` (the
collection builds one for every sorted index it writes). Its first line
``!webark-digests 1 size=N`` records the size of the index it was built from; a side
index whose size does not match is stale and ignored (with a warning), so a rewritten
index never returns wrong offsets.
"""

from __future__ import annotations

import heapq
import itertools
import logging
import mmap
import os
import re
import stat
import tempfile
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from webark.cdx.formats import detect_format, format_cdxj, parse_cdx, parse_line
from webark.cdx.line import CdxLine
from webark.index.source import IndexUnavailable, KeyRange, digest_key, in_time

log = logging.getLogger(__name__)

#: Bytes read per binary-search probe (one aligned block).
PROBE_SIZE = 4096
#: First and largest chunk read while streaming the lines of a range.
FIRST_CHUNK = 8192
MAX_CHUNK = 1 << 20
#: Binary-search intervals wider than this (bytes) have their probe line cached.
PROBE_CACHE_SPAN = 256 * 1024
#: Suffix of the digest side index of a sorted file.
DIGEST_SUFFIX = ".digests"
_DIGEST_MAGIC = b"!webark-digests 1 size="


@dataclass
class ReadStats:
    """I/O counters of one :class:`SortedLines` (cumulative over all queries; take the
    difference around a query to measure it).

    ``probes`` counts binary-search probes (lines compared with a key, cached ones
    included); ``reads`` counts ``read()`` system calls on the file (positional
    reads) or slices copied out of the mapping (mmap), ``bytes_read`` the bytes they
    returned. Mapped lookups count once per lookup, not per probe, so that counting
    costs nothing measurable."""

    probes: int = 0
    reads: int = 0
    bytes_read: int = 0


class _FileBuffer:
    """The bytes-like subset that the search code uses (``len``, ``find``/``rfind`` of
    a newline, ``[a:b]`` slices) over an unbuffered file by positional reads, with a
    small cache of :data:`PROBE_SIZE` blocks (so the last probes of a binary search,
    which fall into one block, cost nothing). The fallback for files that cannot be
    mapped."""

    __slots__ = ("_blocks", "f", "size", "stats")

    def __init__(self, f: BinaryIO, size: int, stats: ReadStats):
        self.f = f
        self.size = size
        self.stats = stats
        self._blocks: dict[int, bytes] = {}

    def __len__(self) -> int:
        return self.size

    def read_at(self, pos: int, n: int) -> bytes:
        """Up to ``n`` bytes at ``pos`` (fewer at the end of the file)."""
        self.f.seek(pos)
        out = bytearray()
        while len(out) < n:
            data = self.f.read(n - len(out))
            self.stats.reads += 1
            if not data:
                break
            self.stats.bytes_read += len(data)
            out += data
        return bytes(out)

    def block(self, no: int) -> bytes:
        b = self._blocks.get(no)
        if b is None:
            if len(self._blocks) >= 8:
                self._blocks.pop(next(iter(self._blocks)))
            b = self._blocks[no] = self.read_at(no * PROBE_SIZE, PROBE_SIZE)
        return b

    def __getitem__(self, s: slice) -> bytes:
        a, b = max(s.start, 0), min(s.stop, self.size)
        if a >= b:
            return b""
        bs = PROBE_SIZE
        no = a // bs
        if (b - 1) // bs == no:  # within one block: from the cache
            return self.block(no)[a - no * bs : b - no * bs]
        return self.read_at(a, b - a)

    def find(self, sub: bytes, start: int, end: int | None = None) -> int:
        """First ``sub`` (one byte) in ``[start, end)``, -1 if none."""
        stop = self.size if end is None else min(end, self.size)
        bs = PROBE_SIZE
        q = max(start, 0)
        while q < stop:
            no = q // bs
            base = no * bs
            i = self.block(no).find(sub, q - base, stop - base)
            if i >= 0:
                return base + i
            q = base + bs
        return -1

    def rfind(self, sub: bytes, start: int, end: int) -> int:
        """Last ``sub`` (one byte) in ``[start, end)``, -1 if none."""
        start = max(start, 0)
        q = min(end, self.size)
        bs = PROBE_SIZE
        while q > start:
            no = (q - 1) // bs
            base = no * bs
            i = self.block(no).rfind(sub, max(start - base, 0), q - base)
            if i >= 0:
                return base + i
            q = base
        return -1


class _Mapping:
    """One ``mmap`` of a file (``b""`` for an empty file), the probe lines cached for
    it (see :meth:`SortedLines.find`) and whether its lines end with CRLF."""

    __slots__ = ("buf", "crlf", "probes")

    def __init__(self, buf: mmap.mmap | bytes):
        self.buf = buf
        self.probes: dict[int, tuple[int, int, bytes | None]] = {}
        nl = buf.find(b"\n", 0, 1 << 20)
        self.crlf = nl > 0 and buf[nl - 1 : nl] == b"\r"


class _Handle:
    """One query's view of the file: ``buf`` is the mapping (shared, nothing to close)
    or a :class:`_FileBuffer` over a file opened for this query (closed by
    :meth:`close`)."""

    __slots__ = ("buf", "f", "mapped", "probes", "size")

    def __init__(
        self, m: _Mapping | None, f: BinaryIO | None = None, stats: ReadStats | None = None
    ):
        self.f = f
        self.buf: mmap.mmap | bytes | _FileBuffer
        self.probes: dict[int, tuple[int, int, bytes | None]]
        if m is not None:
            self.buf, self.probes, self.mapped = m.buf, m.probes, True
        else:
            assert f is not None and stats is not None
            self.buf = _FileBuffer(f, os.fstat(f.fileno()).st_size, stats)
            self.probes = {}
            self.mapped = False
        self.size = len(self.buf)

    def close(self) -> None:
        if self.f is not None:
            self.f.close()

    def __enter__(self) -> _Handle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def line_at(self, s: int) -> bytes:
        """The line starting at byte ``s`` (without newline)."""
        e = self.buf.find(b"\n", s)
        return self.buf[s : e if e >= 0 else self.size]


#: Blank lines: skipped everywhere (a lone ``\r`` is the blank line of a CRLF file).
_BLANK = (b"", b"\r")


class SortedLines:
    """Binary search and range iteration over any byte-wise sorted text file (CDX,
    ZipNum ``.idx`` summaries, path indexes, digest side indexes).

    Lines are compared as raw bytes with the search key (a line ``>= key`` when its
    bytes are), which is the ``LC_ALL=C`` sort order. All offsets are byte offsets.
    Blank lines (empty, or a lone ``\\r``) are skipped: they are never returned and
    never hide their neighbours from a search.

    The file is mapped into memory (``mmap``) when it can be: a probe is then a
    ``find``/``rfind`` of a newline and a slice (about 1 µs), and the probes of the
    first levels of the search, the same for every key, are cached per mapping.
    Files that cannot be mapped are read by positional reads of :data:`PROBE_SIZE`
    blocks (``use_mmap=False`` forces that). The mapping is kept between queries; the
    file is stat'ed at most every ``recheck`` seconds (0: before every query) and
    re-mapped when it was replaced or changed size or mtime. Until then the old
    mapping answers: writers must replace index files by rename (as
    :func:`atomic_write_lines` does), never truncate one in place (a reader of a
    truncated mapping dies of SIGBUS, as with any mmap reader).

    Args:
        path: the sorted file.
        recheck: seconds between ``stat`` calls (a ``stat`` costs a few µs, a large
            part of a mapped lookup; the resolution API uses 1 s).
        use_mmap: False to always use positional reads.
    """

    def __init__(
        self, path: str | os.PathLike[str], *, recheck: float = 0.0, use_mmap: bool = True
    ):
        self.path = os.fspath(path)
        self.stats = ReadStats()
        self.recheck = recheck
        self.use_mmap = use_mmap
        self._sig: tuple[int, int, int, int] | None = None
        self._map: _Mapping | None = None
        self._checked = -1e18

    def mapping(self) -> _Mapping | None:
        """The current mapping, None when the file cannot be mapped.

        Raises:
            OSError: the file cannot be stat'ed or opened.
        """
        if not self.use_mmap:
            return None
        now = time.monotonic()
        if self.recheck and now - self._checked < self.recheck and self._sig is not None:
            return self._map
        st = os.stat(self.path)
        self._checked = now
        sig = (st.st_ino, st.st_dev, st.st_size, st.st_mtime_ns)
        if sig != self._sig:
            m: _Mapping | None = None
            if stat.S_ISREG(st.st_mode):
                if st.st_size == 0:
                    m = _Mapping(b"")
                else:
                    with open(self.path, "rb") as f:
                        try:
                            mm = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
                            m = _Mapping(mm)
                        except (OSError, ValueError, OverflowError) as exc:
                            log.debug("%s: cannot map (%s), reading instead", self.path, exc)
            self._map = m  # one assignment: readers see the old or the new mapping
            self._sig = sig  # an old mapping is unmapped when its last reader drops it
        return self._map

    def open(self) -> _Handle:
        """A handle for one query (the mapping, or the file opened for positional
        reads). Raises ``OSError``."""
        m = self.mapping()
        if m is not None:
            return _Handle(m)
        return _Handle(None, open(self.path, "rb", buffering=0), self.stats)

    def find(self, h: _Handle, key: bytes) -> int:
        """Offset of the first non-blank line ``>= key`` (``h.size`` when there is none;
        the offset may be that of blank lines before it).

        Binary search over byte offsets ``[lo, hi)`` (both line starts): each probe
        takes the line around the middle; a blank one is replaced by the next
        non-blank line. Probes of intervals wider than :data:`PROBE_CACHE_SPAN` are the
        same for every key and are cached with the mapping (~10 levels, at most
        8,192 lines), which halves the work of a mapped lookup."""
        buf, probes = h.buf, h.probes
        n = h.size
        lo, hi = 0, n
        span = PROBE_CACHE_SPAN
        count = cached = nbytes = 0
        while lo < hi:
            count += 1
            mid = (lo + hi) // 2
            wide = hi - lo > span
            hit = probes.get(mid) if wide else None
            if hit is None:
                s = buf.rfind(b"\n", lo, mid) + 1 or lo
                e = buf.find(b"\n", s)
                if e < 0:
                    e = n
                raw = buf[s:e]
                nbytes += e - s
                line: bytes | None = raw
                if raw <= b"\r" and raw in _BLANK:  # (one comparison for most lines)
                    line, e = self._next_non_blank(buf, e, n)
                if wide and len(probes) < 8192:
                    probes[mid] = (s, e, line)
            else:
                cached += 1
                s, e, line = hit
            if line is None:  # only blank lines from s to the end
                hi = s
            elif line < key:
                lo = e + 1
            else:
                hi = s  # lines in [s, the compared line) are blank
        stats = self.stats
        stats.probes += count
        if h.mapped:
            stats.reads += count - cached
            stats.bytes_read += nbytes
        return min(lo, n)

    @staticmethod
    def _next_non_blank(
        buf: mmap.mmap | bytes | _FileBuffer, e: int, n: int
    ) -> tuple[bytes | None, int]:
        """The first non-blank line after the newline at ``e`` and its end, ``(None,
        n)`` when there is none."""
        t = e + 1
        while t < n:
            e = buf.find(b"\n", t)
            if e < 0:
                e = n
            line = buf[t:e]
            if line not in _BLANK:
                return line, e
            t = e + 1
        return None, n

    @staticmethod
    def previous_line(h: _Handle, pos: int) -> int:
        """Start of the last non-blank line before ``pos`` (a line start; 0 when there
        is none)."""
        buf = h.buf
        e = pos - 1  # the newline that ends the previous line
        while e > 0:
            s = buf.rfind(b"\n", 0, e) + 1
            if buf[s:e] not in _BLANK:
                return s
            e = s - 1
        return 0

    def _chunks(self, h: _Handle, pos: int) -> Iterator[tuple[int, bytes]]:
        """``(offset, text)``: whole lines from ``pos`` (a line start) to the end of
        the file, in growing chunks (:data:`FIRST_CHUNK` up to :data:`MAX_CHUNK`
        bytes) cut after the last newline in the chunk."""
        buf, n = h.buf, h.size
        mapped = h.mapped
        size = min(FIRST_CHUNK, MAX_CHUNK)
        while pos < n:
            stop = pos + size
            size = min(size * 2, MAX_CHUNK)
            if stop < n:
                e = buf.rfind(b"\n", pos, stop)
                if e < 0:  # a line longer than the chunk
                    e = buf.find(b"\n", stop)
                    if e < 0:
                        e = n
            else:
                e = n
            text = buf[pos:e]
            if mapped:
                self.stats.reads += 1
                self.stats.bytes_read += e - pos
            yield pos, text
            pos = e + 1

    def forward(
        self, h: _Handle, pos: int, end: bytes | None = None
    ) -> Iterator[tuple[int, bytes]]:
        """``(offset, line)`` for the lines from ``pos`` (a line start) up to, not
        including, the first line ``>= end``; newline stripped, blank lines skipped."""
        for at, text in self._chunks(h, pos):
            off = at
            for line in text.split(b"\n"):
                if line not in _BLANK:
                    if end is not None and line >= end:
                        return
                    yield off, line
                off += len(line) + 1

    def lines(self, h: _Handle, pos: int, end: bytes | None = None) -> Iterator[bytes]:
        """Like :meth:`forward`, the lines only (faster: the hot path of a lookup, so
        the chunking of :meth:`_chunks` is inlined)."""
        buf, n = h.buf, h.size
        size = min(FIRST_CHUNK, MAX_CHUNK)
        reads = nbytes = 0
        try:
            while pos < n:
                stop = pos + size
                size = min(size * 2, MAX_CHUNK)
                e = buf.rfind(b"\n", pos, stop) if stop < n else n
                if e < 0:  # a line longer than the chunk
                    e = buf.find(b"\n", stop)
                    if e < 0:
                        e = n
                text = buf[pos:e]
                reads += 1
                nbytes += e - pos
                pos = e + 1
                for line in text.split(b"\n"):
                    if line in _BLANK:
                        continue
                    if end is not None and line >= end:
                        return
                    yield line
        finally:
            if h.mapped:
                self.stats.reads += reads
                self.stats.bytes_read += nbytes

    def backward(
        self, h: _Handle, start: int, end: int, key: bytes | None = None
    ) -> Iterator[bytes]:
        """The non-blank lines in ``[start, end)`` (``end`` a line start), last first;
        with ``key``, only down to the first line ``< key``."""
        buf = h.buf
        mapped = h.mapped
        e = end - 1 if end > 0 and buf[end - 1 : end] == b"\n" else end
        nbytes = 0
        count = 0
        try:
            while e >= start:
                s = buf.rfind(b"\n", start, e) + 1 or start
                if e > s:
                    line = buf[s:e]
                    count += 1
                    nbytes += e - s
                    if line != b"\r":
                        if key is not None and line < key:
                            return
                        yield line
                if s <= start:
                    return
                e = s - 1
        finally:
            if mapped:
                self.stats.reads += count
                self.stats.bytes_read += nbytes

    def range(self, start: bytes, end: bytes | None, reverse: bool = False) -> Iterator[bytes]:
        """Lines with ``start <= line < end`` (``end=None``: to the end of the file), in
        file order or reversed. Raises ``OSError`` (when called for a mapped file,
        while iterating for one that is read)."""
        return self._range(self.mapping(), start, end, reverse)

    def _range(
        self, m: _Mapping | None, start: bytes, end: bytes | None, reverse: bool
    ) -> Iterator[bytes]:
        if m is None:
            return self._read_range(start, end, reverse)
        h = _Handle(m)
        if not reverse:
            return self.lines(h, self.find(h, start), end)
        e = self.find(h, end) if end is not None else h.size
        return self.backward(h, 0, e, start)

    def _read_range(self, start: bytes, end: bytes | None, reverse: bool) -> Iterator[bytes]:
        with self.open() as h:
            if not reverse:
                yield from self.lines(h, self.find(h, start), end)
            else:
                e = self.find(h, end) if end is not None else h.size
                yield from self.backward(h, 0, e, start)


# --- CDX text <-> CdxLine (the shared readers/writers of webark.cdx.formats) ----------


def parse_cdx_text(text: str, letters: Sequence[str] | None = None) -> CdxLine:
    """One CDX line of any format :mod:`webark.cdx.formats` reads (CDXJ, CDX 11/9,
    ng; ``letters`` are the field letters of a `` CDX …`` header, if the file has one).

    Raises:
        ValueError: not a CDX line in a known format.
    """
    if letters is not None and detect_format(text) != "cdxj":
        return parse_cdx(text, letters)
    return parse_line(text)


def _skip(raw: bytes) -> bool:
    """Header (`` CDX …``) and meta (``!…``) lines."""
    return raw[:1] in (b" ", b"!")


def _header_letters(h: _Handle) -> list[str] | None:
    """Field letters of a `` CDX N b a …`` first line, None when there is none."""
    first = h.line_at(0) if h.size else b""
    if first.startswith((b" CDX ", b"CDX ")):
        return first.decode("ascii", "replace").split()[1:]
    return None


def _ts_of(raw: bytes) -> str:
    parts = raw.split(b" ", 2)
    return parts[1].decode("ascii", "replace") if len(parts) > 1 else ""


class SortedCdxFile:
    """A sorted CDX/CDXJ file behind the :class:`~webark.index.source.IndexSource`
    protocol.

    Args:
        path: the sorted index file (any size; it is never loaded into memory).
        digest_index: side index for :meth:`by_digest`: a path, ``None`` (always scan)
            or ``"auto"`` (``<path>.digests`` when that file exists).
        recheck: seconds between looks at the file for a replacement (see
            :class:`SortedLines`; 0: before every query).

    Attributes:
        stats: cumulative :class:`ReadStats` of the index file.

    Lines that cannot be parsed are logged and skipped (like pywb, which never fails
    a query for one bad line); an unreadable file raises
    :class:`~webark.index.source.IndexUnavailable` when iteration starts.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        digest_index: str | os.PathLike[str] | None = "auto",
        *,
        recheck: float = 0.0,
    ):
        self.path = os.fspath(path)
        self.lines = SortedLines(self.path, recheck=recheck)
        self.stats = self.lines.stats
        self._letters_sig: tuple[int, int] | None = None
        self._letters_cache: list[str] | None = None
        if digest_index == "auto":
            self.digest_index: str | None = self.path + DIGEST_SUFFIX
        else:
            self.digest_index = os.fspath(digest_index) if digest_index is not None else None

    def __repr__(self) -> str:
        return f"SortedCdxFile({self.path!r})"

    def _letters(self) -> list[str] | None:
        """Field letters of the file's `` CDX …`` header (cached per size and mtime)."""
        try:
            st = os.stat(self.path)
            sig = (st.st_size, st.st_mtime_ns)
            if self._letters_sig != sig:
                with self.lines.open() as h:
                    self._letters_cache = _header_letters(h)
                self._letters_sig = sig
        except OSError as exc:
            raise IndexUnavailable(f"{self.path}: {exc}") from exc
        return self._letters_cache

    def _parse(self, raw: bytes, letters: list[str] | None = None) -> CdxLine | None:
        if _skip(raw):
            return None
        try:
            text = raw.rstrip(b"\r").decode("utf-8", "surrogateescape")
            return parse_cdx_text(text, letters)
        except (ValueError, TypeError) as exc:
            log.warning("%s: skipping unreadable CDX line %r: %s", self.path, raw[:120], exc)
            return None

    def scan(self, rng: KeyRange, reverse: bool = False) -> Iterator[CdxLine]:
        """See :meth:`IndexSource.scan`. About ``log2(size/4096)`` block reads to find
        the range, then sequential chunked reads of the matching lines only."""
        raws = self.scan_raw(rng, reverse)
        first = next(raws, None)  # opens the file (IndexUnavailable) before the header
        if first is None:
            return
        letters = self._letters()
        for raw in itertools.chain((first,), raws):
            line = self._parse(raw, letters)
            if line is not None:
                yield line

    def scan_raw(self, rng: KeyRange, reverse: bool = False) -> Iterator[bytes]:
        """Like :meth:`scan`, but the index lines themselves (bytes, without line end
        or ``\\r``, in the file's own format), unparsed: header and ``!`` meta lines
        skipped, ``from_ts``/``to_ts`` applied. For callers that copy lines through
        (the resolution API's fast path for CDXJ files). On a mapped file without
        CRLF line ends, a query without ``from``/``to`` whose start sorts after
        ``!`` (so no header or meta line can be in range) gets the lines with no
        per-line work at all.

        Raises:
            IndexUnavailable: the file cannot be read (when called for a mapped
                file, else while iterating).
        """
        start = rng.start.encode("utf-8", "surrogateescape")
        end = rng.end.encode("utf-8", "surrogateescape") if rng.end is not None else None
        try:
            m = self.lines.mapping()
            it = self.lines._range(m, start, end, reverse)
        except OSError as exc:
            raise IndexUnavailable(f"{self.path}: {exc}") from exc
        # `` CDX`` header and ``!meta`` lines sort before every key that starts above "!"
        meta = not start or start[0] <= 0x21
        timed = rng.from_ts is not None or rng.to_ts is not None
        if m is not None and not (meta or timed or m.crlf):
            return it  # the common case
        return self._clean(it, rng, meta, timed)

    def _clean(
        self, it: Iterator[bytes], rng: KeyRange, meta: bool, timed: bool
    ) -> Iterator[bytes]:
        try:
            for raw in it:
                if meta and _skip(raw):
                    continue
                if raw[-1:] == b"\r":
                    raw = raw[:-1]
                if timed and not in_time(rng, _ts_of(raw)):
                    continue
                yield raw
        except OSError as exc:
            raise IndexUnavailable(f"{self.path}: {exc}") from exc

    def by_digest(self, digest: str) -> Iterator[CdxLine]:
        """See :meth:`IndexSource.by_digest`. With a valid side index: one binary search
        in the side index plus one read per match; without: a full scan of the file."""
        want = digest_key(digest)
        try:
            letters = self._letters()
            side = self._side_index()
            if side is None:
                for raw in self.lines.range(b"", None):
                    line = self._parse(raw, letters)
                    if line is not None and digest_key(line.digest) == want:
                        yield line
                return
            prefix = want.encode("utf-8") + b" "
            with side.open() as sh, self.lines.open() as h:
                pos = side.find(sh, prefix)
                for _, raw in side.forward(sh, pos):
                    if not raw.startswith(prefix):
                        break
                    line = self._parse(h.line_at(int(raw[len(prefix) :])), letters)
                    if line is not None:
                        yield line
        except OSError as exc:
            raise IndexUnavailable(f"{self.path}: {exc}") from exc

    def _side_index(self) -> SortedLines | None:
        if self.digest_index is None or not os.path.exists(self.digest_index):
            return None
        with open(self.digest_index, "rb") as f:
            head = f.readline().rstrip(b"\n")
        size = os.path.getsize(self.path)
        if head != _DIGEST_MAGIC + str(size).encode():
            log.warning("%s: stale or foreign digest index, scanning instead", self.digest_index)
            return None
        return SortedLines(self.digest_index)


def write_sorted_cdxj(lines: Iterable[CdxLine], path: str | os.PathLike[str]) -> int:
    """Write ``lines`` as a sorted CDXJ file, atomically (temporary file, fsync, rename).

    Sorting is in memory: meant for per-WARC and per-collection indexes. Returns the
    number of lines written.
    """
    texts = sorted(format_cdxj(x).encode("utf-8", "surrogateescape") for x in lines)
    atomic_write_lines(path, texts)
    return len(texts)


def atomic_write_lines(path: str | os.PathLike[str], lines: Iterable[bytes]) -> None:
    """Write ``lines`` (bytes without newline) to ``path`` atomically: a temporary file in
    the same folder, fsync, rename over ``path``, fsync of the folder. A reader (or a
    process restarted after ``kill -9``) sees the old file or the new one, never a
    part. Raises ``OSError``."""
    path = os.fspath(path)
    d = os.path.dirname(path) or "."
    fd, tmp = tempfile.mkstemp(prefix=".", suffix=".tmp", dir=d)
    try:
        with os.fdopen(fd, "wb", buffering=1 << 20) as f:
            for b in lines:
                f.write(b)
                f.write(b"\n")
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    fsync_dir(d)


def fsync_dir(path: str | os.PathLike[str]) -> None:
    """fsync a folder so that a rename in it is durable (no-op where unsupported)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def build_digest_index(
    cdx_path: str | os.PathLike[str],
    out_path: str | os.PathLike[str] | None = None,
    *,
    chunk_lines: int = 1_000_000,
) -> int:
    """Build the digest side index of a sorted CDX file (see the module docstring):
    ``sha1:BASE32 OFFSET`` lines (offset zero-padded to 15 digits), sorted, after a
    ``!webark-digests 1 size=N`` header.

    Memory is bounded by ``chunk_lines``: larger files are sorted in runs written to
    temporary files and merged (an external merge sort), so a multi-GB index works.
    Written atomically. Returns the number of entries.

    Raises:
        OSError: the index cannot be read or the side index written.
    """
    src = SortedLines(cdx_path)
    out = os.fspath(out_path) if out_path is not None else os.fspath(cdx_path) + DIGEST_SUFFIX
    runs: list[str] = []
    batch: list[bytes] = []
    count = 0
    tmpdir = tempfile.mkdtemp(prefix=".digests-", dir=os.path.dirname(out) or ".")

    def flush() -> None:
        batch.sort()
        p = os.path.join(tmpdir, f"run{len(runs)}")
        with open(p, "wb") as f:
            f.writelines(b + b"\n" for b in batch)
        runs.append(p)
        batch.clear()

    try:
        with src.open() as h:
            size = h.size
            letters = _header_letters(h)
            for off, raw in src.forward(h, 0):
                if _skip(raw):
                    continue
                dg = _digest_field(raw, letters)
                if dg is None or dg == "-":
                    continue
                batch.append(f"{digest_key(dg)} {off:015d}".encode())
                count += 1
                if len(batch) >= chunk_lines:
                    flush()
        header = _DIGEST_MAGIC + str(size).encode()
        if not runs:
            batch.sort()
            atomic_write_lines(out, [header, *batch])
        else:
            if batch:
                flush()
            files = [open(p, "rb") for p in runs]  # noqa: SIM115 - closed below
            try:
                merged = (ln.rstrip(b"\n") for ln in heapq.merge(*files))
                atomic_write_lines(out, _chain([header], merged))
            finally:
                for f in files:
                    f.close()
    finally:
        for p in runs:
            os.unlink(p)
        os.rmdir(tmpdir)
    return count


def _chain(first: list[bytes], rest: Iterable[bytes]) -> Iterator[bytes]:
    yield from first
    yield from rest


_CDXJ_DIGEST = re.compile(rb'"digest": ?"([^"\\]*)"')


def _digest_field(raw: bytes, letters: Sequence[str] | None) -> str | None:
    """The payload digest of a raw CDX line (without JSON parsing when possible)."""
    text = raw.rstrip(b"\r").decode("utf-8", "surrogateescape")
    fmt = detect_format(text)
    if letters is None and fmt in ("cdx11", "cdx9"):
        f = text.split(" ")
        return f[5] if len(f) in (9, 11) else None
    if fmt == "cdxj":
        m = _CDXJ_DIGEST.search(raw)
        if m is not None and raw.count(b'"digest"') == 1:
            return m.group(1).decode("ascii", "replace")
    try:
        return parse_cdx_text(text, letters).digest
    except ValueError:
        return None


def is_sorted_index(path: str | os.PathLike[str]) -> bool:
    """True for the file names treated as sorted CDX indexes in a collection's
    ``indexes/`` folder: ``*.cdx`` and ``*.cdxj`` (not side indexes, not ZipNum)."""
    return Path(path).suffix in (".cdx", ".cdxj")
