"""Heritrix's other job logs, where webark has the same events (``JOBDIR/logs/``):

``alerts.log``
    The crawl's warnings and errors (Heritrix: its WARNING and SEVERE messages): what
    the operator changed (a reject rule and how many URIs it purged, deleteURIs, a
    host's settings), an aborted fetch at stop, a failed extension, a full disk. One
    line each, ``ISO-8601-UTC LEVEL logger message``, a traceback indented below.
``runtime-errors.log``
    URIs a processor failed on with an unexpected exception (crawl.log ``-5``,
    ``err=Name``; Heritrix ``RuntimeErrorFormatter``): the URI's crawl.log line, then
    the exception and its traceback, indented by two spaces.

Heritrix's ``uri-errors.log`` (outlinks that are not URIs) has no equivalent yet: link
extraction runs in worker processes that drop such links without reporting them; and
``nonfatal-errors.log`` neither (webark keeps no non-fatal exceptions per URI; its
network failures are in crawl.log with their status). A line that cannot be written
(a full disk) is dropped silently: these logs must never stop the crawl.
"""

from __future__ import annotations

import logging
import traceback
from datetime import UTC, datetime
from pathlib import Path

from webark.crawllog import CrawlLogLine
from webark.crawllog.format import format_line, format_log_timestamp

__all__ = ["AlertsLog", "RuntimeErrorsLog"]


def _append(path: Path, text: str) -> None:
    try:
        with open(path, "a", encoding="utf-8") as f:
            f.write(text)
    except OSError:
        pass  # a full disk: the crawl stops through its own writes, not this log


def _indented(exc: BaseException) -> str:
    lines = traceback.format_exception(type(exc), exc, exc.__traceback__)
    return "".join("  " + ln for chunk in lines for ln in chunk.splitlines(keepends=True))


class AlertsLog(logging.Handler):
    """``alerts.log`` (module docstring): a :class:`logging.Handler` for WARNING and
    above, attached to the ``webark`` logger while the crawl runs."""

    def __init__(self, path: Path) -> None:
        super().__init__(logging.WARNING)
        self.path = path

    def emit(self, record: logging.LogRecord) -> None:
        try:
            when = format_log_timestamp(datetime.fromtimestamp(record.created, UTC))
            text = f"{when} {record.levelname} {record.name} {record.getMessage()}\n"
            if record.exc_info and record.exc_info[1] is not None:
                text += _indented(record.exc_info[1])
        except Exception:
            self.handleError(record)
            return
        _append(self.path, text)


class RuntimeErrorsLog:
    """``runtime-errors.log`` (module docstring)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def write(self, line: CrawlLogLine, exc: BaseException) -> None:
        """The crawl.log ``line`` of the URI, then ``exc`` with its traceback."""
        _append(self.path, format_line(line) + "\n" + _indented(exc))
