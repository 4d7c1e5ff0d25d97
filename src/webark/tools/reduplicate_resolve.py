"""Find the original of many revisits at once, in index order (the sorted strategy).

The seed texts: "record all the revisits, order them and then search the index in the
same order". Resolving revisits one by one in WARC order jumps around the index (and
then around the WARCs); here they are collected first, sorted, and each index range is
read once for every revisit that needs it:

1. **same URL, same payload digest** — revisits sorted by URL key; one exact-URL scan
   per key answers all revisits of that URL: the latest non-revisit capture with the
   same digest not after the revisit, else the earliest one after it;
2. **WARC-Refers-To-Target-URI + WARC-Refers-To-Date** — the exact capture the revisit
   names (sorted by that key and timestamp), a non-revisit line, one with the same
   digest preferred;
3. **payload digest, any URL** (URL-agnostic revisits) — sorted by digest, one
   ``by_digest`` lookup per digest; the capture of the same URL key first, then the one
   closest in time.

The rules, their order and the candidate ranking are those of the per-record resolver
of replay (:class:`webark.index.revisits.RevisitResolver`, whose
:class:`~webark.index.revisits.UrlCaptures` this module reuses), so a reduplicated
harvest carries the payload replay would have served. A revisit whose digest is the
digest of the empty payload needs no original (``empty-payload``). Each revisit keeps
its first few candidates, best first: when one does not load (WARC missing, bad
offset, not a response), the caller tries the next, as the replay resolver does.
"""

from __future__ import annotations

import contextlib
import functools
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Literal

from webark.cdx.line import CdxLine
from webark.core.timestamps import from_timestamp14, w3c_to_timestamp14
from webark.index.capture_select import capture_type, exact_key
from webark.index.revisits import ORIGINAL_TYPES, UrlCaptures, is_empty_payload_digest
from webark.index.source import IndexSource, KeyRange, digest_key

_digest_key = functools.lru_cache(maxsize=1 << 16)(digest_key)

How = Literal["url-digest", "refers-to", "digest", "empty-payload", "unresolved"]

#: Progress callback of :func:`resolve_sorted`: ``(revisits done, revisits in all)``.
ResolveProgress = Callable[[int, int], None]

MAX_CANDIDATES = 4
"""Candidates kept per revisit (the best first; the next ones are fall-backs)."""


@dataclass(frozen=True, slots=True)
class RevisitRef:
    """A revisit record to resolve, with what the resolution needs.

    Attributes:
        filename: WARC file name of the revisit (as in CDX lines).
        offset: its byte offset as stored.
        url: WARC-Target-URI.
        urlkey: CDX URL key of ``url`` (``com,example)/path``).
        timestamp: 14-digit UTC timestamp of its WARC-Date.
        digest: its WARC-Payload-Digest as written (``""`` when it has none).
        refers_to_uri: WARC-Refers-To-Target-URI, when given.
        refers_to_date: WARC-Refers-To-Date (W3C-DTF), when given.
    """

    filename: str
    offset: int
    url: str
    urlkey: str
    timestamp: str
    digest: str
    refers_to_uri: str | None = None
    refers_to_date: str | None = None

    @property
    def where(self) -> tuple[str, int]:
        """``(filename, offset)``: the revisit's identity."""
        return (self.filename, self.offset)


@dataclass(frozen=True, slots=True)
class Resolution:
    """The outcome for one revisit.

    Attributes:
        revisit: the revisit.
        candidates: ``(index line, rule)`` of possible originals, best first (at most
            :data:`MAX_CANDIDATES`; empty for ``empty-payload`` and ``unresolved``).
        how: the rule of the first candidate, ``empty-payload`` or ``unresolved``.
    """

    revisit: RevisitRef
    candidates: tuple[tuple[CdxLine, How], ...]
    how: How

    @property
    def original(self) -> CdxLine | None:
        """The best candidate's index line (None when there is none)."""
        return self.candidates[0][0] if self.candidates else None


def _seconds(ts: str) -> float:
    try:
        return from_timestamp14(ts[:14]).timestamp()
    except ValueError:
        return float("inf")


class _Ranked:
    """Candidates of one revisit, in rule order, without repeats or the revisit itself."""

    def __init__(self, rev: RevisitRef):
        self.rev = rev
        self.items: list[tuple[CdxLine, How]] = []
        self._seen = {rev.where}

    def add(self, lines: Iterable[CdxLine], how: How) -> None:
        for line in lines:
            if len(self.items) >= MAX_CANDIDATES:
                return
            where = (line.filename, line.offset)
            if where not in self._seen:
                self._seen.add(where)
                self.items.append((line, how))

    @property
    def full(self) -> bool:
        return len(self.items) >= MAX_CANDIDATES


def url_captures_in_order(
    source: IndexSource, urlkeys: Sequence[str], *, first_group: int = 64
) -> Iterator[tuple[str, UrlCaptures]]:
    """The :class:`~webark.index.revisits.UrlCaptures` of each of ``urlkeys`` (sorted,
    distinct), read as a merge join: one range scan covers a run of consecutive keys
    (``first key``..``last key!``) and the lines of other keys in between are skipped.
    The run length adapts: doubled (up to 4096 keys) while at most half of the lines
    read are skipped, quartered when more are, so dense keys cost one sequential walk
    of the index and sparse ones about one descent each.

    Raises:
        IndexUnavailable: the index cannot be read.
    """
    group = first_group
    i = 0
    while i < len(urlkeys):
        run = urlkeys[i : i + group]
        caps = {k: UrlCaptures() for k in run}
        read = used = 0
        for line in source.scan(KeyRange(run[0], run[-1] + "!")):
            read += 1
            c = caps.get(line.urlkey)
            if c is not None:
                used += 1
                c.add(line, _digest_key)
        for k in run:
            yield k, caps[k]
        i += len(run)
        sparse = read > 2 * used + len(run)
        group = max(1, group // 4) if sparse else min(4096, group * 2)


def resolve_sorted(
    source: IndexSource,
    revisits: Iterable[RevisitRef],
    *,
    exhaustive: bool = False,
    progress: ResolveProgress | None = None,
) -> dict[tuple[str, int], Resolution]:
    """Resolve every revisit (see the module docstring for the rules and their order).

    Each index range is read once, in index order: the revisits' URL keys sorted (rule
    1), the Refers-To URL keys sorted (rule 2), the digests sorted (rule 3).

    Args:
        source: the collection's index (any :class:`IndexSource`).
        revisits: the revisits, any order.
        exhaustive: fill up to :data:`MAX_CANDIDATES` candidates from every rule. By
            default a later rule is asked only for revisits that earlier rules left
            without a candidate (most revisits then cost one URL-key scan, shared
            with the other revisits of the URL); ask again with ``exhaustive=True``
            for the revisits whose candidates all failed to load.
        progress: called with ``(done, total)`` as revisits are settled.

    Returns:
        ``{(filename, offset): Resolution}`` for every revisit given.

    Raises:
        IndexUnavailable: the index cannot be read.
    """
    todo = list(revisits)
    total = len(todo)
    out: dict[tuple[str, int], Resolution] = {}
    ranked: dict[tuple[str, int], _Ranked] = {}
    for rev in todo:
        if rev.digest and is_empty_payload_digest(rev.digest):
            out[rev.where] = Resolution(rev, (), "empty-payload")
        else:
            ranked[rev.where] = _Ranked(rev)
    done = len(out)
    if progress is not None:
        progress(done, total)

    def dkey(rev: RevisitRef) -> str | None:
        return _digest_key(rev.digest) if rev.digest and rev.digest != "-" else None

    def wants_more(r: _Ranked) -> bool:
        return not r.full if exhaustive else not r.items

    # 1. same URL key (+ same digest): the keys in index order, read in shared ranges
    by_key: dict[str, list[_Ranked]] = defaultdict(list)
    for r in ranked.values():
        by_key[r.rev.urlkey].append(r)
    for urlkey, caps in url_captures_in_order(source, sorted(by_key)):
        for r in by_key[urlkey]:
            r.add(caps.around(dkey(r.rev), r.rev.timestamp), "url-digest")

    # 2. WARC-Refers-To-Target-URI (+ WARC-Refers-To-Date), keys in index order
    named: dict[str, list[tuple[_Ranked, str]]] = defaultdict(list)
    for r in ranked.values():
        if not wants_more(r) or not r.rev.refers_to_uri:
            continue
        try:
            key = exact_key(r.rev.refers_to_uri)
        except ValueError:
            continue
        if key == r.rev.urlkey:
            continue
        when = r.rev.timestamp
        if r.rev.refers_to_date:
            with contextlib.suppress(ValueError):
                when = w3c_to_timestamp14(r.rev.refers_to_date)
        named[key].append((r, when))
    for key in sorted(named):
        caps = UrlCaptures.read(source, key)
        for r, when in named[key]:
            d = dkey(r.rev)
            if d is not None:
                r.add(caps.closest(d, when), "refers-to")
            elif r.rev.refers_to_date:
                r.add((x for x in caps.around(None, when) if x.timestamp == when), "refers-to")

    # 3. the digest, any URL: one lookup per digest, digests in sorted order
    by_dig: dict[str, list[_Ranked]] = defaultdict(list)
    for r in ranked.values():
        d = dkey(r.rev)
        if d is not None and wants_more(r):
            by_dig[d].append(r)
    for d in sorted(by_dig):
        lines = [x for x in source.by_digest(d) if capture_type(x) in ORIGINAL_TYPES]
        for r in by_dig[d]:
            t = _seconds(r.rev.timestamp)
            key = r.rev.urlkey
            r.add(
                sorted(lines, key=lambda x: (x.urlkey != key, abs(_seconds(x.timestamp) - t),
                                             x.timestamp)),
                "digest",
            )

    for where, r in ranked.items():
        how: How = r.items[0][1] if r.items else "unresolved"
        out[where] = Resolution(r.rev, tuple(r.items), how)
        done += 1
        if progress is not None and (done % 1024 == 0 or done == total):
            progress(done, total)
    return out
