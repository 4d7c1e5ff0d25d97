"""``webark search build``: bring a collection's search index up to date with its WARCs.

Incremental: the WARCs the collection's index lists as complete are compared with those
the search index has documents of (name and size). A new WARC (or one re-indexed with
another size) is read from start to end (:class:`~webark.warc.reader.ArchiveReader`,
which reports broken records with file and offset and goes on) and its documents
(:func:`~webark.search.extract.document_for`) replace the WARC's old ones in one
transaction; a WARC no longer in the collection has its documents removed. A WARC still
being written (appended to by a crawl) waits for the next build after it is complete.
So ``kill -9`` during a build leaves every WARC's documents complete or absent, and the
next build goes on where this one stopped.

With ``jobs`` > 1, WARCs are read (text extraction is the CPU-heavy part) in that many
worker processes, a WARC of :data:`SPLIT_SIZE` or more in as many ranges starting at
records (the indexer's :func:`~webark.cdx.indexer.split_points`); the parent writes each
WARC's documents, in record order, once all its ranges are read.
"""

from __future__ import annotations

import collections
import itertools
import multiprocessing
import os
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from webark.cdx.indexer import split_points
from webark.index.collection import Collection
from webark.index.locations import WarcNotFound
from webark.search.backend import SearchIndex
from webark.search.document import SearchDocument
from webark.search.extract import Skips, document_for
from webark.warc.reader import ArchiveReader

#: Progress callback: ``(WARC name, documents made so far in it, WARCs done, WARCs to do)``.
Progress = Callable[[str, int, int, int], None]


@dataclass
class BuildReport:
    """What a build did: ``added`` (WARC name → documents), ``removed`` (WARC name →
    documents dropped), ``failed`` (WARC name → why: not found, unreadable), ``skips``
    (records left out, by reason), ``problems`` (the readers' errors with file and
    offset, first 100)."""

    added: dict[str, int] = field(default_factory=dict)
    removed: dict[str, int] = field(default_factory=dict)
    failed: dict[str, str] = field(default_factory=dict)
    skips: Skips = field(default_factory=Skips)
    problems: list[str] = field(default_factory=list)

    @property
    def documents(self) -> int:
        """Documents added by this build."""
        return sum(self.added.values())


def warc_documents(path: str, name: str, collection: str, skips: Skips, problems: list[str],
                   start: int = 0, end: int | None = None) -> Iterator[SearchDocument]:  # fmt: skip
    """The search documents of one WARC (read at ``path``, named ``name`` in the
    collection ``collection``; only the records starting in ``[start, end)``); skipped
    records are counted in ``skips``, the reader's errors appended to ``problems``."""
    reader = ArchiveReader(path, start=start, end=end)
    for rec in reader:
        doc = document_for(rec, warc_name=name, collection=collection, skips=skips)
        if doc is not None:
            yield doc
    problems.extend(str(p) for p in reader.problems if p.severity == "error")


#: A WARC smaller than this is read by one worker; a larger one is split into as many
#: ranges (starting at records) as there are jobs.
SPLIT_SIZE = 8 << 20
#: Ranges read ahead of the one being written, per job (bounds the parent's memory).
AHEAD = 2


@dataclass(frozen=True, slots=True)
class _Part:
    path: str
    name: str
    size: int | None
    start: int
    end: int | None
    last: bool  # the WARC's last range


def _read_part(part: _Part, collection: str) -> tuple[list[SearchDocument], Skips, list[str]]:
    """Worker process: the documents of one range of a WARC (``jobs`` > 1)."""
    skips = Skips()
    problems: list[str] = []
    docs = list(warc_documents(part.path, part.name, collection, skips, problems,
                               part.start, part.end))  # fmt: skip
    return docs, skips, problems


def _parts(located: list[tuple[str, str, int | None]], jobs: int) -> Iterator[_Part]:
    for path, name, size in located:
        points = None
        if "://" not in path and os.path.getsize(path) >= SPLIT_SIZE:
            points = split_points(path, jobs)
        if not points:
            yield _Part(path, name, size, 0, None, True)
            continue
        for i, (a, b) in enumerate(itertools.pairwise(points)):
            yield _Part(path, name, size, a, None if i == len(points) - 2 else b,
                        i == len(points) - 2)  # fmt: skip


def plan(
    collection: Collection, index: SearchIndex
) -> tuple[list[tuple[str, int | None]], list[str]]:
    """(WARCs to add: name and size, WARC names to remove) to bring ``index`` up to
    date with ``collection``'s complete WARCs."""
    have = index.indexed_files()
    done = {f.name: f.size for f in collection.indexed() if f.complete}
    todo = [(n, s) for n, s in sorted(done.items()) if n not in have or have[n] != s]
    gone = sorted(n for n in have if n not in done)
    return todo, gone


def build_search(collection: Collection, index: SearchIndex, *, jobs: int = 1,
                 progress: Progress | None = None) -> BuildReport:  # fmt: skip
    """Update ``index`` from ``collection`` (module docstring).

    Args:
        jobs: worker processes reading WARCs (1: read in this process, streaming).
        progress: called per WARC and every few hundred documents.

    Raises:
        IndexUnavailable: the collection's index or the search index cannot be used
            (a WARC that cannot be found or read is in :attr:`BuildReport.failed`
            instead).
    """
    report = BuildReport()
    todo, gone = plan(collection, index)
    for name in gone:
        report.removed[name] = index.remove_file(name)
    resolver = collection.resolver()
    coll_name = collection.config.name or collection.root.name
    located: list[tuple[str, str, int | None]] = []
    for name, size in todo:
        try:
            located.append((resolver.resolve(name), name, size))
        except WarcNotFound as exc:
            report.failed[name] = str(exc)
    total = len(located)
    if jobs <= 1:
        for i, (path, name, size) in enumerate(located):
            _one(index, report, path, name, size, coll_name, progress, i, total)
        return report
    _in_workers(index, report, located, coll_name, jobs, progress)
    return report


def _in_workers(index: SearchIndex, report: BuildReport,
                located: list[tuple[str, str, int | None]], coll_name: str, jobs: int,
                progress: Progress | None) -> None:  # fmt: skip
    """Read WARCs (large ones in ranges) in ``jobs`` processes, at most ``AHEAD`` ranges
    per job ahead of the writer; write each WARC's documents once all its ranges are
    read, in one transaction."""
    ctx = multiprocessing.get_context("fork" if os.name == "posix" else "spawn")
    total = len(located)
    done = 0
    parts = _parts(located, jobs)
    window: collections.deque[tuple[_Part, Future[Any]]] = collections.deque()
    docs: list[SearchDocument] = []
    broken: str | None = None
    with ProcessPoolExecutor(max_workers=jobs, mp_context=ctx) as pool:

        def fill() -> None:
            while len(window) < jobs * AHEAD:
                part = next(parts, None)
                if part is None:
                    return
                window.append((part, pool.submit(_read_part, part, coll_name)))

        fill()
        while window:
            part, fut = window.popleft()
            fill()
            try:
                got, skips, problems = fut.result()
                docs.extend(got)
                report.skips.merge(skips)
                report.problems.extend(problems[: max(0, 100 - len(report.problems))])
            except OSError as exc:
                broken = str(exc)
            if not part.last:
                continue
            done += 1
            if broken is not None:
                report.failed[part.name] = broken
            else:
                report.added[part.name] = index.add_file(part.name, docs, part.size)
            if progress is not None:
                progress(part.name, len(docs), done, total)
            docs, broken = [], None


def _one(index: SearchIndex, report: BuildReport, path: str, name: str, size: int | None,
         coll_name: str, progress: Progress | None, i: int, total: int) -> None:  # fmt: skip
    problems: list[str] = []
    made = 0

    def counted() -> Iterator[SearchDocument]:
        nonlocal made
        for doc in warc_documents(path, name, coll_name, report.skips, problems):
            made += 1
            if progress is not None and made % 200 == 0:
                progress(name, made, i, total)
            yield doc

    try:
        report.added[name] = index.add_file(name, counted(), size)
    except OSError as exc:
        report.failed[name] = str(exc)
        return
    report.problems.extend(problems[: max(0, 100 - len(report.problems))])
    if progress is not None:
        progress(name, made, i + 1, total)
