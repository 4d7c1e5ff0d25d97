"""The replay app's HTML pages other than mementos: the search-form redirect, the
collection page, the capture calendar / URL lists, "Not in archive" (404), "Capture
damaged" (503), blocked (451) and the diff view.

:class:`PageViews` is a mixin of :class:`~webark.apps.replay.app.ReplayServer` (which
dispatches requests to these methods); it reads the server's ``pages``,
``collections`` and ``rewrite_limit``. Methods without ``async`` do blocking index and
WARC reads: the server runs them in worker threads.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote, urlencode

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from webark.apps.replay.calendar import build_calendar, build_url_list
from webark.apps.replay.diff import side_by_side, visible_lines
from webark.apps.replay.memento import display_date
from webark.apps.replay.pages import Pages
from webark.apps.replay.paths import (
    APP_PREFIX,
    Target,
    archival_url,
    captures_url,
    clamp_timestamp,
    coll_prefix,
    fix_url,
)
from webark.apps.replay.screenshots import (
    WITHOUT_SCREENSHOTS,
    thumbnails_for_rows,
    thumbnails_for_urls,
)
from webark.apps.replay.select import Blocked, Missing, select_capture
from webark.apps.replay.sources import ReplayCollections, ReplayContext
from webark.cdx.line import CdxLine
from webark.index.capture_select import captures, closest, is_replayable
from webark.index.source import resolve_match
from webark.warc.payload import DecodedTooLarge, decode_content

#: Rows of a capture list, URLs of a URL list, similar URLs on a 404 page.
MAX_ROWS, MAX_URLS, MAX_SIMILAR = 2000, 1000, 20


class PageViews:
    """The pages of the module docstring, as methods of the replay server."""

    pages: Pages
    collections: ReplayCollections
    rewrite_limit: int

    def search(self, request: Request) -> Response:
        """Redirect a search form to its page (see :meth:`app_file`)."""
        q = request.query_params
        names = self.collections.names()
        coll = q.get("coll") or (names[0] if len(names) == 1 else "")
        url = (q.get("url") or "").strip()
        ts = re.sub(r"\D", "", q.get("ts") or "")[:14]
        if not coll or coll not in names:
            return self.pages.error(400, "Which collection?", "Choose a collection to search.")
        prefix = coll_prefix("/", coll)
        if not url:
            return RedirectResponse(prefix, 303)
        if url.startswith("*.") or url.endswith("*"):
            return RedirectResponse(f"{prefix}*/{quote(url, safe=':/?#[]@!$&()*+,;=%~')}", 303)
        url = fix_url(url)
        if ts:
            return RedirectResponse(archival_url(prefix, ts, url), 303)
        return RedirectResponse(captures_url(prefix, url), 303)

    # -- pages ---------------------------------------------------------------------------
    async def collection_page(
        self, request: Request, ctx: ReplayContext, raw_path: str
    ) -> Response:
        """``/{coll}/``: search form and the first URLs of the collection (not the
        ``urn:view:`` / ``urn:thumbnail:`` screenshots: they are not pages);
        ``/{coll}`` redirects there, ``/{coll}/?url=…`` searches."""
        if not raw_path.endswith("/"):
            return RedirectResponse(coll_prefix("/", ctx.name), 301)
        if request.query_params.get("url"):
            items = [("coll", ctx.name), *request.query_params.multi_items()]
            return RedirectResponse(f"{APP_PREFIX}search?{urlencode(items)}", 303)

        def first_urls() -> list[Any]:
            # the keys of screenshots skipped, not filtered: a browser crawl has as many
            # screenshot lines as pages, and the list stops after 50 URLs
            lines = (x for rng in WITHOUT_SCREENSHOTS for x in ctx.source.scan(rng)
                     if is_replayable(x))  # fmt: skip
            rows, _ = build_url_list(
                (x for x in lines if not ctx.access.excluded(x)), max_urls=50
            )
            return rows

        hosts = await run_in_threadpool(first_urls)
        return self.pages.html("collection.html", coll=ctx.name, hosts=hosts)

    def capture_list(self, ctx: ReplayContext, target: Target) -> Response:
        """``/{coll}/*/{url}``: calendar of an exact URL; for ``url*`` (prefix) and
        ``*.host`` (domain) the list of URLs. A timestamp prefix (``2014*``) limits the
        captures to that period. Rows show the ``urn:thumbnail:`` of their capture
        (the URL's latest in a URL list) when there is one
        (:mod:`webark.apps.replay.screenshots`: one more index scan, not one per row)."""
        prefix = coll_prefix("/", ctx.name)
        raw = target.url
        if raw.startswith("http://*."):
            raw = raw[len("http://") :]
        url, match = resolve_match(raw)
        ts = target.timestamp
        try:
            lines = captures(ctx.source, url, match, ts, ts)
            kept = (x for x in lines if not ctx.access.excluded(x))
            if match != "exact":
                rows, more = build_url_list(kept, MAX_URLS)
                thumbs = thumbnails_for_urls(ctx, [(r.key, r.url, r.last) for r in rows],
                                             prefix)  # fmt: skip
                return self.pages.html("captures.html", coll=ctx.name, url=url, query_url=raw,
                                       urls=rows, truncated=more, thumbs=thumbs)  # fmt: skip
            cal = build_calendar(kept, MAX_ROWS)
        except ValueError as exc:
            return self.pages.error(400, "Bad URL", f"{target.url}: {exc}", ctx.name)
        thumbs = thumbnails_for_rows(ctx, url, [r.timestamp for r in cal.rows], prefix)
        last_ts = cal.rows[-1].timestamp if cal.rows else ""
        if cal.truncated:
            last = closest(ctx.source, url, None, limit=1)
            last_ts = last[0].timestamp if last else last_ts
        status = 200 if cal.total else 404
        if not cal.total:
            return self.not_found(ctx, url, None, [], "No captures of this URL.")
        return self.pages.html("captures.html", status, coll=ctx.name, url=url, urls=None,
                               cal=cal, last_ts=last_ts, thumbs=thumbs)  # fmt: skip

    def missing(self, ctx: ReplayContext, url: str, timestamp: str | None, sel: Missing,
                reason: str = "", headers: dict[str, str] | None = None) -> Response:  # fmt: skip
        """No capture to serve: 503 "Capture damaged" when a capture failed to load
        because of damaged storage (a missing or truncated WARC, unreadable bytes, a
        file name outside the collection; pywb answers its ``ArchiveLoadFailed`` with
        503 too), else the 404 "Not in archive" page. Messages name CDX file names,
        never server paths (issue 20 items 4 and 7)."""
        why = "; ".join(sel.failures[:3])
        if sel.damaged:
            when = f" at {timestamp}" if timestamp else ""
            message = (f"The archive has captures of {url}{when}, but their stored records "
                       f"are missing or damaged: {why}")  # fmt: skip
            return self.pages.error(503, "Capture damaged", message, ctx.name, headers)
        reason = "; ".join(x for x in (reason, why) if x)
        return self.not_found(ctx, url, timestamp, sel.tried, reason, headers)

    def not_found(self, ctx: ReplayContext, url: str, timestamp: str | None,
                  tried: list[CdxLine], reason: str = "",
                  headers: dict[str, str] | None = None) -> Response:  # fmt: skip
        """The 404 "Not in archive" page: ``tried`` (captures of the URL that could not
        be served) and similar URLs (same folder, then same host)."""
        similar: list[Any] = []
        try:
            for base, match in _similar_queries(url):
                lines = captures(ctx.source, base, match)
                rows, _ = build_url_list(
                    (x for x in lines if not ctx.access.excluded(x)), MAX_SIMILAR + 1
                )
                similar = [r for r in rows if r.url != url][:MAX_SIMILAR]
                if similar:
                    break
        except ValueError:
            similar = []
        return self.pages.html("not_found.html", 404, headers, coll=ctx.name, url=url,
                               timestamp=timestamp, nearest=tried[:10], similar=similar,
                               reason=reason)  # fmt: skip

    def blocked(self, ctx: ReplayContext, sel: Blocked) -> Response:
        """451 for a capture blocked by an access rule (RFC 7725)."""
        rule = sel.decision.rule
        note = getattr(rule, "note", "") if rule is not None else ""
        return self.pages.html("blocked.html", 451, coll=ctx.name, url=sel.line.url,
                               timestamp=sel.line.timestamp, note=note)  # fmt: skip

    def diff_page(self, ctx: ReplayContext, target: Target) -> Response:
        """``/{coll}/diff/{ts1}/{ts2}/{url}``: side-by-side text diff of the captures
        closest to ``ts1`` and ``ts2`` (both must be HTML)."""
        texts: list[list[str]] = []
        stamps: list[str] = []
        for ts in (target.timestamp, target.timestamp2):
            sel = select_capture(ctx, target.url, clamp_timestamp(ts or ""))
            if isinstance(sel, Blocked):
                return self.blocked(ctx, sel)
            if isinstance(sel, Missing):
                return self.missing(ctx, target.url, ts, sel)
            rc = sel.capture
            ctype = (rc.header("Content-Type") or rc.line.mime or "").lower()
            if "html" not in ctype:
                return self.pages.error(
                    400, "Not an HTML page",
                    f"The capture at {display_date(rc.line.timestamp)} is {ctype or 'untyped'}; "
                    "the diff view compares HTML pages.", ctx.name,
                )  # fmt: skip
            limit = self.rewrite_limit
            with rc.payload_stream() as f:
                body = f.read(limit + 1)
            too_large = len(body) > limit
            if not too_large:
                try:
                    body = decode_content(body, rc.header("Content-Encoding"), limit=limit)
                except DecodedTooLarge:
                    too_large = True
                except ValueError:
                    pass  # compared as stored
            if too_large:
                return self.pages.error(
                    413, "Too large to compare",
                    f"The capture at {display_date(rc.line.timestamp)} is over "
                    f"{limit:,} bytes once decoded.", ctx.name,
                )  # fmt: skip
            texts.append(visible_lines(body))
            stamps.append(rc.line.timestamp)
        rows, changed = side_by_side(texts[0], texts[1])
        return self.pages.html("diff.html", coll=ctx.name, url=target.url, ts1=stamps[0],
                               ts2=stamps[1], rows=rows, changed=changed,
                               same=changed == 0)  # fmt: skip


def _similar_queries(url: str) -> Iterator[tuple[str, Any]]:
    """Queries for similar URLs: the URL's folder (prefix), then its host."""
    base = url.split("?", 1)[0].split("#", 1)[0]
    scheme_end = base.find("://")
    slash = base.rfind("/")
    if scheme_end >= 0 and slash > scheme_end + 2:
        folder = base[: slash + 1]
        host_end = base.find("/", scheme_end + 3)
        if slash > host_end:
            yield folder, "prefix"
        yield base[:host_end + 1] if host_end > 0 else base, "host"
    else:
        yield base, "host"
