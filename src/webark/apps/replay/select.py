"""Which capture a replay request gets: the closest one that can be served.

For ``(url, timestamp)`` the candidates are the URL's replayable captures nearest first
(:func:`webark.index.capture_select.closest`: smallest ``|Δt|``, ties to the earlier;
none = latest first), excluded captures left out (:mod:`webark.apps.replay.access`).
Each candidate in turn:

* blocked by an access rule → the answer is :class:`Blocked` (451);
* its record does not load — WARC missing (``WarcNotFound``), a file name that is not
  a plain name inside the collection (``WarcNameRefused``), no record at the offset
  (``FormatError``), a record (or a revisit's original) cut short by a truncated WARC,
  a revisit without original (``UnresolvedRevisit``) — → logged (file + offset, server
  paths in the log only) and the next candidate is tried;
* a self-redirect (a 3xx to the same URL key, ``/a/`` ↔ ``/a`` included;
  ``ResolvedCapture.is_self_redirect``) → the next candidate is tried, since replaying
  it would loop (pywb and OpenWayback skip these too);
* otherwise it is :class:`Chosen`.

If only self-redirects are left, the nearest of them is served (what the archive has);
if nothing is left, :class:`Missing` lists the captures that did not load, and says
whether any of them failed because of damaged storage (``damaged``: the app answers 503
"Capture damaged", issue 20 item 7) rather than an incomplete archive (a revisit
without original: 404 "Not in archive"). Its messages name WARCs by their CDX file
name, never by a server path (issue 20 item 4).

**Fuzzy match**: when the URL has no capture at all, the captures that answer it by the
rules of :mod:`webark.index.fuzzy` (cache-busters, tracking and version parameters,
extra parameters, index pages) are the candidates, best rule first,
then nearest in time. Such a candidate is served only if, once loaded, its type is
the one the request expects (:func:`webark.index.fuzzy.acceptable`; ``expected`` comes
from the request: ``Sec-Fetch-Dest``, the modifier, the file extension); the chosen
match says which rules it needed (:attr:`Chosen.fuzzy`), and the app names them in a
response header.
"""

from __future__ import annotations

import logging
from collections.abc import Collection
from dataclasses import dataclass, field

from webark.apps.replay.sources import ReplayContext
from webark.cdx.line import CdxLine
from webark.core.errors import FormatError
from webark.index.access_rules import AccessDecision
from webark.index.capture_select import closest
from webark.index.fuzzy import FuzzyMatch, acceptable, fuzzy_matches
from webark.index.locations import WarcNameRefused, WarcNotFound
from webark.index.resolved import ResolvedCapture, UnresolvedRevisit, resolve_capture

log = logging.getLogger(__name__)

#: Candidates read per request at most (the nearest ones).
CANDIDATES = 50


@dataclass(frozen=True, slots=True)
class Chosen:
    """The capture to serve (``capture.line.timestamp`` is its timestamp); ``fuzzy``:
    the fuzzy match it was found by (None: the URL's own capture)."""

    capture: ResolvedCapture
    fuzzy: FuzzyMatch | None = None


@dataclass(frozen=True, slots=True)
class Blocked:
    """The nearest capture is blocked by an access rule (answer 451)."""

    line: CdxLine
    decision: AccessDecision


@dataclass(frozen=True, slots=True)
class Missing:
    """Nothing to serve: ``tried`` the candidates that failed to load, ``failures``
    why (one message per candidate); fuzzy matches of another type are not listed."""

    tried: list[CdxLine] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    damaged: bool = False


class TruncatedRecord(FormatError):
    """The record of a capture (or of a revisit's original) ends before its declared
    ``Content-Length``: its WARC was cut. Serving it would be a short body."""


def _public_failure(line: CdxLine, exc: Exception) -> str:
    """Why ``line`` did not load, for a page: the CDX file name and offset, never a
    server path (the log has the full message)."""
    where = f"{line.url} @ {line.timestamp}"
    if isinstance(exc, WarcNameRefused):
        return f"{where}: its WARC name is not a plain name inside the collection"
    if isinstance(exc, WarcNotFound):
        return f"{where}: WARC {line.filename!r} not found"
    if isinstance(exc, UnresolvedRevisit):
        return f"{where}: revisit without an original in the archive"
    if isinstance(exc, TruncatedRecord):
        return f"{where}: record at {line.filename}:{line.offset} is cut short"
    return f"{where}: record at {line.filename}:{line.offset} cannot be read"


def _check_complete(rc: ResolvedCapture) -> None:
    for rec in (rc.record, rc.original):
        if rec is not None and rec.is_truncated:
            raise TruncatedRecord("record cut short", rec.path, rec.offset)


Selection = Chosen | Blocked | Missing


def select_capture(
    ctx: ReplayContext,
    url: str,
    timestamp: str | None,
    *,
    limit: int = CANDIDATES,
    expected: Collection[str] | None = None,
) -> Selection:
    """The capture of ``url`` to serve for ``timestamp`` (1–14 digits UTC, None = latest),
    see the module docstring. Blocking I/O (index, WARC reads): call it in a worker thread.

    Args:
        url: the URL asked; for a POST/PUT its method URL
            (:func:`webark.cdx.post.method_url`).
        expected: the MIME families (:func:`webark.index.fuzzy.mime_family`) the
            request can use, None when it does not say; only fuzzy matches are checked.

    Raises:
        ValueError: a bad timestamp or an unusable URL.
        IndexUnavailable: the index cannot be read.
    """
    access = ctx.access
    exclude = access.excluded if access.rules else None
    candidates: list[tuple[CdxLine, FuzzyMatch | None]] = [
        (line, None) for line in closest(ctx.source, url, timestamp, limit=limit, exclude=exclude)
    ]
    if not candidates:
        found = fuzzy_matches(ctx.source, url, timestamp, limit=limit, exclude=exclude)
        candidates = [(m.line, m) for m in found]
    loops: list[Chosen] = []
    unloadable: list[CdxLine] = []
    failures: list[str] = []
    damaged = False
    for line, fuzzy in candidates:
        if access.rules:
            decision = access.decide(line.url, line.timestamp)
            if decision is not None and decision.policy == "block":
                return Blocked(line, decision)
        try:
            rc = resolve_capture(line, ctx.loader, ctx.revisits)
            _check_complete(rc)
        except (WarcNotFound, FormatError, UnresolvedRevisit, OSError) as exc:
            msg = f"{line.url} @ {line.timestamp} ({line.filename}:{line.offset}): {exc}"
            log.warning("collection %r: skipping capture %s", ctx.name, msg)
            unloadable.append(line)
            failures.append(_public_failure(line, exc))
            damaged = damaged or not isinstance(exc, UnresolvedRevisit)
            continue
        if fuzzy is not None and not acceptable(fuzzy, rc.status, rc.header("Content-Type"),
                                                expected):  # fmt: skip
            log.info("collection %r: %s @ %s (%s) does not fit a request for %s",
                     ctx.name, line.url, line.timestamp, ", ".join(fuzzy.rules), url)  # fmt: skip
            continue
        if rc.is_self_redirect():
            log.info("collection %r: %s @ %s redirects to itself; trying the next capture",
                     ctx.name, line.url, line.timestamp)  # fmt: skip
            loops.append(Chosen(rc, fuzzy))
            continue
        return Chosen(rc, fuzzy)
    if loops:
        return loops[0]
    return Missing(unloadable, failures, damaged)
