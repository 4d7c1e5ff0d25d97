"""Text output of one file split over several processes (``webark index -j N``).

A worker indexes a byte range of the file with ``ArchiveReader(path, start=…, end=…)``
(offsets are those of the whole file; nothing is copied). Ranges start at record
boundaries found by :func:`split_points`; a range is only trusted when its worker read
it cleanly (first record at its start, last
record ending at its end, no error or warning problem), otherwise the file is indexed
sequentially from the first untrusted range on. The output is therefore the same as
:func:`index_file`'s. See docs/cdx-ng.md ("Speed"). This process indexes ranges too
(the first one, so its lines are written while the others finish) and the others are
plain ``os.fork`` children that pickle their chunks to temporary files: no
multiprocessing import, pool threads or result pipes (see bench/README.md, index.py).
"""

from __future__ import annotations

import contextlib
import itertools
import os
from collections.abc import Callable, Generator, Iterator

from webark.cdx.file_index import FileIndex
from webark.cdx.options import IndexOptions
from webark.cdx.ranges import TextChunk, index_range, split_points

__all__ = ["CHUNK_BYTES", "PARALLEL_MIN_BYTES", "index_file_text"]

CHUNK_BYTES = 64 * 1024 * 1024
"""Largest byte range given to one worker (several ranges per worker show progress and
balance the load)."""

PARALLEL_MIN_BYTES = 8 * 1024 * 1024
"""Files smaller than this are indexed in one process (forking costs more)."""


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
            result: object = index_range(
                path, a, b, options, fmt, fields, filename, slot=i, slots=slots
            )
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
                    chunk, clean = index_range(
                        path, a, b, *args[1:], slot=i, slots=slots, tick=tick
                    )
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
