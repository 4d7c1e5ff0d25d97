"""The capture back end (layer L4): exchanges in; dedup decision, WARC records, dedup
index update, crawl.log lines and capture statistics out. Every crawler records through
it: the bulk crawler (:mod:`webark.crawl`) in process, the browser and manual crawlers
through the archiving proxy (DESIGN.md "Data flow").

- :class:`CaptureBackend` — the protocol; :class:`WarcCaptureBackend` — over WARC files
  (:mod:`webark.capture.backend`, which states the invariant and its steps).
- :class:`CaptureMeta` / :class:`CaptureResult` — what goes in beside the exchange and
  what comes out (:mod:`webark.capture.meta`).
- :mod:`webark.capture.dedup` — the revisit decision and the index update.
- :mod:`webark.capture.series` — one series of WARC files per prefix.
- :mod:`webark.capture.crawllog` — the crawl.log writer and :func:`capture_line`.
- :mod:`webark.capture.stats` — warcprox-style capture statistics by bucket.
"""

from webark.capture.backend import (
    CaptureBackend,
    CaptureConfig,
    CaptureError,
    CaptureSink,
    WarcCaptureBackend,
    is_disk_full,
)
from webark.capture.crawllog import CrawlLogWriter, capture_line
from webark.capture.meta import CaptureMeta, CaptureResult, DigestReading, RevisitKind
from webark.capture.series import BadWarcPrefix, SeriesConfig, WarcSeries
from webark.capture.stats import CaptureStats

__all__ = [
    "BadWarcPrefix",
    "CaptureBackend",
    "CaptureConfig",
    "CaptureError",
    "CaptureMeta",
    "CaptureResult",
    "CaptureSink",
    "CaptureStats",
    "CrawlLogWriter",
    "DigestReading",
    "RevisitKind",
    "SeriesConfig",
    "WarcCaptureBackend",
    "WarcSeries",
    "capture_line",
    "is_disk_full",
]
