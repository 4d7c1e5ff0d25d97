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
        return True

    async def process(self, p: UriProcessing) -> None:
        ctx = self.ctx
        assert ctx.fetcher is not None and ctx.backend is not None
        validators = ctx.backend.validators(p.curi.uri)
        ex = await ctx.fetches.run(ctx.fetcher.fetch(p.curi.uri, headers=validators))
        p.exchange = ex
        p.status = ex.status
        scope = ctx.scope
        if ex.ok and scope.has_fetch_rules:
            decision, rule = scope.after_fetch(p.curi, ex.mime, ex.status)
            if decision is Decision.REJECT:
                p.extra.update(httpStatus=ex.status, rejectedBy=rule)
                p.skip_to_disposition(S_OUT_OF_SCOPE)
