"""``webark revisits refs``: which originals the revisits of a collection depend on.

Dedup makes captures depend on records in other WARCs: "the loss of one collection
could damage the integrity of multiple other collections" (seed). This report counts,
for every original record, the revisits that cite it, and where those revisits are:

* **citations** per original, grouped by *harvest*. A harvest is, by ``group_by``:
  ``file`` (default) the revisit's WARC file name; ``prefix`` the WARC name up to
  its first ``-`` + 8 or more digits (the timestamp of Heritrix/webark names
  ``PREFIX-20261130120000000-00001-…``, so one crawl job's WARCs form one group); or
  ``year`` the year of the revisit's timestamp;
* the **most-cited** originals, and the originals cited more than N times (candidates
  for extra replication);
* **lost if X**: the captures in *other* WARCs that would lose their payload if WARC
  X were lost — revisits whose original is in X and for which the index knows no other
  copy of the payload (a non-revisit capture with the same digest in another WARC).

Revisits are resolved from the index alone, with the rules and order of replay
(:func:`~webark.tools.reduplicate_resolve.resolve_sorted`): the original is the one
replay would use when every WARC is present. The index keeps no WARC-Refers-To fields,
so for revisits left unresolved the revisit records themselves are read (in WARC
order) and those are tried too.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

from webark.cdx.line import CdxLine
from webark.core.errors import FormatError
from webark.index.capture_select import capture_type
from webark.index.locations import WarcNotFound
from webark.index.record_loader import RecordLoader
from webark.index.revisits import ORIGINAL_TYPES
from webark.index.source import IndexSource, KeyRange, digest_key
from webark.tools.reduplicate_resolve import Resolution, RevisitRef, resolve_sorted

GroupBy = Literal["file", "prefix", "year"]
_PREFIX = re.compile(r"^(.*?)-\d{8,}")


def harvest_of(ref: RevisitRef, group_by: GroupBy) -> str:
    """The harvest a revisit belongs to (see the module docstring)."""
    if group_by == "year":
        return ref.timestamp[:4] or "-"
    if group_by == "prefix":
        m = _PREFIX.match(ref.filename)
        return m.group(1) if m else ref.filename
    return ref.filename


@dataclass
class OriginalRefs:
    """One original record and the revisits citing it.

    Attributes:
        original: its index line (filename, offset, url, timestamp, digest).
        citations: number of revisits resolved to it.
        harvests: citations per harvest (``group_by``).
        revisits: the citing revisits.
    """

    original: CdxLine
    citations: int = 0
    harvests: Counter[str] = field(default_factory=Counter)
    revisits: list[RevisitRef] = field(default_factory=list)

    def to_json(self, with_revisits: bool = False) -> dict[str, Any]:
        o = self.original
        d: dict[str, Any] = {
            "filename": o.filename, "offset": o.offset, "length": o.length, "url": o.url,
            "timestamp": o.timestamp, "digest": o.digest, "citations": self.citations,
            "harvests": dict(sorted(self.harvests.items())),
        }
        if with_revisits:
            d["revisits"] = [_ref_json(r) for r in self.revisits]
        return d


def _ref_json(r: RevisitRef) -> dict[str, Any]:
    return {"filename": r.filename, "offset": r.offset, "url": r.url,
            "timestamp": r.timestamp, "digest": r.digest}


@dataclass
class LostIf:
    """What losing WARC ``warc`` would cost: ``lost`` revisits in other WARCs with no
    other copy of their payload, ``recoverable`` ones whose payload exists elsewhere
    (``alternatives``: revisit → an index line of another copy)."""

    warc: str
    lost: list[tuple[RevisitRef, CdxLine]] = field(default_factory=list)
    recoverable: list[tuple[RevisitRef, CdxLine, CdxLine]] = field(default_factory=list)

    def to_json(self, top: int | None = None) -> dict[str, Any]:
        """The report as JSON: counts of lost and recoverable captures, and the first
        ``top`` of each (None: all)."""
        return {
            "warc": self.warc,
            "lost_count": len(self.lost),
            "recoverable_count": len(self.recoverable),
            "lost": [{**_ref_json(r), "original_offset": o.offset}
                     for r, o in self.lost[:top]],
            "recoverable": [
                {**_ref_json(r), "original_offset": o.offset,
                 "other_copy": {"filename": a.filename, "offset": a.offset, "url": a.url,
                                "timestamp": a.timestamp}}
                for r, o, a in self.recoverable[:top]
            ],
        }


@dataclass
class RefsReport:
    """The revisit-reference report of a collection (:func:`revisit_refs`).

    Attributes:
        group_by: how harvests are told apart.
        revisits: revisits in the index.
        empty_payload: revisits of the empty payload (need no original).
        unresolved: revisits without an original in the index.
        originals: ``(filename, offset)`` → :class:`OriginalRefs`.
    """

    group_by: GroupBy
    revisits: int = 0
    empty_payload: int = 0
    unresolved: list[RevisitRef] = field(default_factory=list)
    originals: dict[tuple[str, int], OriginalRefs] = field(default_factory=dict)

    @property
    def resolved(self) -> int:
        return sum(o.citations for o in self.originals.values())

    def most_cited(self, n: int) -> list[OriginalRefs]:
        """The ``n`` most-cited originals (ties: by file name and offset)."""
        items = sorted(self.originals.values(),
                       key=lambda o: (-o.citations, o.original.filename, o.original.offset))
        return items[:n]

    def cited_more_than(self, n: int) -> list[OriginalRefs]:
        """Originals cited more than ``n`` times, by file name and offset (the order
        to copy them in)."""
        return [self.originals[k] for k in sorted(self.originals)
                if self.originals[k].citations > n]

    def by_warc(self) -> dict[str, int]:
        """Citations of originals per WARC holding them."""
        out: Counter[str] = Counter()
        for (name, _), o in self.originals.items():
            out[name] += o.citations
        return dict(sorted(out.items()))

    def to_json(self, top: int) -> dict[str, Any]:
        return {
            "group_by": self.group_by, "revisits": self.revisits,
            "resolved": self.resolved, "empty_payload": self.empty_payload,
            "unresolved": [_ref_json(r) for r in self.unresolved],
            "originals": len(self.originals),
            "citations_by_original_warc": self.by_warc(),
            "most_cited": [o.to_json() for o in self.most_cited(top)],
        }


def revisit_refs_from_lines(line: CdxLine) -> RevisitRef:
    """A :class:`RevisitRef` from a revisit's index line (no Refers-To fields)."""
    return RevisitRef(
        filename=line.filename, offset=line.offset, url=line.url, urlkey=line.urlkey,
        timestamp=line.timestamp[:14], digest="" if line.digest in ("-", "") else line.digest,
    )


def revisit_refs(
    source: IndexSource,
    loader: RecordLoader | None = None,
    *,
    group_by: GroupBy = "file",
    progress: Callable[[str, int, int], None] | None = None,
) -> RefsReport:
    """Build the report for every revisit of ``source`` (module docstring).

    Args:
        source: the collection's index.
        loader: reads revisit records for their WARC-Refers-To fields when the index
            alone does not resolve them (None: index only).
        group_by: ``file``, ``prefix`` or ``year``.
        progress: ``(phase, done, total)``; phases ``scan`` (lines), ``resolve``.

    Raises:
        IndexUnavailable: the index cannot be read.
    """
    tick = progress or (lambda phase, done, total: None)
    refs: list[RevisitRef] = []
    for n, line in enumerate(source.scan(KeyRange("", None)), 1):
        if capture_type(line) == "revisit":
            refs.append(revisit_refs_from_lines(line))
        if n % 4096 == 0:
            tick("scan", n, 0)
    res = resolve_sorted(source, refs, progress=lambda d, t: tick("resolve", d, t))
    if loader is not None:
        retry = _with_refers_to(
            [r.revisit for r in res.values() if r.how == "unresolved"], loader)
        if retry:
            res.update(resolve_sorted(source, retry))
    report = RefsReport(group_by, revisits=len(refs))
    _fill(report, res.values())
    return report


def _with_refers_to(refs: list[RevisitRef], loader: RecordLoader) -> list[RevisitRef]:
    out = []
    for r in sorted(refs, key=lambda x: x.where):
        line = CdxLine(urlkey=r.urlkey, timestamp=r.timestamp, url=r.url,
                       filename=r.filename, offset=r.offset)
        try:
            rec = loader.load(line)
        except (WarcNotFound, FormatError):
            continue
        uri, date = rec.headers.refers_to_target_uri, rec.headers.refers_to_date
        if uri:
            out.append(RevisitRef(r.filename, r.offset, r.url, r.urlkey, r.timestamp,
                                  r.digest or (rec.headers.payload_digest or ""), uri, date))
    return out


def _fill(report: RefsReport, resolutions: Iterable[Resolution]) -> None:
    for r in sorted(resolutions, key=lambda x: x.revisit.where):
        if r.how == "empty-payload":
            report.empty_payload += 1
            continue
        orig = r.original
        if orig is None:
            report.unresolved.append(r.revisit)
            continue
        key = (orig.filename, orig.offset)
        entry = report.originals.get(key)
        if entry is None:
            entry = report.originals[key] = OriginalRefs(orig)
        entry.citations += 1
        entry.harvests[harvest_of(r.revisit, report.group_by)] += 1
        entry.revisits.append(r.revisit)


def lost_if(report: RefsReport, source: IndexSource, warc: str) -> LostIf:
    """The captures outside WARC ``warc`` that depend on originals inside it, split into
    ``lost`` (no other copy of the payload in the index) and ``recoverable``.

    Raises:
        IndexUnavailable: the index cannot be read.
    """
    out = LostIf(warc)
    deps: dict[str, list[tuple[RevisitRef, CdxLine]]] = defaultdict(list)
    for (name, _), o in sorted(report.originals.items()):
        if name != warc:
            continue
        for r in o.revisits:
            if r.filename != warc:
                deps[digest_key(o.original.digest)].append((r, o.original))
    for dk in sorted(deps):
        other = next(
            (x for x in source.by_digest(dk)
             if x.filename != warc and capture_type(x) in ORIGINAL_TYPES),
            None,
        )
        for r, orig in deps[dk]:
            if other is None:
                out.lost.append((r, orig))
            else:
                out.recoverable.append((r, orig, other))
    return out
