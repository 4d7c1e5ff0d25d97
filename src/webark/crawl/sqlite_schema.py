"""Creating a crawl database's schema and checking its version: the frontier
(:mod:`webark.crawl.frontier_store`) and continuous crawling's feed database
(:mod:`webark.crawl.rss.store`) keep the version in a ``meta (k, v)`` table under the key
``schema``."""

from __future__ import annotations

import sqlite3

__all__ = ["create_schema"]


def create_schema(conn: sqlite3.Connection, schema: str, version: int | str) -> object | None:
    """Run the ``;``-separated ``CREATE … IF NOT EXISTS`` statements of ``schema`` on
    ``conn`` (inside the caller's transaction) and record ``version`` in ``meta`` when the
    database is new.

    ``schema`` must create ``meta (k TEXT PRIMARY KEY, v)``.

    Returns:
        None when the database has (or now has) ``version``; else the version it holds,
        for the caller to raise its own error (a database of another schema is never
        changed).

    Raises:
        sqlite3.Error: the file is not a database or cannot be written.
    """
    for stmt in schema.split(";"):
        if stmt.strip():
            conn.execute(stmt)
    row = conn.execute("SELECT v FROM meta WHERE k = 'schema'").fetchone()
    if row is None:
        conn.execute("INSERT INTO meta VALUES ('schema', ?)", (version,))
        return None
    found: object = row[0]
    return None if found == version else found
