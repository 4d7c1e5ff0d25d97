"""The bulk crawler's processor chains (:mod:`webark.crawl.processing`), built for one
crawl: fetch (``preconditions``, ``fetchHttp``), extract (``extractors``) and
disposition (``warcWriter``, ``candidates``, ``disposition``)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from webark.crawl.context import CrawlContext
from webark.crawl.extract.pool import ExtractPool
from webark.crawl.processing import Processor, ProcessorChain
from webark.crawl.processors.disposition import Candidates, Disposition, WarcWriter
from webark.crawl.processors.extractors import Extractors
from webark.crawl.processors.fetch_http import FetchHttp
from webark.crawl.processors.preconditions import Preconditions
from webark.crawl.processors.robots import RobotsPrerequisite
from webark.crawl.resume import ResumeLog

__all__ = ["CrawlChains", "build_chains"]


@dataclass(frozen=True)
class CrawlChains:
    """The three chains of one crawl, and the parts the controller needs by name.

    Attributes:
        fetch, extract, disposition: the chains.
        finisher: the ``disposition`` processor (it finishes a URI that failed with a
            bug, as -5).
        robots: the robots.txt prerequisite (its state database is closed at the end).
    """

    fetch: ProcessorChain
    extract: ProcessorChain
    disposition: ProcessorChain
    finisher: Disposition
    robots: RobotsPrerequisite

    @property
    def names(self) -> tuple[str, ...]:
        """Every processor's name, in order (the processors report's rows)."""
        return self.fetch.names + self.extract.names + self.disposition.names


def build_chains(ctx: CrawlContext, pool: ExtractPool, resume_log: ResumeLog,
                 extra: Sequence[Processor] = ()) -> CrawlChains:  # fmt: skip
    """The chains of the crawl ``ctx`` (its job folder's ``state/robots.sqlite`` is
    opened for the robots.txt prerequisite). ``extra`` processors (a crawl extension's,
    e.g. continuous crawling's ``rssFeeds``) go into the disposition chain after
    ``warcWriter``, before ``candidates``; the context's ``fetch_processors`` go into
    the fetch chain before ``fetchHttp``, its ``extract_processors`` after
    ``extractors`` (:class:`~webark.crawl.context.CrawlContext`)."""
    job, board = ctx.job, ctx.stats.board
    robots = RobotsPrerequisite(ctx, job.state_dir / "robots.sqlite", job.warcs_dir, resume_log)
    finisher = Disposition(ctx)
    ctx.robots = robots
    return CrawlChains(
        fetch=ProcessorChain("fetch", [Preconditions(ctx, robots, resume_log),
                                       *ctx.fetch_processors, FetchHttp(ctx)], board),
        extract=ProcessorChain("extract", [Extractors(ctx, pool), *ctx.extract_processors],
                               board),
        disposition=ProcessorChain(
            "disposition", [WarcWriter(ctx), *extra, Candidates(ctx), finisher], board, final=True
        ),
        finisher=finisher,
        robots=robots,
    )
