"""Crawl extensions: work that runs beside the workers for a crawl's whole run, hooked
into it at a few explicit points (continuous crawling from feeds, :mod:`webark.crawl.rss`,
is one).

An extension is opened once the frontier and the capture back end are open
(:meth:`CrawlExtension.open`), may add processors to the disposition chain, listen to
finished URIs (:attr:`~webark.crawl.context.CrawlContext.listeners`), give the outlinks
of its URIs their own scope (:attr:`~webark.crawl.context.CrawlContext.source_scopes`),
keep the crawl running on an empty frontier
(:attr:`~webark.crawl.context.CrawlContext.run_while_empty`) and add reports; its
:meth:`~CrawlExtension.run` is a task of the crawl's event loop, cancelled when the
crawl closes (then :meth:`~CrawlExtension.close`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from webark.crawl.browser.delegate import ProxyLauncher
    from webark.crawl.context import CrawlContext
    from webark.crawl.job import CrawlJob
    from webark.crawl.processing import Processor
    from webark.crawl.reports import Report

__all__ = ["CrawlExtension", "job_extensions"]


class CrawlExtension(Protocol):
    """Something that runs beside a crawl (module docstring)."""

    reports: tuple[Report, ...]
    """Reports it adds to the crawl's (written at the end, live in the control API)."""

    def open(self, ctx: CrawlContext, wake: Callable[[], None]) -> Sequence[Processor]:
        """Start with the crawl ``ctx`` (frontier and back end open; on ``--resume``,
        after the frontier put its in-flight URIs back). ``wake`` wakes an idle worker
        (call it after adding to the frontier). Returns the processors to put into the
        disposition chain after ``warcWriter``."""
        ...

    async def run(self) -> None:
        """The extension's own loop, until cancelled (an exception stops the crawl)."""
        ...

    def close(self) -> None:
        """Release what it holds (the crawl is over, or aborted)."""
        ...


def job_extensions(job: CrawlJob, proxy: ProxyLauncher | None = None) -> list[CrawlExtension]:
    """The extensions a job asks for: continuous crawling for an ``rss:`` section, the
    hybrid crawl (:mod:`webark.crawl.browser.delegate`) for an enabled ``browser:``
    section, whose archiving proxy ``proxy`` starts (``webark crawl`` gives it).

    Raises:
        CrawlSetupError: an enabled ``browser:`` section without ``proxy``.
    """
    out: list[CrawlExtension] = []
    if job.rss is not None:
        from webark.crawl.rss.scheduler import RssScheduler

        out.append(RssScheduler(job))
    if job.browser is not None:
        from webark.crawl.browser.config import browser_settings

        if browser_settings(job.browser).enabled:
            from webark.crawl.browser.delegate import BrowserDelegation
            from webark.crawl.jobdir import CrawlSetupError

            if proxy is None:
                raise CrawlSetupError("the browser: section needs the crawl's archiving proxy: "
                                      "run the job with `webark crawl`, or pass "
                                      "extensions=job_extensions(job, proxy_launcher(...))")
            out.append(BrowserDelegation(job, proxy))
    return out
