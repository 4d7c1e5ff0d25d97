"""Collections and their index sources, as the resolution API sees them.

A *collections directory* holds one folder per collection: the layout of
:class:`webark.index.collection.Collection` (``collection.toml``, ``warcs/``,
``indexes/`` with an SQLite store, per-WARC sorted CDXJ files, other ``*.cdx(j)`` files,
ZipNum ``*.idx``), or pywb's bare layout (``<name>/indexes/*.cdxj`` without a
``collection.toml``), which is read the same way. The collection's index is
:meth:`Collection.source` (several indexes merged by :mod:`webark.index.merge`).
A collection without any index, with a bad ``collection.toml`` or an unreadable
``indexes`` folder answers 503 (index unavailable), never an empty 200. Collection names
are ``[A-Za-z0-9][A-Za-z0-9_.-]*``; anything else, and folders that are neither layout,
are unknown (404).

**Raw lines.** The API's fast path copies index lines to the response without parsing
them when the query needs nothing but ``urlkey timestamp`` (see
:attr:`webark.apps.cdx.params.CdxQuery.simple`). :func:`raw_scanner` gives such a scan
for a CDXJ ``SortedCdxFile`` (its ``scan_raw``, on an mmap of the file), for a
``MergedSource`` of such sources and for any other source with a
``scan_raw(rng, reverse) -> Iterator[bytes]``; None otherwise (SQLite, ZipNum, classic
CDX files: the parsed path). The sorted files of a :class:`DirectoryCollections` look
for a replaced file at most every :data:`RECHECK_SECONDS`.
"""

from __future__ import annotations

import heapq
import os
import re
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from webark.cdx.line import CdxLine
from webark.core.errors import RequestError
from webark.index.collection import Collection, CollectionConfig, CollectionError
from webark.index.merge import MergedSource
from webark.index.sorted_file import SortedCdxFile
from webark.index.source import IndexSource, IndexUnavailable, KeyRange

#: Seconds between looks (``stat``) at a sorted index file for a replacement (the
#: ``recheck`` of :class:`webark.index.sorted_file.SortedLines`; a ``stat`` costs a few
#: µs, a large part of a mapped lookup): a replaced index is seen within a second, and
#: until then the old, complete file answers.
RECHECK_SECONDS = 1.0

#: ``scan(rng, reverse)`` over raw index lines (bytes, no line end), CDX order.
RawScan = Callable[[KeyRange, bool], Iterator[bytes]]

_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\-]{0,127}$")


class UnknownCollection(RequestError, KeyError):
    """No collection of that name (answered with 404)."""


def raw_ts(raw: bytes) -> str:
    """The timestamp field (second field) of a raw CDX line."""
    i = raw.find(b" ")
    j = raw.find(b" ", i + 1)
    return raw[i + 1 : j if j >= 0 else len(raw)].decode("ascii", "replace")


def _raw_key_ts(raw: bytes) -> bytes:
    i = raw.find(b" ")
    j = raw.find(b" ", i + 1)
    return raw[: j if j >= 0 else len(raw)]


_CDXJ_CACHE: dict[str, tuple[float, tuple[int, int], bool]] = {}


def is_cdxj_file(path: str) -> bool:
    """True when the sorted file at ``path`` holds CDXJ lines (its first data line after
    ``!`` meta lines is ``key timestamp {json}`` and it has no `` CDX`` header); cached
    per (size, mtime), looked at again after :data:`RECHECK_SECONDS`."""
    now = time.monotonic()
    hit = _CDXJ_CACHE.get(path)
    if hit is not None and now - hit[0] < RECHECK_SECONDS:
        return hit[2]
    try:
        st = os.stat(path)
    except OSError:
        return False
    sig = (st.st_size, st.st_mtime_ns)
    if hit is not None and hit[1] == sig:
        _CDXJ_CACHE[path] = (now, sig, hit[2])
        return hit[2]
    ok = False
    try:
        with open(path, "rb") as f:
            for raw in f:
                if raw.startswith(b"!"):
                    continue
                parts = raw.split(b" ", 2)
                ok = len(parts) == 3 and parts[2][:1] == b"{"
                break
    except OSError:
        return False
    if len(_CDXJ_CACHE) > 4096:
        _CDXJ_CACHE.clear()
    _CDXJ_CACHE[path] = (now, sig, ok)
    return ok


@dataclass(frozen=True, slots=True)
class RawSource:
    """A raw-line scan and what is known of its lines: ``cdxj`` = every data line is
    CDXJ (else each line is checked and other formats are parsed)."""

    scan: RawScan
    cdxj: bool


def raw_scanner(source: object) -> RawSource | None:
    """A raw-line scan of ``source`` (see the module docstring), or None. Lines of equal
    ``urlkey timestamp`` from merged sources come in the order ``MergedSource.scan``
    gives them (source order; reversed for reverse scans)."""
    if isinstance(source, SortedCdxFile):
        if is_cdxj_file(source.path):
            return RawSource(source.scan_raw, True)
        return None  # classic CDX (maybe with its own header letters): parsed path
    if isinstance(source, MergedSource):
        subs = [raw_scanner(s) for s in source.sources]
        parts = [s for s in subs if s is not None]
        if len(parts) != len(subs) or not parts:
            return None
        if len(parts) == 1:
            return parts[0]
        scans = [p.scan for p in parts]

        def merged(rng: KeyRange, reverse: bool = False) -> Iterator[bytes]:
            its = [s(rng, reverse) for s in scans]
            if reverse:
                its.reverse()
            return heapq.merge(*its, key=_raw_key_ts, reverse=reverse)

        return RawSource(merged, all(p.cdxj for p in parts))
    fn = getattr(source, "scan_raw", None)
    if callable(fn):
        return RawSource(fn, False)
    return None


class Collections(Protocol):
    """What the app needs from a set of collections."""

    def names(self) -> list[str]:
        """Collection names, sorted."""
        ...

    def get(self, name: str) -> IndexSource:
        """The index of collection ``name``.

        Raises:
            UnknownCollection: no such collection.
            IndexUnavailable: it exists but its index cannot be used.
        """
        ...


class DirectoryCollections:
    """The collections of a directory (layout in the module docstring).

    A collection's source is built once and kept while the *set* of its index files
    (names in ``indexes/`` and ``indexes/per-warc/``) and its ``collection.toml`` stay
    the same; the folders are looked at no more than once per ``ttl`` seconds per
    collection, so a request usually costs no ``listdir``. (Sorted files re-read their
    size on every query and SQLite sees new rows at once, so a changed *content* needs
    no rebuild.)

    Args:
        root: the collections directory.
        ttl: seconds between looks at a collection's folders.
    """

    def __init__(self, root: str | os.PathLike[str], ttl: float = 2.0):
        self.root = Path(root)
        self.ttl = ttl
        self._lock = threading.Lock()
        self._cache: dict[str, tuple[float, tuple[object, ...], IndexSource]] = {}

    def __repr__(self) -> str:
        return f"DirectoryCollections({str(self.root)!r})"

    def _is_collection(self, d: Path) -> bool:
        return (d / "collection.toml").is_file() or (d / "indexes").is_dir()

    def names(self) -> list[str]:
        try:
            entries = sorted(os.scandir(self.root), key=lambda e: e.name)
        except OSError:
            return []
        return [
            e.name
            for e in entries
            if _NAME_RE.match(e.name) and e.is_dir() and self._is_collection(Path(e.path))
        ]

    def get(self, name: str) -> IndexSource:
        now = time.monotonic()
        hit = self._cache.get(name)
        if hit is not None and now - hit[0] < self.ttl:
            return hit[2]
        d = self.root / name
        if not _NAME_RE.match(name) or not d.is_dir() or not self._is_collection(d):
            raise UnknownCollection(name)
        sig = self._signature(d)
        with self._lock:
            hit = self._cache.get(name)
            src = hit[2] if hit is not None and hit[1] == sig else self._build(d, name)
            self._cache[name] = (now, sig, src)
        return src

    @staticmethod
    def _signature(d: Path) -> tuple[object, ...]:
        sig: list[object] = []
        try:
            sig.append((d / "collection.toml").stat().st_mtime_ns)
        except OSError:
            sig.append(None)
        for sub in (d / "indexes", d / "indexes" / "per-warc"):
            try:
                sig.append(tuple(sorted(os.listdir(sub))))
            except OSError:
                sig.append(None)
        return tuple(sig)

    @staticmethod
    def _build(d: Path, name: str) -> IndexSource:
        try:
            if (d / "collection.toml").is_file():
                coll = Collection.open(d)
            else:  # pywb layout: indexes/ only
                coll = Collection(d, CollectionConfig(name=name, store="cdxj"))
            return coll.source(recheck=RECHECK_SECONDS)  # IndexUnavailable: no index
        except (CollectionError, OSError) as exc:
            raise IndexUnavailable(f"collection {name!r}: {exc}") from exc


class StaticCollections:
    """Collections given as a mapping name → source (tests, embedding)."""

    def __init__(self, sources: dict[str, IndexSource]):
        self.sources = dict(sources)

    def names(self) -> list[str]:
        return sorted(self.sources)

    def get(self, name: str) -> IndexSource:
        try:
            return self.sources[name]
        except KeyError:
            raise UnknownCollection(name) from None


#: Per collection, the predicate of index lines the API must not show (access rules), or
#: None when nothing is hidden; see :class:`HidingSource`.
HiddenLines = Callable[[str], "Callable[[CdxLine], bool] | None"]


class HidingSource:
    """An :class:`IndexSource` without the lines ``hidden(line)`` is true for: what the
    resolution API (CDX queries, digest lookups, TimeMaps) serves from a collection with
    access rules (:mod:`webark.apps.replay.access`). No raw-line fast path
    (:func:`raw_scanner` gives None): each line is parsed to be checked.

    Args:
        source: the collection's index. hidden: the predicate (a rule lookup per line).
    """

    def __init__(self, source: IndexSource, hidden: Callable[[CdxLine], bool]):
        self.source = source
        self.hidden = hidden

    def scan(self, rng: KeyRange, reverse: bool = False) -> Iterator[CdxLine]:
        """``source.scan`` without hidden lines (same order, still streaming)."""
        hidden = self.hidden
        return (x for x in self.source.scan(rng, reverse) if not hidden(x))

    def by_digest(self, digest: str) -> Iterator[CdxLine]:
        """``source.by_digest`` without hidden lines."""
        hidden = self.hidden
        return (x for x in self.source.by_digest(digest) if not hidden(x))
