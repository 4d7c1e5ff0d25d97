"""The replay app's full-text search page, ``/{coll}/search?q=…&page=N``
(``&output=json`` for the same results as JSON, as ``webark search query --json``).

Hits come from the collection's search index (:func:`webark.search.open_search`),
one per URL, each linking to its capture (``/{coll}/{timestamp}/{url}``, the capture
the snippet was taken from) and to the URL's capture list (``/{coll}/*/{url}``).
Access rules apply: a hit whose capture is excluded or blocked is left out (its
snippet is the capture's content), so a page may hold fewer hits than asked and the
total is "about". Search indexes are opened once per collection and kept while its
``collection.toml`` is unchanged.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

from starlette.responses import JSONResponse, Response

from webark.apps.replay.pages import Pages
from webark.apps.replay.paths import archival_url, captures_url, coll_prefix
from webark.apps.replay.sources import ReplayContext
from webark.index.collection import CONFIG_NAME, Collection, CollectionError
from webark.index.source import IndexUnavailable
from webark.search import find_search
from webark.search.backend import SearchIndex, SearchResults
from webark.search.query import EmptyQuery

#: Results per page of the search page (each hit's snippet costs a pass over its text).
PAGE_SIZE = 10
#: Highest page number served (deep pages cost a scan of every match).
MAX_PAGE = 50


def results_json(results: SearchResults, prefix: str) -> dict[str, object]:
    """``results`` as JSON (the page's ``output=json`` and ``webark search query
    --json``): hits with their replay link (``prefix`` is ``/{coll}/`` or an absolute
    ``http://host:port/{coll}/``) and the snippet with ``<mark>`` around matches (the
    snippet text is not HTML-escaped: it is text with marks)."""
    return {
        "query": results.query, "total": results.total, "offset": results.offset,
        "hits": [{
            "url": h.url, "wayback_date": h.wayback_date, "crawl_date": h.crawl_date,
            "title": h.title, "captures": h.captures, "score": h.score,
            "snippet": "".join(f"<mark>{t}</mark>" if on else t for t, on in h.snippet),
            "content_type_norm": h.content_type_norm, "content_language": h.content_language,
            "replay": archival_url(prefix, h.wayback_date, h.url),
            "captures_list": captures_url(prefix, h.url),
            "source_file_path": h.source_file_path, "source_file_offset": h.source_file_offset,
        } for h in results.hits],
    }  # fmt: skip


class FullTextSearch:
    """The search page (module docstring) for a :class:`ReplayServer
    <webark.apps.replay.app.ReplayServer>`; thread-safe (called from worker threads)."""

    def __init__(self, pages: Pages):
        self.pages = pages
        self._lock = threading.Lock()
        self._open: dict[Path, tuple[int, SearchIndex | None]] = {}

    def close(self) -> None:
        with self._lock:
            for _, index in self._open.values():
                if index is not None:
                    index.close()
            self._open.clear()

    def _index(self, folder: Path) -> SearchIndex | None:
        """The search index of the collection in ``folder``; None when it has none.

        Raises:
            IndexUnavailable: it has one that cannot be used.
        """
        cfg = folder / CONFIG_NAME
        try:
            stamp = os.stat(cfg).st_mtime_ns
        except OSError:
            return None  # a pywb-layout folder: no search index
        with self._lock:  # one opening at a time: two threads never race to open
            hit = self._open.get(folder)
            if hit is not None and hit[0] == stamp and hit[1] is not None:
                return hit[1]
            try:
                index = find_search(Collection.open(folder))
            except CollectionError as exc:
                raise IndexUnavailable(str(exc)) from exc
            # an index replaced (collection.toml changed) is not closed here: other
            # threads may be in the middle of a query on it; it goes when unreferenced
            self._open[folder] = (stamp, index)
        return index

    def page(self, ctx: ReplayContext, params: Any, base_url: str) -> Response:
        """The response to ``/{ctx.name}/search`` with query ``params`` (a mapping:
        ``q``, ``page``, ``output``); ``base_url`` is the server's (for JSON links)."""
        q = (params.get("q") or "").strip()
        try:
            page = min(max(1, int(params.get("page") or 1)), MAX_PAGE)
        except ValueError:
            page = 1
        as_json = params.get("output") == "json"
        values: dict[str, Any] = {"coll": ctx.name, "q": q, "page": page, "results": None,
                                  "hidden": 0, "no_index": False, "error": ""}  # fmt: skip
        index = self._index(ctx.folder)
        if index is None:
            if as_json:
                return JSONResponse({"error": "no search index"}, 404)
            values["no_index"] = True
            return self.pages.html("search.html", 404, **values)
        if not q:
            return self.pages.html("search.html", **values)
        try:
            results = index.search(q, limit=PAGE_SIZE, offset=(page - 1) * PAGE_SIZE)
        except EmptyQuery as exc:
            if as_json:
                return JSONResponse({"error": str(exc)}, 400)
            values["error"] = str(exc)
            return self.pages.html("search.html", 400, **values)
        kept = tuple(h for h in results.hits
                     if ctx.access.policy(h.url, h.wayback_date) == "allow")  # fmt: skip
        values["hidden"] = len(results.hits) - len(kept)
        results = SearchResults(results.query, results.total, results.offset, kept)
        if as_json:
            return JSONResponse(results_json(results, coll_prefix(base_url, ctx.name)))
        values["results"] = results
        values["more"] = results.offset + PAGE_SIZE < results.total and page < MAX_PAGE
        return self.pages.html("search.html", **values)
