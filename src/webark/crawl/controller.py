"""The crawl controller: the lifecycle of one crawl job (open or resume, workers, pause
and stop, close and reports). What happens to each URI is the processor chains'
(:mod:`webark.crawl.processing`, built by :mod:`webark.crawl.chains`); what is written
is the capture back end's (:mod:`webark.capture`).

One :class:`CrawlController` runs one job (:class:`~webark.crawl.job.CrawlJob`) in its
directory::

    JOBDIR/warcs/      WARC files (``….warc.gz.open`` while written)
    JOBDIR/logs/crawl.log   Heritrix 3 crawl.log, one final line per URI
    JOBDIR/logs/progress-statistics.log   Heritrix's progress log
                       (:mod:`webark.crawl.progress_log`)
    JOBDIR/logs/alerts.log, runtime-errors.log   warnings, processor failures
                       (:mod:`webark.crawl.error_logs`)
    JOBDIR/reports/    reports written at the end (text + JSON)
    JOBDIR/state/      frontier.sqlite, robots.sqlite, job.json, sessions.json,
                       dedup.sqlite (dedup on)
    JOBDIR/crawl.lock  flock held while a process crawls the job (PID inside)

Each worker takes a ready URI from the frontier and runs the fetch chain
(``preconditions``, ``fetchHttp``), then the extract chain (``extractors``) and the
disposition chain (``warcWriter``, ``candidates``, ``disposition``). A URI whose fate is
decided early (robots.txt, DNS, unsupported scheme) goes straight to the disposition
chain. Link extraction runs in worker processes (:class:`~webark.crawl.extract.pool.ExtractPool`,
``extract_processes``; ``WEBARK_EXTRACT_PROCESSES`` overrides it, 0 = in process), and a
queue without politeness delay is released right after the fetch so the next fetch of
the host overlaps the extraction (:mod:`webark.crawl.pipeline`).

The crawl ends when nothing is queued or in flight (unless an extension keeps it running:
continuous crawling, :mod:`webark.crawl.rss`), when ``max_uris`` successful fetches
are done, or on :meth:`CrawlController.request_stop` (SIGINT/SIGTERM in the CLI):
in-flight URIs finish, the WARCs are closed and the reports written. ``resume=True``
continues a stopped or killed job (:mod:`webark.crawl.resume`; captures written but not
logged before a kill are marked, :mod:`webark.crawl.orphans`). A full disk stops the
crawl cleanly: nothing more is written, the URIs in flight stay queued for
``--resume``.

Recrawls (``dedup_index`` pointing at an earlier job's index): with
``conditional_requests`` on (default), each URL whose last capture had an ``ETag`` /
``Last-Modified`` is fetched with ``If-None-Match`` / ``If-Modified-Since``; a ``304``
is written as a ``server-not-modified`` revisit of that capture (crawl.log ``304`` with
``duplicate:server-not-modified``), and its links are read from that capture's record.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from webark.capture import (
    WarcCaptureBackend,
    is_disk_full,
)
from webark.capture.backend import DedupStore
from webark.crawl.chains import CrawlChains, build_chains
from webark.crawl.context import CrawlContext, capture_config, frontier_config, http_fetcher
from webark.crawl.crawl_view import CrawlView
from webark.crawl.curi import CrawlURI
from webark.crawl.error_logs import AlertsLog
from webark.crawl.extension import CrawlExtension, job_extensions
from webark.crawl.extract.pool import ExtractPool, default_processes
from webark.crawl.frontier import Frontier
from webark.crawl.job import CrawlJob
from webark.crawl.jobdir import CrawlSetupError, JobLock, check_seeds, prepare_job_dir
from webark.crawl.orphans import find_orphans, mark_orphans
from webark.crawl.page_list import write_page_list
from webark.crawl.pipeline import UriPipeline
from webark.crawl.progress_log import ProgressStatisticsLog
from webark.crawl.reports import DEFAULT_REPORTS, Report, write_reports
from webark.crawl.resume import (
    ResumeLog,
    Sessions,
    settle_recovered,
)
from webark.crawl.scope import build_scope
from webark.crawl.stats import CrawlStats, StatsSnapshot
from webark.crawl.toe_threads import ToeThreads
from webark.fetch import HttpFetcher

__all__ = ["CrawlController", "CrawlSetupError", "CrawlSummary", "run_job"]

log = logging.getLogger(__name__)

_DISK_FULL = "disk full"


@dataclass(frozen=True)
class CrawlSummary:
    """What :meth:`CrawlController.run` returns."""

    snapshot: StatsSnapshot
    stop_reason: str
    warcs: tuple[str, ...]
    reports: tuple[Path, ...]
    disk_full: bool = False
    """The crawl stopped because the disk was full (resume it once there is room)."""


class CrawlController(CrawlView):
    """Runs one crawl job (see the module docstring).

    Args:
        job: the validated job.
        resume: continue the job in ``job.job_dir`` (repair WARCs, reopen the frontier).
        fetcher: a fetcher to use instead of an :class:`HttpFetcher` built from the job
            (tests); it is not closed by the controller.
        dedup: a dedup index (with its fetch history) to use instead of the job's
            ``state/dedup.sqlite`` (only consulted when given or ``job.dedup``).
        reports: the reports written at the end (default :data:`DEFAULT_REPORTS`).
        on_progress: called about twice a second with a stats snapshot (progress line).
        progress_interval: seconds between two progress calls.
        extract_processes: link extraction worker processes; None:
            ``$WEBARK_EXTRACT_PROCESSES`` or
            :func:`~webark.crawl.extract.pool.default_processes`.
        extensions: what runs beside the workers (:mod:`webark.crawl.extension`);
            None: those the job asks for (:func:`~webark.crawl.extension.job_extensions`:
            continuous crawling for an ``rss:`` section). Their reports are added.
    """

    def __init__(
        self,
        job: CrawlJob,
        *,
        resume: bool = False,
        fetcher: HttpFetcher | None = None,
        dedup: DedupStore | None = None,
        reports: tuple[Report, ...] = DEFAULT_REPORTS,
        on_progress: Callable[[StatsSnapshot], None] | None = None,
        progress_interval: float = 0.5,
        extract_processes: int | None = None,
        extensions: Sequence[CrawlExtension] | None = None,
    ) -> None:
        if extract_processes is None:
            env = os.environ.get("WEBARK_EXTRACT_PROCESSES", "").strip()
            extract_processes = int(env) if env.isdigit() else default_processes()
        self.extract_processes = extract_processes
        fconfig, scope = frontier_config(job), build_scope(job.scope, job.seeds)
        super().__init__(CrawlContext(job, fconfig, scope,
                                      CrawlStats(job_name=job.job_name or job.job_dir.name)))
        self.ctx.fetcher = fetcher
        self.resume = resume
        self._own_fetcher = fetcher is None
        self._dedup = dedup
        self.extensions = tuple(job_extensions(job) if extensions is None else extensions)
        self.reports = (*reports, *(r for e in self.extensions for r in e.reports))
        self.on_progress = on_progress
        self.progress_interval = progress_interval
        self.repaired: list[str] = []
        self.unpaused = asyncio.Event()  # cleared = paused (webark.crawl.control)
        self.unpaused.set()
        self._pool: ExtractPool | None = None
        self._chains: CrawlChains | None = None
        self._pipeline: UriPipeline | None = None
        self._resume_log = ResumeLog()
        self._sessions = Sessions(job.state_dir / "sessions.json", resume=resume,
                                  clock=self.ctx.stats.now)
        self._toes = ToeThreads(self.ctx, self.unpaused, lambda: self._stopping, self._sessions)
        self._stopping = False
        self._stop_reason = "finished"
        self._prior_warc_bytes = 0
        self._progress = ProgressStatisticsLog(job.logs_dir / "progress-statistics.log",
                                               job.progress_interval, self.ctx.stats.now)

    # -- what the control API and the CLI see (the rest: CrawlView) ----------------
    @property
    def chains(self) -> CrawlChains | None:
        """The processor chains, once the crawl is open."""
        return self._chains

    def request_stop(self, reason: str = "stopped by operator") -> None:
        """Stop taking new URIs; in-flight ones finish, then the crawl closes cleanly.
        Fetches still under way after ``stop_grace`` seconds are aborted, their URIs
        left queued for ``--resume`` (:mod:`webark.crawl.stopping`)."""
        if not self._stopping:
            self._stopping = True
            self._stop_reason = reason
            with contextlib.suppress(RuntimeError):  # no loop: nothing is in flight
                asyncio.get_running_loop().call_later(self.job.stop_grace, self._abort_fetches)
        self.unpaused.set()  # paused workers wake up and end
        self._toes.wake_all()  # idle ones too (a continuous crawl has many)

    def _abort_fetches(self) -> None:
        n = self.ctx.fetches.abort()
        if n:
            log.warning("stop: %d fetch(es) still under way after %g s aborted (their URIs "
                        "stay queued for --resume)", n, self.job.stop_grace)  # fmt: skip

    @property
    def stopping(self) -> bool:
        """True once :meth:`request_stop` was called."""
        return self._stopping

    def warc_bytes(self) -> int:
        """Bytes of the crawl's WARC files on disk (closed files and the open ones),
        those of earlier runs (``--resume``) included."""
        own = self.ctx.backend.warc_bytes() if self.ctx.backend is not None else 0
        return self._prior_warc_bytes + own

    # -- setup and teardown ------------------------------------------------------------
    def _make_fetcher(self) -> None:
        if self.ctx.fetcher is None:
            self.ctx.fetcher = http_fetcher(self.job)

    def _open(self, pool: ExtractPool) -> None:
        ctx, job = self.ctx, self.job
        ctx.frontier = Frontier.open(job.state_dir / "frontier.sqlite", ctx.frontier_config,
                                     clock=self.stats.clock)  # fmt: skip
        settle_recovered(ctx.frontier, self._resume_log)
        self._prior_warc_bytes = _warc_bytes_in(job.warcs_dir)  # earlier runs, repaired
        ctx.backend = WarcCaptureBackend(capture_config(job, self.stats.job_name),
                                         dedup=self._dedup)  # fmt: skip
        extra = [proc for e in self.extensions for proc in e.open(ctx, self._toes.wake_one)]
        self._chains = build_chains(ctx, pool, self._resume_log, extra)
        self._pipeline = UriPipeline(ctx, self._chains, pool, self._toes.wake_one, self._disk_full)
        self._toes.pipeline = self._pipeline
        for s in job.seeds:
            self.stats.add_seed(s)
        ctx.frontier.add_many([CrawlURI(s, seed=True, source=s) for s in job.seeds])

    def _disk_full(self, error: str) -> None:
        self.request_stop(
            f"{_DISK_FULL} ({error}): free space under {self.job.job_dir}, then "
            f"webark crawl --resume {self.job.job_dir}"
        )

    async def _close(self) -> None:
        if self._pipeline is not None:  # tasks are only left when the crawl is aborted
            await self._pipeline.cancel()
        if self._pool is not None:
            self._pool.close()
        for e in self.extensions:
            e.close()
        if self.ctx.backend is not None:
            await self.ctx.backend.aclose()
        if self._chains is not None:
            self._chains.robots.close()
        if self._own_fetcher and self.ctx.fetcher is not None:
            await self.ctx.fetcher.aclose()

    # -- the run -----------------------------------------------------------------------
    async def run(self) -> CrawlSummary:
        """Run the crawl to its end; returns the final snapshot, WARCs and reports.

        Raises:
            CrawlSetupError: the crawl cannot start (the message says why), e.g.
                another process crawls the same job folder (``JOBDIR/crawl.lock``,
                :class:`~webark.crawl.jobdir.JobLock`).
        """
        # fork the extraction workers first, while this process has no thread of its own
        pool = self._pool = ExtractPool(self.extract_processes)
        self._make_fetcher()
        lock = JobLock(self.job.job_dir)
        try:  # before anything is written, so a refused job can simply be run again
            await check_seeds(self.job, self.fetcher)
            lock.acquire()  # one process per job folder, until the reports are written
            self.repaired = prepare_job_dir(self.job, self.resume, self.stats, self._resume_log)
            self._sessions.start(self.stats)
        except BaseException:
            lock.release()
            pool.close()
            if self._own_fetcher:
                await self.fetcher.aclose()
            raise
        try:
            return await self._crawl(pool)
        finally:
            lock.release()

    async def _crawl(self, pool: ExtractPool) -> CrawlSummary:
        """:meth:`run` once the job folder is ready and locked."""
        alerts = AlertsLog(self.job.logs_dir / "alerts.log")
        logging.getLogger("webark").addHandler(alerts)
        try:
            return await self._crawl_open(pool)
        finally:
            logging.getLogger("webark").removeHandler(alerts)

    async def _crawl_open(self, pool: ExtractPool) -> CrawlSummary:
        self._open(pool)
        frontier = self.frontier
        assert frontier is not None
        self._progress.start(self._progress_snapshot(), resumed=self.resume)
        try:
            if self.resume:  # captures written but not logged before a kill
                orphans = find_orphans(self.repaired, self._resume_log, frontier.recovered_uris)
                await mark_orphans(self.ctx, orphans)
            ticker = asyncio.create_task(self._ticker())
            side = [asyncio.create_task(e.run()) for e in self.extensions]
            for task in side:
                task.add_done_callback(self._extension_ended)
            toes = self._toes
            workers = [asyncio.create_task(toes.worker(i + 1)) for i in range(self.job.workers)]
            try:
                await asyncio.gather(*workers)
                assert self._pipeline is not None
                await self._pipeline.drain()  # URIs whose links are still being processed
            finally:
                ticker.cancel()
                for w in [*workers, *side]:
                    w.cancel()
                await asyncio.gather(*side, return_exceptions=True)
            if frontier.quota_reached and not self._stopping:
                self._stop_reason = f"max_uris ({self.job.max_uris}) reached"
        finally:
            await self._close()
        stats = self.stats
        stats.ended = stats.now()
        self._sessions.save(ended=stats.ended)
        stats.stop_reason = self._stop_reason
        snap = stats.snapshot(frontier.stats(top=2000), warc_bytes=self.warc_bytes())
        self._progress.end(snap, self._stop_reason)
        frontier.close()
        try:
            paths = write_reports(self.job.reports_dir, snap, self.reports)
        except OSError as e:
            if not is_disk_full(e):
                raise
            log.error("reports not written (%s); `webark crawl --resume` writes them", e)
            paths = []
        if self.job.pages:
            paths += write_page_list(self.job)
        if self.on_progress:
            self.on_progress(snap)
        assert self.ctx.backend is not None
        return CrawlSummary(snap, self._stop_reason, tuple(self.ctx.backend.paths), tuple(paths),
                            disk_full=self.ctx.disk_full)  # fmt: skip

    def _extension_ended(self, task: asyncio.Task[None]) -> None:
        """An extension's loop ended by itself: a bug, or a full disk; stop the crawl."""
        if task.cancelled() or self._stopping:
            return
        e = task.exception()
        if e is not None and is_disk_full(e):
            self.ctx.disk_full = True
            self._disk_full(str(e))
            return
        log.error("a crawl extension failed; stopping the crawl", exc_info=e)
        self.request_stop(f"a crawl extension failed: {e!r}")

    async def _ticker(self) -> None:
        while True:
            await asyncio.sleep(self.progress_interval)
            self._sessions.save()  # a killed run counts until here
            self._progress.tick(self._progress_snapshot, paused=not self.unpaused.is_set())
            if self.on_progress and self.frontier is not None:
                try:
                    self.on_progress(self.stats.snapshot(self.frontier.stats(top=0)))
                except Exception:  # the progress line must never stop the crawl
                    log.exception("progress callback failed")

    def _progress_snapshot(self) -> StatsSnapshot:
        """A snapshot for progress-statistics.log (the largest queue for max-depth)."""
        assert self.frontier is not None
        return self.stats.snapshot(self.frontier.stats(top=1))


def _warc_bytes_in(folder: Path) -> int:
    """Bytes of the finished WARC files in ``folder`` (``.open`` ones were repaired and
    renamed before, on resume)."""
    total = 0
    with contextlib.suppress(FileNotFoundError):
        for entry in os.scandir(folder):
            if entry.is_file() and entry.name.endswith((".warc.gz", ".warc", ".warc.zst")):
                total += entry.stat().st_size
    return total


def run_job(
    job: CrawlJob,
    *,
    resume: bool = False,
    on_progress: Callable[[StatsSnapshot], None] | None = None,
    install_signals: bool = True,
) -> CrawlSummary:
    """Run ``job`` in a new event loop; SIGINT/SIGTERM stop it gracefully (a second
    signal falls back to the default handler: immediate exit; ``--resume`` recovers)."""
    import signal

    async def main() -> CrawlSummary:
        ctl = CrawlController(job, resume=resume, on_progress=on_progress)
        if install_signals:
            loop = asyncio.get_running_loop()

            def stop(signame: str) -> None:
                ctl.request_stop(f"{signame} received")
                for s in (signal.SIGINT, signal.SIGTERM):
                    loop.remove_signal_handler(s)

            for s in (signal.SIGINT, signal.SIGTERM):
                loop.add_signal_handler(s, stop, s.name)
        return await ctl.run()

    return asyncio.run(main())
