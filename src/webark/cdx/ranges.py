"""Byte ranges of one WARC that can be indexed apart, and the pure range indexer.

A (per-record gzip or uncompressed) WARC is cut at record boundaries found by
:func:`split_points`; a range never starts with the second record of a request/response
pair, so pairs never straddle ranges. :func:`index_range` indexes the records that start
in a range (offsets are those of the whole file; nothing is copied) and says whether it
read the range cleanly; :func:`exact_range` always gives the lines a whole-file index has
for that range (it re-reads the file from its start when the range was not clean), so a
driver can map it over ``(file, range)`` pairs and concatenate: :mod:`webark.cdx.parallel`
(forked processes), :mod:`webark.spark` (a cluster).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator

from webark.cdx.file_index import FileIndex
from webark.cdx.options import IndexOptions
from webark.warc.record import Problem, WarcRecord

__all__ = ["TextChunk", "exact_range", "index_range", "split_points"]

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


def index_range(
    path: str,
    start: int,
    end: int,
    options: IndexOptions,
    fmt: str,
    fields: tuple[str, ...] | None,
    filename: str,
    *,
    slot: int = 0,
    slots: memoryview | None = None,
    tick: Callable[[], None] | None = None,
) -> tuple[TextChunk, bool]:
    """Index the records that start in ``path[start:end]`` (formatted with ``fmt`` and
    ``fields``, ``filename`` written); returns the chunk and whether the range was read
    cleanly: its first record at ``start``, its last ending at ``end``, no error or
    warning. Every 256 lines the bytes done are written to ``slots[slot]`` and ``tick``
    is called.

    Raises:
        ValueError: ``path`` is an ARC file (no reading from the middle).
        OSError: the file cannot be read."""
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




def exact_range(
    path: str | os.PathLike[str],
    start: int,
    end: int,
    options: IndexOptions | None = None,
    fmt: str = "cdxj",
    *,
    filename: str | None = None,
) -> TextChunk:
    """The formatted lines a whole-file index of ``path`` has for the records that start
    in ``[start, end)``: a pure function of the file and the range.

    Args:
        path: the (W)ARC file.
        start, end: a byte range, e.g. two neighbours of :func:`split_points` (``0`` and
            the file size: the whole file, any format and compression).
        options: :class:`IndexOptions` (default: cdxj-indexer's defaults).
        fmt: ``cdxj``, ``cdx11``, ``cdx9`` or ``ng``.
        filename: the ``filename`` written (default ``options.file_name(path)``).

    Returns:
        A :class:`TextChunk` (lines in file order, problems with file and offset, records
        started in the range). The chunks of consecutive ranges covering a file
        concatenate to ``index_file_text(path, options, fmt)``'s lines.

    Raises:
        OSError: the file cannot be read.

    The range is read on its own first; when that read is not clean (a broken record, a
    boundary that is not one), the file is read from its start and the lines of the
    range kept, so the result never depends on where the range was cut.
    """
    from webark.cdx.core import index_records
    from webark.cdx.formats import formatter
    from webark.warc.reader import ArchiveReader

    opts = options or IndexOptions()
    p = os.fspath(path)
    name = filename if filename is not None else opts.file_name(p)
    fields = opts.output_fields
    size = os.path.getsize(p)
    if start <= 0 and end >= size:
        fi = FileIndex(p, opts, filename=name)
        lines = list(fi.text_lines(fmt, fields))
        return TextChunk(lines, fi.problems, fi.records_read, 0, size)
    try:
        chunk, clean = index_range(p, start, end, opts, fmt, fields, name)
    except ValueError:  # not a WARC that a reader can start mid-file (ARC)
        clean = False
    if clean:
        return chunk
    reader = ArchiveReader(p)
    problems: list[Problem] = []
    started = 0

    def records() -> Iterator[WarcRecord]:
        nonlocal started
        for rec in reader:
            started += start <= rec.offset < end
            yield rec

    write = formatter(fmt, fields)  # type: ignore[arg-type]
    lines = [
        write(line)
        for line in index_records(records(), name, opts, problems=problems)
        if start <= line.offset < end or (line.offset < 0 and start == 0)
    ]

    def mine(pr: Problem) -> bool:
        return start == 0 if pr.offset is None else start <= pr.offset < end

    kept = [pr for pr in reader.problems + problems if mine(pr)]
    return TextChunk(lines, kept, started, start, end)
