"""What a writable index store offers beyond :class:`~webark.index.source.IndexSource`:
WARCs added and removed as units, and lines appended while a WARC is being written.

Two stores implement :class:`IndexStore`: :class:`~webark.index.sqlite_store.SqliteStore`
(one file, the default) and :class:`~webark.index.postgres_store.PostgresStore` (a
PostgreSQL server shared by several writers and replay servers). A
:class:`~webark.index.collection.Collection` uses whichever its ``collection.toml``
names; both give the same answers to the same queries (tests/index and tests/apps run
on both).

**Whole WARCs** (``collection add``): :meth:`IndexStore.add_file` inserts every line of
one WARC and records the WARC as indexed in one transaction, so after ``kill -9`` a WARC
is indexed completely or not at all.

**WARCs being written** (a crawl or the proxy, through the capture back end):
:meth:`IndexStore.append_to` gives a :class:`FileAppender` for one WARC. Its lines are
added in batches, each batch one transaction that also moves the WARC's
:attr:`FileAppender.indexed_to` mark (the byte offset just past the last record whose
lines are committed). The writer must add a record's lines only after the record is on
disk (the WARC writer's ``write()`` has returned), so every committed line points at a
complete record. After a crash the writer (or ``collection add`` of the finished WARC)
reopens the appender and goes on from ``indexed_to``: lines of records before that mark
are dropped by :meth:`FileAppender.add`, so a batch sent twice is never indexed twice.
:meth:`FileAppender.finish` marks the WARC complete. Queries see appended lines as soon
as their batch commits (a capture is replayable while its WARC is still ``.open``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Protocol, runtime_checkable

from webark.cdx.line import CdxLine
from webark.core.errors import StorageError
from webark.index.source import KeyRange, digest_key


class AlreadyIndexed(StorageError):
    """:meth:`IndexStore.add_file` of a file name that is already indexed (pass
    ``replace=True`` to re-index it), or :meth:`IndexStore.append_to` of a WARC that is
    already complete."""


@dataclass(frozen=True, slots=True)
class IndexedFile:
    """A WARC recorded in an index store.

    Attributes:
        name: the WARC's file name, as in its CDX lines.
        size, mtime_ns: size in bytes and modification time (ns since the epoch) of the
            WARC when it was indexed (None if not given, or while it is being written).
        lines: number of index lines.
        indexed_at: when it was (last) indexed, W3C-DTF UTC.
        complete: False while the WARC is being appended to (:class:`FileAppender`).
        indexed_to: for an incomplete WARC, the byte offset up to which its records are
            indexed; None for a complete one.
    """

    name: str
    size: int | None
    mtime_ns: int | None
    lines: int
    indexed_at: str
    complete: bool = True
    indexed_to: int | None = None


class FileAppender(Protocol):
    """Adds the lines of one WARC while it is being written (see the module docstring).
    One appender per WARC and writer; not shared between threads."""

    @property
    def name(self) -> str:
        """The WARC's file name (the ``filename`` of its lines)."""
        ...

    @property
    def indexed_to(self) -> int:
        """Byte offset just past the last record whose lines are committed (0 at first)."""
        ...

    def add(self, lines: Sequence[CdxLine], end: int) -> int:
        """Add the lines of the records written since the last call, in one
        transaction, and move :attr:`indexed_to` to ``end`` (the offset just past the
        last of those records; it never moves back).

        Lines whose ``offset`` is below :attr:`indexed_to` are of records already
        indexed and are dropped. Returns the number of lines added.

        Raises:
            IndexUnavailable: the store cannot be written (nothing of the batch is
                stored; send it again).
        """
        ...

    def finish(self, lines: Iterable[CdxLine] = (), *, size: int | None = None,
               mtime_ns: int | None = None) -> int:  # fmt: skip
        """Add the last ``lines`` (as :meth:`add`; streamed, so they may be all the
        lines of the WARC: those below the mark are dropped) and mark the WARC complete
        with its final ``size`` and ``mtime_ns``, in one transaction. Returns the lines
        added.

        Raises:
            IndexUnavailable: the store cannot be written.
        """
        ...


@runtime_checkable
class IndexStore(Protocol):
    """A writable index: an :class:`~webark.index.source.IndexSource` whose WARCs are
    added (whole, or appended to while written) and removed by name."""

    def scan(self, rng: KeyRange, reverse: bool = False) -> Iterator[CdxLine]:
        """See :meth:`webark.index.source.IndexSource.scan`."""
        ...

    def by_digest(self, digest: str) -> Iterator[CdxLine]:
        """See :meth:`webark.index.source.IndexSource.by_digest`."""
        ...

    def add_file(self, name: str, lines: Iterable[CdxLine], *, size: int | None = None,
                 mtime_ns: int | None = None, replace: bool = False,
                 on_line: Callable[[CdxLine], None] | None = None) -> int:  # fmt: skip
        """Index one whole WARC in one transaction; the number of lines.

        Raises:
            AlreadyIndexed: ``name`` is indexed (complete) and ``replace`` is False.
            IndexUnavailable: the store cannot be written.
        """
        ...

    def append_to(self, name: str) -> FileAppender:
        """An appender for WARC ``name`` (created, or resumed after a crash).

        Raises:
            AlreadyIndexed: ``name`` is indexed and complete.
            IndexUnavailable: the store cannot be written.
        """
        ...

    def remove_file(self, name: str) -> int:
        """Drop WARC ``name`` and its lines in one transaction; the lines dropped."""
        ...

    def files(self) -> list[IndexedFile]:
        """Every WARC recorded, by name."""
        ...

    def get_file(self, name: str) -> IndexedFile | None:
        """The record of WARC ``name``, None when unknown."""
        ...

    def count(self) -> int:
        """Number of index lines."""
        ...

    def close(self) -> None:
        """Release connections (the store may be used again afterwards)."""
        ...


def new_lines(lines: Iterable[CdxLine], indexed_to: int) -> Iterator[CdxLine]:
    """The lines of records at or after ``indexed_to`` (what :meth:`FileAppender.add`
    keeps), streamed."""
    return (x for x in lines if x.offset >= indexed_to)


class _BatchWriter(Protocol):
    def _append(self, name: str, lines: Iterable[CdxLine], end: int, final: bool,
                size: int | None, mtime_ns: int | None) -> tuple[int, int]:  # fmt: skip
        """One batch in one transaction: (lines added, new ``indexed_to``)."""
        ...


class BatchAppender:
    """The :class:`FileAppender` of both stores (made by their ``append_to``): each call
    is one transaction of the store's ``_append``, which re-reads (and locks) the WARC's
    row, so the mark in the database is the truth and this object only caches it."""

    def __init__(self, store: _BatchWriter, name: str, indexed_to: int):
        self.store = store
        self._name = name
        self._mark = indexed_to

    def __repr__(self) -> str:
        return f"BatchAppender({self.store!r}, {self._name!r}, indexed_to={self._mark})"

    @property
    def name(self) -> str:
        return self._name

    @property
    def indexed_to(self) -> int:
        return self._mark

    def add(self, lines: Sequence[CdxLine], end: int) -> int:
        """See :meth:`FileAppender.add`."""
        n, self._mark = self.store._append(self._name, lines, end, False, None, None)
        return n

    def finish(self, lines: Iterable[CdxLine] = (), *, size: int | None = None,
               mtime_ns: int | None = None) -> int:  # fmt: skip
        """See :meth:`FileAppender.finish`."""
        n, self._mark = self.store._append(self._name, lines, self._mark, True, size, mtime_ns)
        return n


# --- the row layout both stores share ------------------------------------------------

#: Columns of a ``captures`` row in the order :func:`capture_row` gives them.
CAPTURE_COLUMNS = (
    "key", "file_id", "seq", "url", "mime", "status", "digest", "length", "offset",
    "redirect", "robotflags", "record_type", "date", "method", "surt", "extra", "dkey",
)  # fmt: skip
#: Columns of ``files`` as :func:`indexed_file` reads them.
FILE_COLUMNS = "name, size, mtime_ns, lines, indexed_at, complete, indexed_to"


def capture_row(line: CdxLine, file_id: int, seq: int) -> tuple[object, ...]:
    """The ``captures`` row of ``line`` (:data:`CAPTURE_COLUMNS`): the key
    ``"urlkey timestamp"``, the line's fields, ``extra`` as JSON (None when empty) and
    the canonical digest ``dkey`` (None for ``-``)."""
    dk = digest_key(line.digest) if line.digest not in ("-", "") else None
    return (
        f"{line.urlkey} {line.timestamp}", file_id, seq, line.url, line.mime, line.status,
        line.digest, line.length, line.offset, line.redirect, line.robotflags,
        line.record_type, line.date, line.method, line.surt,
        json.dumps(line.extra, ensure_ascii=False) if line.extra else None, dk,
    )  # fmt: skip


def line_from_row(r: Sequence[Any]) -> CdxLine:
    """The :class:`CdxLine` of a row selected as ``key, filename, url, mime, status,
    digest, length, offset, redirect, robotflags, record_type, date, method, surt,
    extra`` (further columns are ignored)."""
    urlkey, _, ts = str(r[0]).rpartition(" ")
    return CdxLine(
        urlkey=urlkey, timestamp=ts, url=str(r[2]), mime=str(r[3]), status=str(r[4]),
        digest=str(r[5]), length=int(r[6]), offset=int(r[7]), filename=str(r[1]),
        redirect=str(r[8]), robotflags=str(r[9]), record_type=str(r[10]), date=str(r[11]),
        method=None if r[12] is None else str(r[12]), surt=str(r[13]),
        extra=json.loads(str(r[14])) if r[14] is not None else {},
    )  # fmt: skip


def indexed_file(r: Sequence[Any]) -> IndexedFile:
    """An :class:`IndexedFile` from a row selected as :data:`FILE_COLUMNS`."""
    return IndexedFile(str(r[0]), r[1], r[2], int(r[3]), str(r[4]), bool(r[5]), r[6])


def utc_stamp() -> str:
    """Now, W3C-DTF UTC to the second (``indexed_at``)."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
