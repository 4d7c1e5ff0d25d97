"""Loading the WARC record a CDX line points at: file name → location → record.

A CDX line names its WARC by file name and gives the record's offset as stored
(the gzip member / zstd frame for compressed files, the ``WARC/`` line for uncompressed
ones; DESIGN-NOTES "Lengths as stored"). :class:`RecordLoader` asks the collection's
:class:`~webark.index.locations.LocationResolver` where that file is now and reads the one
record there with :func:`webark.warc.reader.read_record_at` (per-record gzip, zstd with
or without a dictionary, uncompressed WARC, ARC). This is pywb's ``BlockArcWarcRecordLoader``
with its ``archive_paths`` resolvers.

Thread safety: a loader holds no open files (each load opens, reads and closes the
WARC), so one loader serves the request handlers of every thread. Resolved locations
are cached (bounded, under a lock) for ``location_ttl`` seconds.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Generic, TypeVar

from webark.cdx.line import CdxLine
from webark.core.errors import FormatError
from webark.index.locations import LocationResolver, WarcNotFound
from webark.warc.reader import read_record_at
from webark.warc.record import WarcRecord

K = TypeVar("K")
V = TypeVar("V")


class TtlCache(Generic[K, V]):
    """A small thread-safe LRU map (``size`` entries at most) whose entries expire after
    ``ttl`` seconds; values are made outside the lock (two threads may both make one;
    the last one is kept). Shared by the loader and the revisit resolver."""

    def __init__(self, size: int, ttl: float):
        self.size, self.ttl = size, ttl
        self._d: OrderedDict[K, tuple[float, V]] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = self.misses = 0

    def get_or_make(self, key: K, make: Callable[[], V]) -> V:
        """The cached value of ``key``, or ``make()`` (cached; exceptions from it are
        not cached and propagate)."""
        now = time.monotonic()
        with self._lock:
            hit = self._d.get(key)
            if hit is not None and now - hit[0] < self.ttl:
                self._d.move_to_end(key)
                self.hits += 1
                return hit[1]
            self.misses += 1
        value = make()  # outside the lock: index reads may be slow
        with self._lock:
            self._d[key] = (now, value)
            self._d.move_to_end(key)
            while len(self._d) > self.size:
                self._d.popitem(last=False)
        return value

    def pop(self, key: K) -> None:
        """Forget ``key`` (no error when absent)."""
        with self._lock:
            self._d.pop(key, None)

    def clear(self) -> None:
        """Forget everything."""
        with self._lock:
            self._d.clear()


class RemoteWarcUnsupported(WarcNotFound):
    """The WARC is only known at a URL (``http(s)://…``); reading records over HTTP is
    not implemented yet. A :class:`WarcNotFound`, so callers treat it alike."""

    def __init__(self, filename: str, url: str):
        super().__init__(filename, [url])
        self.args = (f"WARC {filename!r} is at {url}: remote WARCs are not supported yet",)


class RecordLoader:
    """Load the record of a :class:`~webark.cdx.line.CdxLine`.

    Args:
        resolver: where WARCs are (``Collection.resolver()``).
        location_ttl: seconds a resolved location is reused before asking the resolver
            again (0 = always ask); a moved WARC is found again after a failed read
            whatever the TTL.
        max_locations: locations cached at most (least recently used dropped first).
    """

    def __init__(
        self,
        resolver: LocationResolver,
        *,
        location_ttl: float = 60.0,
        max_locations: int = 1024,
    ):
        self.resolver = resolver
        self.location_ttl = location_ttl
        self.max_locations = max_locations
        self._locations: TtlCache[str, str] = TtlCache(max_locations, location_ttl)

    def __repr__(self) -> str:
        return f"RecordLoader({self.resolver!r})"

    def locate(self, filename: str) -> str:
        """The local path of WARC ``filename`` (cached, see the class docstring).

        Raises:
            WarcNotFound: no locator knows the file, or no candidate exists.
            RemoteWarcUnsupported: only a URL is known.
        """
        return self._locations.get_or_make(filename, lambda: self._resolve(filename))

    def _resolve(self, filename: str) -> str:
        loc = self.resolver.resolve(filename)
        if "://" in loc and not loc.startswith("file://"):
            raise RemoteWarcUnsupported(filename, loc)
        return loc[len("file://") :] if loc.startswith("file://") else loc

    def _forget(self, filename: str) -> None:
        self._locations.pop(filename)

    def load(self, line: CdxLine) -> WarcRecord:
        """The record ``line`` points at (``line.filename`` at ``line.offset``).

        Returns:
            The :class:`~webark.warc.record.WarcRecord`, with ``path``/``offset``/
            ``length`` as stored; its block is in memory, or spooled to a temporary file
            when larger than 16 MiB.

        Raises:
            WarcNotFound: the WARC cannot be found (see :meth:`locate`).
            FormatError: the line has no offset, or no record starts at its offset (the
                message names the file and offset).
        """
        if line.offset < 0:
            raise FormatError(f"CDX line for {line.url} has no offset", line.filename, None)
        path = self.locate(line.filename)
        try:
            return read_record_at(path, line.offset)
        except FileNotFoundError:
            # moved since it was located: ask the resolver once more
            self._forget(line.filename)
            path = self.locate(line.filename)
            try:
                return read_record_at(path, line.offset)
            except FileNotFoundError:
                raise WarcNotFound(line.filename, [path]) from None
        except OSError as exc:
            raise FormatError(f"cannot read record: {exc}", path, line.offset) from exc
        except (ValueError, EOFError) as exc:
            raise FormatError(f"cannot read record: {exc}", path, line.offset) from exc

