"""Several index sources as one: a streaming k-way merge in CDX order.

pywb aggregates the indexes of a collection the same way (``BaseAggregator`` merges the
per-source iterators with ``heapq.merge``); OpenWayback's ``CompositeSearchResultSource``
too. Nothing is buffered beyond one pending line per source, so a merge of a
multi-GB sorted file, a ZipNum index and an SQLite store streams in constant memory.

Duplicates are kept: the same capture indexed in two sources appears twice (as in
pywb); de-duplicate upstream (do not index a WARC into two sources of one collection).
"""

from __future__ import annotations

import heapq
from collections.abc import Iterator, Sequence

from webark.cdx.line import CdxLine
from webark.index.source import IndexSource, KeyRange


def _merge_key(line: CdxLine) -> bytes:
    # The byte order of "urlkey timestamp", which is what every source sorts by (a tuple
    # would differ from it for keys with characters below the space).
    return f"{line.urlkey} {line.timestamp}".encode("utf-8", "surrogateescape")


class MergedSource:
    """An :class:`~webark.index.source.IndexSource` over ``sources``.

    ``scan`` merges the sources' scans by ``"urlkey timestamp"`` (byte-wise; reversed
    for ``reverse=True``); lines with equal keys come in the order of ``sources``
    (then in each source's own order; reversed when ``reverse``). ``by_digest`` merges
    the sources' digest lookups the same way.

    Errors: :class:`~webark.index.source.IndexUnavailable` from any source is raised,
    not hidden: a merge that silently dropped a source would answer an incomplete 200
    where the resolution API must answer 503.
    """

    def __init__(self, sources: Sequence[IndexSource]):
        self.sources = list(sources)

    def __repr__(self) -> str:
        return f"MergedSource({self.sources!r})"

    def scan(self, rng: KeyRange, reverse: bool = False) -> Iterator[CdxLine]:
        """See :meth:`IndexSource.scan`."""
        if len(self.sources) == 1:
            return self.sources[0].scan(rng, reverse)
        its = [s.scan(rng, reverse) for s in self.sources]
        if reverse:
            # heapq.merge(reverse=True) keeps equal keys in input order; reversed
            # sources should present them in reverse order of the sources too.
            its.reverse()
        return heapq.merge(*its, key=_merge_key, reverse=reverse)

    def by_digest(self, digest: str) -> Iterator[CdxLine]:
        """See :meth:`IndexSource.by_digest`."""
        if len(self.sources) == 1:
            return self.sources[0].by_digest(digest)
        return heapq.merge(*(s.by_digest(digest) for s in self.sources), key=_merge_key)
