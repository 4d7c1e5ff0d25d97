"""The terminal view of a running crawl (``webark crawl``).

On a terminal: a ``rich`` live panel redrawn about once a second — state, URIs/s (over
the last few seconds and since the start), URIs done / queued / failed, queues active
and total, bytes downloaded, WARC bytes on disk, dedup hits, and what each busy worker
is fetching. Not on a terminal (a log file, CI): one plain progress line every
``line_interval`` seconds (Heritrix writes ``progress-statistics.log`` lines the same
way). ``--quiet`` shows neither. When nothing is in flight or ready and a queue waits
for a retry (a seed that does not resolve, a host that refuses connections), both say
which URI it waits for, after what failure, and when it wakes (:func:`waiting_note`).

The view only reads snapshots (:meth:`webark.crawl.control.CrawlControl.snapshot` with
no queue list, one aggregate query of the frontier per refresh), so it costs the crawl
one small SQLite query a second.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import deque
from collections.abc import Callable

from rich.console import Console, Group, RenderableType
from rich.live import Live
from rich.table import Table
from rich.text import Text

from webark.crawl.stats import StatsSnapshot
from webark.crawllog.status import status_meaning

__all__ = [
    "CrawlView", "RateMeter", "human_bytes", "progress_line", "render_view", "waiting_note",
]  # fmt: skip


def human_bytes(n: float | None) -> str:
    """``n`` bytes in binary units (``"1.5 MiB"``); ``"-"`` for None."""
    if n is None:
        return "-"
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(n) < 1024 or unit == "TiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} TiB"  # pragma: no cover - loop always returns


class RateMeter:
    """URIs/s and bytes/s over the last ``window`` seconds of snapshots (the crawl's
    average since the start hides a stall; this does not).

    Args:
        window: seconds of history kept.
    """

    def __init__(self, window: float = 5.0) -> None:
        self.window = window
        self._points: deque[tuple[float, int, int]] = deque()

    def add(self, snap: StatsSnapshot) -> tuple[float, float]:
        """Record ``snap`` (its ``now``, ``processed``, ``bytes``); returns the recent
        (URIs/s, bytes/s), 0 until two snapshots are known."""
        self._points.append((snap.now, snap.processed, snap.bytes))
        while len(self._points) > 2 and snap.now - self._points[0][0] > self.window:
            self._points.popleft()
        t0, n0, b0 = self._points[0]
        dt = snap.now - t0
        if dt <= 0:
            return 0.0, 0.0
        return (snap.processed - n0) / dt, (snap.bytes - b0) / dt


def _queues(snap: StatsSnapshot) -> tuple[int, int]:
    f = snap.frontier
    if f is None:
        return 0, 0
    return f.ready_queues + f.snoozed_queues + f.in_flight_queues, f.queues


def _duration(seconds: float) -> str:
    s = max(0, round(seconds))
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60:02d} s"
    return f"{s // 3600} h {s % 3600 // 60:02d} min"


def waiting_note(snap: StatsSnapshot) -> str | None:
    """What an idle crawl waits for — ``"waiting for retry 2/30 of http://x/ (-6:
    prerequisite domain lookup failed) at 10:27:03 UTC, in 14 min 59 s"`` — or None while
    anything is in flight or ready (or nothing waits for a retry)."""
    f, note = snap.frontier, snap.next_retry
    if f is None or note is None or f.in_flight or f.ready_queues or not f.snoozed_queues:
        return None
    at = time.strftime("%H:%M:%S UTC", time.gmtime(note.due))
    return (
        f"waiting for retry {note.retry}/{note.max_retries} of {note.uri} "
        f"({note.status}: {status_meaning(note.status)}) at {at}, "
        f"in {_duration(note.due - snap.now)}"
    )


def progress_line(snap: StatsSnapshot, uris_per_s: float | None = None) -> str:
    """One plain progress line (for logs): elapsed, state, counts, rates, sizes, and
    what an idle crawl waits for (:func:`waiting_note`)."""
    active, total = _queues(snap)
    rate = snap.uris_per_second if uris_per_s is None else uris_per_s
    state = f" {snap.state}" if snap.state else ""
    waiting = waiting_note(snap)
    return (
        f"[{snap.elapsed:7.0f} s]{state} {snap.processed} done ({snap.succeeded} ok, "
        f"{snap.failed} errors, {snap.robots_excluded} robots), {snap.queued} queued, "
        f"{rate:.1f} URIs/s, queues {active}/{total}, {human_bytes(snap.bytes)} fetched, "
        f"WARC {human_bytes(snap.warc_bytes)}, {snap.duplicates} dup"
        + (f"; {waiting}" if waiting else "")
    )


def render_view(
    snap: StatsSnapshot, rates: tuple[float, float] = (0.0, 0.0), *, max_workers: int = 12
) -> RenderableType:
    """The live panel for ``snap``; ``rates`` are the recent (URIs/s, bytes/s)."""
    active, total = _queues(snap)
    f = snap.frontier
    head = Text.assemble(
        ("webark crawl ", "bold"),
        (snap.job_name, "cyan"),
        f"  {snap.state or ''}  {snap.elapsed:.0f} s",
    )
    grid = Table.grid(padding=(0, 2))
    for _ in range(4):
        grid.add_column()
    grid.add_row(
        "URIs/s", f"{rates[0]:.1f} (avg {snap.uris_per_second:.1f})",
        "bytes/s", human_bytes(rates[1]) + "/s",
    )  # fmt: skip
    grid.add_row(
        "done", f"{snap.processed} ({snap.succeeded} ok)",
        "queued", f"{snap.queued} ({f.in_flight if f else 0} in flight)",
    )  # fmt: skip
    grid.add_row(
        "errors", f"{snap.failed} (+{snap.robots_excluded} robots-excluded)",
        "queues", f"{active} active / {total} total",
    )  # fmt: skip
    grid.add_row(
        "fetched", human_bytes(snap.bytes),
        "WARC", human_bytes(snap.warc_bytes),
    )  # fmt: skip
    grid.add_row(
        "dedup", f"{snap.duplicates} revisits, {human_bytes(snap.duplicate_bytes)} saved",
        "not modified", str(snap.not_modified),
    )  # fmt: skip
    busy = [w for w in snap.workers if w.uri is not None]
    table = Table(box=None, show_header=True, header_style="dim", pad_edge=False)
    table.add_column("#", justify="right")
    table.add_column("stage")
    table.add_column("s", justify="right")
    table.add_column("URI", overflow="ellipsis", no_wrap=True)
    for w in busy[:max_workers]:
        table.add_row(str(w.worker), w.stage, f"{max(0.0, snap.now - w.since):.1f}", w.uri)
    more = len(busy) - max_workers
    parts: list[RenderableType] = [head, grid, table] if busy else [head, grid]
    waiting = waiting_note(snap)
    if waiting:
        parts.append(Text(waiting, style="yellow"))
    if more > 0:
        parts.append(Text(f"… {more} more busy workers", style="dim"))
    return Group(*parts)


class CrawlView:
    """Shows a running crawl on ``console`` until :meth:`run`'s task is cancelled.

    Args:
        console: where to draw (stderr in the CLI).
        source: returns a fresh snapshot (called in the event loop).
        mode: ``"live"`` (rich panel), ``"lines"`` (plain lines) or ``"off"``;
            ``None`` picks live on a terminal, lines otherwise.
        refresh: seconds between redraws of the live panel.
        line_interval: seconds between plain lines.
    """

    def __init__(
        self,
        console: Console,
        source: Callable[[], StatsSnapshot],
        *,
        mode: str | None = None,
        refresh: float = 1.0,
        line_interval: float = 10.0,
    ) -> None:
        self.console = console
        self.source = source
        self.mode = mode or ("live" if console.is_terminal else "lines")
        self.refresh = refresh
        self.line_interval = line_interval
        self.meter = RateMeter()
        self.lines_written = 0

    async def run(self) -> None:
        """Draw until cancelled (the live panel is left with its last state)."""
        if self.mode == "off":
            return
        if self.mode == "live":
            with Live(console=self.console, auto_refresh=False, transient=False) as live:
                try:
                    while True:
                        snap = self.source()
                        live.update(render_view(snap, self.meter.add(snap)), refresh=True)
                        await asyncio.sleep(self.refresh)
                finally:  # the last state stays on screen
                    with contextlib.suppress(Exception):
                        snap = self.source()
                        live.update(render_view(snap, self.meter.add(snap)), refresh=True)
        else:
            # the rate of the first line counts from here: with no earlier snapshot
            # it read 0.0 URIs/s while URIs were being finished
            self.meter.add(self.source())
            next_line = time.monotonic() + self.line_interval
            while True:
                await asyncio.sleep(max(0.0, next_line - time.monotonic()))
                next_line += self.line_interval
                snap = self.source()
                self.console.print(progress_line(snap, self.meter.add(snap)[0]),
                                   highlight=False, soft_wrap=True)  # fmt: skip
                self.lines_written += 1
