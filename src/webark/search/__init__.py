"""L3: full-text search of a collection's captures.

Text is extracted from HTML and PDF captures (:mod:`.extract`) into documents under
webarchive-discovery's field names (:mod:`.document`), indexed per WARC into SQLite
FTS5 (:mod:`.sqlite_fts`, the default) or PostgreSQL (:mod:`.postgres_fts`), and
queried in web-search syntax (:mod:`.query`) for ranked, highlighted hits
(:mod:`.backend`). :func:`open_search` opens a collection's index.

Depends on :mod:`webark.index` (one way): search documents are made from the WARCs a
collection's index lists, found through its location map; nothing in the index layer
knows about search.
"""

from webark.search.open import find_search, has_search, open_search, search_path

__all__ = ["find_search", "has_search", "open_search", "search_path"]
