"""Screenshots of browser-crawled pages, found for replay: the banner's "Screenshot" link
and the thumbnails of the capture calendar and URL lists.

The records (the URI scheme Browsertrix writes and ReplayWeb.page shows, so its users
know it): WARC 1.1 §6.4 ``resource`` records with ``WARC-Target-URI`` ``urn:view:{page
url}`` (the viewport, ``image/png``) and ``urn:thumbnail:{page url}`` (a small
``image/jpeg``), ``WARC-Concurrent-To`` the ``WARC-Record-ID`` of the page's response
(or revisit) record, ``WARC-Date`` the page capture's or a few seconds after it. Both
indexers (pywb's cdxj-indexer and webark's, byte-identical) key them by the whole URN,
lowercased, with the query sorted (``urn:view:http://a.org/p?a=1&b=2``), status ``-``
(no HTTP status line), mime the record's Content-Type; so they replay as any resource:
``/{coll}/{ts}id_/urn:view:{url}`` is the PNG with ``Content-Type: image/png``.

Which screenshot belongs to a capture:

* the banner (:func:`screenshot_of`, one capture, so its records may be read): among
  the ``urn:view:{url}`` records within :data:`WINDOW` seconds of the capture (nearest
  first, at most :data:`CANDIDATES`), the one whose ``WARC-Concurrent-To`` names the
  capture's own record; else the nearest one that names no record at all (a tool that
  does not link them); never one that names another record (the screenshot of another
  capture of the same URL, e.g. a recrawl a few seconds later). The link is exact
  rather than "nearest in time" because two captures of one page seconds apart (a
  browser page and a bulk re-fetch, or two crawls) are common and each must show its
  own; the time window keeps the lookup to a few index lines and record reads.
* the lists (:func:`thumbnails_for_rows`, :func:`thumbnails_for_urls`: up to thousands
  of rows, where one WARC read per row would make the page slow): time only, the
  ``urn:thumbnail:`` line nearest to each capture within :data:`WINDOW` seconds, all
  found by one index scan per page (calendar) or per origin listed (URL lists), over
  the listed rows' time span or keys only.
"""

from __future__ import annotations

import bisect
import calendar
import logging
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit

from webark.apps.replay.paths import THUMBNAIL, VIEW, archival_url
from webark.apps.replay.sources import ReplayContext
from webark.cdx.line import CdxLine
from webark.core.errors import FormatError
from webark.index.capture_select import closest, exact_key, is_replayable, timestamp_seconds
from webark.index.locations import WarcNotFound
from webark.index.resolved import ResolvedCapture
from webark.index.source import KeyRange, key_range

log = logging.getLogger(__name__)

#: Seconds between a page capture's and its screenshot's WARC-Date that still pair
#: them (the crawler takes them after the page loads and its behavior ran).
WINDOW = 60.0
#: ``urn:view:`` records read at most to find a capture's own screenshot.
CANDIDATES = 8


#: The whole index but the screenshots' keys (``urn:thumbnail:…``, ``urn:view:…``):
#: for listings of a collection's URLs, where a screenshot is not a page to show.
WITHOUT_SCREENSHOTS = (
    KeyRange("", THUMBNAIL),
    KeyRange(THUMBNAIL[:-1] + ";", VIEW),
    KeyRange(VIEW[:-1] + ";", None),
)


def screenshot_uri(page_url: str, prefix: str = VIEW) -> str:
    """``{prefix}{page_url}``: the ``WARC-Target-URI`` of the screenshot (``VIEW``)
    or thumbnail (``THUMBNAIL``) of ``page_url``."""
    return prefix + page_url


@dataclass(frozen=True, slots=True)
class Screenshot:
    """A screenshot found for a capture: ``line`` (its index line) and ``linked``
    (True when its ``WARC-Concurrent-To`` names the capture's record, False when it
    was chosen by time)."""

    line: CdxLine
    linked: bool

    def href(self, prefix: str) -> str:
        """Its raw replay URL ``{prefix}{ts}id_/urn:view:{url}`` (``prefix``:
        ``/coll/``)."""
        return archival_url(prefix, self.line.timestamp, self.line.url, "id_")


_MONTH_DAYS = (0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


def _seconds(ts: str) -> float | None:
    """POSIX seconds of a CDX timestamp, None when it is not a date; the common
    14-digit form without ``strptime`` (a list page converts thousands)."""
    if len(ts) == 14 and ts.isdigit():
        y, mo, d = int(ts[0:4]), int(ts[4:6]), int(ts[6:8])
        h, mi, sec = int(ts[8:10]), int(ts[10:12]), int(ts[12:14])
        last = _MONTH_DAYS[mo] if 1 <= mo <= 12 else 0
        if mo == 2 and calendar.isleap(y):
            last = 29
        if y >= 1 and 1 <= d <= last and h < 24 and mi < 60 and sec < 60:
            return float(calendar.timegm((y, mo, d, h, mi, sec)))
        return None
    return timestamp_seconds(ts)


def _ts14(secs: float) -> str:
    """The 14-digit UTC timestamp of POSIX ``secs`` (clamped to years 1-9999)."""
    t = time.gmtime(min(max(secs, -62135596800.0), 253402300799.0))
    return time.strftime("%Y%m%d%H%M%S", t).zfill(14)


def _seconds_apart(a: str, b: str) -> float:
    sa, sb = _seconds(a), _seconds(b)
    return float("inf") if sa is None or sb is None else abs(sa - sb)


def screenshot_of(ctx: ReplayContext, rc: ResolvedCapture) -> Screenshot | None:
    """The ``urn:view:`` screenshot of capture ``rc`` (the rule of the module
    docstring), or None. Blocking: an index lookup (two short scans) and a record read
    per candidate (usually one); run it in a worker thread.

    A candidate whose record cannot be read (missing or damaged WARC) is skipped and
    logged; lines the access rules exclude or block are never candidates (a
    screenshot gets its page's rule: :meth:`webark.apps.replay.access.Access.decide`).

    Raises:
        IndexUnavailable: the index cannot be read.
    """
    hidden = ctx.access.hidden_from_api if ctx.access.rules else None
    try:
        lines = closest(ctx.source, screenshot_uri(rc.line.url), rc.line.timestamp,
                        limit=CANDIDATES, exclude=hidden)  # fmt: skip
    except ValueError:  # a page URL that gives no key: no screenshot either
        return None
    found = linked_line(ctx, rc, lines, what="screenshot")
    return Screenshot(*found) if found is not None else None


def linked_line(ctx: ReplayContext, rc: ResolvedCapture, lines: Iterable[CdxLine], *,
                what: str, unlinked_ok: bool = True) -> tuple[CdxLine, bool] | None:  # fmt: skip
    """Of ``lines`` (records about capture ``rc``, nearest to it in time first), the
    first within :data:`WINDOW` seconds whose ``WARC-Concurrent-To`` names ``rc``'s
    record: ``(line, True)``; else (``unlinked_ok``) the nearest naming no record:
    ``(line, False)``; never one naming another record; None when none fits. Reads one
    record per candidate (blocking); an unreadable one (missing or damaged WARC) is
    skipped and logged as ``what``. Used for screenshots (module docstring) and the
    certificate chain (:mod:`webark.apps.replay.certificates`)."""
    own = rc.record.record_id
    ts = rc.line.timestamp
    unlinked: CdxLine | None = None
    for line in lines:
        if _seconds_apart(line.timestamp, ts) > WINDOW:
            break  # nearest first: the rest are farther
        try:
            linked_to = ctx.loader.load(line).headers.concurrent_to
        except (FormatError, WarcNotFound, OSError) as exc:
            log.warning("collection %r: %s %s @ %s unreadable: %s", ctx.name, what,
                        line.url, line.timestamp, exc)  # fmt: skip
            continue
        if own is not None and own in linked_to:
            return line, True
        if unlinked_ok and not linked_to and unlinked is None:
            unlinked = line
    return (unlinked, False) if unlinked is not None else None


class _Nearest:
    """Thumbnail timestamps of one page key, sorted; :meth:`near` finds the nearest."""

    def __init__(self) -> None:
        self.lines: list[CdxLine] = []
        self._secs: list[float] = []

    def add(self, line: CdxLine, s: float | None) -> None:
        """Add ``line`` taken at ``s`` (POSIX seconds; None: not a date, not added)."""
        if s is None:
            return
        i = bisect.bisect_right(self._secs, s)
        self._secs.insert(i, s)
        self.lines.insert(i, line)

    def near(self, ts: str) -> CdxLine | None:
        s = _seconds(ts)
        if s is None or not self._secs:
            return None
        i = bisect.bisect_left(self._secs, s)
        best: CdxLine | None = None
        gap = WINDOW
        for j in (i, i - 1):  # the later one first: at equal distance it wins
            if 0 <= j < len(self._secs):
                d = abs(self._secs[j] - s)
                if d < gap or (best is None and d <= gap):
                    best, gap = self.lines[j], d
        return best


def _thumbnail_lines(ctx: ReplayContext, rng: KeyRange) -> Iterable[CdxLine]:
    """Replayable ``urn:thumbnail:`` lines of ``rng`` the access rules allow (a
    blocked one would be a 451 image)."""
    hidden = ctx.access.hidden_from_api if ctx.access.rules else None
    for line in ctx.source.scan(rng):
        keep = line.url.startswith(THUMBNAIL) and is_replayable(line)
        if keep and (hidden is None or not hidden(line)):
            yield line


def thumbnails_for_rows(ctx: ReplayContext, url: str, timestamps: Sequence[str],
                        prefix: str) -> dict[str, str]:  # fmt: skip
    """For the capture calendar of ``url``: ``{capture timestamp: id_ URL of its
    thumbnail}`` for the ``timestamps`` (14 digits, time order) that have a
    ``urn:thumbnail:`` within :data:`WINDOW` seconds (nearest; time only, see the
    module docstring). One index scan over the thumbnails of ``url`` between the first
    and last timestamp (± the window); ``prefix``: ``/coll/``.

    Raises:
        IndexUnavailable: the index cannot be read.
    """
    if not timestamps:
        return {}
    lo, hi = _seconds(timestamps[0]), _seconds(timestamps[-1])
    span = (None, None) if lo is None or hi is None else (_ts14(lo - WINDOW), _ts14(hi + WINDOW))
    try:
        rng = key_range(screenshot_uri(url, THUMBNAIL), "exact", *span)
    except ValueError:
        return {}
    near = _Nearest()
    for line in _thumbnail_lines(ctx, rng):
        near.add(line, _seconds(line.timestamp))
    out: dict[str, str] = {}
    for ts in timestamps:
        hit = near.near(ts)
        if hit is not None:
            out[ts] = archival_url(prefix, hit.timestamp, hit.url, "id_")
    return out


def _scan_ranges(urls: Iterable[str]) -> list[KeyRange]:
    """The key ranges of the thumbnails of ``urls`` (CDX order): per
    ``scheme://host`` (first-seen order), from the thumbnail key of its first listed
    URL to that of its last. Within one origin a URN key orders its path and query as
    the page's SURT key does (both canonical, lowercased, query sorted), so the range
    holds the thumbnails of the listed URLs and of none past the list: a 1,000-row
    page of a 10,000-URL host reads about 1,000 thumbnail lines, not 10,000."""
    bounds: dict[str, tuple[str, str]] = {}
    for u in urls:
        p = urlsplit(u)
        if not (p.scheme and p.netloc):
            continue
        origin = f"{p.scheme.lower()}://{p.netloc.lower()}"
        first = bounds.get(origin, (u, u))[0]
        bounds[origin] = (first, u)
    out: list[KeyRange] = []
    for first, last in bounds.values():
        try:
            start = exact_key(screenshot_uri(first, THUMBNAIL))
            end = exact_key(screenshot_uri(last, THUMBNAIL))
        except ValueError:
            continue
        out.append(KeyRange(min(start, end), max(start, end) + "!"))
    return out


def thumbnails_for_urls(ctx: ReplayContext, rows: Sequence[tuple[str, str, str]],
                        prefix: str) -> dict[str, str]:  # fmt: skip
    """For a URL list: ``{page key: id_ URL of the thumbnail}`` of each row
    ``(page key, original URL, timestamp)`` (the capture whose thumbnail is shown,
    e.g. the URL's latest) that has one within :data:`WINDOW` seconds (time only).
    One scan per origin of the listed URLs, over their thumbnails' keys only
    (:func:`_scan_ranges`; a host or prefix list: one or two scans, http and https);
    a thumbnail is matched to a row by the page URL it names, else by CDX key
    (``urn:`` keys are the lowercased URN, query sorted: ``exact_key`` of the row's
    thumbnail URI); ``prefix``: ``/coll/``.

    Raises:
        IndexUnavailable: the index cannot be read.
    """
    if not rows:
        return {}
    by_url: dict[str, _Nearest] = {}  # the page URL as the thumbnail names it
    found: list[tuple[CdxLine, float | None]] = []
    for rng in _scan_ranges(u for _, u, _ in rows):
        for line in _thumbnail_lines(ctx, rng):
            secs = _seconds(line.timestamp)
            found.append((line, secs))
            by_url.setdefault(line.url[len(THUMBNAIL) :], _Nearest()).add(line, secs)
    by_key: dict[str, _Nearest] | None = None  # by the thumbnail's CDX key, when needed
    out: dict[str, str] = {}
    if not by_url:
        return out
    for key, url, ts in rows:
        # the crawler names the page as its response does: the same string, mostly;
        # else the thumbnail key of the row's URL (canonicalized once per such row)
        near = by_url.get(url)
        if near is None:
            if by_key is None:
                by_key = {}
                for line, secs in found:
                    by_key.setdefault(line.urlkey, _Nearest()).add(line, secs)
            try:
                near = by_key.get(exact_key(screenshot_uri(url, THUMBNAIL)))
            except ValueError:
                near = None
        hit = near.near(ts) if near is not None else None
        if hit is not None:
            out[key] = archival_url(prefix, hit.timestamp, hit.url, "id_")
    return out


__all__ = [
    "CANDIDATES",
    "THUMBNAIL",
    "VIEW",
    "WINDOW",
    "WITHOUT_SCREENSHOTS",
    "Screenshot",
    "linked_line",
    "screenshot_of",
    "screenshot_uri",
    "thumbnails_for_rows",
    "thumbnails_for_urls",
]
