"""What a search index offers (:class:`SearchIndex`, implemented by
:class:`~webark.search.sqlite_fts.SqliteSearch` and
:class:`~webark.search.postgres_fts.PostgresSearch`) and what a query returns.

Results are **one hit per URL** (``url_norm``): the best-ranked capture of each URL that
matches, with the number of its captures that match (``captures``), so a page crawled
fifty times is one line with "50 captures" and a link to its capture list, not fifty
lines. Ranking: FTS5 ``bm25`` / PostgreSQL ``ts_rank_cd``, the title weighing more than
the text (see each backend). Snippets come with their highlighted words marked: a
:class:`Snippet` is a tuple of ``(text, highlighted)`` parts, so each front end escapes
and marks them its own way (``<mark>`` in HTML, ``[…]`` on a terminal).

An index is updated per WARC: :meth:`SearchIndex.add_file` replaces all documents of
one WARC in one transaction (``kill -9`` leaves the WARC's old documents or its new
ones, never half), :meth:`SearchIndex.remove_file` drops them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Protocol

from webark.search.document import SearchDocument

#: Markers the backends put around highlighted words (never in extracted text: C0
#: controls other than white space are dropped from documents,
#: :func:`webark.search.document.clean_text`).
MARK_START, MARK_END = "\x02", "\x03"
#: ``(text, highlighted)`` parts of a snippet or title.
Snippet = tuple[tuple[str, bool], ...]
_MARKS = re.compile(f"([{MARK_START}{MARK_END}])")
_SPACE = re.compile(r"\s+")


def marked_parts(text: str) -> Snippet:
    """Split backend output with :data:`MARK_START`/:data:`MARK_END` into parts, runs of
    white space (line ends between text blocks) made one space."""
    out: list[tuple[str, bool]] = []
    on = False
    for piece in _MARKS.split(text):
        if piece in (MARK_START, MARK_END):
            on = piece == MARK_START
        elif piece:
            part = _SPACE.sub(" ", piece)
            if out and out[-1][1] == on:
                out[-1] = (out[-1][0] + part, on)
            else:
                out.append((part, on))
    return tuple(out)


@dataclass(frozen=True, slots=True)
class SearchHit:
    """One URL that matches: its best capture and its snippet.

    Attributes:
        url, url_norm, wayback_date, crawl_date, title, content_type_norm,
            content_language, status_code, source_file_path, source_file_offset: of
            the best-ranked capture (as in its :class:`SearchDocument`).
        title_parts: the title with the query's words highlighted.
        snippet: an extract of the text around the matches, highlighted.
        score: the backend's relevance (higher is better; comparable within one
            result list only).
        captures: how many captures of this URL match.
    """

    url: str
    url_norm: str
    wayback_date: str
    crawl_date: str
    title: str
    title_parts: Snippet
    snippet: Snippet
    score: float
    captures: int
    content_type_norm: str
    content_language: str
    status_code: int
    source_file_path: str
    source_file_offset: int


@dataclass(frozen=True, slots=True)
class SearchResults:
    """A page of results: ``total`` URLs match, ``hits`` from ``offset`` on."""

    query: str
    total: int
    offset: int
    hits: tuple[SearchHit, ...]


class SearchIndex(Protocol):
    """A full-text index of a collection's captures (module docstring)."""

    def indexed_files(self) -> dict[str, int | None]:
        """WARC name → its size in bytes when its documents were made (None if
        unknown), for every WARC whose documents are in the index."""
        ...

    def add_file(self, name: str, documents: Iterable[SearchDocument],
                 size: int | None = None) -> int:  # fmt: skip
        """Replace the documents of WARC ``name`` with ``documents`` in one transaction;
        the number added.

        Raises:
            IndexUnavailable: the index cannot be written.
        """
        ...

    def remove_file(self, name: str) -> int:
        """Drop the documents of WARC ``name``; how many."""
        ...

    def search(self, query: str, *, limit: int = 10, offset: int = 0) -> SearchResults:
        """Ranked hits for ``query`` (:mod:`webark.search.query` syntax), one per URL.

        Raises:
            EmptyQuery: nothing to search for in ``query``.
            IndexUnavailable: the index cannot be read.
        """
        ...

    def documents(self) -> Iterator[SearchDocument]:
        """Every document, by WARC then offset (for ``search export``)."""
        ...

    def count(self) -> int:
        """Number of documents."""
        ...

    def close(self) -> None:
        """Release files or connections."""
        ...
