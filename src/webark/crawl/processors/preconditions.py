"""``preconditions``: what must hold before a URI is fetched (Heritrix's
``Preselector`` and ``PreconditionEnforcer``).

1. **Scheme** — only http and https are fetched; anything else is finished with -7
   (``S_UNFETCHABLE_URI``, annotation ``err=unsupportedScheme``).
2. **DNS** — the first time a host name is seen (per run) it is looked up and recorded
   as a ``dns:HOST`` URI (hop ``P``, status 1, a ``text/dns`` response record), as
   Heritrix does; IP literals need none. A name that does not resolve finishes the URI
   with -6 (``S_DOMAIN_PREREQUISITE_FAILURE``), retried by the frontier like Heritrix's;
   the ``dns:`` URI gets its own failure line once that is final. ``dns:`` lookups
   logged by earlier runs are not recorded again while valid (6 h).
3. **robots.txt** — :class:`~webark.crawl.processors.robots.RobotsPrerequisite`; a URI
   robots.txt excludes is finished with -9998 (``S_ROBOTS_PRECLUDED``); when robots.txt
   could not be fetched (network error, 5xx: RFC 9309 "unreachable") with -61
   (``S_ROBOTS_PREREQUISITE_FAILURE``: RFC 9309 §2.3.1.4 says "disallow all", and
   Heritrix logs the URI as a failed prerequisite rather than as excluded). A network
   failure of the robots.txt fetch is first retried with the URI, deferred (-50), as
   Heritrix retries a prerequisite. When robots.txt was just fetched and allows the
   URI, the URI goes back to its queue for the politeness delay
   (:attr:`UriProcessing.requeue_after`, no line) and is fetched when it comes back.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from webark.capture import capture_line
from webark.core.digests import digest_label
from webark.crawl.context import CrawlContext, capture_meta
from webark.crawl.frontier import Outcome, disposition
from webark.crawl.processing import UriProcessing
from webark.crawl.processors.robots import RobotsDeferred, RobotsPrerequisite
from webark.crawl.resume import ResumeLog
from webark.crawllog.status import (
    S_DEFERRED,
    S_DOMAIN_PREREQUISITE_FAILURE,
    S_ROBOTS_PRECLUDED,
    S_ROBOTS_PREREQUISITE_FAILURE,
    S_UNFETCHABLE_URI,
)
from webark.fetch.dns import ip_literal
from webark.robots import RobotsStatus

__all__ = ["Preconditions"]


class Preconditions:
    """The ``preconditions`` processor (module docstring)."""

    name = "preconditions"

    def __init__(self, ctx: CrawlContext, robots: RobotsPrerequisite,
                 resume_log: ResumeLog) -> None:  # fmt: skip
        self.ctx = ctx
        self.robots = robots
        self.resume_log = resume_log
        self._dns_done: set[str] = set()

    def should_process(self, p: UriProcessing) -> bool:
        return True

    async def process(self, p: UriProcessing) -> None:
        curi = p.curi
        if urlsplit(curi.uri).scheme.lower() not in ("http", "https"):
            p.skip_to_disposition(S_UNFETCHABLE_URI, "err=unsupportedScheme")
            return
        ctx = self.ctx
        if ctx.job.dns_records and not await self._dns(p):
            p.skip_to_disposition(S_DOMAIN_PREREQUISITE_FAILURE)
            return
        try:
            policy, owed = await self.robots.policy_for(curi, p.worker)
        except RobotsDeferred:  # robots.txt is tried again with the URI
            p.skip_to_disposition(S_DEFERRED)
            return
        if policy is None:
            return
        p.crawl_delay = policy.crawl_delay(ctx.job.robots_token)
        if policy.status is RobotsStatus.UNREACHABLE:
            p.skip_to_disposition(S_ROBOTS_PREREQUISITE_FAILURE)
        elif not policy.allowed(curi.uri, ctx.job.robots_token, curi.last_hop,
                                mode=self.robots.mode):  # fmt: skip
            p.skip_to_disposition(S_ROBOTS_PRECLUDED)
        elif owed > 0:  # robots.txt just fetched: the URI waits in its queue, not here
            p.requeue_after = owed
            p.skip_to_disposition(0)

    async def _dns(self, p: UriProcessing) -> bool:
        """Look the host up once per run and record it (module docstring). Returns
        False when the host does not resolve."""
        ctx = self.ctx
        assert ctx.fetcher is not None and ctx.backend is not None
        host = urlsplit(p.curi.uri).hostname or ""
        if host in self._dns_done or ip_literal(host) is not None:
            return True
        if self.resume_log.dns_recorded(host, ctx.fetcher.dns_cache_seconds):
            self._dns_done.add(host)  # recorded by the run before a resume, still valid
            return True
        answer = await ctx.fetches.run(ctx.fetcher.lookup(host, fresh=True))
        pre = p.curi.child(answer.uri, "P")
        meta = capture_meta(pre, p.worker)
        if not answer.ok:
            retried = disposition(S_DOMAIN_PREREQUISITE_FAILURE, p.curi.retries,
                                  ctx.frontier_config) is Outcome.RETRY  # fmt: skip
            if not retried:  # final: the dns: URI gets its line
                ctx.log(capture_line(pre.uri, answer.status, meta,
                                     annotations=("err=DomainUnresolvable",)))  # fmt: skip
            return False
        self._dns_done.add(host)
        text = answer.text()
        result = await ctx.backend.archive_dns(answer, meta)
        ctx.log(capture_line(pre.uri, answer.status, meta, result=result, size=len(text),
                             mime="text/dns", began=answer.resolved_at,
                             digest=digest_label(text)))  # fmt: skip
        return True
