"""The disposition chain (Heritrix's ``WarcWriterProcessor``, ``CandidatesProcessor``,
``DispositionProcessor``), run for every URI taken from the frontier, in this order,
with no ``await`` between the crawl.log line and :meth:`Frontier.finished`:

* ``warcWriter`` — the capture (response or revisit, request, metadata with the
  outlinks) through the capture back end (:meth:`~webark.capture.CaptureBackend.archive`:
  dedup decision, records, write, dedup index update);
* ``candidates`` — the outlinks through the scope into the frontier, **before** the URI
  is reported finished (crash safety: an earlier state of the frontier can then only
  refetch, never lose a URI); URIs of a queue blocked by a quota get their -5003 line,
  redirect targets the scope rejects their -4xxx line
  (:mod:`~webark.crawl.processors.redirects`);
* ``disposition`` — the final crawl.log line, written only when the frontier will not
  retry the URI (:func:`~webark.crawl.frontier.disposition`, the one retry rule), then
  :meth:`~webark.crawl.frontier.Frontier.finished`, which sets the queue's politeness
  delay ``clamp(delay_factor × fetch time, min_delay, max_delay)``, raised to
  Crawl-delay. The lines of URIs a queue quota blocked follow (``Q:`` annotation).
  Each URI finished for good is then told to the context's listeners
  (:meth:`~webark.crawl.context.CrawlContext.uri_finished`).

Outlinks are judged by :meth:`~webark.crawl.context.CrawlContext.scope_for` the URI they
come from (the job's scope, or its source tag's: continuous crawling).
"""

from __future__ import annotations

from collections.abc import Iterable

from webark.capture import capture_line
from webark.crawl.context import CrawlContext, capture_meta
from webark.crawl.curi import CrawlURI
from webark.crawl.frontier import Outcome, disposition
from webark.crawl.politeness import is_backoff_status
from webark.crawl.processing import UriProcessing
from webark.crawl.processors.redirects import DroppedRedirects
from webark.crawl.scope import Decision
from webark.crawl.waiting import RetryNote
from webark.crawllog.status import S_BLOCKED_BY_QUOTA

__all__ = ["Candidates", "Disposition", "WarcWriter", "log_blocked", "log_unfetched"]

_MAX_QUEUED_MEMO = 200_000
#: crawl.log annotation of a URI blocked by a per-host quota (Heritrix QuotaEnforcer keys)
_QUOTA_ANNOTATION = "Q:hostQuota"


class WarcWriter:
    """The ``warcWriter`` processor (module docstring); a URI already captured (the
    hybrid crawl's page loaded by the browser through the archiving proxy, which wrote
    it) is not written again."""

    name = "warcWriter"

    def __init__(self, ctx: CrawlContext) -> None:
        self.ctx = ctx

    def should_process(self, p: UriProcessing) -> bool:
        return p.fetched and p.capture is None

    async def process(self, p: UriProcessing) -> None:
        ctx = self.ctx
        assert ctx.backend is not None and p.exchange is not None
        outlinks = tuple(f"{lk.url} {lk.hop} {lk.context}" for lk in p.links)
        p.capture = await ctx.backend.archive(p.exchange, capture_meta(p.curi, p.worker, outlinks))
        if p.capture.revisit_of is not None:
            ctx.stats.note_revisit(p.curi.uri, p.capture.revisit_of.target_uri)


class Candidates:
    """The ``candidates`` processor (module docstring)."""

    name = "candidates"

    def __init__(self, ctx: CrawlContext) -> None:
        self.ctx = ctx
        self.dropped_redirects = DroppedRedirects(ctx)

    def should_process(self, p: UriProcessing) -> bool:
        return p.fetched

    async def process(self, p: UriProcessing) -> None:
        ctx = self.ctx
        assert ctx.frontier is not None
        ctx.stats.board.add_items(self.name, len(p.links))
        known = ctx.queued
        scope = ctx.scope_for(p.curi)
        children = []
        for lk in p.links:
            if lk.url in known:  # already in the frontier: adding it again is a no-op
                continue
            child = p.curi.child(lk.url, lk.hop)
            if lk.hop != "R":
                if scope.decide(child) is Decision.ACCEPT:
                    children.append(child)
                continue
            decision, rule = scope.decide_with_rule(child)
            if decision is Decision.ACCEPT:
                children.append(child)
            else:
                self.dropped_redirects.log(child, rule, p.worker)
        if not children:
            return
        blocked: list[CrawlURI] = []
        ctx.frontier.add_many(children, blocked=blocked)
        if len(known) > _MAX_QUEUED_MEMO:
            known.clear()
        known.update(c.uri for c in children)
        log_blocked(ctx, blocked, p.worker)


class Disposition:
    """The ``disposition`` processor (module docstring)."""

    name = "disposition"

    def __init__(self, ctx: CrawlContext) -> None:
        self.ctx = ctx

    def should_process(self, p: UriProcessing) -> bool:
        return True

    async def process(self, p: UriProcessing) -> None:
        self.finish(p)

    def finish(self, p: UriProcessing) -> None:
        """Log (unless retried) and finish ``p`` (synchronous: nothing can come between
        the line and the frontier)."""
        ctx = self.ctx
        assert ctx.frontier is not None
        curi, ex, status = p.curi, p.exchange, p.status
        if disposition(status, curi.retries, ctx.frontier_config) is Outcome.FINISHED:
            notes = [*p.annotations]
            if curi.retries:
                notes.append(f"{curi.retries + 1}t")
            redirect = next((lk.url for lk in p.links if lk.hop == "R"), None)
            line = capture_line(curi.uri, status, capture_meta(curi, p.worker), exchange=ex,
                                result=p.capture, annotations=tuple(notes),
                                extra=p.extra or None)  # fmt: skip
            duplicate = p.capture is not None and p.capture.revisit_kind == "digest"
            ctx.log(line, seed=curi.seed, duplicate=duplicate, redirect=redirect)
        duration, retry_after, size = 0.0, None, 0
        if ex is not None:
            duration = ex.duration_ms / 1000.0
            if ex.ok:
                retry_after, size = ex.header("Retry-After"), ex.payload_size
        result = ctx.frontier.finished(curi, status, duration, crawl_delay=p.crawl_delay,
                                       retry_after=retry_after, size=size)  # fmt: skip
        p.done = True
        log_blocked(ctx, result.blocked_uris, p.worker)
        if result.outcome is Outcome.FINISHED:
            ctx.uri_finished(curi, status)
        else:  # what an idle crawl waits for (webark.crawl.waiting)
            c = ctx.frontier_config
            limit = c.max_http_retries if is_backoff_status(status) else c.max_retries
            ctx.stats.pending_retries.note(
                RetryNote(curi.uri, status, curi.retries + 1, limit, result.due)
            )


def log_blocked(ctx: CrawlContext, uris: tuple[CrawlURI, ...] | list[CrawlURI],
                worker: int) -> None:  # fmt: skip
    """The -5003 lines of URIs a per-host quota blocked (Heritrix ``QuotaEnforcer``)."""
    log_unfetched(ctx, uris, S_BLOCKED_BY_QUOTA, worker, (_QUOTA_ANNOTATION,))


def log_unfetched(ctx: CrawlContext, uris: Iterable[CrawlURI], status: int, worker: int,
                  annotations: tuple[str, ...] = ()) -> None:  # fmt: skip
    """The final crawl.log line (size 0, no MIME type) of each URI the frontier finished
    with ``status`` without fetching it (-5003 quota, -5000 out of scope on recheck,
    -6000 deleted by the operator), counted in the stats and told to the listeners."""
    for c in uris:
        ctx.log(capture_line(c.uri, status, capture_meta(c, worker),
                             annotations=annotations), seed=c.seed)  # fmt: skip
        ctx.uri_finished(c, status)
