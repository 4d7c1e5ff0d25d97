"""The query language of ``webark search query`` and the search page: web-search syntax,
as PostgreSQL's ``websearch_to_tsquery`` reads it, so both backends take the same text.

* words: all must match (``python decorator``);
* ``"quoted words"``: a phrase, the words next to each other in that order;
* ``OR`` between two terms: either (``asyncio OR trio``; binds tighter than the
  implicit AND: ``a b OR c`` is a AND (b OR c));
* ``-word`` or ``-"a phrase"``: must not match.

Other punctuation separates words; an unclosed quote runs to the end. A query without
any word to match (``-x``, ``""``, ``OR``) is :class:`EmptyQuery`.

:func:`fts5_match` writes the SQLite FTS5 ``MATCH`` expression: every term as an FTS5
string (``"…"``, so the tokenizer, not the query syntax, decides what a word is; an
FTS5 string of several tokens is a phrase), explicit parentheses for the OR groups and
one ``NOT`` for the negated terms.

Ranking, both backends: documents whose **title** holds every positive term of the
query come first (the page a reader means when they type its subject), then the
others; each tier in the backend's relevance order. Plain BM25 cannot do this on an
archive of one site: words of the navigation (``Root Zone Database`` on every page of
iana.org) are in more than half the pages, and FTS5's ``bm25()`` gives such terms an
IDF of ~0, so the page that *is* the Root Zone Database would rank no better than the
pages that link to it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from webark.core.errors import RequestError

_TOKEN = re.compile(r'(-?)"([^"]*)"?|(\S+)')
_WORD = re.compile(r"\w+(?:['’.+#-]\w+)*\+*", re.UNICODE)


class EmptyQuery(RequestError, ValueError):
    """The query has no word to search for."""


@dataclass(frozen=True, slots=True)
class Query:
    """A parsed query: ``groups`` AND-ed together, each a tuple of alternatives (OR),
    each alternative a phrase (tuple of words); ``negated`` phrases must not match.
    ``text`` is the query as given."""

    text: str
    groups: tuple[tuple[tuple[str, ...], ...], ...]
    negated: tuple[tuple[str, ...], ...]

    def words(self) -> list[str]:
        """Every positive word, in order (for highlighting elsewhere)."""
        return [w for g in self.groups for phrase in g for w in phrase]


def _words(text: str) -> tuple[str, ...]:
    return tuple(m.group(0) for m in _WORD.finditer(text))


def parse_query(text: str) -> Query:
    """Parse web-search syntax (module docstring).

    Raises:
        EmptyQuery: nothing to search for.
    """
    groups: list[list[tuple[str, ...]]] = []
    negated: list[tuple[str, ...]] = []
    pending_or = False
    for m in _TOKEN.finditer(text):
        neg_quoted, quoted, bare = m.group(1), m.group(2), m.group(3)
        if bare is not None and bare.upper() == "OR":
            pending_or = bool(groups)
            continue
        neg = bool(neg_quoted) if quoted is not None else bare.startswith("-")
        phrase = _words(quoted if quoted is not None else bare.lstrip("-"))
        if not phrase:
            continue
        if neg:
            negated.append(phrase)
            pending_or = False
        elif pending_or:
            groups[-1].append(phrase)
            pending_or = False
        else:
            groups.append([phrase])
    if not groups:
        raise EmptyQuery(f"nothing to search for in {text!r}")
    return Query(text, tuple(tuple(g) for g in groups), tuple(negated))


def _fts5_string(phrase: tuple[str, ...]) -> str:
    return '"' + " ".join(phrase).replace('"', '""') + '"'


def fts5_positive(query: Query) -> str:
    """The FTS5 expression of ``query``'s positive terms (no ``NOT``)."""
    parts = []
    for group in query.groups:
        alts = " OR ".join(_fts5_string(p) for p in group)
        parts.append(f"({alts})" if len(group) > 1 else alts)
    return " AND ".join(parts)


def fts5_match(query: Query) -> str:
    """The SQLite FTS5 ``MATCH`` expression of ``query`` (module docstring)."""
    expr = fts5_positive(query)
    if query.negated:
        expr = f"({expr}) NOT (" + " OR ".join(_fts5_string(p) for p in query.negated) + ")"
    return expr
