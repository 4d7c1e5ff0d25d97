"""Choosing captures of one URL for replay: the closest to a time, a URL's captures, and
the previous/next capture (for the banner).

Replay asks "which capture of this URL do I show for timestamp T?" (Wayback's
``/{coll}/{ts}/{url}``): the answer is the capture with the smallest distance
``|capture time - T|``, ties going to the earlier capture (reference
resolution-and-replay.md, "Closest capture"; pywb ``closest`` sort and OpenWayback's
``CaptureSearchResults.getClosest``). No timestamp means the latest capture. The app
falls through to the next closest when one cannot be served (a self-redirect, a record
that does not load), so :func:`closest` returns a list, nearest first.

Only records that replay are chosen (:data:`REPLAYABLE_TYPES`); CDX formats that do
not store the WARC type (CDX11, CDXJ) are read with :func:`capture_type`.

Scans are two-sided from ``T`` over the exact URL's key range (one forward scan from
``key T``, one reversed scan before it), merged by distance, so the cost is
``O(limit)`` lines read, however many captures the URL has.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from webark.cdx.line import CdxLine
from webark.core.timestamps import from_timestamp14
from webark.index.source import IndexSource, KeyRange, MatchType, key_range, pad_from
from webark.warc.builders import PEM_CHAIN

#: WARC record types a replay can serve (a revisit through its original).
REPLAYABLE_TYPES = frozenset({"response", "revisit", "resource"})

_NOT_CAPTURE_MIMES = frozenset({"warc/request", "warc/metadata", "warc/warcinfo"})


def capture_type(line: CdxLine) -> str:
    """The WARC-Type a line stands for: ``"revisit"`` when its MIME is ``warc/revisit``
    (CDX11 and CDXJ keep no type, the indexers mark revisits this way), ``"metadata"``
    for a TLS certificate chain record (``application/pem-certificate-chain``, no
    status), else the line's ``record_type`` (``"response"`` when the format has none)."""
    if line.mime == "warc/revisit":
        return "revisit"
    if line.mime in _NOT_CAPTURE_MIMES:
        return line.mime[len("warc/") :]
    if line.mime == PEM_CHAIN and line.status == "-":
        # a server's certificate chain (a metadata record both indexers list under the
        # capture's URL): not a capture; an HTTP response of that type has a status
        return "metadata"
    return line.record_type or "response"


def is_replayable(line: CdxLine) -> bool:
    """True when the line is a response, revisit or resource (:func:`capture_type`)."""
    return capture_type(line) in REPLAYABLE_TYPES


def exact_key(url: str) -> str:
    """The CDX URL key of ``url`` (or ``url`` itself when it already is a key), as the
    exact-match queries here use it.

    Raises:
        ValueError: an empty URL; ``webark.url.InvalidURLError`` an unparseable one.
    """
    rng = key_range(url, "exact")
    return rng.start


def timestamp_seconds(ts: str) -> float | None:
    """POSIX seconds of a 14-digit (or shorter) CDX timestamp, None when it is not a
    date."""
    try:
        return from_timestamp14(ts).timestamp()
    except ValueError:
        return None


def closest(
    source: IndexSource,
    url: str,
    timestamp: str | None,
    *,
    limit: int = 50,
    exclude: Callable[[CdxLine], bool] | None = None,
) -> list[CdxLine]:
    """Replayable captures of exactly ``url``, nearest to ``timestamp`` first.

    Args:
        source: the index (any :class:`~webark.index.source.IndexSource`).
        url: the URL (canonicalized to its CDX key; a key is used as is).
        timestamp: 1–14 digits (UTC), padded to the earliest second it names
            (:func:`~webark.index.source.pad_from`: ``2014`` → ``20140101000000``), or
            None for "latest first".
        limit: at most this many lines.
        exclude: lines for which this returns True are skipped (access rules, lines
            already tried).

    Returns:
        Lines ordered by ``|capture time - timestamp|`` in seconds, ascending; equal
        distances: the earlier capture first. Lines with the same timestamp keep index
        order. With ``timestamp=None``: newest first.

    Raises:
        ValueError: ``timestamp`` is not 1–14 digits, or the URL is empty.
        IndexUnavailable: the index cannot be read.
    """
    if limit <= 0:
        return []
    key = exact_key(url)

    def keep(line: CdxLine) -> bool:
        return (
            line.urlkey == key and is_replayable(line) and not (exclude and exclude(line))
        )

    if timestamp is None:
        out: list[CdxLine] = []
        for line in source.scan(KeyRange(key, key + "!"), reverse=True):
            if keep(line):
                out.append(line)
                if len(out) >= limit:
                    break
        return out

    ts14 = pad_from(timestamp)
    target = timestamp_seconds(ts14)
    if target is None:
        raise ValueError(f"timestamp {timestamp!r} is not a date")
    split = f"{key} {ts14}"
    after = (x for x in source.scan(KeyRange(split, key + "!")) if keep(x))
    before = (x for x in source.scan(KeyRange(key, split), reverse=True) if keep(x))
    return _merge_by_distance(before, after, target, limit)


def _merge_by_distance(
    before: Iterator[CdxLine], after: Iterator[CdxLine], target: float, limit: int
) -> list[CdxLine]:
    """Merge the captures before ``target`` (newest first) and from ``target`` on
    (oldest first) by distance, ties to the earlier (the ``before`` side)."""

    def dist(line: CdxLine | None) -> float | None:
        if line is None:
            return None
        s = timestamp_seconds(line.timestamp)
        return abs(s - target) if s is not None else float("inf")

    out: list[CdxLine] = []
    b, a = next(before, None), next(after, None)
    while (b is not None or a is not None) and len(out) < limit:
        db, da = dist(b), dist(a)
        if a is None or (b is not None and db is not None and da is not None and db <= da):
            assert b is not None
            out.append(b)
            b = next(before, None)
        else:
            out.append(a)
            a = next(after, None)
    return out


def captures(
    source: IndexSource,
    url: str,
    match_type: MatchType = "exact",
    from_ts: str | None = None,
    to_ts: str | None = None,
    *,
    all_records: bool = False,
) -> Iterator[CdxLine]:
    """The captures of a URL (or URL prefix, host, domain) in CDX order, for the
    capture list ``/{coll}/*/{url}``.

    Args:
        url: URL or CDX key; with ``match_type`` as in
            :func:`~webark.index.source.key_range`.
        from_ts, to_ts: 1–14 digits, inclusive (UTC), padded like pywb.
        all_records: also yield lines that do not replay (requests, metadata).

    Raises:
        ValueError: bad ``from``/``to`` or an empty URL.
        IndexUnavailable: the index cannot be read.
    """
    rng = key_range(url, match_type, from_ts, to_ts)
    for line in source.scan(rng):
        if rng.from_ts and line.timestamp[:14] < rng.from_ts:
            continue
        if rng.to_ts and line.timestamp[:14] > rng.to_ts:
            continue
        if all_records or is_replayable(line):
            yield line


def neighbours(
    source: IndexSource, url: str, timestamp: str
) -> tuple[CdxLine | None, CdxLine | None]:
    """The replayable captures of exactly ``url`` just before and just after
    ``timestamp`` (1–14 digits, padded with :func:`pad_from`), strictly: a capture at
    that very second is neither. For the banner's "previous / next capture" links.

    Raises:
        ValueError: bad timestamp or empty URL.
        IndexUnavailable: the index cannot be read.
    """
    key = exact_key(url)
    ts14 = pad_from(timestamp)
    prev = next(
        (
            x
            for x in source.scan(KeyRange(key, f"{key} {ts14}"), reverse=True)
            if x.urlkey == key and is_replayable(x)
        ),
        None,
    )
    nxt = next(
        (
            x
            for x in source.scan(KeyRange(f"{key} {ts14}!", key + "!"))
            if x.urlkey == key and x.timestamp[:14] > ts14 and is_replayable(x)
        ),
        None,
    )
    return prev, nxt

