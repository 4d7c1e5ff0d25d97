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
:attr:`webark.apps.cdx_params.CdxQuery.simple`). :func:`raw_scanner` gives such a scan
for a CDXJ ``SortedCdxFile`` (on an mmap of the file: :class:`MappedLines`, ~6× faster
to position than its ``scan_raw``, with the same header/meta skipping and time
filtering), for a ``MergedSource`` of such sources and for any other source with a
``scan_raw(rng, reverse) -> Iterator[bytes]``; None otherwise (SQLite, ZipNum, classic
CDX files: the parsed path).
"""

from __future__ import annotations

import heapq
import mmap
import os
import re
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from webark.index.collection import Collection, CollectionConfig, CollectionError
from webark.index.merge import MergedSource
from webark.index.sorted_file import SortedCdxFile
from webark.index.source import IndexSource, IndexUnavailable, KeyRange, in_time

#: Seconds between ``stat`` calls on a mapped index file (see :class:`MappedLines`).
RECHECK_SECONDS = 1.0

#: ``scan(rng, reverse)`` over raw index lines (bytes, no line end), CDX order.
RawScan = Callable[[KeyRange, bool], Iterator[bytes]]

_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\-]{0,127}$")


class UnknownCollection(KeyError):
    """No collection of that name (answered with 404)."""


def raw_ts(raw: bytes) -> str:
    """The timestamp field (second field) of a raw CDX line."""
    i = raw.find(b" ")
    j = raw.find(b" ", i + 1)
    return raw[i + 1 : j if j >= 0 else len(raw)].decode("ascii", "replace")


#: Binary-search intervals wider than this (bytes) have their probe line cached.
PROBE_CACHE_SPAN = 256 * 1024


class _Mapping:
    """One mapping of an index file and the probe lines cached for it."""

    __slots__ = ("mm", "probes")

    def __init__(self, mm: mmap.mmap | bytes):
        self.mm = mm
        self.probes: dict[int, tuple[int, int, bytes]] = {}


class MappedLines:
    """A sorted text file mapped into memory (``mmap``), for the raw fast path: binary
    search and range iteration over lines like
    :class:`webark.index.sorted_file.SortedLines`, at about 1 µs per probe instead of a
    read per probe (a lookup in a 1-million-line index: ~20 µs instead of ~130 µs).

    **Stopgap**: this belongs in ``webark.index.sorted_file`` (a ``scan_raw`` of
    ``SortedCdxFile`` on an mmap); it lives here until the store provides it.

    The file is stat'ed at most every :data:`RECHECK_SECONDS` (a ``stat`` costs ~4 µs
    on the project VM, a fifth of a lookup) and re-mapped when it was replaced or
    changed size: a replaced index is seen within a second, and until then the old,
    complete file answers. Writers replace index files atomically by rename, so a
    mapped file is never truncated under a reader (truncating one in place would crash
    the reading process with SIGBUS, as with any mmap reader).
    """

    def __init__(self, path: str):
        self.path = path
        self._sig: tuple[int, int, int, int] | None = None
        self._map = _Mapping(b"")
        #: the first line ends with CRLF (lines then lose their ``\r``)
        self.crlf = False
        self._checked = -1e9

    def view(self) -> _Mapping:
        """The current mapping (of ``b""`` for an empty file).

        Raises:
            OSError: the file cannot be opened or mapped.
        """
        now = time.monotonic()
        if now - self._checked < RECHECK_SECONDS:
            return self._map
        st = os.stat(self.path)
        self._checked = now
        sig = (st.st_ino, st.st_dev, st.st_size, st.st_mtime_ns)
        if sig != self._sig:
            if st.st_size == 0:
                self._map = _Mapping(b"")
            else:
                with open(self.path, "rb") as f:
                    mm = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
                nl = mm.find(b"\n", 0, 1 << 20)
                self.crlf = nl > 0 and mm[nl - 1 : nl] == b"\r"
                self._map = _Mapping(mm)  # one assignment: readers see old or new whole
            self._sig = sig  # an old mapping is closed when its last reader drops it
        return self._map

    @staticmethod
    def find(m: _Mapping, key: bytes) -> int:
        """Offset of the first line ``>= key`` (byte-wise), ``len`` if none.

        Binary search over byte offsets: each probe takes the line around the middle
        (``rfind``/``find`` of a newline in the mapping). The probes of the first levels
        are the same for every key, so those lines are cached per mapping (intervals
        wider than :data:`PROBE_CACHE_SPAN`: ~10 levels, ~1,000 lines for 250 MB),
        which halves the work of a lookup."""
        mm, probes = m.mm, m.probes
        n = len(mm)
        lo, hi = 0, n
        while lo < hi:
            mid = (lo + hi) // 2
            hit = probes.get(mid) if hi - lo > PROBE_CACHE_SPAN else None
            if hit is None:
                s = mm.rfind(b"\n", lo, mid) + 1 or lo
                e = mm.find(b"\n", s)
                if e < 0:
                    e = n
                line = mm[s:e]
                if hi - lo > PROBE_CACHE_SPAN and len(probes) < 8192:
                    probes[mid] = (s, e, line)
            else:
                s, e, line = hit
            if line < key:
                lo = e + 1
            else:
                hi = s
        return min(lo, n)

    @staticmethod
    def forward(mm: mmap.mmap | bytes, pos: int, end: bytes | None) -> Iterator[bytes]:
        """Lines from ``pos`` (a line start) up to the first line ``>= end``; read in
        growing blocks (8 KiB to 1 MiB) split at newlines."""
        n = len(mm)
        size = 8192
        while pos < n:
            stop = pos + size
            size = min(size * 2, 1 << 20)
            if stop < n:
                e = mm.rfind(b"\n", pos, stop)
                if e < 0:  # a line longer than the block
                    e = mm.find(b"\n", stop)
                    if e < 0:
                        e = n
            else:
                e = n
            block = mm[pos:e]
            pos = e + 1
            for line in block.split(b"\n"):
                if not line:
                    continue
                if end is not None and line >= end:
                    return
                yield line

    @staticmethod
    def backward(mm: mmap.mmap | bytes, start: bytes, stop: int) -> Iterator[bytes]:
        """Lines before offset ``stop`` (a line start) that are ``>= start``, last
        first (no second binary search: the scan stops at the first line < start)."""
        e = stop
        if e > 0 and mm[e - 1 : e] == b"\n":
            e -= 1
        while e >= 0:
            s = mm.rfind(b"\n", 0, e) + 1
            if e > s:
                line = mm[s:e]
                if line < start:
                    return
                yield line
            if s == 0:
                return
            e = s - 1

    def range(self, start: bytes, end: bytes | None, reverse: bool = False) -> Iterator[bytes]:
        """Lines with ``start <= line < end``, in order or reversed.

        Raises:
            OSError: the file cannot be read.
        """
        m = self.view()
        if not reverse:
            return self.forward(m.mm, self.find(m, start), end)
        e = self.find(m, end) if end is not None else len(m.mm)
        return self.backward(m.mm, start, e)


_MAPPED: dict[str, MappedLines] = {}
_MAPPED_LOCK = threading.Lock()


def _mapped(path: str) -> MappedLines:
    m = _MAPPED.get(path)
    if m is None:
        with _MAPPED_LOCK:
            m = _MAPPED.get(path)
            if m is None:
                if len(_MAPPED) > 1024:
                    _MAPPED.clear()
                m = _MAPPED[path] = MappedLines(path)
    return m


def _sorted_file_raw(src: SortedCdxFile) -> RawScan:
    lines = _mapped(src.path)

    def scan(rng: KeyRange, reverse: bool = False) -> Iterator[bytes]:
        start = rng.start.encode("utf-8", "surrogateescape")
        end = rng.end.encode("utf-8", "surrogateescape") if rng.end is not None else None
        try:
            it = lines.range(start, end, reverse)
        except (OSError, ValueError) as exc:
            raise IndexUnavailable(f"{src.path}: {exc}") from exc
        # `` CDX`` header and ``!meta`` lines sort before every key that starts above "!"
        meta = not start or start[0] <= 0x21
        timed = rng.from_ts is not None or rng.to_ts is not None
        if not (meta or timed or lines.crlf):
            return it  # the common case: no per-line work at all
        return _clean(it, rng, meta, timed, lines.crlf)

    return scan


def _clean(
    it: Iterator[bytes], rng: KeyRange, meta: bool, timed: bool, crlf: bool
) -> Iterator[bytes]:
    for raw in it:
        if meta and raw[:1] in (b" ", b"!"):
            continue
        if crlf and raw[-1:] == b"\r":
            raw = raw[:-1]
        if timed and not in_time(rng, raw_ts(raw)):
            continue
        yield raw


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
            return RawSource(_sorted_file_raw(source), True)
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
            sources = coll.sources()
        except (CollectionError, OSError) as exc:
            raise IndexUnavailable(f"collection {name!r}: {exc}") from exc
        if not sources:
            raise IndexUnavailable(f"collection {name!r}: no index (nothing in {d / 'indexes'})")
        return sources[0] if len(sources) == 1 else MergedSource(sources)


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
