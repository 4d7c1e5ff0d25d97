"""Operating a running crawl: pause, resume, stop, add seeds, change delays, status and
live reports (what Heritrix's web console and REST API offer for a running job).

:class:`CrawlControl` wraps one :class:`~webark.crawl.controller.CrawlController` and
must be used from the controller's event loop (the control API's handlers run there:
the frontier is a single-threaded SQLite connection). The controller's hooks it uses:

* ``controller.unpaused`` — an :class:`asyncio.Event`; workers take no new URI while it
  is clear. URIs in flight finish (Heritrix: state PAUSING until none is left, then
  PAUSED).
* ``controller.request_stop()`` — graceful stop: in-flight URIs finish, the WARC is
  closed, the reports written; the frontier keeps the rest for ``--resume``.
* ``controller.stats.board`` — what each worker is doing
  (:class:`~webark.crawl.stats.WorkerBoard`).

States (``status()["state"]``): ``STARTING`` (before the frontier is open), ``RUNNING``,
``PAUSING``, ``PAUSED``, ``STOPPING``, ``FINISHED``.
"""

from __future__ import annotations

import dataclasses
import sqlite3
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from webark.core.errors import RequestError
from webark.crawl.curi import HIGHEST, CrawlURI
from webark.crawl.frontier import FrontierStats
from webark.crawl.reports import DEFAULT_REPORTS, Report, report_by_name
from webark.crawl.scope import ScopeConfigError, build_scope
from webark.crawl.stats import StatsSnapshot
from webark.fetch import refusal

if TYPE_CHECKING:
    from webark.crawl.controller import CrawlController, CrawlSummary
    from webark.crawl.rss.scheduler import RssScheduler
    from webark.crawl.rss.store import RssStore

__all__ = [
    "AddSeedsResult",
    "ControlError",
    "ControlStateError",
    "CrawlControl",
    "rss_change",
    "rss_listing",
    "rss_scheduler",
]

STARTING, RUNNING, PAUSING, PAUSED, STOPPING, FINISHED = (
    "STARTING",
    "RUNNING",
    "PAUSING",
    "PAUSED",
    "STOPPING",
    "FINISHED",
)


class ControlError(RequestError):
    """A control request that cannot be carried out (bad value, wrong state); the
    message says what to change."""


class ControlStateError(ControlError):
    """The request does not fit the crawl's state (stopping, finished, not started)."""


@dataclass(frozen=True)
class AddSeedsResult:
    """What :meth:`CrawlControl.add_seeds` did.

    Attributes:
        added: seeds queued now.
        already_seen: seeds the frontier had seen (queued, in flight or finished; pass
            ``force=True`` to fetch finished ones again).
        rejected: ``(seed, reason)`` for seeds refused (not http/https, unparseable,
            private address without ``allow_private``, host unresolvable).
    """

    added: tuple[str, ...]
    already_seen: tuple[str, ...]
    rejected: tuple[tuple[str, str], ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "added": list(self.added),
            "already_seen": list(self.already_seen),
            "rejected": [{"seed": s, "reason": r} for s, r in self.rejected],
        }


class CrawlControl:
    """Control of one running crawl (see the module docstring).

    Args:
        controller: the crawl; it may not have started yet.
        reports: reports served by :meth:`report` (default: the controller's).
        top_queues: queues listed in live snapshots (frontier summary / non-empty).
    """

    def __init__(
        self,
        controller: CrawlController,
        *,
        reports: Iterable[Report] | None = None,
        top_queues: int = 1000,
    ) -> None:
        self.controller = controller
        self.reports: tuple[Report, ...] = tuple(
            reports if reports is not None else (controller.reports or DEFAULT_REPORTS)
        )
        self.top_queues = top_queues
        self._summary: CrawlSummary | None = None
        # the controller numbers its workers 1..N (crawl.log's #thread field)
        controller.stats.board.register(range(1, controller.job.workers + 1))

    # -- state ------------------------------------------------------------------------
    @property
    def state(self) -> str:
        """The crawl's state (one of the module's state names)."""
        ctl = self.controller
        if self._summary is not None:
            return FINISHED
        if ctl.stopping:
            return STOPPING
        if ctl.frontier is None:
            return STARTING
        if not ctl.unpaused.is_set():
            return PAUSING if ctl.frontier.in_flight else PAUSED
        return RUNNING

    def finished(self, summary: CrawlSummary) -> None:
        """Called by whoever awaited :meth:`CrawlController.run` with its result; later
        snapshots and reports are the final ones."""
        self._summary = summary

    def settings(self) -> dict[str, Any]:
        """The live politeness settings (seconds; ``delay_factor`` a multiple of the
        last fetch time)."""
        c = self.controller.frontier_config
        return {
            "min_delay": c.min_delay,
            "max_delay": c.max_delay,
            "delay_factor": c.delay_factor,
            "crawl_delay_cap": c.crawl_delay_cap,
            "workers": self.controller.job.workers,
        }

    def warc_bytes(self) -> int:
        """Bytes of the crawl's WARC files on disk (:meth:`CrawlController.warc_bytes`)."""
        return self.controller.warc_bytes()

    def _frontier_stats(self, top: int) -> FrontierStats | None:
        f = self.controller.frontier
        if f is None:
            return None
        try:
            return f.stats(top=top)
        except (sqlite3.ProgrammingError, AttributeError):  # closed at the end of run()
            return None

    def snapshot(self, *, top: int | None = None) -> StatsSnapshot:
        """A read-only snapshot with the frontier (``top`` largest queues, default
        :attr:`top_queues`), WARC bytes, live settings and the state; after the crawl,
        its final snapshot."""
        if self._summary is not None:
            return dataclasses.replace(
                self._summary.snapshot,
                warc_bytes=self.warc_bytes(),
                settings=MappingProxyType(self.settings()),
                state=FINISHED,
            )
        return self.controller.stats.snapshot(
            self._frontier_stats(self.top_queues if top is None else top),
            warc_bytes=self.warc_bytes(),
            settings=self.settings(),
            state=self.state,
        )

    def status(self) -> dict[str, Any]:
        """The crawl at a glance (JSON-serializable; times ISO 8601 UTC, sizes bytes)."""
        snap = self.snapshot(top=0)
        f = snap.frontier
        ctl = self.controller
        return {
            "state": self.state,
            "job": snap.job_name,
            "job_dir": str(ctl.job.job_dir),
            "stop_reason": snap.stop_reason,
            "elapsed_s": round(snap.elapsed, 3),
            "uris": {
                "processed": snap.processed,
                "succeeded": snap.succeeded,
                "failed": snap.failed,
                "robots_excluded": snap.robots_excluded,
                "disregarded": snap.disregarded,
                "queued": snap.queued,
                "in_flight": f.in_flight if f else 0,
                "duplicates": snap.duplicates,
                "not_modified": snap.not_modified,
            },
            "uris_per_s": round(snap.uris_per_second, 3),
            "bytes": snap.bytes,
            "novel_bytes": snap.novel_bytes,
            "warc_bytes": snap.warc_bytes,
            "queues": {
                "total": f.queues if f else 0,
                "ready": f.ready_queues if f else 0,
                "snoozed": f.snoozed_queues if f else 0,
                "in_flight": f.in_flight_queues if f else 0,
                "blocked": f.blocked_queues if f else 0,
            },
            "workers": {"total": ctl.job.workers, "busy": snap.busy_workers},
            "seeds": len(ctl.job.seeds),
            "settings": dict(snap.settings),
            "reports": [r.name for r in self.reports],
        }

    def report(self, name: str) -> tuple[Report, StatsSnapshot]:
        """The report called ``name`` and a fresh snapshot to render it from.

        Raises:
            ControlError: no such report (the message lists the names).
        """
        rep = report_by_name(name, self.reports)
        if rep is None:
            names = ", ".join(r.name for r in self.reports)
            raise ControlError(f"no report {name!r}; reports: {names}")
        return rep, self.snapshot()

    # -- operations -------------------------------------------------------------------
    def _require_running(self, what: str) -> None:
        if self.state in (STOPPING, FINISHED):
            raise ControlStateError(f"cannot {what}: the crawl is {self.state.lower()}")

    def pause(self) -> str:
        """Take no new URI (in-flight ones finish). Returns the new state.

        Raises:
            ControlStateError: the crawl is stopping or finished.
        """
        self._require_running("pause")
        self.controller.unpaused.clear()
        return self.state

    def resume(self) -> str:
        """Undo :meth:`pause`. Returns the new state.

        Raises:
            ControlStateError: the crawl is stopping or finished.
        """
        self._require_running("resume")
        self.controller.unpaused.set()
        return self.state

    def stop(self, reason: str = "stopped by operator (control API)") -> str:
        """Graceful stop (as SIGTERM): in-flight URIs finish, the WARC is closed and the
        reports written; ``webark crawl --resume JOBDIR`` continues. Returns the state."""
        if self._summary is None:
            self.controller.request_stop(reason)
        return self.state

    async def add_seeds(self, seeds: Iterable[str], *, force: bool = False) -> AddSeedsResult:
        """Add seeds to the running crawl, scoped like the job's seeds: their SURT
        prefixes join the scope, they are queued with hop path ``""`` and source tag
        themselves, ahead of what was queued (priority :data:`~webark.crawl.curi.HIGHEST`
        in their queue, their queue first in the ready line once its politeness delay
        has passed: Heritrix schedules operator-added seeds as high priority), listed in
        the seeds report and saved in ``state/job.json`` (so
        ``--resume`` keeps them). A seed whose host resolves to a private, loopback or
        link-local address is refused unless the job allows them.

        Args:
            seeds: absolute http(s) URLs.
            force: queue seeds already finished again (Heritrix "force fetch").

        Raises:
            ControlStateError: the crawl is stopping or finished, or has not started.
        """
        self._require_running("add seeds")
        ctl = self.controller
        frontier = ctl.frontier
        if frontier is None:
            raise ControlStateError("cannot add seeds: the crawl has not started yet")
        job = ctl.job
        ok: list[str] = []
        rejected: list[tuple[str, str]] = []
        for raw in seeds:
            seed = str(raw).strip()
            reason = await self._seed_problem(seed)
            if reason:
                rejected.append((seed, reason))
            elif seed not in ok:
                ok.append(seed)
        added: list[str] = []
        seen: list[str] = []
        if ok:
            new_seeds = tuple(dict.fromkeys((*job.seeds, *ok)))
            ctl.scope = build_scope(job.scope, new_seeds)
            ctl.job = dataclasses.replace(job, seeds=new_seeds)
            ctl.job.save()
            for seed in ok:
                ctl.stats.add_seed(seed)
                curi = CrawlURI(seed, seed=True, source=seed, priority=HIGHEST)
                if frontier.add(curi, force=force):
                    frontier.promote(curi.key)
                    added.append(seed)
                else:
                    seen.append(seed)
        return AddSeedsResult(tuple(added), tuple(seen), tuple(rejected))

    async def _seed_problem(self, seed: str) -> str | None:
        parts = urlsplit(seed)
        if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
            return "not an absolute http(s) URL"
        try:
            build_scope({}, [seed])
        except ScopeConfigError as e:
            return str(e)
        ctl = self.controller
        try:
            answer = await ctl.fetcher.lookup(parts.hostname)
        except ValueError as e:
            return f"bad host name: {e}"
        if not answer.ok:
            return f"{parts.hostname} does not resolve: {answer.error}"
        for addr in answer.addresses:
            msg = refusal(addr, ctl.job.allow_private)
            if msg:
                return f"{parts.hostname} resolves to {addr}: {msg.split(';')[0]}"
        return None

    def set_delays(
        self,
        *,
        min_delay: float | None = None,
        max_delay: float | None = None,
        delay_factor: float | None = None,
    ) -> dict[str, Any]:
        """Change the politeness delays live (seconds; ``delay_factor`` × last fetch
        time, clamped to [min, max]). They apply from each queue's next fetch (a queue
        already waiting keeps its due time) and are saved in ``state/job.json``.
        Returns :meth:`settings`.

        Raises:
            ControlError: a value that is not a finite number >= 0, or min > max.
            ControlStateError: the crawl is stopping or finished.
        """
        self._require_running("change delays")
        ctl = self.controller
        changes: dict[str, float] = {}
        for key, value in (
            ("min_delay", min_delay),
            ("max_delay", max_delay),
            ("delay_factor", delay_factor),
        ):
            if value is None:
                continue
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise ControlError(f"{key}: expected a number of seconds, got {value!r}")
            changes[key] = float(value)
        if not changes:
            raise ControlError("give at least one of min_delay, max_delay, delay_factor")
        cur = ctl.frontier_config
        lo = changes.get("min_delay", cur.min_delay)
        hi = changes.get("max_delay", cur.max_delay)
        factor = changes.get("delay_factor", cur.delay_factor)
        try:
            config = dataclasses.replace(cur, min_delay=lo, max_delay=hi, delay_factor=factor)
        except ValueError as e:
            raise ControlError(f"{e} (asked: {changes})") from None
        ctl.frontier_config = config
        if ctl.frontier is not None:
            ctl.frontier.config = config
        ctl.job = dataclasses.replace(ctl.job, min_delay=lo, max_delay=hi, delay_factor=factor)
        ctl.job.save()
        return self.settings()


# -- continuous crawling (webark.crawl.rss) ---------------------------------------------


def rss_scheduler(control: CrawlControl) -> RssScheduler:
    """The continuous-crawling scheduler of the crawl ``control`` operates.

    Raises:
        ControlError: the crawl has no ``rss:`` section.
    """
    from webark.crawl.rss.scheduler import RssScheduler

    for ext in control.controller.extensions:
        if isinstance(ext, RssScheduler):
            return ext
    raise ControlError("not a continuous crawl: the job has no rss: section")


def rss_listing(control: CrawlControl) -> list[dict[str, Any]]:
    """Every site with its configuration, state and feeds (``webark rss list --json``).

    Raises:
        ControlError: not a continuous crawl.
    """
    from webark.crawl.rss.store import RssStore

    with RssStore.open(rss_scheduler(control).database) as store:
        return store.listing()


def rss_change(control: CrawlControl, change: Callable[[RssStore], Any]) -> Any:
    """Run ``change`` (e.g. ``lambda s: s.add_site("news", min_wait=600)``) on the
    crawl's RSS database, on a connection of its own as ``webark rss`` does, then have
    the scheduler read it at once. Returns what ``change`` returned.

    Raises:
        ControlError: not a continuous crawl, or the change was refused (no such site,
            a bad URL or wait …: :class:`~webark.crawl.rss.model.RssConfigError`).
        ControlStateError: the crawl is stopping or finished.
    """
    from webark.crawl.rss.model import RssConfigError
    from webark.crawl.rss.store import RssStore

    control._require_running("change the RSS configuration")
    scheduler = rss_scheduler(control)
    try:
        with RssStore.open(scheduler.database) as store:
            result = change(store)
    except RssConfigError as e:
        raise ControlError(str(e)) from None
    scheduler.config_changed()
    return result
