"""The frontier's SQLite persistence: the schema, URI states, seen-filter fingerprints,
and opening a database with crash recovery.

Used by :class:`webark.crawl.frontier.Frontier` (its module describes the behaviour and
the "Persistence and crashes" rules): one database in WAL mode, one connection, every
change one ``BEGIN IMMEDIATE`` transaction. :func:`open_store` puts the URIs a crash left
in flight back at the head of their queues.
"""

from __future__ import annotations

import enum
import hashlib
import sqlite3
from pathlib import Path

from webark.core.errors import WebarkError
from webark.crawl.politeness import Clock, FrontierConfig
from webark.crawl.sqlite_schema import create_schema
from webark.url import InvalidURLError, normalize

__all__ = [
    "FINISHED",
    "IN_FLIGHT",
    "QUEUED",
    "READY",
    "SCHEMA",
    "SCHEMA_VERSION",
    "FrontierError",
    "UriState",
    "fingerprint",
    "open_store",
]


class UriState(enum.IntEnum):
    """The state of a URI in the frontier (the ``uris.state`` column)."""

    QUEUED = 0
    """Waiting in its queue."""
    IN_FLIGHT = 1
    """Handed out by :meth:`Frontier.next_ready`, not yet finished (put back on open)."""
    FINISHED = 2
    """Done for good (its final status is kept; the seen filter remembers it)."""


QUEUED, IN_FLIGHT, FINISHED = UriState.QUEUED, UriState.IN_FLIGHT, UriState.FINISHED
SCHEMA_VERSION = 1


class FrontierError(WebarkError):
    """Misuse of the frontier (e.g. ``finished()`` for a URI that is not in flight)."""


# --- pure functions ---------------------------------------------------------------------


def fingerprint(uri: str) -> int:
    """The seen-filter key of ``uri``: a signed 64-bit BLAKE2b fingerprint of
    :func:`webark.url.normalize` (of the raw string when it is not a valid URL).

    Heritrix's ``BdbUriUniqFilter`` also keeps 64-bit fingerprints; with 10^8 URIs the
    chance of one false "seen" is ~3×10^-4.
    """
    try:
        canon = normalize(uri)
    except InvalidURLError:
        canon = uri
    digest = hashlib.blake2b(canon.encode("utf-8", "surrogatepass"), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


SCHEMA = f"""
CREATE TABLE IF NOT EXISTS meta (k TEXT PRIMARY KEY, v) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS queues (
    qid INTEGER PRIMARY KEY,
    key TEXT NOT NULL UNIQUE,
    queued INTEGER NOT NULL DEFAULT 0,
    inflight INTEGER,                   -- uris.id in flight, NULL when none
    due REAL NOT NULL DEFAULT 0,        -- wall clock: ready from then on
    seq INTEGER NOT NULL DEFAULT 0,     -- order of becoming due (round robin)
    errors INTEGER NOT NULL DEFAULT 0,  -- consecutive 429/5xx
    crawl_delay REAL,
    finished INTEGER NOT NULL DEFAULT 0,
    succeeded INTEGER NOT NULL DEFAULT 0,
    bytes INTEGER NOT NULL DEFAULT 0,
    blocked INTEGER NOT NULL DEFAULT 0, -- over a quota
    blocked_uris INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS queues_ready ON queues (due, seq)
    WHERE queued > 0 AND inflight IS NULL AND blocked = 0;
CREATE TABLE IF NOT EXISTS uris (
    id INTEGER PRIMARY KEY,
    fp INTEGER NOT NULL UNIQUE,
    qid INTEGER NOT NULL,
    state INTEGER NOT NULL,             -- UriState: 0 queued, 1 in flight, 2 finished
    priority INTEGER NOT NULL,
    retries INTEGER NOT NULL DEFAULT 0,
    status INTEGER,
    uri TEXT NOT NULL,
    hops TEXT NOT NULL,
    via TEXT,
    seed INTEGER NOT NULL,
    source TEXT
);
CREATE INDEX IF NOT EXISTS uris_queued ON uris (qid, priority, id)
    WHERE state = {UriState.QUEUED:d};
CREATE INDEX IF NOT EXISTS uris_active ON uris (qid) WHERE state = {UriState.IN_FLIGHT:d};
"""

READY = "queued > 0 AND inflight IS NULL AND blocked = 0"
"""SQL condition of a queue that can be served once its due time has come."""


def open_store(path: str | Path, config: FrontierConfig, clock: Clock
               ) -> tuple[sqlite3.Connection, tuple[str, ...]]:  # fmt: skip
    """Open (or create) the frontier database at ``path`` with ``config``'s pragmas, and
    put the URIs in flight when it was last used (a crash) back at the head of their
    queues; due times beyond ``clock()`` + :attr:`FrontierConfig.horizon` are cut to it
    (wall clock stepped back). Returns the connection (autocommit: callers begin their
    own transactions) and the URIs put back.

    Raises:
        sqlite3.Error: the file is not a database or cannot be written.
        FrontierError: the database has another schema version.
    """
    conn = sqlite3.connect(str(path), isolation_level=None)
    try:
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute(f"PRAGMA synchronous={config.synchronous.upper()}")
        conn.execute(f"PRAGMA cache_size=-{int(config.cache_mb) * 1024}")
        conn.execute("PRAGMA temp_store=MEMORY")
        conn.execute("BEGIN IMMEDIATE")
        other = create_schema(conn, SCHEMA, SCHEMA_VERSION)
        if other is not None:
            raise FrontierError(f"{path}: frontier schema {other}, need {SCHEMA_VERSION}")
        # in flight: the URI its queue is fetching, and URIs released by
        # release() whose processing had not finished
        active = conn.execute(
            f"SELECT uri, qid FROM uris WHERE state = {IN_FLIGHT:d}"
        ).fetchall()
        put_back = [str(r[0]) for r in active]
        per_queue: dict[int, int] = {}
        for _, qid in active:
            per_queue[qid] = per_queue.get(qid, 0) + 1
        conn.execute(f"UPDATE uris SET state = {QUEUED:d} WHERE state = {IN_FLIGHT:d}")
        conn.executemany(
            "UPDATE queues SET queued = queued + ? WHERE qid = ?",
            [(n, q) for q, n in per_queue.items()],
        )
        conn.execute("UPDATE queues SET inflight = NULL WHERE inflight IS NOT NULL")
        latest = clock() + config.horizon
        conn.execute("UPDATE queues SET due = ? WHERE due > ?", (latest, latest))
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        conn.close()
        raise
    return conn, tuple(put_back)
