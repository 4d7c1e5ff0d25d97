"""Crawler-trap defences: pathological paths, path depth, query explosions.

Traps are URL spaces without end that a site generates: relative links that grow the
path (``/a/a/a/a/…``), calendars with a link to the next day forever
(``/cal?date=2020-01-02``…), session ids in paths. Hop limits catch all of them
eventually; these rules catch them early and cheaply. Every rule here runs in time
linear-ish in the URI length (no backtracking regexes) and keeps bounded state.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from webark.crawl.curi import CrawlURI
from webark.crawl.scope.rules import Decision, _Predicated

__all__ = [
    "DATE_LIKE_NAME",
    "DATE_LIKE_VALUE",
    "PathologicalPathDecideRule",
    "QueryExplosionDecideRule",
    "TooManyPathSegmentsDecideRule",
    "has_repeated_segments",
]


def has_repeated_segments(uri: str, max_repetitions: int) -> bool:
    """True if a run of ``/``-terminated segments occurs more than ``max_repetitions``
    times in a row somewhere after the first ``/`` of ``uri``.

    Same answer as Heritrix's regex ``.*?/(.*?/)\\1{N,}.*`` (``N`` = max repetitions)
    on the whole URI string, without its backtracking: a repeated block starts right
    after a ``/`` and ends with one, so it is a run of whole segments; for each period
    ``m`` (segments per block) count consecutive positions where segment ``k`` equals
    segment ``k + m``. ``max_repetitions`` 0 disables the check (as in Heritrix).

    >>> has_repeated_segments("http://example.com/a/a/a/boo.html", 2)
    True
    >>> has_repeated_segments("http://example.com/a/a/boo.html", 2)
    False
    >>> has_repeated_segments("http://example.com/x/a/b/a/b/a/b/", 2)
    True
    """
    if max_repetitions <= 0:
        return False
    pieces = uri.split("/")
    # Segments that end with "/": pieces[1] .. pieces[-2] (pieces[0] is before the
    # first "/", the last piece has no "/" after it).
    segments = pieces[1:-1]
    n = len(segments)
    if len(set(segments)) == n:  # a repeat needs two equal segments
        return False
    copies = max_repetitions + 1
    for period in range(1, n // copies + 1):
        need = max_repetitions * period  # equal pairs (k, k + period) in a row
        run = 0
        for k in range(n - period):
            if segments[k] == segments[k + period]:
                run += 1
                if run >= need:
                    return True
            else:
                run = 0
    return False


class PathologicalPathDecideRule(_Predicated):
    """REJECT URIs in which the same path segment (or run of segments) repeats more than
    ``max_repetitions`` times in a row: ``/a/a/a/boo.html`` with the default 2
    (Heritrix ``PathologicalPathDecideRule``, maxRepetitions 2; see
    :func:`has_repeated_segments` for the exact semantics). 0 disables the rule.
    """

    default_decision = Decision.REJECT

    def __init__(
        self, max_repetitions: int = 2, decision: Decision | None = None, name: str | None = None
    ) -> None:
        super().__init__(decision, name)
        if max_repetitions < 0:
            raise ValueError(f"max_repetitions must be >= 0, got {max_repetitions}")
        self.max_repetitions = max_repetitions

    def matches(self, curi: CrawlURI) -> bool:
        return has_repeated_segments(curi.uri, self.max_repetitions)


class TooManyPathSegmentsDecideRule(_Predicated):
    """REJECT URIs whose path has more than ``max_path_depth`` ``/`` characters (the
    path only: not the ``//`` before the host, not the query) (Heritrix
    ``TooManyPathSegmentsDecideRule``, maxPathDepth 20). An unparseable URI has no
    path and passes (NONE)."""

    default_decision = Decision.REJECT

    def __init__(
        self, max_path_depth: int = 20, decision: Decision | None = None, name: str | None = None
    ) -> None:
        super().__init__(decision, name)
        if max_path_depth < 0:
            raise ValueError(f"max_path_depth must be >= 0, got {max_path_depth}")
        self.max_path_depth = max_path_depth

    def matches(self, curi: CrawlURI) -> bool:
        try:
            path = urlsplit(curi.uri).path
        except ValueError:
            return False
        return path.count("/") > self.max_path_depth


DATE_LIKE_VALUE = re.compile(
    r"(?:19|20)\d\d(?:[-/._]?(?:0?[1-9]|1[0-2])(?:[-/._]?(?:0?[1-9]|[12]\d|3[01]))?)?"
    r"|(?:0?[1-9]|[12]\d|3[01])[-/.](?:0?[1-9]|1[0-2])[-/.](?:19|20)\d\d"
    r"|1\d{9}"
)
"""A query value that looks like a date: ``2020``, ``2020-01``, ``2020-01-31``,
``20200131``, ``2020/1/31``, ``31.01.2020``, or a Unix time in seconds (10 digits)."""

DATE_LIKE_NAME = re.compile(
    r"(?i)(?:date|day|days|month|mon|year|yr|week|wk|cal|calendar|time|ts|d|m|y)"
)
"""A query parameter name that, with a numeric value, means a calendar position."""


def _date_like(query: str) -> bool:
    for name, value in parse_qsl(query, keep_blank_values=True):
        value = value.strip()
        if DATE_LIKE_VALUE.fullmatch(value):
            return True
        if value.isdigit() and DATE_LIKE_NAME.fullmatch(name.strip()):
            return True
    return False


class QueryExplosionDecideRule:
    """REJECT a URI when its path already has ``budget`` other distinct query strings:
    calendars, faceted search and other query-string traps (no Heritrix equivalent;
    Heritrix users write per-site regexes after the fact).

    The path key is ``scheme://host:port/path`` (lowercased scheme and host). The first
    ``budget`` distinct query strings seen on a path are accepted (NONE: the rule has no
    opinion) and stay accepted when seen again; further distinct ones are rejected.

    Args:
        budget: distinct query strings allowed per path (default 100).
        max_paths: paths remembered (default 10 000); the least recently used path is
            forgotten beyond that, and its budget starts again if it comes back. State
            is bounded by ``max_paths × budget`` 64-bit hashes of query strings.
        date_like_only: count only query strings with a date-like parameter
            (:data:`DATE_LIKE_VALUE`, or a :data:`DATE_LIKE_NAME` with a numeric value);
            other query strings get NONE and use no budget. Default False.
        decision: REJECT (default) or ACCEPT.

    :meth:`stats` gives the rejections and the paths that ran over budget (at most
    ``report_paths`` of them, those with most rejections kept first-come).
    """

    def __init__(
        self,
        budget: int = 100,
        max_paths: int = 10_000,
        date_like_only: bool = False,
        decision: Decision = Decision.REJECT,
        name: str | None = None,
        report_paths: int = 100,
    ) -> None:
        if budget < 1:
            raise ValueError(f"budget must be >= 1, got {budget}")
        if max_paths < 1:
            raise ValueError(f"max_paths must be >= 1, got {max_paths}")
        if decision is Decision.NONE:
            raise ValueError("decision must be ACCEPT or REJECT")
        self.budget = budget
        self.max_paths = max_paths
        self.date_like_only = date_like_only
        self.decision = decision
        self.only_decision = decision
        self.name = name or type(self).__name__
        self.report_paths = report_paths
        self._paths: OrderedDict[str, set[int]] = OrderedDict()
        self._over: dict[str, int] = {}
        self._rejected = 0
        self._evicted = 0

    @staticmethod
    def _split(uri: str) -> tuple[str, str] | None:
        try:
            parts = urlsplit(uri)
            port = parts.port
        except ValueError:
            return None
        if not parts.query or not parts.hostname:
            return None
        host = parts.hostname.lower()
        key = f"{parts.scheme.lower()}://{host}{'' if port is None else f':{port}'}{parts.path}"
        return key, parts.query

    def decide(self, curi: CrawlURI) -> Decision:
        split = self._split(curi.uri)
        if split is None:
            return Decision.NONE
        key, query = split
        if self.date_like_only and not _date_like(query):
            return Decision.NONE
        h = hash(query)
        seen = self._paths.get(key)
        if seen is None:
            seen = self._paths[key] = set()
            if len(self._paths) > self.max_paths:
                self._paths.popitem(last=False)
                self._evicted += 1
        else:
            self._paths.move_to_end(key)
        if h in seen:
            return Decision.NONE
        if len(seen) < self.budget:
            seen.add(h)
            return Decision.NONE
        self._rejected += 1
        if key in self._over or len(self._over) < self.report_paths:
            self._over[key] = self._over.get(key, 0) + 1
        return self.decision

    def stats(self) -> dict[str, Any]:
        """``{"budget", "paths_tracked", "paths_evicted", "decided", "over_budget":
        {path: n}}``."""
        return {
            "budget": self.budget,
            "paths_tracked": len(self._paths),
            "paths_evicted": self._evicted,
            "decided": self._rejected,
            "over_budget": dict(self._over),
        }
