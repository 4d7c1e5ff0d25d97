"""The default index store: one SQLite database (WAL), updated incrementally, one WARC at a
time (or batch by batch while a WARC is written), crash-safe.

Schema (``PRAGMA user_version = 2``; a version-1 database is upgraded in place)::

    files(id INTEGER PRIMARY KEY, name TEXT UNIQUE,   -- WARC file name as in the CDX
          size INTEGER, mtime_ns INTEGER,             -- of the WARC when indexed (or NULL)
          lines INTEGER, indexed_at TEXT,             -- W3C-DTF, UTC
          complete INTEGER,                           -- 0 while appended to (v2)
          indexed_to INTEGER)                         -- offset indexed up to, if not complete
    captures(key TEXT,        -- "urlkey timestamp": the CDX sort key, one row per line
             file_id INTEGER, seq INTEGER,            -- file and line number in its index
             url, mime, status, digest, length, offset, redirect, robotflags,
             record_type, date, method, surt, extra,  -- the CdxLine fields (extra: JSON)
             dkey TEXT,       -- canonical payload digest (sha1:BASE32) for by_digest
             PRIMARY KEY (key, file_id, seq)) WITHOUT ROWID
    INDEX captures_by_digest(dkey), INDEX captures_by_file(file_id)

``captures`` is clustered on ``key`` (a WITHOUT ROWID table is its primary-key B-tree), so a
range query is one B-tree descent plus a sequential walk over the matching rows, in CDX
order (ties in ``"urlkey timestamp"`` by file, then by line order within the file). The
file name is stored once, in ``files``; rows refer to it by id (the "filename → file
id" of OutbackCDX-like stores).

Crash safety: :meth:`SqliteStore.add_file` inserts all lines of one WARC *and* its
``files`` row in one transaction, :meth:`SqliteStore.remove_file` deletes both in one
transaction; after ``kill -9`` (or a power loss: ``synchronous=FULL``) a WARC is either
completely indexed or not at all. :meth:`SqliteStore.append_to` adds a WARC being
written batch by batch (:mod:`webark.index.store`), each batch with its ``indexed_to``
mark in one transaction. Readers in other threads or processes keep reading their
snapshot while a WARC is being added (WAL).
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from collections.abc import Callable, Iterable, Iterator

from webark.cdx.line import CdxLine
from webark.index.source import IndexUnavailable, KeyRange, digest_key, in_time
from webark.index.sqlite_db import SqliteDb
from webark.index.store import (
    FILE_COLUMNS,
    AlreadyIndexed,
    BatchAppender,
    IndexedFile,
    capture_row,
    indexed_file,
    line_from_row,
    new_lines,
    utc_stamp,
)

__all__ = ["AlreadyIndexed", "IndexedFile", "SqliteStore"]

SCHEMA_VERSION = 2

_SCHEMA = """
CREATE TABLE IF NOT EXISTS files (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    size INTEGER,
    mtime_ns INTEGER,
    lines INTEGER NOT NULL,
    indexed_at TEXT NOT NULL,
    complete INTEGER NOT NULL DEFAULT 1,
    indexed_to INTEGER
);
CREATE TABLE IF NOT EXISTS captures (
    key TEXT NOT NULL,
    file_id INTEGER NOT NULL,
    seq INTEGER NOT NULL,
    url TEXT NOT NULL,
    mime TEXT NOT NULL,
    status TEXT NOT NULL,
    digest TEXT NOT NULL,
    length INTEGER NOT NULL,
    offset INTEGER NOT NULL,
    redirect TEXT NOT NULL,
    robotflags TEXT NOT NULL,
    record_type TEXT NOT NULL,
    date TEXT NOT NULL,
    method TEXT,
    surt TEXT NOT NULL,
    extra TEXT,
    dkey TEXT,
    PRIMARY KEY (key, file_id, seq)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS captures_by_digest ON captures(dkey) WHERE dkey IS NOT NULL;
CREATE INDEX IF NOT EXISTS captures_by_file ON captures(file_id);
"""
#: Version 1 → 2: WARCs appended to while written (:mod:`webark.index.store`).
_UPGRADE_1 = (
    "ALTER TABLE files ADD COLUMN complete INTEGER NOT NULL DEFAULT 1",
    "ALTER TABLE files ADD COLUMN indexed_to INTEGER",
)

_COLS = (
    "c.key, f.name, c.url, c.mime, c.status, c.digest, c.length, c.offset, c.redirect, "
    "c.robotflags, c.record_type, c.date, c.method, c.surt, c.extra"
)
_INSERT = (
    "INSERT INTO captures (key, file_id, seq, url, mime, status, digest, length, offset, "
    "redirect, robotflags, record_type, date, method, surt, extra, dkey) "
    "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)"
)


def _rows(
    lines: Iterable[CdxLine], file_id: int, seq: int,
    on_line: Callable[[CdxLine], None] | None = None,
) -> Iterator[tuple[object, ...]]:  # fmt: skip
    """The ``captures`` rows of ``lines`` (numbered from ``seq``)."""
    for line in lines:
        yield capture_row(line, file_id, seq)
        seq += 1
        if on_line is not None:
            on_line(line)


def _set_up(conn: sqlite3.Connection, found: int) -> None:
    """Create the schema (a new file) or upgrade version 1."""
    if found == 0:
        for stmt in _SCHEMA.split(";"):
            if stmt.strip():
                conn.execute(stmt)
    elif found == 1:
        for stmt in _UPGRADE_1:
            conn.execute(stmt)


class SqliteStore:
    """A CDX index in one SQLite file; an :class:`~webark.index.source.IndexSource`.

    Args:
        path: database file (created with its schema unless ``create=False``).
        create: create a missing database; with False a missing file raises
            :class:`IndexUnavailable` (a query front-end must not create empty stores).
        timeout: seconds to wait for a lock held by another writer.
        synchronous: SQLite ``synchronous`` pragma: ``FULL`` (default; a commit survives a
            power loss) or ``NORMAL`` (survives ``kill -9``, not a power loss; faster
            for many small WARCs).
        cache_kib: page cache per connection in KiB (SQLite ``cache_size``; the
            digest index is updated in random order, so a bulk add wants a big cache).

    One connection per thread (SQLite connections are not shared between threads);
    iterators returned by :meth:`scan` must be consumed in the thread that made them.

    Raises:
        IndexUnavailable: the database cannot be opened, is not a webark index or has a
            newer schema.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        create: bool = True,
        timeout: float = 30.0,
        synchronous: str = "FULL",
        cache_kib: int = 65536,
    ):
        self.path = os.fspath(path)
        self.db = SqliteDb(path, version=SCHEMA_VERSION, set_up=_set_up, create=create,
                           timeout=timeout, synchronous=synchronous,
                           cache_kib=cache_kib)  # fmt: skip

    def __repr__(self) -> str:
        return f"SqliteStore({self.path!r})"

    def _conn(self) -> sqlite3.Connection:
        return self.db.conn()

    def _transaction(self) -> contextlib.AbstractContextManager[sqlite3.Connection]:
        return self.db.transaction()

    def close(self) -> None:
        """Close every connection this store opened (in any thread)."""
        self.db.close()

    def __enter__(self) -> SqliteStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- writing -----------------------------------------------------------------------

    def add_file(
        self,
        name: str,
        lines: Iterable[CdxLine],
        *,
        size: int | None = None,
        mtime_ns: int | None = None,
        replace: bool = False,
        on_line: Callable[[CdxLine], None] | None = None,
    ) -> int:
        """Index one WARC: insert ``lines`` and record ``name`` as indexed, in one
        transaction (all or nothing, also across ``kill -9``).

        Args:
            name: the WARC's file name; every line is stored with this ``filename``.
            lines: its CDX lines, any order (streamed: memory does not grow with them).
            size, mtime_ns: the WARC's size (bytes) and mtime (ns), kept in ``files``.
            replace: re-index a file that is already indexed (old lines are dropped in
                the same transaction).
            on_line: called after each line is inserted (progress reporting).

        Returns:
            The number of lines inserted.

        Raises:
            AlreadyIndexed: ``name`` is indexed and ``replace`` is False.
            IndexUnavailable: the database cannot be written (locked beyond the timeout,
                disk full, corrupt).
            Exception: whatever iterating ``lines`` raises (the transaction is rolled
                back, nothing is recorded).
        """
        with self._transaction() as conn:
            old = conn.execute("SELECT id, complete FROM files WHERE name = ?", (name,)).fetchone()
            if old is not None:
                if not replace:
                    raise AlreadyIndexed(name)
                conn.execute("DELETE FROM captures WHERE file_id = ?", (old[0],))
                conn.execute("DELETE FROM files WHERE id = ?", (old[0],))
            cur = conn.execute(
                "INSERT INTO files (name, size, mtime_ns, lines, indexed_at) VALUES (?,?,?,0,?)",
                (name, size, mtime_ns, utc_stamp()),
            )
            file_id = int(cur.lastrowid or 0)
            count = 0

            def counted(line: CdxLine) -> None:
                nonlocal count
                count += 1
                if on_line is not None:
                    on_line(line)

            conn.executemany(_INSERT, _rows(lines, file_id, 0, counted))
            conn.execute("UPDATE files SET lines = ? WHERE id = ?", (count, file_id))
            return count

    def append_to(self, name: str) -> BatchAppender:
        """See :meth:`webark.index.store.IndexStore.append_to`: the ``files`` row of
        ``name`` is created incomplete (``indexed_to`` 0) or, after a crash, resumed.

        Raises:
            AlreadyIndexed: ``name`` is indexed and complete.
            IndexUnavailable: the database cannot be written.
        """
        with self._transaction() as conn:
            row = conn.execute(
                "SELECT complete, indexed_to FROM files WHERE name = ?", (name,)
            ).fetchone()
            if row is None:
                conn.execute(
                    "INSERT INTO files (name, lines, indexed_at, complete, indexed_to) "
                    "VALUES (?, 0, ?, 0, 0)", (name, utc_stamp()),
                )  # fmt: skip
                return BatchAppender(self, name, 0)
            if row[0]:
                raise AlreadyIndexed(name)
            return BatchAppender(self, name, int(row[1] or 0))

    def _append(self, name: str, lines: Iterable[CdxLine], end: int, final: bool,
                size: int | None, mtime_ns: int | None) -> tuple[int, int]:  # fmt: skip
        """One batch of :class:`SqliteAppender`: (lines added, new ``indexed_to``)."""
        with self._transaction() as conn:
            row = conn.execute(
                "SELECT id, lines, indexed_to, complete FROM files WHERE name = ?", (name,)
            ).fetchone()
            if row is None or row[3]:
                raise AlreadyIndexed(f"{name}: not being appended to (removed or complete)")
            file_id, seq, mark = int(row[0]), int(row[1]), int(row[2] or 0)
            added = 0

            def count(_line: CdxLine) -> None:
                nonlocal added
                added += 1

            conn.executemany(_INSERT, _rows(new_lines(lines, mark), file_id, seq, count))
            mark = max(mark, end)
            conn.execute(
                "UPDATE files SET lines = lines + ?, indexed_at = ?, indexed_to = ?, "
                "complete = ?, size = coalesce(?, size), mtime_ns = coalesce(?, mtime_ns) "
                "WHERE id = ?",
                (added, utc_stamp(), None if final else mark, int(final), size, mtime_ns, file_id),
            )
            return added, mark

    def remove_file(self, name: str) -> int:
        """Drop every line of WARC ``name`` and its ``files`` row, in one transaction.

        Returns:
            The number of lines removed (0 when ``name`` was not indexed).

        Raises:
            IndexUnavailable: the database cannot be written.
        """
        with self._transaction() as conn:
            row = conn.execute("SELECT id FROM files WHERE name = ?", (name,)).fetchone()
            if row is None:
                return 0
            n = conn.execute("DELETE FROM captures WHERE file_id = ?", (row[0],)).rowcount
            conn.execute("DELETE FROM files WHERE id = ?", (row[0],))
            return int(n)

    # -- reading -----------------------------------------------------------------------

    def files(self) -> list[IndexedFile]:
        """Every indexed WARC, by name. Raises :class:`IndexUnavailable`."""
        sql = f"SELECT {FILE_COLUMNS} FROM files ORDER BY name"
        try:
            return [indexed_file(r) for r in self._conn().execute(sql)]
        except sqlite3.Error as exc:
            raise IndexUnavailable(f"{self.path}: {exc}") from exc

    def get_file(self, name: str) -> IndexedFile | None:
        """The :class:`IndexedFile` of ``name``, None when it is not indexed."""
        sql = f"SELECT {FILE_COLUMNS} FROM files WHERE name = ?"
        try:
            row = self._conn().execute(sql, (name,)).fetchone()
        except sqlite3.Error as exc:
            raise IndexUnavailable(f"{self.path}: {exc}") from exc
        return indexed_file(row) if row is not None else None

    def count(self) -> int:
        """Number of index lines (a full count: O(rows))."""
        try:
            return int(self._conn().execute("SELECT count(*) FROM captures").fetchone()[0])
        except sqlite3.Error as exc:
            raise IndexUnavailable(f"{self.path}: {exc}") from exc

    def scan(self, rng: KeyRange, reverse: bool = False) -> Iterator[CdxLine]:
        """See :meth:`IndexSource.scan`: one range scan of the ``captures`` primary key;
        ``from_ts``/``to_ts`` are applied to the rows of that range."""
        order = "DESC" if reverse else "ASC"
        where = "c.key >= ?"
        args: list[str] = [rng.start]
        if rng.end is not None:
            where += " AND c.key < ?"
            args.append(rng.end)
        sql = (
            f"SELECT {_COLS} FROM captures c JOIN files f ON f.id = c.file_id "
            f"WHERE {where} ORDER BY c.key {order}, c.file_id {order}, c.seq {order}"
        )
        timed = rng.from_ts is not None or rng.to_ts is not None
        for line in self._query(sql, args):
            if not timed or in_time(rng, line.timestamp):
                yield line

    def by_digest(self, digest: str) -> Iterator[CdxLine]:
        """See :meth:`IndexSource.by_digest` (uses the ``captures_by_digest`` index)."""
        sql = (
            f"SELECT {_COLS} FROM captures c JOIN files f ON f.id = c.file_id "
            "WHERE c.dkey = ? ORDER BY c.key, c.file_id, c.seq"
        )
        yield from self._query(sql, [digest_key(digest)])

    def _query(self, sql: str, args: list[str]) -> Iterator[CdxLine]:
        for r in self.db.rows(sql, args):
            yield line_from_row(r)
