"""A sorted CDX/CDXJ file as an :class:`~webark.index.source.IndexSource`: binary search
over byte offsets, never reading the whole file (multi-GB indexes work in constant
memory).

The file is a text file of CDX lines sorted byte-wise (``LC_ALL=C sort``), in any of the
formats the CDX parser reads (classic CDX 11/9 fields, CDXJ); a `` CDX …`` header line and
``!``-prefixed meta lines (pywb's ``!meta``) sort first and are skipped. This is what
pywb's ``CDXFile`` / ``binsearch.iter_range`` and OpenWayback's ``CDXIndex`` do.

How a query reads the file:

* :meth:`SortedLines.find` binary-searches the first line ``>= key``: each probe reads
  one aligned block (:data:`PROBE_SIZE` bytes) at the middle of the interval, skips to
  the next newline and compares that line; ``log2(size / PROBE_SIZE)`` probes plus a few
  within the last block, i.e. about 20 reads of 4 KiB for a 2 GB file;
* the matching lines are then read forward in growing chunks (4 KiB up to 1 MiB) until
  a line ``>= end``, or, for ``reverse=True``, backwards in chunks from the end of the
  range (found by a second binary search) down to its start.

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
import os
import re
import tempfile
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
#: Largest chunk read while streaming the lines of a range.
MAX_CHUNK = 1 << 20
#: Suffix of the digest side index of a sorted file.
DIGEST_SUFFIX = ".digests"
_DIGEST_MAGIC = b"!webark-digests 1 size="


@dataclass
class ReadStats:
    """I/O counters of one :class:`SortedLines` (cumulative over all queries; take the
    difference around a query to measure it). ``reads`` counts ``read()`` system calls
    on the file, ``bytes_read`` the bytes they returned."""

    reads: int = 0
    bytes_read: int = 0


class _Handle:
    """An open, unbuffered file with positional reads, a size and a tiny block cache
    (so that the last probes of a binary search, which fall into one block, cost
    nothing)."""

    __slots__ = ("_blocks", "f", "size", "stats")

    def __init__(self, path: str, stats: ReadStats):
        self.f: BinaryIO = open(path, "rb", buffering=0)  # noqa: SIM115 - closed by close()
        self.size = os.fstat(self.f.fileno()).st_size
        self.stats = stats
        self._blocks: dict[int, bytes] = {}

    def close(self) -> None:
        self.f.close()

    def __enter__(self) -> _Handle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

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

    def line_at_or_after(self, p: int) -> tuple[int, bytes | None]:
        """``(s, line)``: the first line that starts at or after ``p`` (i.e. ``p`` itself
        when ``p`` is 0 or follows a newline), without its newline; ``line`` is None
        when no line starts there (``s == size``)."""
        if p > 0:
            q = p - 1  # find the first newline at or after p-1
            while True:
                if q >= self.size:
                    return self.size, None
                no, off = divmod(q, PROBE_SIZE)
                blk = self.block(no)
                i = blk.find(b"\n", off)
                if i >= 0:
                    p = no * PROBE_SIZE + i + 1
                    break
                q = (no + 1) * PROBE_SIZE
        if p >= self.size:
            return self.size, None
        return p, self.line_at(p)

    def line_at(self, s: int) -> bytes:
        """The line starting at byte ``s`` (without newline)."""
        parts: list[bytes] = []
        q = s
        while q < self.size:
            no, off = divmod(q, PROBE_SIZE)
            blk = self.block(no)
            i = blk.find(b"\n", off)
            if i >= 0:
                parts.append(blk[off:i])
                break
            parts.append(blk[off:])
            q = (no + 1) * PROBE_SIZE
        return b"".join(parts)


class SortedLines:
    """Binary search and range iteration over any byte-wise sorted text file (CDX,
    ZipNum ``.idx`` summaries, path indexes, digest side indexes).

    Lines are compared as raw bytes with the search key (a line ``>= key`` when its
    bytes are), which is the ``LC_ALL=C`` sort order. All offsets are byte offsets.
    """

    def __init__(self, path: str | os.PathLike[str]):
        self.path = os.fspath(path)
        self.stats = ReadStats()

    def open(self) -> _Handle:
        """Open the file for one query. Raises ``OSError``."""
        return _Handle(self.path, self.stats)

    @staticmethod
    def find(h: _Handle, key: bytes) -> int:
        """Offset of the first line ``>= key`` (``h.size`` when there is none)."""
        lo, hi = 0, h.size
        while lo < hi:
            mid = (lo + hi) // 2
            s, line = h.line_at_or_after(mid)
            if line is None or line >= key:
                hi = mid
            else:
                lo = s + 1  # every p <= s maps to this line or an earlier one
        return h.line_at_or_after(lo)[0]

    @staticmethod
    def previous_line(h: _Handle, pos: int) -> int:
        """Start of the line before the line starting at ``pos`` (0 when ``pos`` is 0)."""
        q = pos - 1  # the newline that ends the previous line
        while q > 0:
            lo = max(0, q - PROBE_SIZE)
            i = h.read_at(lo, q - lo).rfind(b"\n")
            if i >= 0:
                return lo + i + 1
            q = lo
        return 0

    @staticmethod
    def forward(h: _Handle, pos: int, end: bytes | None = None) -> Iterator[tuple[int, bytes]]:
        """``(offset, line)`` for the lines from ``pos`` (a line start) up to, not
        including, the first line ``>= end``; newline stripped, empty lines skipped."""
        chunk = PROBE_SIZE
        rest = b""
        rest_at = pos
        while pos < h.size:
            data = h.read_at(pos, min(chunk, h.size - pos))
            if not data:
                break
            pos += len(data)
            chunk = min(chunk * 2, MAX_CHUNK)
            buf = rest + data
            start = 0
            while True:
                i = buf.find(b"\n", start)
                if i < 0:
                    break
                line = buf[start:i]
                if line:
                    if end is not None and line >= end:
                        return
                    yield rest_at + start, line
                start = i + 1
            rest = buf[start:]
            rest_at += start
        if rest and (end is None or rest < end):
            yield rest_at, rest

    @staticmethod
    def backward(h: _Handle, start: int, end: int) -> Iterator[bytes]:
        """The lines in ``[start, end)`` (both line starts), last first."""
        pos = end
        tail = b""
        chunk = PROBE_SIZE
        while pos > start:
            n = min(chunk, pos - start)
            chunk = min(chunk * 2, MAX_CHUNK)
            pos -= n
            buf = h.read_at(pos, n) + tail
            lines = buf.split(b"\n")
            if pos > start:
                tail = lines[0]
                lines = lines[1:]
            else:
                tail = b""
            for line in reversed(lines):
                if line:
                    yield line
        if tail:
            yield tail

    def range(self, start: bytes, end: bytes | None, reverse: bool = False) -> Iterator[bytes]:
        """Lines with ``start <= line < end`` (``end=None``: to the end of the file), in
        file order or reversed. Raises ``OSError``."""
        with self.open() as h:
            s = self.find(h, start)
            if not reverse:
                for _, line in self.forward(h, s, end):
                    yield line
            else:
                e = self.find(h, end) if end is not None else h.size
                yield from self.backward(h, s, e)


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
    ):
        self.path = os.fspath(path)
        self.lines = SortedLines(self.path)
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
        (the resolution API's fast path for CDXJ files).

        Raises:
            IndexUnavailable: the file cannot be read.
        """
        start = rng.start.encode("utf-8", "surrogateescape")
        end = rng.end.encode("utf-8", "surrogateescape") if rng.end is not None else None
        timed = rng.from_ts is not None or rng.to_ts is not None
        try:
            for raw in self.lines.range(start, end, reverse):
                if _skip(raw) or (timed and not in_time(rng, _ts_of(raw))):
                    continue
                yield raw[:-1] if raw.endswith(b"\r") else raw
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
            for off, raw in SortedLines.forward(h, 0):
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
