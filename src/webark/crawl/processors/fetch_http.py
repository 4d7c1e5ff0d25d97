"""``fetchHttp``: the fetch of an http(s) URI (Heritrix ``FetchHTTP``).

:class:`~webark.fetch.HttpFetcher` never raises for network trouble: a failure is an
exchange with a negative Heritrix status. A recrawl sends ``If-None-Match`` /
``If-Modified-Since`` from the URL's last capture
(:meth:`~webark.capture.CaptureBackend.validators`), so an unchanged resource answers
``304`` and is written as a ``server-not-modified`` revisit.

Right after the fetch the scope's after-fetch rules (``reject_content_types``,
``reject_status``; :meth:`~webark.crawl.scope.DecideRuleSequence.after_fetch`) judge the
response, as Heritrix's ``FetchHTTP`` ``shouldFetchBodyRule`` does: a response they
reject is not archived and its links are not followed; its crawl.log line has status
-5000 (``S_OUT_OF_SCOPE``) and, in its extra info, the HTTP status and the rule
(``{"httpStatus": 404, "rejectedBy": "reject_status"}``).

A URI whose exchange a processor before it already made (the hybrid crawl's
``browserPage``: the browser loaded it through the archiving proxy) is not fetched
again. With the context's ``host_slots`` (the hybrid crawl) each fetch holds its host's
slot, shared with the browser's requests (:mod:`webark.crawl.browser.gate`).
"""

from __future__ import annotations

from webark.crawl.context import CrawlContext
from webark.crawl.processing import UriProcessing
from webark.crawl.scope import Decision
from webark.crawllog.status import S_OUT_OF_SCOPE

__all__ = ["FetchHttp"]


class FetchHttp:
    """The ``fetchHttp`` processor (module docstring)."""

    name = "fetchHttp"

    def __init__(self, ctx: CrawlContext) -> None:
        self.ctx = ctx

    def should_process(self, p: UriProcessing) -> bool:
        return p.exchange is None

    async def process(self, p: UriProcessing) -> None:
        ctx = self.ctx
        assert ctx.fetcher is not None and ctx.backend is not None
        validators = ctx.backend.validators(p.curi.uri)
        fetch = ctx.fetcher.fetch(p.curi.uri, headers=validators)
        if ctx.host_slots is None:
            ex = await ctx.fetches.run(fetch)
        else:
            async with ctx.host_slots.hold(p.curi.key, p.crawl_delay):
                ex = await ctx.fetches.run(fetch)
        p.exchange = ex
        p.status = ex.status
        scope = ctx.scope
        if ex.ok and scope.has_fetch_rules:
            decision, rule = scope.after_fetch(p.curi, ex.mime, ex.status)
            if decision is Decision.REJECT:
                p.extra.update(httpStatus=ex.status, rejectedBy=rule)
                p.skip_to_disposition(S_OUT_OF_SCOPE)
