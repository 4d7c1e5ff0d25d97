"""What the control API and the CLI see of a running crawl: :class:`CrawlView`, the
properties of a :class:`~webark.crawl.controller.CrawlController` that read (and, for the
job, scope and frontier settings, replace) the parts of its
:class:`~webark.crawl.context.CrawlContext`. Processors read the context at every URI, so
a replacement takes effect at the next one.
"""

from __future__ import annotations

from webark.capture import WarcCaptureBackend
from webark.crawl.context import CrawlContext
from webark.crawl.frontier import Frontier, FrontierConfig
from webark.crawl.job import CrawlJob
from webark.crawl.scope import DecideRuleSequence
from webark.crawl.stats import CrawlStats
from webark.fetch import HttpFetcher

__all__ = ["CrawlView"]


class CrawlView:
    """The shared state of one crawl as properties (base of
    :class:`~webark.crawl.controller.CrawlController`).

    Args:
        ctx: the crawl's context (``ctx.fetcher`` set once the crawl runs).
    """

    def __init__(self, ctx: CrawlContext) -> None:
        self.ctx = ctx

    @property
    def job(self) -> CrawlJob:
        """The job (the control API replaces it when seeds or delays change)."""
        return self.ctx.job

    @job.setter
    def job(self, job: CrawlJob) -> None:
        self.ctx.job = job

    @property
    def scope(self) -> DecideRuleSequence:
        """The scope candidates go through (the control API rebuilds it for new seeds)."""
        return self.ctx.scope

    @scope.setter
    def scope(self, scope: DecideRuleSequence) -> None:
        self.ctx.scope = scope

    @property
    def frontier_config(self) -> FrontierConfig:
        """Politeness, retry and quota settings (the control API changes delays)."""
        return self.ctx.frontier_config

    @frontier_config.setter
    def frontier_config(self, config: FrontierConfig) -> None:
        self.ctx.frontier_config = config

    @property
    def stats(self) -> CrawlStats:
        return self.ctx.stats

    @property
    def frontier(self) -> Frontier | None:
        """The frontier, once the crawl is open."""
        return self.ctx.frontier

    @property
    def backend(self) -> WarcCaptureBackend | None:
        """The capture back end, once the crawl is open."""
        return self.ctx.backend

    @property
    def fetcher(self) -> HttpFetcher:
        assert self.ctx.fetcher is not None
        return self.ctx.fetcher

