"""``JOBDIR/logs/progress-statistics.log``: Heritrix's progress log (one line of totals
and rates every ``progress_interval`` seconds, 20 by default as Heritrix's
``StatisticsTracker.intervalSeconds``; the format is :mod:`webark.crawllog.progress`).

Each run appends to the file: ``CRAWL RUNNING`` (``CRAWL RESUMED`` for ``--resume``) and
the legend, a line per interval, ``CRAWL PAUSED`` / ``CRAWL RESUMED`` when the operator
pauses and resumes, and at the end ``CRAWL ENDING - reason``, a last line and
``CRAWL ENDED - reason``. Totals are the whole crawl's (the statistics are rebuilt from
crawl.log on resume); "current" rates are over the last interval of this run. A line
that cannot be written (a full disk) is logged and skipped: the crawl goes on.
"""

from __future__ import annotations

import logging
import math
import os
import resource
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from webark.crawl.stats import StatsSnapshot
from webark.crawllog.progress import (
    LEGEND,
    ProgressEvent,
    ProgressLine,
    format_event,
    format_progress_line,
)

__all__ = ["ProgressStatisticsLog", "progress_line"]

log = logging.getLogger(__name__)


def _memory_kib() -> tuple[int, int]:
    """(resident set now, its peak) of this process in KiB (Linux ``/proc``)."""
    peak = int(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)  # KiB on Linux
    try:
        with open("/proc/self/statm") as f:
            rss_pages = int(f.read().split()[1])
        return rss_pages * os.sysconf("SC_PAGE_SIZE") // 1024, peak
    except (OSError, ValueError, IndexError):
        return peak, peak


def progress_line(snap: StatsSnapshot, since: tuple[float, int, int] | None) -> ProgressLine:
    """The progress line of ``snap``; ``since`` is ``(time, downloaded, bytes)`` at the
    previous line (None: current rates are the averages)."""
    f = snap.frontier
    elapsed = snap.elapsed
    docs_avg = snap.succeeded / elapsed if elapsed > 0 else 0.0
    kib_avg = int(snap.bytes / 1024 / elapsed) if elapsed > 0 else 0
    docs, kib = docs_avg, kib_avg
    if since is not None and snap.now > since[0]:
        dt = snap.now - since[0]
        docs = (snap.succeeded - since[1]) / dt
        kib = int((snap.bytes - since[2]) / 1024 / dt)
    discovered = queued = max_depth = avg_depth = 0
    congestion = math.nan
    if f is not None:
        queued = f.queued
        # Heritrix's discoveredUriCount (queued + future + succeeded + failed +
        # disregarded): every URI with a final crawl.log line (snap.processed), the
        # dns: and robots.txt prerequisites fetched outside the frontier included, so
        # discovered >= downloaded (succeeded lines) by construction
        discovered = f.queued + f.in_flight + max(snap.processed, f.finished)
        max_depth = f.top_queues[0].queued if f.top_queues else 0
        active = f.ready_queues + f.snoozed_queues + f.in_flight_queues
        avg_depth = f.queued // active if active else 0
        busy = f.in_flight_queues + f.snoozed_queues
        congestion = active / busy if busy else math.nan
    mem, peak = _memory_kib()
    return ProgressLine(
        when=datetime.fromtimestamp(snap.now, UTC), discovered=discovered, queued=queued,
        downloaded=snap.succeeded, docs_per_s=docs, docs_per_s_avg=docs_avg, kib_per_s=kib,
        kib_per_s_avg=kib_avg, failures=snap.failed, busy_threads=snap.busy_workers,
        mem_kib=mem, heap_kib=peak, congestion=congestion, max_depth=max_depth,
        avg_depth=avg_depth,
    )  # fmt: skip


class ProgressStatisticsLog:
    """The progress log of one run (module docstring).

    Args:
        path: the log file (appended to; its folder must exist).
        interval: seconds between two lines.
        clock: wall-clock seconds (the crawl's).
    """

    def __init__(self, path: Path, interval: float, clock: Callable[[], float]) -> None:
        self.path = path
        self.interval = interval
        self._clock = clock
        self._last: tuple[float, int, int] | None = None
        self._paused = False

    def _write(self, *lines: str) -> None:
        try:
            with open(self.path, "a", encoding="utf-8") as f:
                f.write("".join(line + "\n" for line in lines))
        except OSError as e:
            log.warning("progress-statistics.log: line not written (%s)", e)

    def _event(self, state: str, message: str) -> str:
        return format_event(ProgressEvent(datetime.fromtimestamp(self._clock(), UTC), state,
                                          message))  # fmt: skip

    def start(self, snap: StatsSnapshot, *, resumed: bool) -> None:
        """The run's first lines; ``snap`` gives the totals current rates start from."""
        self._last = (snap.now, snap.succeeded, snap.bytes)
        state = "RESUMED" if resumed else "RUNNING"
        self._write(self._event(state, "Running"), LEGEND)

    def due(self) -> bool:
        """True when the next line is due."""
        return self._last is None or self._clock() - self._last[0] >= self.interval

    def tick(self, snapshot: Callable[[], StatsSnapshot], *, paused: bool) -> None:
        """Called often (the controller's ticker): writes a pause or resume event when
        ``paused`` changed, and a line when one is due (``snapshot`` is only called
        then). A paused crawl writes no lines (as Heritrix 3.1+)."""
        if paused != self._paused:
            self._paused = paused
            self._write(self._event("PAUSED" if paused else "RESUMED",
                                    "Paused" if paused else "Running"))  # fmt: skip
        if paused or not self.due():
            return
        self.write_line(snapshot())

    def write_line(self, snap: StatsSnapshot) -> None:
        """Write the line of ``snap`` now."""
        self._write(format_progress_line(progress_line(snap, self._last)))
        self._last = (snap.now, snap.succeeded, snap.bytes)

    def end(self, snap: StatsSnapshot, reason: str) -> None:
        """``CRAWL ENDING``, the final line, ``CRAWL ENDED`` (``reason``: why it ended)."""
        message = "Finished" if reason == "finished" else reason
        self._write(self._event("ENDING", message))
        self.write_line(snap)
        self._write(self._event("ENDED", message))
