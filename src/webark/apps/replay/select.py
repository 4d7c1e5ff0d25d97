"""Which capture a replay request gets: the closest one that can be served.

For ``(url, timestamp)`` the candidates are the URL's replayable captures nearest first
(:func:`webark.index.capture_select.closest`: smallest ``|Δt|``, ties to the earlier;
none = latest first), excluded captures left out (:mod:`webark.apps.replay.access`).
Each candidate in turn:

* blocked by an access rule → the answer is :class:`Blocked` (451);
* its record does not load — WARC missing (``WarcNotFound``), no record at the offset
  (``FormatError``), a revisit without original (``UnresolvedRevisit``) — → logged
  (file + offset) and the next candidate is tried;
* a self-redirect (a 3xx to the same URL key, ``/a/`` ↔ ``/a`` included;
  ``ResolvedCapture.is_self_redirect``) → the next candidate is tried, since replaying
  it would loop (pywb and OpenWayback skip these too);
* otherwise it is :class:`Chosen`.

If only self-redirects are left, the nearest of them is served (what the archive has);
if nothing is left, :class:`Missing` lists the captures that were tried.

**Fuzzy match** (pywb's default ``fuzzy`` rule, reference "cache-busting parameters"):
when the exact URL has no capture at all and its query has cache-busting parameters
(``_=1507495059747``, or any parameter whose value is a 10–13 digit epoch time), the
captures of the same path whose query is equal once such parameters are removed are
the candidates (a prefix scan of ``path?``, at most :data:`FUZZY_SCAN` lines).

**Query fallback** (narrower than pywb's default fuzzy rule): when a URL with a query
has no capture, not even a cache-busting match, the captures of the same path
*without any query* are the candidates, unless the path looks like a program whose
query selects the content (``.php``, ``.asp``, ``.jsp``, ``.cgi`` …
:data:`DYNAMIC_EXTENSIONS`, pywb's ``not_exts``). A capture with another query is never
used (``page?v=3`` is not ``page?v=1``). This is what makes client-side pages work:
``search.html?q=json`` of a Sphinx site (a form's GET, never crawled) is the archived
``search.html``, whose script reads the query; likewise tracking parameters
(``?utm_source=…``). The replay app keeps the requested URL (query included) in the
address bar for such a match.
"""

from __future__ import annotations

import itertools
import logging
import re
from dataclasses import dataclass, field

from webark.apps.replay.sources import ReplayContext
from webark.cdx.line import CdxLine
from webark.core.errors import FormatError
from webark.core.timestamps import from_timestamp14
from webark.index.access_rules import AccessDecision
from webark.index.capture_select import captures, closest, exact_key
from webark.index.locations import WarcNotFound
from webark.index.resolved import ResolvedCapture, UnresolvedRevisit, resolve_capture
from webark.index.source import pad_from

log = logging.getLogger(__name__)

#: Candidates read per request at most (the nearest ones).
CANDIDATES = 50
#: Lines of ``path?…`` read at most when looking for a fuzzy match.
FUZZY_SCAN = 5000

_EPOCH = re.compile(r"^\d{10,13}$")
#: Extensions whose query selects the content: no query fallback (pywb ``not_exts``).
DYNAMIC_EXTENSIONS = frozenset({
    ".asp", ".aspx", ".jsp", ".jspx", ".php", ".php3", ".php4", ".php5", ".phtml", ".pl",
    ".cgi", ".cfm", ".exe", ".dll", ".py", ".rb", ".do", ".action",
})  # fmt: skip


def strip_cache_busting(url: str) -> str:
    """``url`` without cache-busting query parameters (``_``, and any parameter whose
    value is a 10–13 digit epoch time in s or ms); the other parameters keep their
    order. ``http://a/x?b=1&_=1507495059747`` → ``http://a/x?b=1``."""
    base, q, query = url.partition("?")
    if not q:
        return url
    kept = []
    for part in query.split("&"):
        name, _, value = part.partition("=")
        if name == "_" or _EPOCH.match(value):
            continue
        kept.append(part)
    return base + ("?" + "&".join(kept) if kept else "")


def fuzzy_candidates(
    ctx: ReplayContext, url: str, timestamp: str | None, *, limit: int = CANDIDATES
) -> list[CdxLine]:
    """Captures that match ``url`` once cache-busting parameters are removed from both,
    nearest to ``timestamp`` first (ties to the earlier; None = latest first); [] when
    ``url`` has no cache-busting parameter."""
    want = strip_cache_busting(url)
    if want == url:
        return []
    try:
        want_key = exact_key(want)
    except ValueError:
        return []
    base = url.split("?", 1)[0]
    access = ctx.access
    found = [
        x
        for x in itertools.islice(captures(ctx.source, base + "?", "prefix"), FUZZY_SCAN)
        if exact_key(strip_cache_busting(x.url)) == want_key
        and not (access.rules and access.excluded(x))
    ]
    exclude = access.excluded if access.rules else None
    seen = {(x.filename, x.offset) for x in found}
    found += [  # the URL without the buster (when not already found by the prefix scan)
        x
        for x in closest(ctx.source, want, None, limit=limit, exclude=exclude)
        if (x.filename, x.offset) not in seen
    ]
    return _nearest(found, timestamp, limit)


def query_candidates(
    ctx: ReplayContext, url: str, timestamp: str | None, *, limit: int = CANDIDATES
) -> list[CdxLine]:
    """Captures of ``url``'s path *without a query*, nearest first, for a URL with a
    query that has none (module docstring, "query fallback"); [] without a query or
    for a program path (:data:`DYNAMIC_EXTENSIONS`). Captures of the path with another
    query are never used: ``page?v=3`` is not ``page?v=1``."""
    base, q, _ = url.split("#", 1)[0].partition("?")
    if not q:
        return []
    last = base.rsplit("/", 1)[-1]
    dot = last.rfind(".")
    if dot >= 0 and last[dot:].lower() in DYNAMIC_EXTENSIONS:
        return []
    access = ctx.access
    exclude = access.excluded if access.rules else None
    try:
        return closest(ctx.source, base, timestamp, limit=limit, exclude=exclude)
    except ValueError:
        return []


def _nearest(found: list[CdxLine], timestamp: str | None, limit: int) -> list[CdxLine]:
    """``found`` nearest to ``timestamp`` first (ties to the earlier; None = latest
    first), at most ``limit``."""
    if timestamp is None:
        return sorted(found, key=lambda x: x.timestamp, reverse=True)[:limit]
    target = from_timestamp14(pad_from(timestamp)).timestamp()

    def distance(x: CdxLine) -> tuple[float, str]:
        try:
            return abs(from_timestamp14(x.timestamp).timestamp() - target), x.timestamp
        except ValueError:
            return float("inf"), x.timestamp

    return sorted(found, key=distance)[:limit]


@dataclass(frozen=True, slots=True)
class Chosen:
    """The capture to serve (``capture.line.timestamp`` is its timestamp)."""

    capture: ResolvedCapture


@dataclass(frozen=True, slots=True)
class Blocked:
    """The nearest capture is blocked by an access rule (answer 451)."""

    line: CdxLine
    decision: AccessDecision


@dataclass(frozen=True, slots=True)
class Missing:
    """Nothing to serve: ``tried`` the candidates that failed to load, ``failures``
    why (one message per candidate)."""

    tried: list[CdxLine] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)


Selection = Chosen | Blocked | Missing


def select_capture(
    ctx: ReplayContext, url: str, timestamp: str | None, *, limit: int = CANDIDATES
) -> Selection:
    """The capture of ``url`` to serve for ``timestamp`` (1–14 digits UTC, None = latest),
    see the module docstring. Blocking I/O (index, WARC reads): call it in a worker thread.

    Raises:
        ValueError: a bad timestamp or an unusable URL.
        IndexUnavailable: the index cannot be read.
    """
    access = ctx.access
    exclude = access.excluded if access.rules else None
    lines = closest(ctx.source, url, timestamp, limit=limit, exclude=exclude)
    if not lines:
        lines = fuzzy_candidates(ctx, url, timestamp, limit=limit)
    if not lines:
        lines = query_candidates(ctx, url, timestamp, limit=limit)
    loops: list[ResolvedCapture] = []
    failures: list[str] = []
    for line in lines:
        if access.rules:
            decision = access.decide(line.url, line.timestamp)
            if decision is not None and decision.policy == "block":
                return Blocked(line, decision)
        try:
            rc = resolve_capture(line, ctx.loader, ctx.revisits)
        except (WarcNotFound, FormatError, UnresolvedRevisit, OSError) as exc:
            msg = f"{line.url} @ {line.timestamp} ({line.filename}:{line.offset}): {exc}"
            log.warning("collection %r: skipping capture %s", ctx.name, msg)
            failures.append(msg)
            continue
        if rc.is_self_redirect():
            log.info("collection %r: %s @ %s redirects to itself; trying the next capture",
                     ctx.name, line.url, line.timestamp)  # fmt: skip
            loops.append(rc)
            continue
        return Chosen(rc)
    if loops:
        return Chosen(loops[0])
    return Missing(list(lines), failures)
