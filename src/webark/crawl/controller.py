"""The crawl controller: frontier → robots → fetch → WARC + crawl.log → extract → scope →
frontier, with asyncio workers.

One :class:`CrawlController` runs one job (:class:`~webark.crawl.job.CrawlJob`) in its
directory::

    JOBDIR/warcs/      WARC files (``….warc.gz.open`` while written)
    JOBDIR/logs/crawl.log   Heritrix 3 crawl.log, one final line per URI
    JOBDIR/reports/    reports written at the end (text + JSON)
    JOBDIR/state/      frontier.sqlite, robots.sqlite, job.json, dedup.sqlite (dedup on)

What each worker does with a URI (Heritrix 3's processor chain, much simplified):

1. **Prerequisites** — the first time a host name is seen (per run) it is looked up
   and recorded as a ``dns:HOST`` URI (hop ``P``, status 1, a ``text/dns`` response
   record), as Heritrix does; IP literals need none. The first time an origin is seen
   (per run) its robots.txt is fetched *inline*, while the URI holds its queue's
   in-flight slot, so politeness still holds: the robots.txt capture is written to the
   WARC and logged in crawl.log with hop path ``…P`` and the URI as via; then the worker
   waits the politeness delay (robots.txt Crawl-delay included) before fetching the URI
   itself. Heritrix schedules prerequisites as separate ``P`` URIs instead; the log
   lines are the same. A robots.txt that redirects is followed up to five hops, to any
   host (RFC 9309 §2.3.1.2), each hop logged with hop ``R`` (``PR``, ``PRR`` …) and the
   rules reached applied to the first origin (and to any robots.txt on the way).
2. **Robots** — a URI excluded by robots.txt is logged with status -9998 and not fetched;
   when robots.txt could not be fetched (network error, 5xx: RFC 9309 "unreachable")
   the URI is logged with -61 (robots prerequisite failure) and not fetched.
3. **Fetch** — :class:`~webark.fetch.HttpFetcher` (never raises for network trouble).
4. **Write** — response, request and metadata (via, hopsFromSeed, outlinks) records;
   with dedup on, a payload digest already archived gives an
   ``identical-payload-digest`` revisit and the ``duplicate:digest`` annotation.
5. **Extract + scope** — outlinks (HTML, CSS, JS, sitemaps, feeds, ``Location`` → ``R``
   hop) are checked against the scope (:func:`~webark.crawl.scope.build_scope`) and
   added to the frontier **before** the URI is reported finished (crash safety).
6. **Log + finish** — the crawl.log line is written (only when the frontier will not
   retry the URI), then :meth:`Frontier.finished` sets the queue's politeness delay
   ``clamp(delay_factor × fetch time, min_delay, max_delay)``, raised to Crawl-delay.

**Pipelining.** Link extraction runs in worker processes
(:class:`~webark.crawl.extract.pool.ExtractPool`, ``extract_processes``, default
:func:`~webark.crawl.extract.pool.default_processes`; environment
``WEBARK_EXTRACT_PROCESSES`` overrides it, 0 = in-process). When a fetch got a final
answer (not one the frontier would retry) and its queue has no politeness delay to wait
(``min_delay`` 0 and a delay factor × fetch time of 0, no Crawl-delay), the worker
calls :meth:`Frontier.release` right after the fetch: the queue may serve its next URI
at once, so the next fetch from the host overlaps the extraction of this one (still one
request at a time per host). A queue with a delay is held until the URI is finished, as
in Heritrix (its delay counts from there); extraction still runs in the pool, so other
hosts' work goes on meanwhile. Steps 4–6 then run in a background task once the links
are back, one URI at a time and in the order the fetches ended (``_FinishOrder``), and
the URI stays *in flight* in the frontier until step 6: a ``kill -9`` before that puts
it back in its queue, so "no URI lost, none fetched twice except those in flight" still
holds, with up to ``2 × extract_processes`` more URIs in flight than workers. Its WARC
records (response, request, metadata with the outlinks) are written together after the
extraction, as before.

The crawl ends when nothing is queued or in flight, when ``max_uris`` successful fetches
are done, or on :meth:`CrawlController.request_stop` (SIGINT/SIGTERM in the CLI):
in-flight URIs finish, the WARC is closed and the reports are written. ``resume=True``
continues a stopped or killed job: ``.open`` WARCs are repaired
(:func:`~webark.warc.repair.repair_open_file`), the frontier puts URIs that were in
flight back in their queues, and the statistics are rebuilt from crawl.log. The windows
a ``kill -9`` can hit between two files are closed so that crawl.log keeps exactly one
final line per URI: a torn last line is cut; a URI whose line was written before the
kill but not reported to the frontier is finished as logged, not fetched again; a
robots.txt logged but not yet saved in ``state/robots.sqlite`` is read back from the
WARC record its line points at (neither fetched nor logged again; fetched and logged
when that record cannot be read); ``dns:`` lookups logged by earlier runs are not
recorded again while valid (6 h).

Recrawls (``dedup_index`` pointing at an earlier job's index): with
``conditional_requests`` on (default), each URL whose last capture had an ``ETag`` /
``Last-Modified`` is fetched with ``If-None-Match`` / ``If-Modified-Since``; a ``304``
is written as a ``server-not-modified`` revisit of that capture (WARC-Refers-To*,
crawl.log ``304`` with ``duplicate:server-not-modified``), and its links are read from
that capture's record when its WARC is at hand (Heritrix extracts nothing from a 304).
"""

from __future__ import annotations

import asyncio
import base64
import collections
import contextlib
import errno
import json
import logging
import os
import re
import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any
from urllib.parse import urlsplit

from webark.core.digests import digest_label
from webark.crawl.curi import CrawlURI
from webark.crawl.extract import Link, extract_links, resolve
from webark.crawl.extract.pool import ExtractPool, default_processes
from webark.crawl.frontier import Frontier, FrontierConfig, anchored_clock, politeness_delay
from webark.crawl.job import CrawlJob
from webark.crawl.reports import DEFAULT_REPORTS, Report, write_reports
from webark.crawl.scope import Decision, build_scope
from webark.crawl.stats import CrawlStats, StatsSnapshot
from webark.crawllog import CrawlLogLine, format_line
from webark.crawllog.parse import iter_crawl_log
from webark.dedup import DedupIndex
from webark.dedup.policy import DedupPolicy
from webark.fetch import Exchange, FetchLimits, HttpFetcher, refusal
from webark.fetch.body import decode_bounded, decoded_body
from webark.fetch.dns import ip_literal
from webark.robots import (
    RobotsCache,
    RobotsEntry,
    RobotsMode,
    RobotsPolicy,
    RobotsStatus,
    robots_url,
)
from webark.warc.builders import MetadataFields, Original, WarcinfoFields
from webark.warc.reader import ArchiveReader
from webark.warc.repair import repair_open_file
from webark.warc.writer import AsyncWarcWriter, WarcWriter

__all__ = ["CrawlController", "CrawlSetupError", "CrawlSummary", "run_job"]

log = logging.getLogger(__name__)

S_ROBOTS_PRECLUDED = -9998
S_ROBOTS_PREREQUISITE_FAILURE = -61
S_DOMAIN_PREREQUISITE_FAILURE = -6
_MAX_EXTRACT_BYTES = 20 * 1024 * 1024
_MAX_QUEUED_MEMO = 200_000
_ROBOTS_REDIRECTS = 5  # RFC 9309 §2.3.1.2: follow at least five
_ROBOTS_HOP = re.compile(r"PR+$")  # hop path of a redirect of a robots.txt


class CrawlSetupError(Exception):
    """The crawl cannot start (bad seed address, job directory in use …); the message
    says what to change."""


@dataclass(frozen=True)
class CrawlSummary:
    """What :meth:`CrawlController.run` returns."""

    snapshot: StatsSnapshot
    stop_reason: str
    warcs: tuple[str, ...]
    reports: tuple[Path, ...]
    disk_full: bool = False
    """The crawl stopped because the disk was full (resume it once there is room)."""


def _now() -> datetime:
    return datetime.now(UTC)


def _body(ex: Exchange) -> bytes:
    """The entity body of a response with transfer and content codings undone, its
    first ``_MAX_EXTRACT_BYTES`` bytes (for link extraction and robots.txt only; the WARC
    keeps the wire bytes): a decompression bomb is cut there (:mod:`webark.fetch.body`)."""
    return decoded_body(ex, _MAX_EXTRACT_BYTES).data


def _redirect_target(ex: Exchange) -> str | None:
    """The absolute http(s) URL a 3xx response redirects to, or None."""
    if not ex.ok or ex.http_status is None or not 300 <= ex.http_status < 400:
        return None
    location = ex.header("Location")
    return resolve(ex.url, location) if location else None


_DISK_FULL = "disk full"


def disk_full(e: BaseException) -> bool:
    """True for "no space left" from the file system (``ENOSPC``, ``EDQUOT``) or from
    SQLite (``SQLITE_FULL``, error code 13): a condition to stop on, not a URI's error."""
    if isinstance(e, OSError) and e.errno in (errno.ENOSPC, errno.EDQUOT):
        return True
    return isinstance(e, sqlite3.Error) and getattr(e, "sqlite_errorcode", None) == 13


class CrawlController:
    """Runs one crawl job (see the module docstring).

    Args:
        job: the validated job.
        resume: continue the job in ``job.job_dir`` (repair WARCs, reopen the frontier).
        fetcher: a fetcher to use instead of an :class:`HttpFetcher` built from the job
            (tests); it is not closed by the controller.
        dedup: a dedup index (:class:`webark.dedup.DedupIndex`) to use instead of the
            job's ``state/dedup.sqlite`` (only consulted when given or ``job.dedup``).
        reports: the reports written at the end (default :data:`DEFAULT_REPORTS`).
        on_progress: called about twice a second with a stats snapshot (progress line).
        extract_processes: link extraction worker processes (see "Pipelining" in the
            module docstring); None: ``$WEBARK_EXTRACT_PROCESSES`` or
            :func:`~webark.crawl.extract.pool.default_processes`.
    """

    def __init__(
        self,
        job: CrawlJob,
        *,
        resume: bool = False,
        fetcher: HttpFetcher | None = None,
        dedup: DedupIndex | None = None,
        reports: tuple[Report, ...] = DEFAULT_REPORTS,
        on_progress: Callable[[StatsSnapshot], None] | None = None,
        progress_interval: float = 0.5,
        extract_processes: int | None = None,
    ) -> None:
        self.job = job
        if extract_processes is None:
            env = os.environ.get("WEBARK_EXTRACT_PROCESSES", "").strip()
            extract_processes = int(env) if env.isdigit() else default_processes()
        self.extract_processes = extract_processes
        self._pool: ExtractPool | None = None
        self._pending: set[asyncio.Task[None]] = set()
        self._idle_workers: collections.deque[asyncio.Future[None]] = collections.deque()
        self._slots = asyncio.Semaphore(max(1, 2 * extract_processes))
        self._order = _FinishOrder()
        self._queued: set[str] = set()
        """Outlinks this run has already accepted and handed to the frontier (bounded
        by ``_MAX_QUEUED_MEMO``): the frontier's seen filter would ignore them, so they
        skip the scope and the frontier (Heritrix runs the scope first; the outcome is
        the same, as adding a URI is a no-op once it was added)."""
        self.resume = resume
        self._fetcher = fetcher
        self._own_fetcher = fetcher is None
        self.dedup = dedup
        self.dedup_policy = DedupPolicy()
        self.reports = reports
        self.on_progress = on_progress
        self.progress_interval = progress_interval
        self.stats = CrawlStats(job_name=job.job_name or job.job_dir.name)
        self.robots = RobotsCache()
        self.robots_mode = RobotsMode(job.robots)
        self.scope = build_scope(job.scope, job.seeds)
        self.frontier_config = FrontierConfig(
            delay_factor=job.delay_factor,
            min_delay=job.min_delay,
            max_delay=job.max_delay,
            crawl_delay_cap=job.crawl_delay_cap,
            max_retries=job.max_retries,
            retry_delay=job.retry_delay,
            max_http_retries=job.max_http_retries,
            backoff_base=job.backoff_base,
            backoff_max=max(job.backoff_base, 3600.0),
            max_uris=job.max_uris,
        )
        self._clock = anchored_clock()
        self._stopping = False
        self._stop_reason = "finished"
        self.unpaused = asyncio.Event()  # cleared = paused (webark.crawl.control)
        self.unpaused.set()
        self._log_file: IO[str] | None = None
        self.frontier: Frontier | None = None
        self.writer: AsyncWarcWriter | None = None
        self.repaired: list[str] = []
        self._dns_done: set[str] = set()
        self._resume_log = _ResumeLog()
        self._robots_db: sqlite3.Connection | None = None
        self._disk_full = False
        self._sessions: list[dict[str, float | None]] = []
        self._closed_sizes: dict[str, int] = {}

    # -- control ----------------------------------------------------------------------
    def request_stop(self, reason: str = "stopped by operator") -> None:
        """Stop taking new URIs; in-flight ones finish, then the crawl closes cleanly."""
        if not self._stopping:
            self._stopping = True
            self._stop_reason = reason
        self.unpaused.set()  # paused workers wake up and end

    @property
    def stopping(self) -> bool:
        """True once :meth:`request_stop` was called."""
        return self._stopping

    @property
    def fetcher(self) -> HttpFetcher:
        assert self._fetcher is not None
        return self._fetcher

    # -- setup ------------------------------------------------------------------------
    def _prepare_dirs(self) -> None:
        job = self.job
        frontier_db = job.state_dir / "frontier.sqlite"
        if not self.resume and frontier_db.exists():
            raise CrawlSetupError(
                f"{job.job_dir} already holds a crawl; use --resume {job.job_dir} to continue "
                "it, or choose another -o directory"
            )
        if self.resume and not frontier_db.exists() and not (job.state_dir / "job.json").exists():
            # (job.json without frontier.sqlite: killed while starting; resuming starts it)
            raise CrawlSetupError(f"{job.job_dir}: no crawl to resume (no state/frontier.sqlite)")
        for d in (job.warcs_dir, job.logs_dir, job.reports_dir, job.state_dir):
            d.mkdir(parents=True, exist_ok=True)
        if self.resume:
            for name in sorted(os.listdir(job.warcs_dir)):
                if name.endswith(".open"):
                    path = job.warcs_dir / name
                    if path.stat().st_size == 0:
                        path.unlink()
                        continue
                    res = repair_open_file(path)
                    log.info("repaired %s: %d records kept", res.new_path, res.records_kept)
                    self.repaired.append(res.new_path)
            self._rebuild_stats()
        self._start_session()
        job.save()

    def _start_session(self) -> None:
        """Record this run in ``state/sessions.json`` (``[{"started", "last_seen",
        "ended"}]``, wall-clock seconds) and take the earlier runs' time into the
        statistics, so a resumed crawl reports when it first started and how long it
        has run in all (a killed run counts until its last progress tick)."""
        path = self.job.state_dir / "sessions.json"
        sessions: list[dict[str, float | None]] = []
        if self.resume:
            with contextlib.suppress(OSError, ValueError):
                sessions = [s for s in json.loads(path.read_text()) if isinstance(s, dict)]
        prior = 0.0
        for s in sessions:
            start, end = s.get("started"), s.get("ended") or s.get("last_seen")
            if isinstance(start, int | float) and isinstance(end, int | float) and end > start:
                prior += end - start
        self.stats.prior_elapsed = prior
        first = sessions[0].get("started") if sessions else None
        self.stats.crawl_started = first if isinstance(first, int | float) else None
        self._sessions = [*sessions, {"started": self.stats.started, "last_seen": None,
                                      "ended": None}]  # fmt: skip
        self._save_sessions()

    def _save_sessions(self, ended: float | None = None) -> None:
        """Write ``state/sessions.json`` (atomically; best effort: a full disk must not
        stop the crawl for a statistic)."""
        if not self._sessions:
            return
        current = self._sessions[-1]
        current["last_seen"] = time.time()
        if ended is not None:
            current["ended"] = ended
        path = self.job.state_dir / "sessions.json"
        tmp = path.with_suffix(".json.part")
        with contextlib.suppress(OSError):
            tmp.write_text(json.dumps(self._sessions))
            os.replace(tmp, path)

    def _settle_recovered(self) -> None:
        """URIs the frontier put back although their crawl.log line was written (the
        crash came between the line and :meth:`Frontier.finished`): finish them as
        logged, so each URI keeps exactly one final line. Lines are written and URIs
        finished without an ``await`` in between, so only the last line can be such a
        URI."""
        assert self.frontier is not None
        last = self._resume_log.last
        if (
            last is not None
            and last.uri in self.frontier.recovered_uris
            and self.frontier.settle(last.uri, last.status, size=last.size or 0)
        ):
            log.info("resume: %s was logged before the kill; not fetched again", last.uri)

    def _rebuild_stats(self) -> None:
        path = self.job.logs_dir / "crawl.log"
        if not path.exists():
            return
        _cut_torn_line(path)
        try:
            for _, line in iter_crawl_log(path):
                if not isinstance(line, CrawlLogLine):
                    continue
                self._resume_log.note(line)
                self.stats.record(
                    line.uri,
                    line.status,
                    line.size or 0,
                    line.mime_type,
                    seed=line.hop_path == "",
                    source=line.source_tag,
                    duplicate=any(a.startswith("duplicate:") for a in line.annotations),
                    annotations=tuple(line.annotations),
                )
        except Exception as e:  # a torn last line after kill -9 is not fatal
            log.warning("crawl.log could not be read completely on resume: %s", e)

    async def _check_seeds(self) -> None:
        """Refuse private/loopback seeds early, with the option that allows them."""
        for seed in self.job.seeds:
            host = urlsplit(seed).hostname or ""
            answer = await self.fetcher.lookup(host)
            if not answer.ok:
                log.warning("seed host %s does not resolve: %s", host, answer.error)
                continue
            for addr in answer.addresses:
                msg = refusal(addr, self.job.allow_private)
                if msg:
                    raise CrawlSetupError(
                        f"seed {seed}: {host} resolves to {addr}: "
                        f"{msg.split(';')[0]}; pass --allow-private "
                        "(job file: allow_private: true) to crawl it"
                    )

    def _make_fetcher(self) -> None:
        job = self.job
        if self._fetcher is None:
            headers = [("From", job.contact_email)] if job.contact_email else []
            self._fetcher = HttpFetcher(
                job.user_agent,
                limits=FetchLimits(
                    connect_timeout=job.connect_timeout,
                    read_timeout=job.read_timeout,
                    max_size=job.max_fetch_bytes,
                ),
                resolve=dict(job.resolve) or None,
                allow_private=job.allow_private,
                default_headers=headers,
            )

    def _open(self) -> None:
        job = self.job
        self.frontier = Frontier.open(
            job.state_dir / "frontier.sqlite", self.frontier_config, clock=self._clock
        )
        self._settle_recovered()
        operator = job.operator or "; ".join(job.contact)
        self.writer = AsyncWarcWriter(
            WarcWriter(
                job.warcs_dir,
                prefix=job.warc_prefix,
                max_size=job.warc_max_size,
                warcinfo=WarcinfoFields.for_this_host(
                    operator=operator,
                    http_header_user_agent=job.user_agent,
                    robots=self.robots_mode.value,
                    is_part_of=self.stats.job_name,
                ),
            )
        )
        if self.dedup is None and job.dedup:
            from webark.dedup.sqlite_dedup import open_index

            self.dedup = open_index(job.dedup_path, commit_every=1)
        self._load_robots()
        self._log_file = open(job.logs_dir / "crawl.log", "a", encoding="utf-8")  # noqa: SIM115
        seeds = []
        for s in job.seeds:
            self.stats.add_seed(s)
            seeds.append(CrawlURI(s, seed=True, source=s))
        self.frontier.add_many(seeds)

    async def _close(self) -> None:
        for task in list(self._pending):  # only left when the crawl is aborted
            task.cancel()
        if self._pending:
            await asyncio.gather(*self._pending, return_exceptions=True)
        if self._pool is not None:
            self._pool.close()
        if self.writer is not None:
            await self.writer.close()
        if self._log_file is not None:
            self._log_file.close()
        if self._robots_db is not None:
            self._robots_db.close()
        close = getattr(self.dedup, "close", None)
        if callable(close) and self.job.dedup:
            close()
        if self._own_fetcher and self._fetcher is not None:
            await self._fetcher.aclose()

    # -- the loop ---------------------------------------------------------------------
    async def run(self) -> CrawlSummary:
        """Run the crawl to its end; returns the final snapshot, WARCs and reports.

        Raises:
            CrawlSetupError: the crawl cannot start (the message says why).
        """
        # fork the extraction workers first, while this process has no thread of its own
        self._pool = ExtractPool(self.extract_processes)
        self._make_fetcher()
        try:  # before anything is written, so a refused job can simply be run again
            await self._check_seeds()
            self._prepare_dirs()
        except BaseException:
            self._pool.close()
            if self._own_fetcher:
                await self.fetcher.aclose()
            raise
        self._open()
        assert self.frontier is not None and self.writer is not None
        try:
            ticker = asyncio.create_task(self._ticker())
            workers = [asyncio.create_task(self._worker(i + 1)) for i in range(self.job.workers)]
            try:
                await asyncio.gather(*workers)
                while self._pending:  # URIs whose links are still being processed
                    await asyncio.gather(*list(self._pending))
            finally:
                ticker.cancel()
                for w in workers:
                    w.cancel()
            if self.frontier.quota_reached and not self._stopping:
                self._stop_reason = f"max_uris ({self.job.max_uris}) reached"
        finally:
            await self._close()
        self.stats.ended = time.time()
        self._save_sessions(ended=self.stats.ended)
        self.stats.stop_reason = self._stop_reason
        snap = self.stats.snapshot(self.frontier.stats(top=2000), warc_bytes=self.warc_bytes())
        self.frontier.close()
        try:
            paths = write_reports(self.job.reports_dir, snap, self.reports)
        except OSError as e:
            if not disk_full(e):
                raise
            log.error("reports not written (%s); `webark crawl --resume` writes them", e)
            paths = []
        if self.on_progress:
            self.on_progress(snap)
        return CrawlSummary(
            snap, self._stop_reason, tuple(self.writer.writer.paths), tuple(paths),
            disk_full=self._disk_full,
        )  # fmt: skip

    def warc_bytes(self) -> int:
        """Bytes of the crawl's WARC files on disk (closed files and the ``.open`` one);
        a closed file's size is stat'ed once."""
        if self.writer is None:
            return 0
        total = 0
        for path in self.writer.writer.paths:
            if path in self._closed_sizes:
                total += self._closed_sizes[path]
                continue
            try:
                total += os.stat(path + ".open").st_size
                continue
            except FileNotFoundError:
                pass
            try:
                size = os.stat(path).st_size
            except FileNotFoundError:
                continue
            self._closed_sizes[path] = size  # a closed WARC no longer changes
            total += size
        return total

    async def _ticker(self) -> None:
        while True:
            await asyncio.sleep(self.progress_interval)
            self._save_sessions()  # a killed run counts until here
            if self.on_progress and self.frontier is not None:
                try:
                    self.on_progress(self.stats.snapshot(self.frontier.stats(top=0)))
                except Exception:  # the progress line must never stop the crawl
                    log.exception("progress callback failed")

    async def _worker(self, n: int) -> None:
        frontier = self.frontier
        assert frontier is not None
        while not self._stopping:
            if not self.unpaused.is_set():  # paused: nothing new is taken
                await self.unpaused.wait()
                continue
            curi = frontier.next_ready()
            if curi is None:
                wake = frontier.next_wake()
                if wake is None and frontier.in_flight == 0:
                    self._wake_one()  # pass the news on: another worker ends too
                    return  # nothing queued that can become ready, nothing in flight
                wait = 0.02 if wake is None else min(max(wake - self._clock(), 0.002), 0.25)
                await self._idle(wait)
                continue
            self._wake_one()  # there may be more ready queues: let one more worker look
            self.stats.board.begin(n, curi)
            try:
                await self._process(curi, n)
            except asyncio.CancelledError:
                raise
            except Exception as e:  # a bug must not stop the crawl: log it as -5
                self._failed(curi, n, e)
            self.stats.board.end(n)
            self._wake_one()  # its queue was finished or released

    async def _idle(self, timeout: float) -> None:
        """Wait until :meth:`_wake_one` picks this worker or ``timeout`` seconds pass
        (the time the next queue becomes due; a frontier change comes sooner)."""
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._idle_workers.append(fut)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(fut, timeout)

    def _wake_one(self) -> None:
        """Wake one idle worker (if any) to look at the frontier again: called when a
        queue may have become ready (a URI finished, a queue released, outlinks added)
        and, baton-style, by a worker that found work. Waking one rather than all keeps
        ten idle workers from querying the frontier at every change."""
        waiters = self._idle_workers
        while waiters:
            fut = waiters.popleft()
            if not fut.done():
                fut.set_result(None)
                return

    def _failed(self, curi: CrawlURI, n: int, e: Exception) -> None:
        """A bug while processing ``curi``: log it as -5 and finish it. A full disk is no
        bug: the crawl stops (:func:`disk_full`), ``curi`` stays in flight, and
        ``--resume`` fetches it again once there is room."""
        assert self.frontier is not None
        if disk_full(e):
            if not self._disk_full:
                log.error("%s while writing the capture of %s", e, curi.uri)
            self._disk_full = True
            self.request_stop(
                f"{_DISK_FULL} ({e}): free space under {self.job.job_dir}, then "
                f"webark crawl --resume {self.job.job_dir}"
            )
            return
        log.exception("error processing %s", curi.uri, exc_info=e)
        self._log_line(curi, -5, n, annotations=(f"err={type(e).__name__}",))
        self.frontier.finished(curi, -5, 0.0)

    # -- one URI ----------------------------------------------------------------------
    async def _process(self, curi: CrawlURI, n: int) -> None:
        frontier = self.frontier
        assert frontier is not None
        scheme = urlsplit(curi.uri).scheme.lower()
        if scheme not in ("http", "https"):
            self._log_line(curi, -7, n, annotations=("err=unsupportedScheme",))
            frontier.finished(curi, -7, 0.0)
            return
        if self.job.dns_records and not await self._dns_for(curi, n):
            if not self._will_retry(curi, S_DOMAIN_PREREQUISITE_FAILURE):
                tries = (f"{curi.retries + 1}t",) if curi.retries else ()
                self._log_line(curi, S_DOMAIN_PREREQUISITE_FAILURE, n, annotations=tries)
            frontier.finished(curi, S_DOMAIN_PREREQUISITE_FAILURE, 0.0)
            return
        policy = await self._robots_for(curi, n)
        crawl_delay = policy.crawl_delay(self.job.robots_token) if policy else None
        if policy is not None and policy.status is RobotsStatus.UNREACHABLE:
            # RFC 9309 §2.3.1.4 says "disallow all"; Heritrix logs the URI as a failed
            # robots prerequisite (-61) rather than as excluded by robots.txt
            self._log_line(curi, S_ROBOTS_PREREQUISITE_FAILURE, n)
            frontier.finished(curi, S_ROBOTS_PREREQUISITE_FAILURE, 0.0, crawl_delay=crawl_delay)
            return
        if policy is not None and not policy.allowed(
            curi.uri, self.job.robots_token, curi.last_hop, mode=self.robots_mode
        ):
            self._log_line(curi, S_ROBOTS_PRECLUDED, n)
            frontier.finished(curi, S_ROBOTS_PRECLUDED, 0.0, crawl_delay=crawl_delay)
            return
        self.stats.board.stage(n, "fetchHttp")
        ex = await self.fetcher.fetch(curi.uri, headers=self._conditional_headers(curi.uri))
        ticket = self._order.ticket()
        try:
            if ex.ok and self._pool is not None and self._pool.processes:
                await self._slots.acquire()
                try:
                    released = frontier.release(
                        curi, ex.status, ex.duration_ms / 1000.0, crawl_delay=crawl_delay,
                        size=ex.payload_size,
                    )  # fmt: skip
                except BaseException:
                    self._slots.release()
                    raise
                if released:
                    task = asyncio.create_task(
                        self._complete_released(curi, n, ex, crawl_delay, ticket)
                    )
                    self._pending.add(task)
                    task.add_done_callback(self._pending.discard)
                    return
                self._slots.release()
        except BaseException:
            self._order.done(ticket)  # never block the URIs fetched after this one
            raise
        await self._complete(curi, n, ex, crawl_delay, ticket, board=True)

    async def _complete_released(
        self, curi: CrawlURI, n: int, ex: Exchange, crawl_delay: float | None, ticket: int
    ) -> None:
        """Steps 4–6 for a URI whose queue was released (background task)."""
        try:
            await self._complete(curi, n, ex, crawl_delay, ticket, board=False)
        except asyncio.CancelledError:
            raise
        except Exception as e:  # a bug must not stop the crawl: log it as -5
            self._failed(curi, n, e)
        finally:
            self._slots.release()

    async def _complete(
        self,
        curi: CrawlURI,
        n: int,
        ex: Exchange,
        crawl_delay: float | None,
        ticket: int,
        *,
        board: bool,
    ) -> None:
        """Steps 4–6 of the module docstring for a fetched URI: extract, write, scope,
        queue the outlinks, log, finish. The part after the extraction waits for the
        turn of ``ticket`` (:class:`_FinishOrder`: URIs finish one at a time, in the
        order their fetches ended, as when the steps ran right after each fetch) and
        never awaits between the crawl.log line and :meth:`Frontier.finished`."""
        try:
            links: list[Link] = []
            if ex.ok:
                self._stage(n, "extractors", board)
                links = await self._links(curi, ex)
            await self._order.turn(ticket)
            await self._finish(curi, n, ex, crawl_delay, links, board)
        finally:
            self._order.done(ticket)
            self._wake_one()  # outlinks queued, the URI finished

    async def _finish(
        self,
        curi: CrawlURI,
        n: int,
        ex: Exchange,
        crawl_delay: float | None,
        links: list[Link],
        board: bool,
    ) -> None:
        """Write the records, queue the in-scope outlinks, log the line, finish. After a
        full disk nothing more is written: the URI stays in flight for ``--resume``."""
        frontier = self.frontier
        assert frontier is not None
        if self._disk_full:
            return
        annotations = list(ex.annotations)
        if curi.retries:
            annotations.append(f"{curi.retries + 1}t")
        extra: dict[str, Any] | None = None
        size = 0
        redirect = None
        if ex.ok:
            size = ex.payload_size
            redirect = next((lk.url for lk in links if lk.hop == "R"), None)
            self._stage(n, "warcWriter", board)
            original, kind = self._revisit_of(ex)
            if original is not None:
                annotations.append(f"duplicate:{kind}")
                self.stats.note_revisit(curi.uri, original.target_uri)
            outlinks = tuple(f"{lk.url} {lk.hop} {lk.context}" for lk in links)
            extra = await self._write(curi, ex, outlinks, original)
            self._stage(n, "candidates", board, len(links))
            children = []
            known = self._queued
            for lk in links:
                if lk.url in known:  # already in the frontier: adding it again is a no-op
                    continue
                child = curi.child(lk.url, lk.hop)
                if self.scope.decide(child) is Decision.ACCEPT:
                    children.append(child)
            if children:
                frontier.add_many(children)
                if len(known) > _MAX_QUEUED_MEMO:
                    known.clear()
                known.update(c.uri for c in children)
        self._stage(n, "disposition", board)
        status = ex.status
        if not self._will_retry(curi, status):
            self._log_line(
                curi, status, n, ex=ex, size=size, annotations=tuple(annotations), extra=extra,
                duplicate="duplicate:digest" in annotations, redirect=redirect,
            )  # fmt: skip
        frontier.finished(
            curi,
            status,
            ex.duration_ms / 1000.0,
            crawl_delay=crawl_delay,
            retry_after=ex.header("Retry-After") if ex.ok else None,
            size=size,
        )

    def _stage(self, n: int, name: str, board: bool, items: int = 0) -> None:
        """Worker ``n`` enters stage ``name``; in a background task (``board`` False:
        the worker has moved on) the stage is only counted."""
        if board:
            self.stats.board.stage(n, name, items)
        else:
            self.stats.board.count(name, items)

    def _will_retry(self, curi: CrawlURI, status: int) -> bool:
        """Whether :meth:`Frontier.finished` will put the URI back (same rules)."""
        c = self.frontier_config
        if status == 429 or 500 <= status <= 599:
            return status in c.http_retry_statuses and curi.retries < c.max_http_retries
        return status in c.retry_codes and curi.retries < c.max_retries

    async def _dns_for(self, curi: CrawlURI, n: int) -> bool:
        """Look the host up once per run and record it as Heritrix does: a ``dns:HOST``
        prerequisite (hop ``P``, status 1) with a ``text/dns`` response record. IP
        literals need no lookup. Returns False when the host does not resolve (the URI
        then fails with -6, retried by the frontier like Heritrix's
        ``S_DOMAIN_PREREQUISITE_FAILURE``)."""
        host = urlsplit(curi.uri).hostname or ""
        if host in self._dns_done or ip_literal(host) is not None:
            return True
        if self._resume_log.dns_recorded(host, self.fetcher.dns_cache_seconds):
            self._dns_done.add(host)  # recorded by the run before a resume, still valid
            return True
        answer = await self.fetcher.lookup(host, fresh=True)
        pre = curi.child(answer.uri, "P")
        if not answer.ok:
            if not self._will_retry(curi, S_DOMAIN_PREREQUISITE_FAILURE):  # final: log it
                self._log_line(pre, answer.status, n, annotations=("err=DomainUnresolvable",))
            return False
        self._dns_done.add(host)
        assert self.writer is not None
        text = answer.text()
        (rec,) = await self.writer.write(answer.to_record(self.writer.builder))
        extra = {
            "contentSize": len(text),
            "warcFilename": os.path.basename(rec.path),
            "warcFileOffset": rec.offset,
        }
        self._log_line(
            pre, answer.status, n, size=len(text), mime="text/dns", extra=extra,
            began=answer.resolved_at, digest=digest_label(text),
        )  # fmt: skip
        return True

    async def _robots_for(self, curi: CrawlURI, n: int) -> RobotsPolicy | None:
        """The robots.txt policy of the URI's origin, fetching it inline (prerequisite,
        hop ``P``) when not known yet. None when robots are ignored."""
        if self.robots_mode is RobotsMode.IGNORE:
            return None
        policy = self.robots.get(curi.uri)
        if policy is not None:
            return policy
        rurl = robots_url(curi.uri)
        pre = curi.child(rurl, "P")
        # RFC 9309 §2.3.1.2: follow up to five redirects, even to other hosts; the rules
        # reached are those of this origin. Each hop is a capture, logged (hop R); more
        # redirects or a loop leave a 3xx: robots.txt unavailable (allow all).
        chain = []
        known = None  # the entry of a robots.txt redirected to, when already fetched
        for hops in range(_ROBOTS_REDIRECTS + 1):
            chain.append(pre.uri)
            ex = await self.fetcher.fetch(pre.uri)
            await self._robots_capture(pre, ex, n)
            target = _redirect_target(ex) if hops < _ROBOTS_REDIRECTS else None
            if target is None or target in chain:  # a loop: robots.txt unavailable
                break
            if target == robots_url(target):
                known = self.robots.entry(target)
                if known is not None:  # not fetched (nor logged) twice
                    break
            pre = pre.child(target, "R")
        if known is not None:
            body, status = known.body, known.http_status
        else:
            body = _body(ex) if ex.ok and 200 <= ex.status < 300 else b""
            status = ex.http_status if ex.ok else None
        policy = self.robots.record(rurl, status, body)
        for url in chain[1:]:  # the robots.txt of another origin on the way: the same
            if url == robots_url(url) and self.robots.entry(url) is None:
                self.robots.record(url, status, body)
                self._persist_robots(url)
        self._persist_robots(rurl)
        # politeness between the prerequisite and the URI itself, as between two URIs
        delay = politeness_delay(
            ex.duration_ms / 1000.0,
            self.frontier_config,
            policy.crawl_delay(self.job.robots_token),
        )
        await asyncio.sleep(delay)
        return policy

    async def _robots_capture(self, pre: CrawlURI, ex: Exchange, n: int) -> None:
        """Write (deduplicated like any capture; never conditional: the rules are needed)
        and log one robots.txt fetch, or one hop of its redirects."""
        extra = None
        annotations = ex.annotations
        if ex.ok:
            original, kind = self._revisit_of(ex)
            if original is not None:
                annotations = (*annotations, f"duplicate:{kind}")
                self.stats.note_revisit(pre.uri, original.target_uri)
            extra = await self._write(pre, ex, (), original)
        # logged before the rules are saved: after a kill in between, resume reads them
        # back from the WARC records the lines point at (_robots_from_warc)
        self._log_line(
            pre, ex.status, n, ex=ex, size=ex.payload_size if ex.ok else 0,
            annotations=annotations, extra=extra,
            duplicate="duplicate:digest" in annotations,
        )  # fmt: skip

    def _persist_robots(self, url: str) -> None:
        """Keep the origin's robots.txt entry in ``state/robots.sqlite`` so a resumed
        crawl does not fetch it again before it expires (Heritrix keeps robots in its
        BDB state as well)."""
        entry = self.robots.entry(url)
        if entry is None or self._robots_db is None:
            return
        row = entry.to_row()
        body = row["body"]
        row["body"] = base64.b64encode(body if isinstance(body, bytes) else b"").decode()
        self._robots_db.execute(
            "INSERT OR REPLACE INTO robots VALUES (?, ?)", (entry.key, json.dumps(row))
        )

    def _load_robots(self) -> None:
        self._robots_db = sqlite3.connect(
            str(self.job.state_dir / "robots.sqlite"), isolation_level=None
        )
        self._robots_db.execute("PRAGMA journal_mode=WAL")
        self._robots_db.execute(
            "CREATE TABLE IF NOT EXISTS robots (key TEXT PRIMARY KEY, row TEXT)"
        )
        entries = []
        for (text,) in self._robots_db.execute("SELECT row FROM robots"):
            try:
                row = json.loads(text)
                row["body"] = base64.b64decode(row["body"])
                entries.append(RobotsEntry.from_row(row))
            except (KeyError, TypeError, ValueError) as e:
                log.warning("ignoring a bad robots.txt entry in the state: %s", e)
        self.robots.load(entries)
        # robots.txt logged by an earlier run that was killed before saving it
        for url, line in list(self._resume_log.robots.items()):
            if (
                line.hop_path.endswith("P")
                and self.robots.entry(url) is None
                and self._robots_from_warc(url, line)
            ):
                self._persist_robots(url)

    def _robots_from_warc(self, url: str, line: CrawlLogLine) -> bool:
        """Record the robots.txt that ``line`` (of an earlier run) logged, reading its
        body from the WARC record the line's ``warcFilename``/``warcFileOffset`` point
        at (through the logged redirect hops, if any), so a resumed crawl neither
        fetches it again nor logs a second line for one URI. A failed fetch (status
        < 0) is recorded as unreachable again. Returns False when a record or a hop
        cannot be used (then the robots.txt is fetched and logged as a new capture)."""
        try:
            for _ in range(_ROBOTS_REDIRECTS + 1):
                if line.status < 0:
                    self.robots.record(url, None)
                    return True
                extra = json.loads(line.extra_info or "{}")
                path = self.job.warcs_dir / os.path.basename(str(extra["warcFilename"]))
                rec = next(iter(ArchiveReader(str(path), start=int(extra["warcFileOffset"]))))
                head = rec.http
                if rec.type != "response" or rec.target_uri != line.uri or head is None:
                    return False
                status = head.status or 0
                location = next((v for k, v in head.headers if k.lower() == "location"), None)
                target = resolve(line.uri, location) if location else None
                if 300 <= status < 400 and target is not None:
                    hop = self._resume_log.robots.get(target)
                    if hop is None:  # killed within the redirects: fetch them again
                        return False
                    line = hop
                    continue
                body = b""
                if 200 <= status < 300:
                    body = decode_bounded(
                        rec.payload(), head.content_encoding, _MAX_EXTRACT_BYTES
                    ).data
                self.robots.record(url, status, body)
                return True
        except Exception as e:  # no such file/record, a revisit …: fetch it again
            log.warning("resume: robots.txt %s not read back from its WARC: %s", url, e)
        return False

    async def _links(self, curi: CrawlURI, ex: Exchange) -> list[Link]:
        """The outlinks of a fetched URI ([] when extraction fails: logged)."""
        if ex.http_status == 304:
            return self._links_of_last_capture(curi)
        if ex.payload_size > _MAX_EXTRACT_BYTES and ex.header("Location") is None:
            return []
        try:
            if self._pool is not None:
                return await self._pool.extract(curi.uri, ex.mime, _body(ex), ex.headers)
            return extract_links(curi.uri, ex.mime, _body(ex), ex.headers)
        except Exception:
            log.exception("link extraction failed for %s", curi.uri)
            return []

    def _links_of_last_capture(self, curi: CrawlURI) -> list[Link]:
        """A 304 has no body: the links of a not-modified resource are those of its last
        capture, read back from its WARC record when the file is at hand (this job's
        ``warcs/``, or the ``warcs/`` of the job whose ``state/`` holds the dedup
        index), so a recrawl with conditional requests still reaches what an unchanged
        page or style sheet links to. (Heritrix extracts nothing from a 304.) Returns
        [] when the record cannot be found or read."""
        if self.dedup is None:
            return []
        last = self.dedup.last_capture(curi.uri)
        hit = self.dedup.lookup(curi.uri, last.digest) if last is not None else None
        if hit is None or not hit.exact_url or not hit.warc_filename or hit.offset is None:
            return []
        dirs = [self.job.warcs_dir, self.job.dedup_path.parent.parent / "warcs"]
        found = [d / hit.warc_filename for d in dirs if (d / hit.warc_filename).is_file()]
        if not found:
            return []
        path = found[0]
        try:
            for rec in ArchiveReader(str(path), start=hit.offset):
                head = rec.http
                if rec.type != "response" or head is None:
                    return []
                if rec.target_uri != hit.original.target_uri:
                    return []
                ctype = next((v for k, v in head.headers if k.lower() == "content-type"), None)
                mime = ctype.split(";", 1)[0].strip().lower() if ctype else None
                body = decode_bounded(  # a bomb captured earlier stays cut (fetch.body)
                    rec.payload(), head.content_encoding, _MAX_EXTRACT_BYTES
                ).data
                return extract_links(curi.uri, mime, body, head.headers)
        except Exception:  # a damaged or moved file: no links, the crawl goes on
            log.exception("could not read the last capture of %s from %s", curi.uri, path)
        return []

    def _conditional_headers(self, url: str) -> list[tuple[str, str]]:
        """``If-None-Match`` / ``If-Modified-Since`` from the URL's last capture in the
        dedup index (Heritrix ``FetchHTTP`` sendIfNoneMatch / sendIfModifiedSince with
        its fetch history), when ``conditional_requests`` is on (RFC 9110 §13.1)."""
        if self.dedup is None or not self.job.conditional_requests:
            return []
        last = self.dedup.last_capture(url)
        if last is None:
            return []
        out = []
        if last.etag:
            out.append(("If-None-Match", last.etag))
        if last.last_modified:
            out.append(("If-Modified-Since", last.last_modified))
        return out

    def _revisit_of(self, ex: Exchange) -> tuple[Original | None, str]:
        """The original a revisit record of ``ex`` refers to, and the kind of duplicate
        (the crawl.log annotation after ``duplicate:``): ``server-not-modified`` for a
        304 to a conditional request (the URL's last capture), ``digest`` for a payload
        digest already archived, else ``(None, "")``."""
        if ex.http_status == 304 and self.dedup is not None:
            last = self.dedup.last_capture(ex.url)
            if last is not None:
                # the record that holds the payload: this URL's own original when there
                # is one, else (the URL was only ever a digest revisit) the other URL's
                # original; never the URL's last capture when that is itself a revisit
                hit = self.dedup.lookup(ex.url, last.digest)
                if hit is not None:
                    return hit.original, "server-not-modified"
                return Original(last.url, last.date, None, last.digest), "server-not-modified"
        original = self._dedup_lookup(ex)
        return (original, "digest") if original is not None else (None, "")

    def _dedup_lookup(self, ex: Exchange) -> Original | None:
        if self.dedup is None or not ex.payload_digest or ex.truncated:
            return None
        decision = self.dedup_policy.decide(
            ex.http_status, ex.mime, ex.payload_size, ex.payload_digest
        )
        if decision.action != "lookup":
            return None
        hit = self.dedup.lookup(ex.url, ex.payload_digest)
        return hit.original if hit else None

    async def _write(
        self,
        curi: CrawlURI,
        ex: Exchange,
        outlinks: tuple[str, ...],
        original: Original | None,
    ) -> dict[str, Any] | None:
        assert self.writer is not None
        meta = MetadataFields(
            via=curi.via,
            hops_from_seed=curi.hops or None,
            source_tag=curi.source,
            outlinks=outlinks,
        )
        try:
            records = ex.to_records(self.writer.builder, meta, original)
        except Exception as e:  # e.g. a revisit refused by the builder: store in full
            if original is None:
                raise
            log.warning("revisit of %s refused (%s); writing the full response", ex.url, e)
            records = ex.to_records(self.writer.builder, meta, None)
            original = None
        written = await self.writer.write(*records)
        first = written[0]
        if original is not None:
            self._note_capture(ex, original)
        if self.dedup is not None and original is None and ex.payload_digest:
            decision = self.dedup_policy.decide(
                ex.http_status, ex.mime, ex.payload_size, ex.payload_digest
            )
            if decision.action == "lookup" and not ex.truncated:
                self.dedup.add(
                    ex.url,
                    ex.payload_digest,
                    ex.started.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
                    first.record_id,
                    os.path.basename(first.path),
                    first.offset,
                    etag=ex.header("ETag"),
                    last_modified=ex.header("Last-Modified"),
                )
        return {
            "contentSize": ex.payload_size,
            "warcFilename": os.path.basename(first.path),
            "warcFileOffset": first.offset,
        }

    def _note_capture(self, ex: Exchange, original: Original) -> None:
        """After a revisit: it is the URL's newest capture (same payload as
        ``original``); keep its validators for the next conditional request."""
        note = getattr(self.dedup, "note_capture", None)
        if note is None or not original.payload_digest:
            return
        last = self.dedup.last_capture(ex.url) if self.dedup is not None else None
        note(
            ex.url,
            original.payload_digest,
            ex.started.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
            etag=ex.header("ETag") or (last.etag if last else None),
            last_modified=ex.header("Last-Modified") or (last.last_modified if last else None),
        )

    def _log_line(
        self,
        curi: CrawlURI,
        status: int,
        n: int,
        *,
        ex: Exchange | None = None,
        size: int = 0,
        annotations: tuple[str, ...] = (),
        extra: dict[str, Any] | None = None,
        duplicate: bool = False,
        redirect: str | None = None,
        mime: str | None = None,
        began: datetime | None = None,
        digest: str | None = None,
    ) -> None:
        """Write the final crawl.log line of ``curi`` (flushed at once) and count it.
        ``mime``, ``began`` and ``digest`` are for lines without an exchange (dns:)."""
        ok = ex is not None and ex.ok
        line = CrawlLogLine(
            timestamp=_now(),
            status=status,
            size=size if ok or mime else None,
            uri=curi.uri,
            hop_path=curi.hops,
            via=curi.via,
            mime_type=(ex.mime or "no-type") if ex is not None and ex.ok else mime,
            thread=n,
            fetch_began=ex.started if ex is not None else began,
            fetch_duration_ms=ex.duration_ms if ex is not None else (0 if began else None),
            digest=ex.payload_digest if ex is not None and ex.ok else digest,
            source_tag=curi.source,
            annotations=annotations,
            extra_info=json.dumps(extra, separators=(",", ":")) if extra else None,
        )
        assert self._log_file is not None
        self._log_file.write(format_line(line) + "\n")
        self._log_file.flush()
        self.stats.record(
            curi.uri,
            status,
            size,
            line.mime_type,
            seed=curi.seed,
            source=curi.source,
            duplicate=duplicate,
            redirect=redirect,
            annotations=annotations,
        )


class _FinishOrder:
    """Tickets that let fetched URIs run their finishing steps (WARC write, dedup,
    outlinks, crawl.log, frontier) one at a time, in the order their fetches ended,
    while their link extractions run in parallel. A ticket abandoned (error,
    cancellation) through :meth:`done` never blocks the ones after it."""

    def __init__(self) -> None:
        self._next = 0
        self._turn = 0
        self._done: set[int] = set()
        self._waiters: dict[int, asyncio.Future[None]] = {}

    def ticket(self) -> int:
        """The next ticket (0, 1, 2 …)."""
        t = self._next
        self._next += 1
        return t

    async def turn(self, ticket: int) -> None:
        """Wait until every earlier ticket is :meth:`done`."""
        if self._turn == ticket:
            return
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters[ticket] = fut
        try:
            await fut
        finally:
            self._waiters.pop(ticket, None)

    def done(self, ticket: int) -> None:
        """``ticket`` is finished (or abandoned): let the next one go."""
        self._done.add(ticket)
        while self._turn in self._done:
            self._done.discard(self._turn)
            self._turn += 1
        fut = self._waiters.get(self._turn)
        if fut is not None and not fut.done():
            fut.set_result(None)


def _cut_torn_line(path: Path) -> None:
    """Cut a last line torn by ``kill -9`` (no final newline) off ``path``: a torn line
    is no final line, its URI is fetched and logged again."""
    with open(path, "rb+") as f:
        size = f.seek(0, os.SEEK_END)
        if size == 0:
            return
        f.seek(-1, os.SEEK_END)
        if f.read(1) == b"\n":
            return
        pos = size
        while pos > 0:
            step = min(4096, pos)
            f.seek(pos - step)
            chunk = f.read(step)
            nl = chunk.rfind(b"\n")
            if nl >= 0:
                pos = pos - step + nl + 1
                break
            pos -= step
        log.warning("%s: cutting a torn last line (%d bytes)", path, size - pos)
        f.truncate(pos)


class _ResumeLog:
    """What a resumed crawl needs from the crawl.log of the runs before it: the last
    line (see :meth:`CrawlController._settle_recovered`) and when each prerequisite
    (``dns:``, robots.txt) was logged. Memory: one entry per host."""

    def __init__(self) -> None:
        self.last: CrawlLogLine | None = None
        self.prerequisites: dict[str, datetime] = {}
        self.robots: dict[str, CrawlLogLine] = {}
        """The last line of each robots.txt prerequisite (hop ``P``) and of each of its
        redirects (``PR``, ``PRR`` …), by URI."""

    def note(self, line: CrawlLogLine) -> None:
        self.last = line
        if line.hop_path.endswith("P"):
            if line.status > 0:
                self.prerequisites[line.uri] = line.timestamp
            if line.uri.endswith("/robots.txt"):
                self.robots[line.uri] = line
        elif _ROBOTS_HOP.search(line.hop_path):
            self.robots[line.uri] = line

    def dns_recorded(self, host: str, valid_s: float) -> bool:
        """True when ``dns:HOST`` was logged less than ``valid_s`` seconds ago."""
        when = self.prerequisites.get(f"dns:{host}")
        return when is not None and (_now() - when).total_seconds() < valid_s


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
