"""One SQLite database file used from many threads: a connection per thread (WAL,
``synchronous`` and cache pragmas), the schema created or upgraded once under a write
lock, and write transactions (``BEGIN IMMEDIATE``) whose SQLite errors become
:class:`~webark.index.source.IndexUnavailable`. The index store
(:mod:`webark.index.sqlite_store`) and the search index (:mod:`webark.search.sqlite_fts`)
are built on it.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from webark.index.source import IndexUnavailable

#: ``(connection, version found)`` → create or upgrade the schema to the current
#: version; runs inside ``BEGIN IMMEDIATE`` (``PRAGMA user_version`` is set after it).
SetUp = Callable[[sqlite3.Connection, int], None]


class SqliteDb:
    """Thread-local connections to the SQLite file ``path``.

    Args:
        path: the database file.
        version: the schema version this code writes (``PRAGMA user_version``).
        set_up: creates (found version 0) or upgrades (found versions below
            ``version``) the schema.
        create: with False a missing file raises :class:`IndexUnavailable`.
        timeout: seconds to wait for another writer's lock.
        synchronous: ``OFF``, ``NORMAL``, ``FULL`` (default) or ``EXTRA``.
        cache_kib: page cache per connection, KiB.

    Raises:
        IndexUnavailable: the file cannot be opened, is not SQLite, or has a newer
            schema version.
        ValueError: a bad ``synchronous``.
    """

    def __init__(self, path: str | os.PathLike[str], *, version: int, set_up: SetUp,
                 create: bool = True, timeout: float = 30.0, synchronous: str = "FULL",
                 cache_kib: int = 65536):  # fmt: skip
        self.path = os.fspath(path)
        self.version = version
        self.set_up = set_up
        self.timeout = timeout
        if synchronous.upper() not in ("OFF", "NORMAL", "FULL", "EXTRA"):
            raise ValueError(f"synchronous={synchronous!r}")
        self.synchronous = synchronous.upper()
        self.cache_kib = int(cache_kib)
        self._local = threading.local()
        self._all: list[sqlite3.Connection] = []
        self._lock = threading.Lock()
        if not create and not os.path.exists(self.path):
            raise IndexUnavailable(f"{self.path}: no such database")
        self.conn()  # open now: report a bad database at once

    def conn(self) -> sqlite3.Connection:
        """This thread's connection (opened, and the schema checked, on first use)."""
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
            found = conn.execute("PRAGMA user_version").fetchone()[0]
            if found < self.version:
                self._set_up(conn)
            elif found != self.version:
                conn.close()
                raise IndexUnavailable(f"{self.path}: schema {found} is not supported")
        except sqlite3.Error as exc:
            if conn is not None:
                conn.close()
            raise IndexUnavailable(f"{self.path}: {exc}") from exc
        self._local.conn = conn
        with self._lock:
            self._all.append(conn)
        return conn

    def _set_up(self, conn: sqlite3.Connection) -> None:
        conn.execute("BEGIN IMMEDIATE")
        try:
            found = conn.execute("PRAGMA user_version").fetchone()[0]
            if found < self.version:  # another process may have done it meanwhile
                self.set_up(conn, found)
                conn.execute(f"PRAGMA user_version={self.version}")
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise

    @contextlib.contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """``BEGIN IMMEDIATE`` … ``COMMIT`` on this thread's connection; rolled back on
        any exception (SQLite errors become :class:`IndexUnavailable`)."""
        conn = self.conn()
        try:
            conn.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as exc:
            raise IndexUnavailable(f"{self.path}: {exc}") from exc
        try:
            yield conn
            conn.execute("COMMIT")
        except BaseException as exc:
            with contextlib.suppress(sqlite3.Error):
                conn.execute("ROLLBACK")
            if isinstance(exc, sqlite3.Error):
                raise IndexUnavailable(f"{self.path}: {exc}") from exc
            raise

    def rows(self, sql: str, args: Sequence[object] = (),
             batch: int = 256) -> Iterator[tuple[Any, ...]]:  # fmt: skip
        """The rows of a query, fetched ``batch`` at a time (streaming; consume it in
        this thread). Raises :class:`IndexUnavailable`."""
        try:
            cur = self.conn().execute(sql, args)
        except sqlite3.Error as exc:
            raise IndexUnavailable(f"{self.path}: {exc}") from exc
        try:
            while True:
                try:
                    got = cur.fetchmany(batch)
                except sqlite3.Error as exc:
                    raise IndexUnavailable(f"{self.path}: {exc}") from exc
                if not got:
                    return
                yield from got
        finally:
            with contextlib.suppress(sqlite3.Error):  # closed under an abandoned scan
                cur.close()

    def close(self) -> None:
        """Close every connection (of any thread)."""
        with self._lock:
            for c in self._all:
                c.close()
            self._all.clear()
        self._local = threading.local()
