"""Read the originals of resolved revisits in WARC order and keep their payloads.

After :func:`~webark.tools.reduplicate_resolve.resolve_sorted`, the originals wanted
are sorted by ``(WARC file name, offset)`` and read file by file, front to back: where
they lie close together (their bytes cover at least :data:`SCAN_DENSITY` of the span
between the first and the last) the file is read sequentially from the first one with
:class:`~webark.warc.reader.ArchiveReader` (fastwarc) and the others are skipped;
otherwise each one is read at its offset, in offset order
(:class:`~webark.index.record_loader.RecordLoader`). Either way every original is read
once, however many revisits cite it.

Each original's HTTP head and body (the block after the head, as stored: chunk framing
kept when the original was chunked) go to a :class:`PayloadSpool`, a temporary file, so
that writing the harvest afterwards needs no further reads of other WARCs and memory
does not grow with payload sizes.

A candidate that cannot be used (WARC not found, no record at the offset, not a
response or resource record) is recorded in ``failures`` and the revisit moves on to
its next candidate (a new sorted round), as the replay resolver does.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from webark.cdx.line import CdxLine
from webark.core.errors import FormatError
from webark.index.locations import WarcNotFound
from webark.index.record_loader import RecordLoader
from webark.index.revisits import ORIGINAL_TYPES
from webark.tools.reduplicate_resolve import How, Resolution
from webark.warc.reader import ArchiveReader
from webark.warc.record import Block, WarcRecord

SCAN_DENSITY = 0.1
"""Read a WARC sequentially when the wanted records' bytes are at least this share of
the span they lie in (else seek to each)."""

#: Progress callback: ``(originals read, originals wanted so far)``.
LoadProgress = Callable[[int, int], None]


@dataclass(frozen=True, slots=True)
class LoadedOriginal:
    """An original record whose payload is in the spool.

    Attributes:
        line: its index line (filename, offset …).
        record_id: WARC-Record-ID (``<urn:uuid:…>``) or None.
        target_uri: WARC-Target-URI or None.
        date: WARC-Date as written, or None.
        payload_digest: WARC-Payload-Digest as written, or None.
        head: the HTTP head (status line, fields, blank line) in bytes; None for a
            record without one (``resource``).
        chunked: the body in the spool carries valid chunk framing.
        declared_chunked: the original's head says ``Transfer-Encoding: chunked``.
        truncated: WARC-Truncated of the original, if any.
        body_at, body_length: where its body is in the spool (bytes).
    """

    line: CdxLine
    record_id: str | None
    target_uri: str | None
    date: str | None
    payload_digest: str | None
    head: bytes | None
    chunked: bool
    declared_chunked: bool
    truncated: str | None
    body_at: int
    body_length: int


class PayloadSpool:
    """Bodies of originals, appended to one temporary file (deleted on :meth:`close`).

    Args:
        directory: where the temporary file goes (default: the system's).
    """

    def __init__(self, directory: str | os.PathLike[str] | None = None):
        self._f = tempfile.TemporaryFile(prefix="webark-redup-", dir=directory)  # noqa: SIM115
        self.size = 0

    def add(self, rec: WarcRecord, start: int) -> tuple[int, int]:
        """Append ``rec``'s block from byte ``start``; returns ``(position, length)``."""
        at = self.size
        self._f.seek(at)
        with rec.block.open() as src:
            src.seek(start)
            shutil.copyfileobj(src, self._f, 1 << 20)
        self._f.flush()  # read back with os.pread, below the buffer
        self.size = self._f.tell()
        return at, self.size - at

    def block(self, at: int, length: int) -> Block:
        """The bytes at ``at`` as a :class:`Block` (spooled to its own temporary file
        when over 16 MiB)."""
        left = length
        pos = at

        def read(n: int) -> bytes:
            nonlocal left, pos
            n = min(n, left)
            if n <= 0:
                return b""
            data = os.pread(self._f.fileno(), n, pos)
            pos += len(data)
            left -= len(data)
            return data

        return Block.from_reader(read)

    def close(self) -> None:
        self._f.close()


@dataclass
class LoadResult:
    """What :func:`load_originals` found.

    Attributes:
        chosen: revisit ``(filename, offset)`` → ``(original, rule that found it)``.
        failures: original ``(filename, offset)`` → why it could not be used.
        reads: records read (sequential scans count every record passed over).
    """

    chosen: dict[tuple[str, int], tuple[LoadedOriginal, How]] = field(default_factory=dict)
    failures: dict[tuple[str, int], str] = field(default_factory=dict)
    reads: int = 0


def _usable(rec: WarcRecord) -> str | None:
    if rec.type not in ORIGINAL_TYPES:
        return f"a {rec.type or 'typeless'} record, not a response or resource"
    return None


def _keep(spool: PayloadSpool, line: CdxLine, rec: WarcRecord) -> LoadedOriginal:
    h = rec.http
    start = h.head_length if h is not None else 0
    head = rec.block.head(start) if h is not None else None
    chunked = bool(h is not None and h.is_chunked and rec.payload_was_dechunked_ok)
    at, n = spool.add(rec, start)
    return LoadedOriginal(
        line=line,
        record_id=rec.record_id,
        target_uri=rec.target_uri,
        date=rec.headers.date_str,
        payload_digest=rec.headers.payload_digest,
        head=head,
        chunked=chunked,
        declared_chunked=bool(h is not None and h.is_chunked),
        truncated=rec.headers.truncated,
        body_at=at,
        body_length=n,
    )


def _read_file(
    loader: RecordLoader,
    lines: list[CdxLine],
    spool: PayloadSpool,
    result: LoadResult,
    got: dict[tuple[str, int], LoadedOriginal],
    tick: Callable[[], None],
) -> None:
    """Read the wanted records of one WARC (``lines`` sorted by offset)."""
    name = lines[0].filename
    try:
        path = loader.locate(name)
    except WarcNotFound as exc:
        for line in lines:
            result.failures[(name, line.offset)] = str(exc)
            tick()
        return
    first, last = lines[0], lines[-1]
    span = last.offset + max(last.length, 0) - first.offset
    wanted_bytes = sum(max(x.length, 0) for x in lines)
    todo = {x.offset: x for x in lines}
    is_arc = name.endswith((".arc", ".arc.gz"))
    if len(lines) > 1 and not is_arc and span > 0 and wanted_bytes >= SCAN_DENSITY * span:
        try:
            for rec in ArchiveReader(path, start=first.offset):
                result.reads += 1
                hit = todo.pop(rec.offset, None)
                if hit is not None:
                    _take(spool, result, got, hit, rec)
                    tick()
                if rec.offset >= last.offset or not todo:
                    break
        except (OSError, ValueError):
            pass  # the records left are read one by one below, with their own errors
    for off in sorted(todo):
        line = todo[off]
        try:
            rec = loader.load(line)
        except (WarcNotFound, FormatError) as exc:
            result.failures[(name, off)] = str(exc)
        else:
            result.reads += 1
            _take(spool, result, got, line, rec)
        tick()


def _take(
    spool: PayloadSpool,
    result: LoadResult,
    got: dict[tuple[str, int], LoadedOriginal],
    line: CdxLine,
    rec: WarcRecord,
) -> None:
    why = _usable(rec)
    if why is not None:
        result.failures[(line.filename, line.offset)] = why
    else:
        got[(line.filename, line.offset)] = _keep(spool, line, rec)


def load_originals(
    resolutions: Iterable[Resolution],
    loader: RecordLoader,
    spool: PayloadSpool,
    *,
    progress: LoadProgress | None = None,
) -> LoadResult:
    """Read the best usable original of every resolved revisit, sorted by
    ``(filename, offset)`` (see the module docstring).

    Args:
        resolutions: from :func:`~webark.tools.reduplicate_resolve.resolve_sorted`.
        loader: locates and reads WARCs (``RecordLoader(collection.resolver())``).
        spool: where payloads go.
        progress: called with ``(read, wanted)``.

    Returns:
        A :class:`LoadResult`; revisits missing from ``chosen`` have no usable original
        (their candidates' reasons are in ``failures``).
    """
    result = LoadResult()
    got: dict[tuple[str, int], LoadedOriginal] = {}
    waiting = [r for r in resolutions if r.candidates]
    rank = 0
    wanted_total = 0
    done = 0

    def tick() -> None:
        nonlocal done
        done += 1
        if progress is not None:
            progress(done, wanted_total)

    while waiting:
        need: dict[tuple[str, int], CdxLine] = {}
        for r in waiting:
            line = r.candidates[rank][0]
            where = (line.filename, line.offset)
            if where not in got and where not in result.failures:
                need[where] = line
        wanted_total += len(need)
        by_file: dict[str, list[CdxLine]] = defaultdict(list)
        for where in sorted(need):
            by_file[where[0]].append(need[where])
        for name in sorted(by_file):
            _read_file(loader, by_file[name], spool, result, got, tick)
        later = []
        for r in waiting:
            line, how = r.candidates[rank]
            hit = got.get((line.filename, line.offset))
            if hit is not None:
                result.chosen[r.revisit.where] = (hit, how)
            elif rank + 1 < len(r.candidates):
                later.append(r)
        waiting = later
        rank += 1
    return result
