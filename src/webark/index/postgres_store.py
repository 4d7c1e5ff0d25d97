"""An index store on a PostgreSQL server, shared by several writers (``collection add``
on several machines, crawls and the proxy through :meth:`PostgresStore.append_to`) and
several replay servers: the same interface and answers as
:class:`~webark.index.sqlite_store.SqliteStore` (:class:`~webark.index.store.IndexStore`).

One PostgreSQL *schema* per collection (default ``webark_{name}``, see
:func:`~webark.index.pg_connect.schema_for`), so one database holds many collections::

    meta(key TEXT PRIMARY KEY, value TEXT)     -- schema_version, collection
    files(id BIGSERIAL PRIMARY KEY, name TEXT UNIQUE, size, mtime_ns, lines,
          indexed_at, complete BOOLEAN, indexed_to BIGINT)    -- as in SQLite
    captures(key TEXT COLLATE "C",             -- "urlkey timestamp", byte order
             file_id BIGINT REFERENCES files ON DELETE CASCADE, seq INTEGER,
             url, mime, status, digest, length, "offset", redirect, robotflags,
             record_type, date, method, surt, extra, dkey,
             PRIMARY KEY (key, file_id, seq))
    INDEX captures_by_digest(dkey) WHERE dkey IS NOT NULL, INDEX captures_by_file(file_id)
    locations(name TEXT PRIMARY KEY, locations TEXT[])        -- WARC name → paths/URLs

``COLLATE "C"`` makes the key order byte-wise (the CDX sort order, ``LC_ALL=C``)
whatever the database's locale. Lines are written with ``COPY`` inside one transaction
per WARC (or per batch of a WARC being written); a writer killed with ``-9`` loses its
connection and PostgreSQL rolls its transaction back, so a WARC is indexed completely or
not at all. Two writers adding the same WARC at once: the second waits for the first's
commit on the unique ``files.name`` and gets :class:`~webark.index.store.AlreadyIndexed`.

**Reads** never hold a transaction or a server-side cursor open: a scan reads pages of
rows ordered by the primary key and continues after the last ``(key, file_id, seq)``
it returned (keyset pagination; pages of 64 rows, growing to 4,096), each page one
autocommit statement. A row that exists for the whole scan is returned exactly once;
rows committed during a scan appear if they sort after the page being read. Closest
lookups read one or two small pages, a long scan streams in bounded memory, and any
number of scans can be interleaved on one connection.

Connections: one per thread (autocommit), opened on first use; a connection that failed
(server restart, network) is dropped and the next call opens a new one. Connection
errors are :class:`~webark.index.pg_connect.PostgresUnavailable` (an
:class:`~webark.index.source.IndexUnavailable`: 503 in the resolution API).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

from webark.cdx.line import CdxLine
from webark.index.pg_connect import DuplicateKey, PgDb, PostgresUnavailable, redact
from webark.index.source import KeyRange, digest_key, in_time
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

__all__ = ["PostgresStore"]

SCHEMA_VERSION = 1

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS files (
    id BIGSERIAL PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    size BIGINT,
    mtime_ns BIGINT,
    lines BIGINT NOT NULL,
    indexed_at TEXT NOT NULL,
    complete BOOLEAN NOT NULL DEFAULT TRUE,
    indexed_to BIGINT
);
CREATE TABLE IF NOT EXISTS captures (
    key TEXT COLLATE "C" NOT NULL,
    file_id BIGINT NOT NULL REFERENCES files (id) ON DELETE CASCADE,
    seq INTEGER NOT NULL,
    url TEXT NOT NULL,
    mime TEXT NOT NULL,
    status TEXT NOT NULL,
    digest TEXT NOT NULL,
    length BIGINT NOT NULL,
    "offset" BIGINT NOT NULL,
    redirect TEXT NOT NULL,
    robotflags TEXT NOT NULL,
    record_type TEXT NOT NULL,
    date TEXT NOT NULL,
    method TEXT,
    surt TEXT NOT NULL,
    extra TEXT,
    dkey TEXT,
    PRIMARY KEY (key, file_id, seq)
);
CREATE INDEX IF NOT EXISTS captures_by_digest ON captures (dkey) WHERE dkey IS NOT NULL;
CREATE INDEX IF NOT EXISTS captures_by_file ON captures (file_id);
CREATE TABLE IF NOT EXISTS locations (name TEXT PRIMARY KEY, locations TEXT[] NOT NULL)
"""

_COLS = (
    'c.key, f.name, c.url, c.mime, c.status, c.digest, c.length, c."offset", c.redirect, '
    "c.robotflags, c.record_type, c.date, c.method, c.surt, c.extra, c.file_id, c.seq"
)
_COPY = (
    'COPY captures (key, file_id, seq, url, mime, status, digest, length, "offset", '
    "redirect, robotflags, record_type, date, method, surt, extra, dkey) FROM STDIN"
)
#: Rows of the first page of a scan, and the largest page (pages grow 4× each time).
FIRST_PAGE, MAX_PAGE = 64, 4096


class PostgresStore:
    """A CDX index in one PostgreSQL schema (module docstring); an
    :class:`~webark.index.store.IndexStore` and a WARC location
    :class:`~webark.index.locations.Locator`.

    Args:
        url: libpq URL of the database, without a password
            (:func:`~webark.index.pg_connect.check_url`).
        schema: the collection's schema (lowercase identifier).
        collection: the collection's name, recorded in ``meta`` when the schema is
            created and checked on every open (two collections cannot share a schema by
            mistake); None: not checked.
        create: create the schema and tables if missing; with False a missing schema
            is :class:`PostgresUnavailable` (a query front-end must not create stores).
        timeout: seconds to wait when connecting.

    Raises:
        PostgresUnavailable: psycopg missing, server unreachable, the schema missing
            (``create=False``), of another collection, or of a newer version.
        PostgresConfigError: a bad URL or schema name.
    """

    def __init__(self, url: str, schema: str, *, collection: str | None = None,
                 create: bool = True, timeout: float = 10.0):  # fmt: skip
        self.db = PgDb(url, schema, timeout=timeout)
        self.url, self.schema = self.db.url, self.db.schema
        self.collection = collection
        self._set_up(create)

    def __repr__(self) -> str:
        return f"PostgresStore({redact(self.url)!r}, {self.schema!r})"

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[Any]:
        """:meth:`PgDb.transaction`, a unique violation (a concurrent writer indexed
        the same WARC first) made :class:`AlreadyIndexed`."""
        try:
            with self.db.transaction() as cur:
                yield cur
        except DuplicateKey as exc:
            raise AlreadyIndexed(str(exc)) from exc

    def _set_up(self, create: bool) -> None:
        with self._transaction() as cur:
            cur.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", ("webark:" + self.schema,))
            cur.execute("SELECT 1 FROM pg_namespace WHERE nspname = %s", (self.schema,))
            exists = cur.fetchone() is not None
            if not exists and not create:
                raise PostgresUnavailable(
                    f"PostgreSQL {redact(self.url)}: no index schema {self.schema!r}"
                )
            if not exists:
                cur.execute(f"CREATE SCHEMA {self.schema}")
            for stmt in _SCHEMA.split(";"):
                cur.execute(stmt)
            cur.execute("SELECT key, value FROM meta")
            meta = dict(cur.fetchall())
            if not meta:
                cur.execute("INSERT INTO meta VALUES ('schema_version', %s), ('collection', %s)",
                            (str(SCHEMA_VERSION), self.collection or ""))  # fmt: skip
                meta = {"schema_version": str(SCHEMA_VERSION), "collection": self.collection}
        if meta.get("schema_version") != str(SCHEMA_VERSION):
            raise PostgresUnavailable(
                f"{self.schema}: index schema {meta.get('schema_version')} is not supported"
            )
        owner = meta.get("collection") or ""
        if self.collection is not None and owner and owner != self.collection:
            raise PostgresUnavailable(
                f"PostgreSQL schema {self.schema!r} holds collection {owner!r}, not "
                f"{self.collection!r}: set [index] schema in collection.toml"
            )

    def close(self) -> None:
        """Close every connection this store opened (in any thread)."""
        self.db.close()

    def __enter__(self) -> PostgresStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- writing -----------------------------------------------------------------------

    def add_file(self, name: str, lines: Iterable[CdxLine], *, size: int | None = None,
                 mtime_ns: int | None = None, replace: bool = False,
                 on_line: Callable[[CdxLine], None] | None = None) -> int:  # fmt: skip
        """Index one WARC in one transaction (:meth:`SqliteStore.add_file
        <webark.index.sqlite_store.SqliteStore.add_file>`; lines go in with ``COPY``).

        Raises:
            AlreadyIndexed: ``name`` is indexed (also by a concurrent writer that
                committed first) and ``replace`` is False.
            PostgresUnavailable: the server cannot be written.
            Exception: whatever iterating ``lines`` raises (nothing is recorded).
        """
        with self._transaction() as cur:
            cur.execute("SELECT id FROM files WHERE name = %s FOR UPDATE", (name,))
            old = cur.fetchone()
            if old is not None:
                if not replace:
                    raise AlreadyIndexed(name)
                cur.execute("DELETE FROM files WHERE id = %s", (old[0],))
            cur.execute(
                "INSERT INTO files (name, size, mtime_ns, lines, indexed_at) "
                "VALUES (%s, %s, %s, 0, %s) RETURNING id", (name, size, mtime_ns, utc_stamp()),
            )  # fmt: skip
            file_id = cur.fetchone()[0]
            n = self._copy(cur, lines, file_id, 0, on_line)
            cur.execute("UPDATE files SET lines = %s WHERE id = %s", (n, file_id))
            return n

    @staticmethod
    def _copy(cur: Any, lines: Iterable[CdxLine], file_id: int, seq: int,
              on_line: Callable[[CdxLine], None] | None = None) -> int:  # fmt: skip
        n = 0
        with cur.copy(_COPY) as copy:
            for line in lines:
                copy.write_row(capture_row(line, file_id, seq + n))
                n += 1
                if on_line is not None:
                    on_line(line)
        return n

    def append_to(self, name: str) -> BatchAppender:
        """See :meth:`webark.index.store.IndexStore.append_to`.

        Raises:
            AlreadyIndexed: ``name`` is indexed and complete.
            PostgresUnavailable: the server cannot be written.
        """
        with self._transaction() as cur:
            cur.execute(
                "INSERT INTO files (name, lines, indexed_at, complete, indexed_to) "
                "VALUES (%s, 0, %s, FALSE, 0) ON CONFLICT (name) DO NOTHING", (name, utc_stamp()),
            )  # fmt: skip
            cur.execute("SELECT complete, indexed_to FROM files WHERE name = %s", (name,))
            complete, mark = cur.fetchone()
        if complete:
            raise AlreadyIndexed(name)
        return BatchAppender(self, name, int(mark or 0))

    def _append(self, name: str, lines: Iterable[CdxLine], end: int, final: bool,
                size: int | None, mtime_ns: int | None) -> tuple[int, int]:  # fmt: skip
        """One batch of :class:`PostgresAppender`: (lines added, new ``indexed_to``)."""
        with self._transaction() as cur:
            cur.execute("SELECT id, lines, indexed_to, complete FROM files WHERE name = %s "
                        "FOR UPDATE", (name,))  # fmt: skip
            row = cur.fetchone()
            if row is None or row[3]:
                raise AlreadyIndexed(f"{name}: not being appended to (removed or complete)")
            file_id, seq, mark = row[0], int(row[1]), int(row[2] or 0)
            n = self._copy(cur, new_lines(lines, mark), file_id, seq)
            mark = max(mark, end)
            cur.execute(
                "UPDATE files SET lines = lines + %s, indexed_at = %s, indexed_to = %s, "
                "complete = %s, size = coalesce(%s, size), mtime_ns = coalesce(%s, mtime_ns) "
                "WHERE id = %s",
                (n, utc_stamp(), None if final else mark, final, size, mtime_ns, file_id),
            )
            return n, mark

    def remove_file(self, name: str) -> int:
        """Drop WARC ``name``'s lines and ``files`` row in one transaction; the lines
        dropped (0 when it was not indexed)."""
        with self._transaction() as cur:
            cur.execute("SELECT id FROM files WHERE name = %s FOR UPDATE", (name,))
            row = cur.fetchone()
            if row is None:
                return 0
            cur.execute("DELETE FROM captures WHERE file_id = %s", (row[0],))
            n = int(cur.rowcount)
            cur.execute("DELETE FROM files WHERE id = %s", (row[0],))
            return n

    # -- WARC locations ------------------------------------------------------------------

    def locate(self, filename: str) -> list[str]:
        """Locations recorded for WARC ``filename`` (a
        :class:`~webark.index.locations.Locator`); [] if none."""
        rows = self._fetch("SELECT locations FROM locations WHERE name = %s", (filename,))
        return list(rows[0][0]) if rows else []

    def set_locations(self, filename: str, locations: Sequence[str]) -> None:
        """Record where WARC ``filename`` is (replaces earlier locations); an empty list
        forgets it."""
        with self._transaction() as cur:
            if locations:
                cur.execute(
                    "INSERT INTO locations VALUES (%s, %s) ON CONFLICT (name) "
                    "DO UPDATE SET locations = excluded.locations", (filename, list(locations)),
                )  # fmt: skip
            else:
                cur.execute("DELETE FROM locations WHERE name = %s", (filename,))

    # -- reading -----------------------------------------------------------------------

    def _fetch(self, sql: str, args: Sequence[object]) -> list[Any]:
        return self.db.fetch(sql, args)

    def files(self) -> list[IndexedFile]:
        """Every WARC recorded, by name (byte order)."""
        rows = self._fetch(f'SELECT {FILE_COLUMNS} FROM files ORDER BY name COLLATE "C"', ())
        return [indexed_file(r) for r in rows]

    def get_file(self, name: str) -> IndexedFile | None:
        """The :class:`IndexedFile` of ``name``, None when it is not recorded."""
        rows = self._fetch(f"SELECT {FILE_COLUMNS} FROM files WHERE name = %s", (name,))
        return indexed_file(rows[0]) if rows else None

    def count(self) -> int:
        """Number of index lines (a full count)."""
        return int(self._fetch("SELECT count(*) FROM captures", ())[0][0])

    def scan(self, rng: KeyRange, reverse: bool = False) -> Iterator[CdxLine]:
        """See :meth:`webark.index.source.IndexSource.scan` (keyset pages, module
        docstring); ``from_ts``/``to_ts`` are applied to the rows of the range."""
        where = "c.key >= %s"
        args: list[object] = [rng.start]
        if rng.end is not None:
            where += " AND c.key < %s"
            args.append(rng.end)
        if rng.from_ts is None and rng.to_ts is None:
            yield from self._pages(where, args, reverse)
            return
        for line in self._pages(where, args, reverse):
            if in_time(rng, line.timestamp):
                yield line

    def by_digest(self, digest: str) -> Iterator[CdxLine]:
        """See :meth:`webark.index.source.IndexSource.by_digest` (the
        ``captures_by_digest`` index, in pages as :meth:`scan`)."""
        return self._pages("c.dkey = %s", [digest_key(digest)], False)

    def _pages(self, where: str, args: list[object], reverse: bool) -> Iterator[CdxLine]:
        """Lines matching ``where`` in primary-key order, page by page (module
        docstring)."""
        order, after = ("DESC", "<") if reverse else ("ASC", ">")
        select = f"SELECT {_COLS} FROM captures c JOIN files f ON f.id = c.file_id WHERE "
        tail = f" ORDER BY c.key {order}, c.file_id {order}, c.seq {order} LIMIT %s"
        resume = f"{where} AND (c.key, c.file_id, c.seq) {after} (%s, %s, %s)"
        last: list[object] = []
        page = FIRST_PAGE
        while True:
            sql = select + (resume if last else where) + tail
            rows = self._fetch(sql, [*args, *last, page])
            for r in rows:
                yield line_from_row(r)
            if len(rows) < page:
                return
            last = [rows[-1][0], rows[-1][15], rows[-1][16]]
            page = min(page * 4, MAX_PAGE)

