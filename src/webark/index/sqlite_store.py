"""The default index store: one SQLite database (WAL), updated incrementally, one WARC at a
time, crash-safe.

Schema (``PRAGMA user_version = 1``)::

    files(id INTEGER PRIMARY KEY, name TEXT UNIQUE,   -- WARC file name as in the CDX
          size INTEGER, mtime_ns INTEGER,             -- of the WARC when indexed (or NULL)
          lines INTEGER, indexed_at TEXT)             -- W3C-DTF, UTC
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
completely indexed or not at all. Readers in other threads or processes keep reading
their snapshot while a WARC is being added (WAL).
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime

from webark.cdx.line import CdxLine
from webark.core.errors import StorageError
from webark.index.source import IndexUnavailable, KeyRange, digest_key, in_time

SCHEMA_VERSION = 1

_SCHEMA = """
CREATE TABLE IF NOT EXISTS files (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    size INTEGER,
    mtime_ns INTEGER,
    lines INTEGER NOT NULL,
    indexed_at TEXT NOT NULL
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

_COLS = (
    "c.key, f.name, c.url, c.mime, c.status, c.digest, c.length, c.offset, c.redirect, "
    "c.robotflags, c.record_type, c.date, c.method, c.surt, c.extra"
)
_INSERT = (
    "INSERT INTO captures (key, file_id, seq, url, mime, status, digest, length, offset, "
    "redirect, robotflags, record_type, date, method, surt, extra, dkey) "
    "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)"
)


class AlreadyIndexed(StorageError):
    """:meth:`SqliteStore.add_file` of a file name that is already indexed (pass
    ``replace=True`` to re-index it)."""


@dataclass(frozen=True, slots=True)
class IndexedFile:
    """A WARC recorded as indexed: name (as in the CDX lines), size in bytes and
    modification time (ns since the epoch) when it was indexed (None if not given),
    number of index lines, and when it was indexed (W3C-DTF, UTC)."""

    name: str
    size: int | None
    mtime_ns: int | None
    lines: int
    indexed_at: str


def _row_to_line(r: tuple[object, ...]) -> CdxLine:
    key = str(r[0])
    urlkey, _, ts = key.rpartition(" ")
    extra = json.loads(str(r[14])) if r[14] is not None else {}
    return CdxLine(
        urlkey=urlkey,
        timestamp=ts,
        url=str(r[2]),
        mime=str(r[3]),
        status=str(r[4]),
        digest=str(r[5]),
        length=int(r[6]),  # type: ignore[call-overload]
        offset=int(r[7]),  # type: ignore[call-overload]
        filename=str(r[1]),
        redirect=str(r[8]),
        robotflags=str(r[9]),
        record_type=str(r[10]),
        date=str(r[11]),
        method=None if r[12] is None else str(r[12]),
        surt=str(r[13]),
        extra=extra,
    )


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
        self.timeout = timeout
        if synchronous.upper() not in ("OFF", "NORMAL", "FULL", "EXTRA"):
            raise ValueError(f"synchronous={synchronous!r}")
        self.synchronous = synchronous.upper()
        self.cache_kib = int(cache_kib)
        self._local = threading.local()
        self._all: list[sqlite3.Connection] = []
        self._lock = threading.Lock()
        if not create and not os.path.exists(self.path):
            raise IndexUnavailable(f"{self.path}: no such index database")
        self._conn()  # open now: report a bad database at once

    def __repr__(self) -> str:
        return f"SqliteStore({self.path!r})"

    # -- connections -------------------------------------------------------------------

    def _conn(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is not None:
            return conn
        try:
            # each connection is used by its own thread only; close() may run elsewhere
            conn = sqlite3.connect(
                self.path, timeout=self.timeout, isolation_level=None, check_same_thread=False
            )
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute(f"PRAGMA synchronous={self.synchronous}")
            conn.execute(f"PRAGMA cache_size=-{self.cache_kib}")
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            if version == 0:
                conn.execute("BEGIN IMMEDIATE")
                try:
                    if conn.execute("PRAGMA user_version").fetchone()[0] == 0:
                        for stmt in _SCHEMA.split(";"):
                            if stmt.strip():
                                conn.execute(stmt)
                        conn.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
                    conn.execute("COMMIT")
                except BaseException:
                    conn.execute("ROLLBACK")
                    raise
            elif version != SCHEMA_VERSION:
                conn.close()
                raise IndexUnavailable(f"{self.path}: index schema {version} is not supported")
        except sqlite3.Error as exc:
            if conn is not None:
                conn.close()
            raise IndexUnavailable(f"{self.path}: {exc}") from exc
        self._local.conn = conn
        with self._lock:
            self._all.append(conn)
        return conn

    def close(self) -> None:
        """Close every connection this store opened (in any thread)."""
        with self._lock:
            for c in self._all:
                c.close()
            self._all.clear()
        self._local = threading.local()

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
        conn = self._conn()
        try:
            conn.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as exc:
            raise IndexUnavailable(f"{self.path}: {exc}") from exc
        try:
            old = conn.execute("SELECT id FROM files WHERE name = ?", (name,)).fetchone()
            if old is not None:
                if not replace:
                    raise AlreadyIndexed(name)
                conn.execute("DELETE FROM captures WHERE file_id = ?", (old[0],))
                conn.execute("DELETE FROM files WHERE id = ?", (old[0],))
            now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
            cur = conn.execute(
                "INSERT INTO files (name, size, mtime_ns, lines, indexed_at) VALUES (?,?,?,0,?)",
                (name, size, mtime_ns, now),
            )
            file_id = cur.lastrowid
            count = 0

            def rows() -> Iterator[tuple[object, ...]]:
                nonlocal count
                for line in lines:
                    dk = digest_key(line.digest) if line.digest not in ("-", "") else None
                    yield (
                        f"{line.urlkey} {line.timestamp}",
                        file_id,
                        count,
                        line.url,
                        line.mime,
                        line.status,
                        line.digest,
                        line.length,
                        line.offset,
                        line.redirect,
                        line.robotflags,
                        line.record_type,
                        line.date,
                        line.method,
                        line.surt,
                        json.dumps(line.extra, ensure_ascii=False) if line.extra else None,
                        dk,
                    )
                    count += 1
                    if on_line is not None:
                        on_line(line)

            conn.executemany(_INSERT, rows())
            conn.execute("UPDATE files SET lines = ? WHERE id = ?", (count, file_id))
            conn.execute("COMMIT")
            return count
        except BaseException as exc:
            with contextlib.suppress(sqlite3.Error):
                conn.execute("ROLLBACK")
            if isinstance(exc, sqlite3.Error):
                raise IndexUnavailable(f"{self.path}: {exc}") from exc
            raise

    def remove_file(self, name: str) -> int:
        """Drop every line of WARC ``name`` and its ``files`` row, in one transaction.

        Returns:
            The number of lines removed (0 when ``name`` was not indexed).

        Raises:
            IndexUnavailable: the database cannot be written.
        """
        conn = self._conn()
        try:
            conn.execute("BEGIN IMMEDIATE")
            try:
                row = conn.execute("SELECT id FROM files WHERE name = ?", (name,)).fetchone()
                n = 0
                if row is not None:
                    n = conn.execute("DELETE FROM captures WHERE file_id = ?", (row[0],)).rowcount
                    conn.execute("DELETE FROM files WHERE id = ?", (row[0],))
                conn.execute("COMMIT")
                return n
            except BaseException:
                conn.execute("ROLLBACK")
                raise
        except sqlite3.Error as exc:
            raise IndexUnavailable(f"{self.path}: {exc}") from exc

    # -- reading -----------------------------------------------------------------------

    def files(self) -> list[IndexedFile]:
        """Every indexed WARC, by name. Raises :class:`IndexUnavailable`."""
        sql = "SELECT name, size, mtime_ns, lines, indexed_at FROM files ORDER BY name"
        try:
            return [IndexedFile(*r) for r in self._conn().execute(sql)]
        except sqlite3.Error as exc:
            raise IndexUnavailable(f"{self.path}: {exc}") from exc

    def get_file(self, name: str) -> IndexedFile | None:
        """The :class:`IndexedFile` of ``name``, None when it is not indexed."""
        sql = "SELECT name, size, mtime_ns, lines, indexed_at FROM files WHERE name = ?"
        try:
            row = self._conn().execute(sql, (name,)).fetchone()
        except sqlite3.Error as exc:
            raise IndexUnavailable(f"{self.path}: {exc}") from exc
        return IndexedFile(*row) if row is not None else None

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
        try:
            cur = self._conn().execute(sql, args)
        except sqlite3.Error as exc:
            raise IndexUnavailable(f"{self.path}: {exc}") from exc
        try:
            while True:
                try:
                    rows = cur.fetchmany(256)
                except sqlite3.Error as exc:
                    raise IndexUnavailable(f"{self.path}: {exc}") from exc
                if not rows:
                    return
                for r in rows:
                    yield _row_to_line(r)
        finally:
            cur.close()
