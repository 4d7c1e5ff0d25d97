"""What the processors of one crawl share: :class:`CrawlContext`, and how its parts are
made from the job (:func:`frontier_config`, :func:`capture_config`, :func:`http_fetcher`).

The controller creates the context and owns its lifecycle; processors read it at each
call (never copy a field), so that what the control API changes while the crawl runs
(the scope after added seeds, the politeness settings) takes effect at the next URI.
"""

from __future__ import annotations

import logging
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Protocol

from webark.capture import (
    CaptureConfig,
    CaptureMeta,
    SeriesConfig,
    WarcCaptureBackend,
    is_disk_full,
)
from webark.crawl.curi import CrawlURI
from webark.crawl.frontier import Frontier, FrontierConfig
from webark.crawl.job import CrawlJob
from webark.crawl.scope import DecideRuleSequence
from webark.crawl.stats import CrawlStats
from webark.crawl.stopping import InFlightFetches
from webark.crawllog import CrawlLogLine
from webark.fetch import FetchLimits, HttpFetcher
from webark.fetch.dns import OverrideResolver
from webark.robots import RobotsMode
from webark.warc.builders import WarcinfoFields

if TYPE_CHECKING:
    from webark.crawl.processing import Processor
    from webark.robots import RobotsPolicy

__all__ = [
    "CrawlContext",
    "HostSlotsLike",
    "RobotsRules",
    "UriListener",
    "capture_config",
    "capture_meta",
    "frontier_config",
    "http_fetcher",
]

log = logging.getLogger(__name__)


class UriListener(Protocol):
    """Told of every URI the crawl finishes for good (Heritrix's
    ``CrawlURIDispositionEvent`` with SUCCEEDED / FAILED / DISREGARDED; a URI that will
    be retried is not finished). Continuous crawling accounts its rounds with it."""

    def uri_finished(self, curi: CrawlURI, status: int) -> None:
        """``curi`` is finished with ``status`` (its crawl.log line is written and the
        frontier has it finished). Called synchronously from the disposition chain."""
        ...


class RobotsRules(Protocol):
    """The crawl's robots.txt rules (the ``preconditions`` processor's
    :class:`~webark.crawl.processors.robots.RobotsPrerequisite`), which browser traffic
    obeys too (:mod:`webark.crawl.browser.gate`)."""

    mode: RobotsMode

    async def policy_for(self, curi: CrawlURI, worker: int) -> tuple[RobotsPolicy | None, float]:
        """The policy of the URI's origin (fetched when not known; None: ignored) and
        the politeness delay owed, seconds."""
        ...


class HostSlotsLike(Protocol):
    """Per-host request slots shared by the bulk crawler and the browser's traffic
    (:class:`webark.crawl.browser.gate.HostSlots`)."""

    def hold(self, key: str, crawl_delay: float | None = None
             ) -> AbstractAsyncContextManager[None]:  # fmt: skip
        """Hold the slot of politeness key ``key`` while a request runs."""
        ...


def frontier_config(job: CrawlJob) -> FrontierConfig:
    """The frontier settings of ``job``: politeness, retries, quotas (per host: the
    queue key is the host)."""
    return FrontierConfig(
        delay_factor=job.delay_factor, min_delay=job.min_delay, max_delay=job.max_delay,
        crawl_delay_cap=job.crawl_delay_cap, max_retries=job.max_retries,
        retry_delay=job.retry_delay, max_http_retries=job.max_http_retries,
        backoff_base=job.backoff_base, backoff_max=max(job.backoff_base, 3600.0),
        max_uris=job.max_uris, max_bytes=job.max_bytes,
        max_uris_per_queue=job.max_uris_per_host, max_bytes_per_queue=job.max_bytes_per_host,
        queue_overrides=MappingProxyType({k: dict(v) for k, v in job.hosts.items()}),
    )  # fmt: skip


def capture_config(job: CrawlJob, job_name: str) -> CaptureConfig:
    """The capture back end of ``job``: its WARCs, crawl.log and dedup settings."""
    return CaptureConfig(
        series=SeriesConfig(
            job.warcs_dir, prefix=job.warc_prefix, max_size=job.warc_max_size,
            compression=job.warc_compression,  # type: ignore[arg-type]
            hybrid=job.hybrid_compression,
            warcinfo=WarcinfoFields.for_this_host(
                operator=job.operator or "; ".join(job.contact),
                http_header_user_agent=job.user_agent, robots=RobotsMode(job.robots).value,
                is_part_of=job_name,
            ),
        ),
        crawl_log=job.logs_dir / "crawl.log",
        dedup_index=job.dedup_path if job.dedup else None,
        dedup_policy=job.dedup_rules(),
        conditional_requests=job.conditional_requests,
        original_dirs=(job.dedup_path.parent.parent / "warcs",),
    )  # fmt: skip


def fetch_limits(job: CrawlJob) -> FetchLimits:
    """The limits of every fetch of ``job``: its connect, read and total timeouts and
    the bytes recorded per response (``max_fetch_bytes``, 1 GiB by default: an endless
    body is kept cut there, ``lenTrunc``)."""
    return FetchLimits(connect_timeout=job.connect_timeout, read_timeout=job.read_timeout,
                       total_timeout=job.total_timeout, max_size=job.max_fetch_bytes)  # fmt: skip


def http_fetcher(job: CrawlJob) -> HttpFetcher:
    """The HTTP fetcher of ``job`` (User-Agent and ``From`` with the operator's contact,
    :func:`fetch_limits`, ``resolve`` overrides, the private-address guard). With
    ``resolve_only`` no name goes to the system resolver: a host without a ``resolve``
    entry does not resolve (a crawl on loopback cannot leak a lookup, e.g. of a seed added
    through the control API)."""
    headers = [("From", job.contact_email)] if job.contact_email else []
    resolve = dict(job.resolve)
    return HttpFetcher(
        job.user_agent, limits=fetch_limits(job),
        resolve=None if job.resolve_only else resolve or None,
        resolver=OverrideResolver(resolve, None) if job.resolve_only else None,
        allow_private=job.allow_private, default_headers=headers,
    )  # fmt: skip


def capture_meta(curi: CrawlURI, worker: int, outlinks: tuple[str, ...] = ()) -> CaptureMeta:
    """The :class:`~webark.capture.CaptureMeta` of a capture of ``curi`` by worker
    ``worker``: its hop path, via and source tag, and its outlink lines."""
    return CaptureMeta(via=curi.via, hop_path=curi.hops, source_tag=curi.source,
                       worker=worker, outlinks=outlinks)  # fmt: skip


@dataclass
class CrawlContext:
    """The state of one running crawl that processors use.

    Attributes:
        job: the job (replaced by the control API when seeds or delays change).
        frontier_config: politeness, retry and quota settings.
        scope: the decide-rule sequence candidates go through.
        stats: the crawl's statistics.
        fetcher: the HTTP fetcher (set before the crawl starts).
        frontier: the frontier (set when the crawl opens).
        backend: the capture back end (set when the crawl opens).
        disk_full: set once a write failed for lack of space; nothing more is written.
        listeners: told of each finished URI (:class:`UriListener`).
        source_scopes: scopes for the outlinks of URIs by source tag, instead of
            :attr:`scope` (continuous crawling judges what its sites' rounds derive by
            their hop path); see :meth:`scope_for`.
        run_while_empty: an empty frontier does not end the crawl (Heritrix's
            ``runWhileEmpty``, set by continuous crawling): it runs until stopped or a
            crawl quota is reached.
        fetch_processors: processors a crawl extension puts into the fetch chain after
            ``preconditions``, before ``fetchHttp`` (the hybrid crawl's ``browserPage``
            loads a delegated URI instead of the fetch); set before the chains are built.
        extract_processors: processors put into the extract chain after ``extractors``
            (the hybrid crawl's ``browserRender``).
        hold_queues: a fetched URI's queue is never released before the URI is
            finished (:mod:`webark.crawl.pipeline`): the hybrid crawl keeps a host busy
            while its page is in the browser.
        host_slots: per-host request slots that ``fetchHttp`` takes for each fetch
            (the hybrid crawl shares them with the browser's requests), or None.
        robots: the robots.txt rules, once the chains are built.
    """

    job: CrawlJob
    frontier_config: FrontierConfig
    scope: DecideRuleSequence
    stats: CrawlStats
    fetcher: HttpFetcher | None = None
    frontier: Frontier | None = None
    backend: WarcCaptureBackend | None = None
    disk_full: bool = False
    listeners: list[UriListener] = field(default_factory=list)
    source_scopes: dict[str, DecideRuleSequence] = field(default_factory=dict)
    run_while_empty: bool = False
    fetch_processors: list[Processor] = field(default_factory=list)
    extract_processors: list[Processor] = field(default_factory=list)
    hold_queues: bool = False
    host_slots: HostSlotsLike | None = None
    robots: RobotsRules | None = None
    fetches: InFlightFetches = field(default_factory=InFlightFetches)
    """The fetches under way, which a stop aborts after ``stop_grace``
    (:mod:`webark.crawl.stopping`)."""
    queued: set[str] = field(default_factory=set)
    """Outlinks this run has already accepted and handed to the frontier (bounded):
    the frontier's seen filter would ignore them, so they skip the scope and the
    frontier (Heritrix runs the scope first; the outcome is the same, as adding a URI is
    a no-op once it was added)."""

    def log(
        self,
        line: CrawlLogLine,
        *,
        seed: bool = False,
        duplicate: bool = False,
        redirect: str | None = None,
    ) -> None:
        """Write a final crawl.log line through the capture back end and count it in
        the statistics (``duplicate``: a digest revisit; ``redirect``: where a seed
        redirects, for the seeds report)."""
        assert self.backend is not None
        self.backend.log(line)
        self.stats.record(
            line.uri, line.status, line.size or 0, line.mime_type, seed=seed,
            source=line.source_tag, duplicate=duplicate, redirect=redirect,
            annotations=line.annotations,
        )  # fmt: skip

    def scope_for(self, curi: CrawlURI) -> DecideRuleSequence:
        """The scope that judges the outlinks of ``curi``: the scope of its source tag
        in :attr:`source_scopes`, else the job's :attr:`scope`."""
        if curi.source is not None and self.source_scopes:
            return self.source_scopes.get(curi.source, self.scope)
        return self.scope

    def uri_finished(self, curi: CrawlURI, status: int) -> None:
        """Tell the :attr:`listeners` that ``curi`` is finished with ``status``. A
        listener's bug is logged, not raised (the URI is finished either way); a full
        disk is raised (the crawl stops)."""
        for listener in self.listeners:
            try:
                listener.uri_finished(curi, status)
            except Exception as e:
                if is_disk_full(e):
                    raise
                log.exception("listener %r failed for %s", listener, curi.uri)
