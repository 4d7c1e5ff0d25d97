"""Resuming a stopped or killed crawl: what the runs before left in the job folder.

The windows a ``kill -9`` can hit between two files are closed so that crawl.log keeps
exactly one final line per URI: a torn last line is cut (:func:`cut_torn_line`); a URI
whose line was written before the kill but not reported to the frontier is finished as
logged, not fetched again (:func:`settle_recovered`); ``.open`` WARCs are cut back to
their last whole record (:func:`repair_open_warcs`); the statistics are rebuilt from
crawl.log (:func:`rebuild_stats`); the running time of every run is kept in
``state/sessions.json`` (:class:`Sessions`).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from webark.crawl.frontier import Frontier
from webark.crawl.stats import CrawlStats, WorkerBoard
from webark.crawllog import CrawlLogLine
from webark.crawllog.parse import iter_crawl_log
from webark.warc.repair import repair_open_file

__all__ = [
    "ResumeLog",
    "Sessions",
    "cut_torn_line",
    "rebuild_stats",
    "repair_open_warcs",
    "settle_recovered",
]

log = logging.getLogger(__name__)

_ROBOTS_HOP = re.compile(r"PR+$")  # hop path of a redirect of a robots.txt


class ResumeLog:
    """What a resumed crawl needs from the crawl.log of the runs before it: the last
    line (see :func:`settle_recovered`) and when each prerequisite (``dns:``,
    robots.txt) was logged. Memory: one entry per host."""

    def __init__(self) -> None:
        self.last: CrawlLogLine | None = None
        self.prerequisites: dict[str, datetime] = {}
        self.robots: dict[str, CrawlLogLine] = {}
        """The last line of each robots.txt prerequisite (hop ``P``) and of each of its
        redirects (``PR``, ``PRR`` …), by URI."""
        self._offsets: dict[str, set[int]] = {}

    def watch(self, warc_paths: list[str]) -> None:
        """Collect, for the WARC files ``warc_paths`` (those repaired: open at the
        kill), the offsets the lines noted from now on point at
        (:meth:`logged_offsets`; :mod:`webark.crawl.orphans`)."""
        for p in warc_paths:
            self._offsets.setdefault(os.path.basename(p), set())

    def logged_offsets(self, warc_name: str) -> set[int]:
        """The ``warcFileOffset`` s of the lines naming the watched file ``warc_name``."""
        return self._offsets.get(warc_name, set())

    def _note_offset(self, extra_info: str) -> None:
        for name, offsets in self._offsets.items():
            if name in extra_info:
                with contextlib.suppress(ValueError, TypeError, KeyError):
                    extra = json.loads(extra_info)
                    if extra["warcFilename"] == name:
                        offsets.add(int(extra["warcFileOffset"]))
                return

    def note(self, line: CrawlLogLine) -> None:
        """Take one line of the earlier runs into account (in log order)."""
        self.last = line
        if self._offsets and line.extra_info:
            self._note_offset(line.extra_info)
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
        return when is not None and (datetime.now(UTC) - when).total_seconds() < valid_s


def cut_torn_line(path: Path) -> None:
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


def rebuild_stats(crawl_log: Path, stats: CrawlStats, resume_log: ResumeLog) -> None:
    """Count the final lines of the earlier runs in ``stats`` (and note them in
    ``resume_log``), after cutting a torn last line."""
    if not crawl_log.exists():
        return
    cut_torn_line(crawl_log)
    try:
        for _, line in iter_crawl_log(crawl_log):
            if not isinstance(line, CrawlLogLine):
                continue
            resume_log.note(line)
            stats.record(
                line.uri, line.status, line.size or 0, line.mime_type,
                seed=line.hop_path == "", source=line.source_tag,
                duplicate=any(a.startswith("duplicate:") for a in line.annotations),
                annotations=tuple(line.annotations),
            )  # fmt: skip
    except Exception as e:  # a torn last line after kill -9 is not fatal
        log.warning("crawl.log could not be read completely on resume: %s", e)


def settle_recovered(frontier: Frontier, resume_log: ResumeLog) -> None:
    """URIs the frontier put back although their crawl.log line was written (the crash
    came between the line and :meth:`Frontier.finished`): finish them as logged, so
    each URI keeps exactly one final line. Lines are written and URIs finished without
    an ``await`` in between, so only the last line can be such a URI."""
    last = resume_log.last
    if (
        last is not None
        and last.uri in frontier.recovered_uris
        and frontier.settle(last.uri, last.status, size=last.size or 0)
    ):
        log.info("resume: %s was logged before the kill; not fetched again", last.uri)


def repair_open_warcs(directory: Path) -> list[str]:
    """Cut every ``.open`` WARC in ``directory`` back to its last complete record and
    finish it under its final name (an empty one is removed); returns the new paths."""
    repaired = []
    for name in sorted(os.listdir(directory)):
        if name.endswith(".open"):
            path = directory / name
            if path.stat().st_size == 0:
                path.unlink()
                continue
            res = repair_open_file(path)
            log.info("repaired %s: %d records kept", res.new_path, res.records_kept)
            repaired.append(res.new_path)
    return repaired


class Sessions:
    """The runs of one job in ``state/sessions.json`` (``[{"started", "last_seen",
    "ended", "processors"}]``, wall-clock seconds; ``processors``: the run's
    :meth:`WorkerBoard.totals`), so a resumed crawl reports when it first started, how
    long it has run in all and what its processors handled in all (a killed run counts
    until its last progress tick; URIs in flight at a kill are handled again).

    Args:
        path: ``state/sessions.json``.
        resume: keep the runs already recorded (else start a new list).
        clock: wall-clock seconds (the crawl's clock, which a clock step does not move).
    """

    def __init__(self, path: Path, *, resume: bool,
                 clock: Callable[[], float] = time.time) -> None:  # fmt: skip
        self.path = path
        self.clock = clock
        self.runs: list[dict[str, Any]] = []
        self._board: WorkerBoard | None = None
        self._before: dict[str, list[float]] = {}
        self._saved = 0.0
        if resume:
            with contextlib.suppress(OSError, ValueError):
                self.runs = [s for s in json.loads(path.read_text()) if isinstance(s, dict)]

    def start(self, stats: CrawlStats) -> None:
        """Record this run (started now) and take the earlier runs' time into
        ``stats`` (``prior_elapsed``, ``crawl_started``)."""
        prior = 0.0
        for s in self.runs:
            start, end = s.get("started"), s.get("ended") or s.get("last_seen")
            if isinstance(start, int | float) and isinstance(end, int | float) and end > start:
                prior += end - start
        stats.prior_elapsed = prior
        for s in self.runs:  # what each earlier run's processors handled
            totals = s.get("processors")
            if isinstance(totals, dict):
                stats.board.add_totals(totals)
        self._board = stats.board
        first = self.runs[0].get("started") if self.runs else None
        stats.crawl_started = first if isinstance(first, int | float) else None
        self._before = stats.board.totals()
        self.runs.append({"started": stats.started, "last_seen": None, "ended": None})
        self.save()

    def _run_totals(self) -> dict[str, list[float]]:
        """This run's part of the processors' totals (the board holds earlier runs' too)."""
        assert self._board is not None
        out: dict[str, list[float]] = {}
        for name, now in self._board.totals().items():
            was = self._before.get(name, [0, 0.0, 0])
            out[name] = [now[0] - was[0], round(now[1] - was[1], 6), now[2] - was[2]]
        return out

    def save_soon(self, every: float = 0.1) -> None:
        """:meth:`save` unless it was saved less than ``every`` seconds ago (called per
        finished URI: what a ``kill -9`` can lose stays small)."""
        if self.clock() - self._saved >= every:
            self.save()

    def save(self, ended: float | None = None) -> None:
        """Write the file (atomically; best effort: a full disk must not stop the crawl
        for a statistic)."""
        if not self.runs:
            return
        current: dict[str, Any] = self.runs[-1]
        current["last_seen"] = self._saved = self.clock()
        if self._board is not None:
            current["processors"] = self._run_totals()
        if ended is not None:
            current["ended"] = ended
        tmp = self.path.with_suffix(".json.part")
        with contextlib.suppress(OSError):
            tmp.write_text(json.dumps(self.runs))
            os.replace(tmp, self.path)
