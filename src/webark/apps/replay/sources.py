"""What replay needs of a collection, beyond its index: where its WARCs are, a record
loader, a revisit resolver and its access rules.

:class:`ReplayCollections` wraps the resolution API's
:class:`~webark.apps.cdx.sources.DirectoryCollections` (same folder, same cached index
sources) and adds per collection a :class:`ReplayContext`, rebuilt when the index source
is rebuilt. WARC locations: a webark collection's ``Collection.resolver()``
(``locations.loc``, ``warcs/``, configured locations); a pywb-layout folder (``indexes/``
only) reads its WARCs from ``archive/`` (pywb's name) or ``warcs/``.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path

from webark.apps.cdx.sources import DirectoryCollections, UnknownCollection
from webark.apps.replay.access import Access, AccessConfig
from webark.index.collection import CONFIG_NAME, Collection, CollectionError
from webark.index.locations import LocationResolver, PrefixLocator
from webark.index.record_loader import RecordLoader
from webark.index.revisits import RevisitResolver
from webark.index.source import IndexSource, IndexUnavailable

__all__ = ["ReplayCollections", "ReplayContext", "UnknownCollection"]


@dataclass(frozen=True, slots=True)
class ReplayContext:
    """One collection, ready for replay.

    Attributes:
        name: collection name. folder: its folder.
        source: its index. loader: reads the record of a CDX line.
        revisits: finds the original of a revisit. access: its access rules.
        compat: the indexer flavour its keys follow (``collection.toml``'s
            ``compat``; ``cdxj-indexer`` for a pywb-layout folder), for the keys of
            POST/PUT lookups (:func:`webark.cdx.post.method_url`).
    """

    name: str
    folder: Path
    source: IndexSource
    loader: RecordLoader
    revisits: RevisitResolver
    access: Access
    compat: str = "cdxj-indexer"


class ReplayCollections:
    """The collections of a folder, for replay (see the module docstring).

    Args:
        collections: the resolution API's collections of the same folder (shared, so
            both apps use one index source per collection).
        access: access rules (server-wide file + per-collection files).
    """

    def __init__(self, collections: DirectoryCollections, access: AccessConfig | None = None):
        self.collections = collections
        self.access = access or AccessConfig()
        self._lock = threading.Lock()
        self._cache: dict[str, tuple[IndexSource, RecordLoader, RevisitResolver, str]] = {}

    def names(self) -> list[str]:
        """Collection names, sorted."""
        return self.collections.names()

    def get(self, name: str) -> ReplayContext:
        """The replay context of collection ``name``.

        Raises:
            UnknownCollection: no such collection.
            IndexUnavailable: its index cannot be used (or its WARC locations cannot be
                read).
        """
        source = self.collections.get(name)
        folder = self.collections.root / name
        with self._lock:
            hit = self._cache.get(name)
        if hit is None or hit[0] is not source:
            resolver, compat = _resolver(folder, name)
            loader = RecordLoader(resolver)
            hit = (source, loader, RevisitResolver(source, loader), compat)
            with self._lock:
                self._cache[name] = hit
        return ReplayContext(
            name, folder, source, hit[1], hit[2], self.access.for_collection(folder), hit[3]
        )


def _resolver(folder: Path, name: str) -> tuple[LocationResolver, str]:
    """The WARC locations of a collection folder and the indexer flavour of its keys."""
    if (folder / CONFIG_NAME).is_file():
        try:
            coll = Collection.open(folder)
            return coll.resolver(), coll.config.compat
        except CollectionError as exc:
            raise IndexUnavailable(f"collection {name!r}: {exc}") from exc
    locations = [PrefixLocator(folder / "archive"), PrefixLocator(folder / "warcs")]
    return LocationResolver(locations), "cdxj-indexer"
