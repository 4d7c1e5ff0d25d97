"""WARC location resolution: the file name in a CDX line → where the WARC is now.

CDX lines name a WARC by file name only (``filename`` / CDX ``g``); a separate resolver
maps that name to a path or URL, so WARCs can be moved (another disk, an HTTP store)
without re-indexing: update the map, not the index ("a separate (W)ARC resolution
service" of the seed texts; pywb's ``archive_paths`` resolvers, OpenWayback's
``ResourceFileLocationDB``).

Two kinds of locators, chained by :class:`LocationResolver`:

* :class:`PathIndex` — pywb's *path index* file: one line per WARC,
  ``filename<TAB>location[<TAB>location…]``, sorted byte-wise (``LC_ALL=C``) by file
  name, looked up by binary search (so a map of millions of WARCs costs ~20 small reads
  per lookup, like pywb's ``PathIndexResolver``). A file name may have several
  locations (replicas), tried in order. Relative locations are relative to the folder
  of the path index file; ``http(s)://`` locations are kept as URLs.
* :class:`PrefixLocator` — ``prefix + filename``: a folder (only files that exist) or a
  URL prefix (``https://warcs.example.org/store/``; not checked), pywb's
  ``PrefixResolver``.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Protocol

from webark.core.errors import StorageError
from webark.index.sorted_file import SortedLines, atomic_write_lines


class WarcNotFound(StorageError, LookupError):
    """No locator knows where the WARC is (or none of its locations exists). The
    replay app answers 404/503 with the file name; the index line itself is fine."""

    def __init__(self, filename: str, tried: Sequence[str] = ()):
        self.filename = filename
        self.tried = list(tried)
        extra = f" (tried {', '.join(self.tried)})" if self.tried else ""
        super().__init__(f"WARC {filename!r} not found{extra}")


class WarcNameRefused(WarcNotFound):
    """A CDX ``filename`` that is not a plain name inside the WARC locations: absolute,
    with a ``..`` component, a backslash, a NUL or a drive (``C:``), or empty. Such a
    line could make one collection serve another's records or any file of the server
    (issue 20 item 4); it is never looked up. The message names the file only, no
    server path."""

    def __init__(self, filename: str):
        super().__init__(filename)
        self.args = (f"WARC name {filename!r} refused (not a plain name inside the collection)",)


def check_warc_name(filename: str) -> None:
    """Raise :class:`WarcNameRefused` unless ``filename`` (a CDX ``filename`` field) is a
    relative name that stays below the folder or URL prefix it is joined to:
    ``x.warc.gz`` and ``sub/x.warc.gz`` pass; ``../x``, ``a/../../x``, ``/abs/x``,
    ``a\\x``, ``C:x``, names with NUL and the empty name do not (pywb joins the name to
    its ``archive_paths`` prefix the same way, without this check)."""
    parts = filename.split("/")
    if (
        not filename
        or filename.startswith("/")
        or any(c in filename for c in "\\\x00")
        or (len(filename) > 1 and filename[1] == ":")
        or ".." in parts
    ):
        raise WarcNameRefused(filename)


class Locator(Protocol):
    """Something that knows candidate locations of WARCs by file name."""

    def locate(self, filename: str) -> list[str]:
        """Candidate locations (paths or URLs) of ``filename``, best first; [] if
        unknown."""
        ...


def _is_url(loc: str) -> bool:
    return "://" in loc and not loc.startswith("file://")


def _check_name(name: str) -> None:
    if not name or any(c in name for c in "\t\r\n"):
        raise ValueError(f"file name not allowed in a path index: {name!r}")


class PathIndex:
    """A pywb path index file (see the module docstring).

    Args:
        path: the index file; a missing file is an empty index.

    Raises (from :meth:`locate`): ``OSError`` when the file exists but cannot be read.
    """

    def __init__(self, path: str | os.PathLike[str]):
        self.path = os.fspath(path)
        self._lines = SortedLines(self.path)

    def __repr__(self) -> str:
        return f"PathIndex({self.path!r})"

    def _absolute(self, loc: str) -> str:
        if loc.startswith("file://"):
            loc = loc[len("file://") :]
        if _is_url(loc) or os.path.isabs(loc):
            return loc
        return os.path.join(os.path.dirname(os.path.abspath(self.path)), loc)

    def locate(self, filename: str) -> list[str]:
        """Locations of ``filename`` in file order (relative ones made absolute)."""
        if not os.path.exists(self.path):
            return []
        key = filename.encode("utf-8", "surrogateescape") + b"\t"
        out: list[str] = []
        with self._lines.open() as h:
            pos = self._lines.find(h, key)
            for _, raw in self._lines.forward(h, pos):
                if not raw.startswith(key):
                    break
                rest = raw[len(key) :].rstrip(b"\r").decode("utf-8", "surrogateescape")
                out += [self._absolute(p) for p in rest.split("\t") if p]
        return out

    def entries(self) -> Iterator[tuple[str, list[str]]]:
        """Every ``(filename, locations)`` as written (locations not made absolute)."""
        if not os.path.exists(self.path):
            return
        with open(self.path, encoding="utf-8", errors="surrogateescape") as f:
            for line in f:
                parts = line.rstrip("\r\n").split("\t")
                if parts[0]:
                    yield parts[0], [p for p in parts[1:] if p]

    def update(
        self, set_: Mapping[str, Sequence[str]] | None = None, remove: Iterable[str] = ()
    ) -> None:
        """Set the locations of some files and/or drop others, then rewrite the file
        sorted, atomically (a reader sees the old or the new file, never half of it).

        Raises:
            ValueError: a file name or location with a tab or newline.
            OSError: the file cannot be written.
        """
        set_ = dict(set_ or {})
        for name, locs in set_.items():
            _check_name(name)
            for loc in locs:
                _check_name(loc)
        drop = set(remove) | set(set_)
        rows = {n: locs for n, locs in self.entries() if n not in drop}
        rows.update({n: list(locs) for n, locs in set_.items()})
        lines = sorted(
            "\t".join([n, *locs]).encode("utf-8", "surrogateescape") for n, locs in rows.items()
        )
        atomic_write_lines(self.path, lines)


class PrefixLocator:
    """``prefix + filename``: a folder (a candidate only when the file exists there) or
    a URL prefix (always a candidate; whether it answers is the loader's business)."""

    def __init__(self, prefix: str | os.PathLike[str]):
        self.prefix = os.fspath(prefix)

    def __repr__(self) -> str:
        return f"PrefixLocator({self.prefix!r})"

    def locate(self, filename: str) -> list[str]:
        if _is_url(self.prefix):
            return [self.prefix + filename]
        path = os.path.join(self.prefix, filename)
        return [path] if os.path.exists(path) else []


class LocationResolver:
    """Ask ``locators`` in order; the first existing local path or the first URL wins.

    Example: ``LocationResolver([PathIndex("coll/locations.loc"),
    PrefixLocator("coll/warcs")])`` — explicit entries first, then the collection's
    ``warcs/`` folder.
    """

    def __init__(self, locators: Sequence[Locator]):
        self.locators = list(locators)

    def candidates(self, filename: str) -> list[str]:
        """All candidate locations, in order, without duplicates.

        Raises:
            WarcNameRefused: ``filename`` is not a plain name (:func:`check_warc_name`).
        """
        check_warc_name(filename)
        out: list[str] = []
        for loc in self.locators:
            for c in loc.locate(filename):
                if c not in out:
                    out.append(c)
        return out

    def resolve(self, filename: str) -> str:
        """Where to read ``filename`` from: a path that exists or a URL.

        Raises:
            WarcNotFound: no candidate, or only local paths that do not exist.
            WarcNameRefused: ``filename`` is not a plain name (:func:`check_warc_name`).
        """
        tried = []
        for c in self.candidates(filename):
            if _is_url(c) or os.path.isfile(c):
                return c
            tried.append(c)
        raise WarcNotFound(filename, tried)
