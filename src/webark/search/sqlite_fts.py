"""The embedded search index: SQLite FTS5 in ``COLLECTION/search/search.sqlite3``.

Schema (``PRAGMA user_version = 1``)::

    files(id INTEGER PRIMARY KEY, name TEXT UNIQUE, size INTEGER,   -- WARCs indexed
          documents INTEGER, indexed_at TEXT)
    docs(rowid INTEGER PRIMARY KEY, file_id INTEGER, <every SearchDocument field but
         source_file_path, which is files.name>, links/links_hosts as JSON arrays)
    docs_fts USING fts5(title, content, url, content='docs', content_rowid='rowid',
                        tokenize='porter unicode61 remove_diacritics 2')

``docs_fts`` is an *external-content* FTS5 table: the text is stored once, in ``docs``,
and ``snippet()``/``highlight()`` read it from there (their column names match). The
tokenizer folds case and diacritics (Unicode 6.1 word rules) and stems English words
(Porter): ``running`` finds ``runs``; other languages are matched word for word.

Ranking: documents whose title holds every word asked for first (a second ``MATCH``
with the column filter ``{title} : (…)``, :mod:`webark.search.query`), then ``bm25()``
with weights title 10, text 1, URL 3 (the words of the URL: host and path).
Snippets: ``snippet()`` of the text, 32 tokens around the best match.

Writes: one ``BEGIN IMMEDIATE`` transaction per WARC (the documents of the WARC and its
``files`` row), WAL: readers (the replay app's search page) are never blocked.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from webark.index.sqlite_db import SqliteDb
from webark.index.store import utc_stamp
from webark.search.backend import SearchHit, SearchResults, marked_parts
from webark.search.document import STORED_FIELDS, SearchDocument
from webark.search.query import fts5_match, fts5_positive, parse_query

SCHEMA_VERSION = 1
_SCHEMA = """
CREATE TABLE files (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    size INTEGER,
    documents INTEGER NOT NULL,
    indexed_at TEXT NOT NULL
);
CREATE TABLE docs (
    rowid INTEGER PRIMARY KEY,
    file_id INTEGER NOT NULL,
    id TEXT NOT NULL,
    url TEXT NOT NULL,
    url_norm TEXT NOT NULL,
    host TEXT NOT NULL,
    domain TEXT NOT NULL,
    crawl_date TEXT NOT NULL,
    crawl_year INTEGER NOT NULL,
    wayback_date TEXT NOT NULL,
    title TEXT NOT NULL,
    content TEXT NOT NULL,
    content_type TEXT NOT NULL,
    content_type_norm TEXT NOT NULL,
    content_language TEXT NOT NULL,
    status_code INTEGER NOT NULL,
    record_type TEXT NOT NULL,
    hash TEXT NOT NULL,
    links TEXT NOT NULL,
    links_hosts TEXT NOT NULL,
    source_file_offset INTEGER NOT NULL,
    collection TEXT NOT NULL,
    index_time TEXT NOT NULL
);
CREATE INDEX docs_by_file ON docs (file_id, source_file_offset);
CREATE INDEX docs_by_url ON docs (url_norm);
CREATE VIRTUAL TABLE docs_fts USING fts5(
    title, content, url, content='docs', content_rowid='rowid',
    tokenize='porter unicode61 remove_diacritics 2'
)
"""
#: ``docs`` columns in :class:`SearchDocument` order (``source_file_path`` comes from
#: ``files``).
_DOC_COLS = STORED_FIELDS
_INSERT = (
    f"INSERT INTO docs (file_id, {', '.join(_DOC_COLS)}) "
    f"VALUES (?, {', '.join('?' for _ in _DOC_COLS)})"
)
#: bm25 weights of the FTS columns (title, content, url).
WEIGHTS = (10.0, 1.0, 3.0)
#: Subtracted from the bm25 score (lower is better) of documents whose title holds every
#: positive term: they rank first (:mod:`webark.search.query`); bm25 scores stay far
#: smaller in magnitude.
TITLE_TIER = 1e6
SNIPPET_TOKENS = 32


def _set_up(conn: sqlite3.Connection, found: int) -> None:
    for stmt in _SCHEMA.split(";"):
        if stmt.strip():
            conn.execute(stmt)


def _doc_row(file_id: int, d: SearchDocument) -> tuple[object, ...]:
    return (
        file_id, d.id, d.url, d.url_norm, d.host, d.domain, d.crawl_date, d.crawl_year,
        d.wayback_date, d.title, d.content, d.content_type, d.content_type_norm,
        d.content_language, d.status_code, d.record_type, d.hash, json.dumps(list(d.links)),
        json.dumps(list(d.links_hosts)), d.source_file_offset, d.collection, d.index_time,
    )  # fmt: skip


def document_from(r: Sequence[Any], source_file_path: str) -> SearchDocument:
    """A :class:`SearchDocument` from a row of ``_DOC_COLS`` (also used by the
    PostgreSQL backend, whose columns are the same)."""
    links, hosts = r[16], r[17]
    return SearchDocument(
        id=r[0], url=r[1], url_norm=r[2], host=r[3], domain=r[4], crawl_date=r[5],
        crawl_year=int(r[6]), wayback_date=r[7], title=r[8], content=r[9],
        content_type=r[10], content_type_norm=r[11], content_language=r[12],
        status_code=int(r[13]), record_type=r[14], hash=r[15],
        links=tuple(json.loads(links) if isinstance(links, str) else links),
        links_hosts=tuple(json.loads(hosts) if isinstance(hosts, str) else hosts),
        source_file_path=source_file_path, source_file_offset=int(r[18]), collection=r[19],
        index_time=r[20],
    )  # fmt: skip


class SqliteSearch:
    """A :class:`~webark.search.backend.SearchIndex` in one SQLite file (module
    docstring).

    Args:
        path: the database file (created with its folder unless ``create=False``).
        create: with False a missing file raises ``IndexUnavailable``.

    Raises:
        IndexUnavailable: the file cannot be opened or is not a search index.
    """

    def __init__(self, path: str | os.PathLike[str], *, create: bool = True):
        self.path = os.fspath(path)
        if create:
            os.makedirs(os.path.dirname(self.path) or ".", exist_ok=True)
        self.db = SqliteDb(self.path, version=SCHEMA_VERSION, set_up=_set_up, create=create,
                           synchronous="NORMAL")  # fmt: skip

    def __repr__(self) -> str:
        return f"SqliteSearch({self.path!r})"

    def close(self) -> None:
        self.db.close()

    # -- writing -----------------------------------------------------------------------

    def indexed_files(self) -> dict[str, int | None]:
        """See :meth:`SearchIndex.indexed_files`."""
        return {str(r[0]): r[1] for r in self.db.rows("SELECT name, size FROM files")}

    def add_file(self, name: str, documents: Iterable[SearchDocument],
                 size: int | None = None) -> int:  # fmt: skip
        """See :meth:`SearchIndex.add_file` (one ``BEGIN IMMEDIATE`` transaction)."""
        with self.db.transaction() as conn:
            self._drop(conn, name)
            cur = conn.execute(
                "INSERT INTO files (name, size, documents, indexed_at) VALUES (?, ?, 0, ?)",
                (name, size, utc_stamp()),
            )
            file_id = int(cur.lastrowid or 0)
            conn.executemany(_INSERT, (_doc_row(file_id, d) for d in documents))
            conn.execute(
                "INSERT INTO docs_fts (rowid, title, content, url) "
                "SELECT rowid, title, content, url FROM docs WHERE file_id = ?", (file_id,),
            )  # fmt: skip
            n = conn.execute(
                "SELECT count(*) FROM docs WHERE file_id = ?", (file_id,)
            ).fetchone()[0]
            conn.execute("UPDATE files SET documents = ? WHERE id = ?", (n, file_id))
            return int(n)

    @staticmethod
    def _drop(conn: sqlite3.Connection, name: str) -> int:
        row = conn.execute("SELECT id, documents FROM files WHERE name = ?", (name,)).fetchone()
        if row is None:
            return 0
        conn.execute(
            "INSERT INTO docs_fts (docs_fts, rowid, title, content, url) "
            "SELECT 'delete', rowid, title, content, url FROM docs WHERE file_id = ?", (row[0],),
        )  # fmt: skip
        conn.execute("DELETE FROM docs WHERE file_id = ?", (row[0],))
        conn.execute("DELETE FROM files WHERE id = ?", (row[0],))
        return int(row[1])

    def remove_file(self, name: str) -> int:
        """See :meth:`SearchIndex.remove_file`."""
        with self.db.transaction() as conn:
            return self._drop(conn, name)

    # -- reading -----------------------------------------------------------------------

    def count(self) -> int:
        return int(next(self.db.rows("SELECT count(*) FROM docs"))[0])

    def documents(self) -> Iterator[SearchDocument]:
        """See :meth:`SearchIndex.documents`."""
        cols = ", ".join("d." + c for c in _DOC_COLS)
        sql = (f"SELECT {cols}, f.name FROM docs d JOIN files f ON f.id = d.file_id "
               "ORDER BY f.name, d.source_file_offset, d.rowid")  # fmt: skip
        for r in self.db.rows(sql):
            yield document_from(r, str(r[-1]))

    def search(self, query: str, *, limit: int = 10, offset: int = 0) -> SearchResults:
        """See :meth:`SearchIndex.search` (module docstring for ranking and snippets).

        Raises:
            EmptyQuery: nothing to search for.
            IndexUnavailable: the database cannot be read.
        """
        parsed = parse_query(query)
        match = fts5_match(parsed)
        in_title = "{title} : (" + fts5_positive(parsed) + ")"
        w = ", ".join(str(x) for x in WEIGHTS)
        ranked = list(self.db.rows(
            "WITH m AS MATERIALIZED ("
            f" SELECT rowid AS r, bm25(docs_fts, {w}) AS s FROM docs_fts WHERE docs_fts MATCH ?),"
            " t AS MATERIALIZED (SELECT rowid AS r FROM docs_fts WHERE docs_fts MATCH ?),"
            " x AS (SELECT m.r AS r, m.s - CASE WHEN t.r IS NULL THEN 0 ELSE ? END AS k"
            "       FROM m LEFT JOIN t ON t.r = m.r)"
            " SELECT r, best, n, total FROM ("
            "  SELECT x.r AS r, min(x.k) AS best, count(*) AS n, count(*) OVER () AS total,"
            "         d.url_norm AS u"
            "  FROM x JOIN docs d ON d.rowid = x.r GROUP BY d.url_norm)"
            " ORDER BY best, u LIMIT ? OFFSET ?", (match, in_title, TITLE_TIER, limit, offset),
        ))  # fmt: skip
        if not ranked:
            total = 0 if offset == 0 else self._total(match)
            return SearchResults(query, total, offset, ())
        ids = [r[0] for r in ranked]
        marks = ", ".join("?" for _ in ids)
        found: dict[int, tuple[Any, ...]] = {}
        sql = (
            "SELECT docs_fts.rowid, highlight(docs_fts, 0, char(2), char(3)),"
            f" snippet(docs_fts, 1, char(2), char(3), '…', {SNIPPET_TOKENS}),"
            " d.url, d.url_norm, d.wayback_date, d.crawl_date, d.title, d.content_type_norm,"
            " d.content_language, d.status_code, fl.name, d.source_file_offset"
            " FROM docs_fts JOIN docs d ON d.rowid = docs_fts.rowid"
            " JOIN files fl ON fl.id = d.file_id"
            f" WHERE docs_fts MATCH ? AND docs_fts.rowid IN ({marks})"
        )
        for r in self.db.rows(sql, [match, *ids]):
            found[int(r[0])] = r
        hits = []
        for rowid, best, n, _total in ranked:
            r = found[rowid]
            hits.append(SearchHit(
                url=r[3], url_norm=r[4], wayback_date=r[5], crawl_date=r[6], title=r[7],
                title_parts=marked_parts(r[1] or ""), snippet=marked_parts(r[2] or ""),
                score=-float(best), captures=int(n), content_type_norm=r[8],
                content_language=r[9], status_code=int(r[10]), source_file_path=r[11],
                source_file_offset=int(r[12]),
            ))  # fmt: skip
        return SearchResults(query, int(ranked[0][3]), offset, tuple(hits))

    def _total(self, match: str) -> int:
        sql = ("SELECT count(DISTINCT d.url_norm) FROM docs_fts JOIN docs d "
               "ON d.rowid = docs_fts.rowid WHERE docs_fts MATCH ?")  # fmt: skip
        return int(next(self.db.rows(sql, [match]))[0])
