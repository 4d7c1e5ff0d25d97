"""The shared search index: PostgreSQL full-text search (``tsvector`` + GIN), in the
collection's schema beside its index store (or the ``[search]`` schema).

Tables::

    search_files(id BIGSERIAL PRIMARY KEY, name TEXT UNIQUE, size, documents, indexed_at)
    search_docs(doc_id BIGSERIAL PRIMARY KEY, file_id → search_files ON DELETE CASCADE,
                <every SearchDocument field but source_file_path (search_files.name)>,
                links/links_hosts TEXT[], lang_config REGCONFIG,
                title_tsv TSVECTOR GENERATED ALWAYS AS (title) STORED,
                tsv TSVECTOR GENERATED ALWAYS AS (title 'A' || content 'B' || url 'C') STORED)
    search_configs(config REGCONFIG PRIMARY KEY)   -- text search configurations in use
    INDEX search_docs_tsv USING gin (tsv), INDEX (file_id, source_file_offset),
    INDEX (url_norm)

Each document is parsed with the text search configuration of its declared language
(``en`` → ``english``, ``de`` → ``german``, … :data:`LANGUAGES`; ``simple``, no
stemming, when undeclared or not in PostgreSQL's list); the URL's words always with
``simple``. A query is parsed once per configuration in use
(``websearch_to_tsquery``) and the alternatives OR-ed, so "running" finds English pages
saying "runs" and undeclared ones saying "running". The query text given to PostgreSQL
is the one :mod:`webark.search.query` parsed, written back in web-search syntax, so both
backends read a query the same way.

Ranking: documents whose title holds every positive term first (``title_tsv``,
:mod:`webark.search.query`), then ``ts_rank_cd`` (cover density) with weights title
1.0, URL 0.3, text 0.1 (the SQLite backend's 10 : 3 : 1) and normalization 1 (divided by
1 + log of the length). A negated word must not match under any configuration.
Snippets: ``ts_headline``, two fragments of 15–35 words, of a window of the text
around the first place the query's longest word appears as typed (``ts_headline``
re-parses all the text it is given: 20 ms for a 100 kB page). PostgreSQL keeps at most 1 MB
of lexemes per ``tsvector`` and 16,383 word positions: a document whose text is past
that is indexed from its first :data:`TSVECTOR_CHARS` characters (its ``content`` is
kept whole).

Writes: ``COPY`` of one WARC's documents in one transaction (after deleting its old
ones), so several ``search build`` processes can run against one server.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator
from typing import Any

from webark.index.pg_connect import DuplicateKey, PgDb, PostgresUnavailable
from webark.index.source import IndexUnavailable
from webark.index.store import utc_stamp
from webark.search.backend import MARK_END, MARK_START, SearchHit, SearchResults, marked_parts
from webark.search.document import STORED_FIELDS, SearchDocument
from webark.search.query import Query, parse_query
from webark.search.sqlite_fts import document_from

#: Characters of a document's text that go into its ``tsvector`` (module docstring).
TSVECTOR_CHARS = 200_000
#: ISO 639-1 code → PostgreSQL text search configuration (those PostgreSQL 15 ships).
LANGUAGES = {
    "ar": "arabic", "hy": "armenian", "eu": "basque", "ca": "catalan", "da": "danish",
    "nl": "dutch", "en": "english", "fi": "finnish", "fr": "french", "de": "german",
    "el": "greek", "hi": "hindi", "hu": "hungarian", "id": "indonesian", "ga": "irish",
    "it": "italian", "lt": "lithuanian", "ne": "nepali", "no": "norwegian",
    "nb": "norwegian", "nn": "norwegian", "pt": "portuguese", "ro": "romanian",
    "ru": "russian", "sr": "serbian", "es": "spanish", "sv": "swedish", "ta": "tamil",
    "tr": "turkish", "yi": "yiddish",
}  # fmt: skip
#: The snippet is made from this many characters of the text, starting this many before
#: the first place the query's longest word is written as asked.
HEADLINE_WINDOW, HEADLINE_BEFORE = 3000, 400
#: Seconds a search process trusts its list of configurations in use.
CONFIGS_TTL = 10.0
#: ts_rank_cd weights {D, C, B, A}: -, URL, text, title.
WEIGHTS = "{0.0, 0.3, 0.1, 1.0}"
_HEADLINE = (f"StartSel={MARK_START}, StopSel={MARK_END}, MaxWords=35, MinWords=15, "
             'MaxFragments=2, FragmentDelimiter=" … "')  # fmt: skip
_TITLE_HEADLINE = f"StartSel={MARK_START}, StopSel={MARK_END}, HighlightAll=true"

_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS search_files (
    id BIGSERIAL PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    size BIGINT,
    documents BIGINT NOT NULL,
    indexed_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS search_configs (config REGCONFIG PRIMARY KEY);
CREATE TABLE IF NOT EXISTS search_docs (
    doc_id BIGSERIAL PRIMARY KEY,
    file_id BIGINT NOT NULL REFERENCES search_files (id) ON DELETE CASCADE,
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
    links TEXT[] NOT NULL,
    links_hosts TEXT[] NOT NULL,
    source_file_offset BIGINT NOT NULL,
    collection TEXT NOT NULL,
    index_time TEXT NOT NULL,
    lang_config REGCONFIG NOT NULL,
    title_tsv TSVECTOR GENERATED ALWAYS AS (to_tsvector(lang_config, title)) STORED,
    tsv TSVECTOR GENERATED ALWAYS AS (
        setweight(to_tsvector(lang_config, title), 'A')
        || setweight(to_tsvector(lang_config, left(content, {TSVECTOR_CHARS})), 'B')
        || setweight(to_tsvector('simple'::regconfig, url), 'C')
    ) STORED
);
CREATE INDEX IF NOT EXISTS search_docs_tsv ON search_docs USING gin (tsv);
CREATE INDEX IF NOT EXISTS search_docs_file ON search_docs (file_id, source_file_offset);
CREATE INDEX IF NOT EXISTS search_docs_url ON search_docs (url_norm)
"""
_DOC_COLS = STORED_FIELDS
_COPY = f"COPY search_docs (file_id, {', '.join(_DOC_COLS)}, lang_config) FROM STDIN"


class NoSearchIndex(PostgresUnavailable):
    """The schema has no search tables (``create=False``; ``search build`` makes them)."""


def config_for(language: str) -> str:
    """The text search configuration of a ``content_language`` (``simple`` if none)."""
    return LANGUAGES.get(language, "simple")


def _websearch(phrases: Iterable[tuple[str, ...]], joiner: str) -> str:
    return joiner.join('"' + " ".join(p) + '"' for p in phrases)


def websearch_texts(query: Query) -> tuple[str, str]:
    """``query`` written back in web-search syntax (``websearch_to_tsquery`` input):
    (the positive terms: every phrase quoted, ``OR`` between alternatives; the negated
    phrases as alternatives, '' when none)."""
    positive = " ".join(_websearch(g, " OR ") for g in query.groups)
    return positive, _websearch(query.negated, " OR ")


def tsquery_sql(configs: Iterable[str], negated: bool) -> tuple[str, str]:
    """SQL of (the whole query, its positive part) as tsquery, for documents parsed with
    any of ``configs``: the positive terms OR-ed over the configurations, AND NOT the
    negated terms of every configuration (a negated word must not match under any of
    them). Parameters ``%(p)s`` (positive text) and ``%(n)s`` (negated text)."""
    cfgs = list(configs)
    pos = "(" + " || ".join(f"websearch_to_tsquery('{c}', %(p)s)" for c in cfgs) + ")"
    if not negated:
        return pos, pos
    neg = "(" + " || ".join(f"websearch_to_tsquery('{c}', %(n)s)" for c in cfgs) + ")"
    return f"({pos} && !!{neg})", pos


class PostgresSearch:
    """A :class:`~webark.search.backend.SearchIndex` in a PostgreSQL schema (module
    docstring).

    Args:
        url: libpq URL without a password. schema: the schema (created if missing
            unless ``create=False``).

    Raises:
        NoSearchIndex: ``create=False`` and no search tables there.
        PostgresUnavailable: psycopg missing, server unreachable.
    """

    def __init__(self, url: str, schema: str, *, create: bool = True, timeout: float = 10.0):
        self.db = PgDb(url, schema, timeout=timeout)
        self.schema = self.db.schema
        with self.db.transaction() as cur:
            cur.execute("SELECT to_regclass('search_docs') IS NOT NULL")
            if not cur.fetchone()[0]:
                if not create:
                    raise NoSearchIndex(f"{self.schema}: no search index (webark search "
                                        "build makes it)")  # fmt: skip
                cur.execute("SELECT pg_advisory_xact_lock(hashtext(%s))",
                            ("webark:" + self.schema,))  # fmt: skip
                cur.execute(f"CREATE SCHEMA IF NOT EXISTS {self.schema}")
                for stmt in _SCHEMA.split(";"):
                    cur.execute(stmt)
        self._configs: tuple[float, tuple[str, ...]] | None = None

    def __repr__(self) -> str:
        return f"PostgresSearch({self.db!r})"

    def close(self) -> None:
        self.db.close()

    # -- writing -----------------------------------------------------------------------

    def indexed_files(self) -> dict[str, int | None]:
        """See :meth:`SearchIndex.indexed_files`."""
        return {r[0]: r[1] for r in self.db.fetch("SELECT name, size FROM search_files")}

    def add_file(self, name: str, documents: Iterable[SearchDocument],
                 size: int | None = None) -> int:  # fmt: skip
        """See :meth:`SearchIndex.add_file` (``COPY`` in one transaction).

        Raises:
            IndexUnavailable: the server cannot be written, or another build is adding
                the same WARC at this moment.
        """
        configs: set[str] = set()
        try:
            with self.db.transaction() as cur:
                cur.execute("DELETE FROM search_files WHERE name = %s", (name,))
                cur.execute("INSERT INTO search_files (name, size, documents, indexed_at) "
                            "VALUES (%s, %s, 0, %s) RETURNING id",
                            (name, size, utc_stamp()))  # fmt: skip
                file_id = cur.fetchone()[0]
                n = 0
                with cur.copy(_COPY) as copy:
                    for d in documents:
                        cfg = config_for(d.content_language)
                        configs.add(cfg)
                        copy.write_row(self._row(file_id, d, cfg))
                        n += 1
                cur.execute("UPDATE search_files SET documents = %s WHERE id = %s", (n, file_id))
                for cfg in configs:
                    cur.execute("INSERT INTO search_configs VALUES (%s) ON CONFLICT DO NOTHING",
                                (cfg,))  # fmt: skip
        except DuplicateKey as exc:
            raise IndexUnavailable(f"{name}: being added by another build ({exc})") from exc
        self._configs = None
        return n

    @staticmethod
    def _row(file_id: int, d: SearchDocument, cfg: str) -> tuple[object, ...]:
        return (
            file_id, d.id, d.url, d.url_norm, d.host, d.domain, d.crawl_date, d.crawl_year,
            d.wayback_date, d.title, d.content, d.content_type, d.content_type_norm,
            d.content_language, d.status_code, d.record_type, d.hash, list(d.links),
            list(d.links_hosts), d.source_file_offset, d.collection, d.index_time, cfg,
        )  # fmt: skip

    def remove_file(self, name: str) -> int:
        """See :meth:`SearchIndex.remove_file`."""
        with self.db.transaction() as cur:
            cur.execute("DELETE FROM search_files WHERE name = %s RETURNING documents", (name,))
            row = cur.fetchone()
        return int(row[0]) if row else 0

    # -- reading -----------------------------------------------------------------------

    def count(self) -> int:
        return int(self.db.fetch("SELECT count(*) FROM search_docs")[0][0])

    def documents(self) -> Iterator[SearchDocument]:
        """See :meth:`SearchIndex.documents` (keyset pages of 500 documents)."""
        cols = ", ".join("d." + c for c in _DOC_COLS)
        last: tuple[str, int, int] = ("", -1, -1)
        while True:
            rows = self.db.fetch(
                f"SELECT {cols}, f.name, d.doc_id FROM search_docs d JOIN search_files f "
                'ON f.id = d.file_id WHERE (f.name COLLATE "C", d.source_file_offset, '
                'd.doc_id) > (%s, %s, %s) ORDER BY f.name COLLATE "C", '
                "d.source_file_offset, d.doc_id LIMIT 500", last,
            )  # fmt: skip
            for r in rows:
                yield document_from(r, r[-2])
            if len(rows) < 500:
                return
            last = (rows[-1][-2], int(rows[-1][18]), int(rows[-1][-1]))

    def _query_configs(self) -> tuple[str, ...]:
        """The configurations in use (looked up again after :data:`CONFIGS_TTL` s:
        another process may have added documents in a new language)."""
        now = time.monotonic()
        if self._configs is None or now - self._configs[0] > CONFIGS_TTL:
            rows = self.db.fetch("SELECT config::text FROM search_configs ORDER BY 1")
            self._configs = (now, tuple(r[0] for r in rows) or ("simple",))
        return self._configs[1]

    def search(self, query: str, *, limit: int = 10, offset: int = 0) -> SearchResults:
        """See :meth:`SearchIndex.search` (module docstring for ranking and snippets).

        Raises:
            EmptyQuery: nothing to search for.
            IndexUnavailable: the server cannot be read.
        """
        parsed = parse_query(query)
        positive, negative = websearch_texts(parsed)
        tsq, tsp = tsquery_sql(self._query_configs(), bool(negative))
        args: dict[str, Any] = {"p": positive, "n": negative, "limit": limit, "offset": offset}
        ranked = self.db.fetch(
            # the tsquery is inline (constant-folded), so the GIN index finds the rows
            f"WITH m AS (SELECT d.doc_id, d.url_norm, (d.title_tsv @@ {tsp})::int AS tier, "
            f"       ts_rank_cd('{WEIGHTS}', d.tsv, {tsq}, 1) AS s "
            f"       FROM search_docs d WHERE d.tsv @@ {tsq}), "
            "g AS (SELECT DISTINCT ON (url_norm) doc_id, url_norm, tier, s, "
            "             count(*) OVER (PARTITION BY url_norm) AS n "
            "      FROM m ORDER BY url_norm, tier DESC, s DESC, doc_id) "
            "SELECT doc_id, tier + s, n, count(*) OVER () FROM g "
            "ORDER BY tier DESC, s DESC, url_norm LIMIT %(limit)s OFFSET %(offset)s", args,
        )  # fmt: skip
        if not ranked:
            total = self._total(tsq, args) if offset else 0
            return SearchResults(query, total, offset, ())
        args["ids"] = [r[0] for r in ranked]
        args["w"] = max(parsed.words(), key=len).lower()
        # ts_headline parses all the text it is given: give it a window around the first
        # place the longest word is written as asked (else the start of the text)
        window = (f"substr(d.content, greatest(1, strpos(lower(d.content), %(w)s) - "
                  f"{HEADLINE_BEFORE}), {HEADLINE_WINDOW})")  # fmt: skip
        found = {r[0]: r for r in self.db.fetch(
            f"WITH q AS MATERIALIZED (SELECT {tsq} AS tsq) "
            f"SELECT d.doc_id, ts_headline(d.lang_config, d.title, q.tsq, '{_TITLE_HEADLINE}'), "
            f"ts_headline(d.lang_config, {window}, q.tsq, "
            f"'{_HEADLINE}'), d.url, d.url_norm, d.wayback_date, d.crawl_date, d.title, "
            "d.content_type_norm, d.content_language, d.status_code, f.name, "
            "d.source_file_offset FROM search_docs d JOIN search_files f ON f.id = d.file_id, q "
            "WHERE d.doc_id = ANY(%(ids)s)", args,
        )}  # fmt: skip
        hits = []
        for doc_id, score, n, _total in ranked:
            r = found[doc_id]
            hits.append(SearchHit(
                url=r[3], url_norm=r[4], wayback_date=r[5], crawl_date=r[6], title=r[7],
                title_parts=marked_parts(r[1] or ""), snippet=marked_parts(r[2] or ""),
                score=float(score), captures=int(n), content_type_norm=r[8],
                content_language=r[9], status_code=int(r[10]), source_file_path=r[11],
                source_file_offset=int(r[12]),
            ))  # fmt: skip
        return SearchResults(query, int(ranked[0][3]), offset, tuple(hits))

    def _total(self, tsq: str, args: dict[str, Any]) -> int:
        rows = self.db.fetch(f"SELECT count(DISTINCT url_norm) FROM search_docs d "
                             f"WHERE d.tsv @@ {tsq}", args)  # fmt: skip
        return int(rows[0][0])
