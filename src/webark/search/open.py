"""Which search index a collection has: ``[search] backend`` of its ``collection.toml``
(:mod:`webark.index.collection_config`), SQLite FTS5 in ``search/search.sqlite3``
beside its index by default, PostgreSQL for a PostgreSQL collection."""

from __future__ import annotations

from pathlib import Path

from webark.index.collection import Collection
from webark.search.backend import SearchIndex

#: File of the SQLite backend, relative to the collection folder.
SQLITE_NAME = Path("search") / "search.sqlite3"


def search_path(collection: Collection) -> Path:
    """Where the SQLite search index of ``collection`` is (or would be)."""
    return collection.root / SQLITE_NAME


def open_search(collection: Collection, *, create: bool = False) -> SearchIndex:
    """The search index of ``collection``.

    Args:
        create: make it if it does not exist (``search build``); with False a missing
            index is ``IndexUnavailable``.

    Raises:
        IndexUnavailable: missing (``create=False``) or unusable.
        CollectionError: ``backend = "postgres"`` without a server to use.
    """
    cfg = collection.config
    if cfg.search == "postgres":
        from webark.search.postgres_fts import PostgresSearch

        url, schema = cfg.search_pg()
        return PostgresSearch(url, schema, create=create)
    from webark.search.sqlite_fts import SqliteSearch

    return SqliteSearch(search_path(collection), create=create)


def find_search(collection: Collection) -> SearchIndex | None:
    """The search index of ``collection`` if it has one (built at least once), else
    None.

    Raises:
        IndexUnavailable: it has one that cannot be used (server down, corrupt file).
        CollectionError: as :func:`open_search`.
    """
    if collection.config.search == "sqlite":
        if not search_path(collection).is_file():
            return None
        return open_search(collection)
    from webark.search.postgres_fts import NoSearchIndex

    try:
        return open_search(collection)
    except NoSearchIndex:
        return None


def has_search(collection: Collection) -> bool:
    """True when ``collection`` has a search index (:func:`find_search`)."""
    index = find_search(collection)
    if index is None:
        return False
    index.close()
    return True
