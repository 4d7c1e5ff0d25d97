"""The crawl.log of a capture back end: Heritrix 3's line format, one *final* line per
URI (:mod:`webark.crawllog`), flushed as it is written so that a ``kill -9`` loses at
most a torn last line (which a resumed crawl cuts).

:func:`capture_line` builds the line of one capture (or failure) in one place, for the
bulk crawler, the proxy and the browser crawler alike: status, size, URI, hop path,
via, MIME, worker, fetch start + duration, digest, source tag, annotations (``Nt``,
``lenTrunc``, ``duplicate:digest`` …) and the JSON extra info with the WARC file and
offset of the capture (as Heritrix 3 and warcprox write it).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

from webark.capture.meta import CaptureMeta, CaptureResult
from webark.crawllog import CrawlLogLine, format_line
from webark.fetch import Exchange

__all__ = ["CrawlLogWriter", "capture_line"]


def _now() -> datetime:
    return datetime.now(UTC)


def capture_line(
    uri: str,
    status: int,
    meta: CaptureMeta,
    *,
    exchange: Exchange | None = None,
    result: CaptureResult | None = None,
    size: int | None = None,
    annotations: tuple[str, ...] = (),
    extra: dict[str, Any] | None = None,
    mime: str | None = None,
    began: datetime | None = None,
    digest: str | None = None,
    now: Callable[[], datetime] | None = None,
) -> CrawlLogLine:
    """The crawl.log line of ``uri``, finished with ``status``.

    Args:
        meta: hop path, via, source tag and worker of the capture.
        exchange: the fetch, when there was one: MIME, fetch start and duration,
            digest and the fetch's own annotations come from it (a failed fetch gives
            no size, MIME nor digest).
        result: what the back end wrote: its ``duplicate:…`` annotation and the
            warcFilename / warcFileOffset / contentSize extra info.
        size: the size column (default: the payload size of a successful fetch).
        annotations: more annotations (``3t``, ``Q:…``), after the fetch's.
        extra: more extra-info keys (merged after the result's).
        mime, began, digest: for lines without an exchange (``dns:`` lookups).
        now: the clock of the log-time column (default: the wall clock, UTC).
    """
    ok = exchange is not None and exchange.ok
    notes = list(exchange.annotations) if exchange is not None else []
    notes += annotations
    if result is not None and result.annotation and result.annotation not in notes:
        notes.append(result.annotation)
    info: dict[str, Any] = result.extra_info() if result is not None else {}
    if extra:
        info.update(extra)
    if size is None:
        size = exchange.payload_size if ok and exchange is not None else (0 if mime else None)
    if not ok and not mime:
        size = None
    return CrawlLogLine(
        timestamp=now() if now is not None else _now(),
        status=status,
        size=size,
        uri=uri,
        hop_path=meta.hop_path,
        via=meta.via,
        mime_type=(exchange.mime or "no-type") if ok and exchange is not None else mime,
        thread=meta.worker,
        fetch_began=exchange.started if exchange is not None else began,
        fetch_duration_ms=exchange.duration_ms if exchange is not None else (0 if began else None),
        digest=exchange.payload_digest if ok and exchange is not None else digest,
        source_tag=meta.source_tag,
        annotations=tuple(notes),
        extra_info=json.dumps(info, separators=(",", ":")) if info else None,
    )


class CrawlLogWriter:
    """Appends final lines to a crawl.log (created with its folder when missing).

    Args:
        path: the crawl.log.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._file: IO[str] | None = open(self.path, "a", encoding="utf-8")  # noqa: SIM115
        self.lines = 0

    def write(self, line: CrawlLogLine) -> None:
        """Write ``line`` and flush it (one ``write`` of the whole line).

        Raises:
            ValueError: the writer is closed. OSError: the disk is full.
        """
        if self._file is None:
            raise ValueError(f"{self.path}: crawl.log writer is closed")
        self._file.write(format_line(line) + "\n")
        self._file.flush()
        self.lines += 1

    def close(self) -> None:
        """Close the file. Idempotent."""
        if self._file is not None:
            self._file.close()
            self._file = None
