"""The input files of the post-acquisition commands (``webark stats``, ``extract``,
``dedup build``): folders walked, collection folders resolved, and **every file read
once**, however often and under whatever names it was given.

Two paths name the same file when ``os.stat`` gives the same ``(st_dev, st_ino)``:
``a.warc.gz`` and ``./a.warc.gz``, a symlink and its target, a hard link, a file given
on its own and reached again through a folder argument. Reading such a file twice would
count its records twice (statistics, dedup originals) or extract it twice.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator

ARCHIVE_SUFFIXES = (".warc", ".warc.gz", ".warc.zst", ".arc", ".arc.gz")
"""File name endings of the (W)ARC files looked for in folders."""

OnRepeat = Callable[[str, str], None]
"""Called as ``on_repeat(path, first_path)`` for a path that names a file already listed
as ``first_path``."""


def _identity(path: str) -> tuple[int, int] | str:
    """What makes two paths one file: ``(st_dev, st_ino)``; for a path that cannot be
    stat'ed (missing, no permission) its resolved path, so that the reader reports the
    error once, on the first spelling."""
    try:
        st = os.stat(path)
    except OSError:
        return os.path.realpath(path)
    return (st.st_dev, st.st_ino)


def unique_files(paths: Iterable[str | os.PathLike[str]], *,
                 on_repeat: OnRepeat | None = None) -> list[str]:
    """``paths`` in order, each file once: a path naming a file already listed (same
    device and inode) is dropped, and ``on_repeat(path, first_path)`` is called for it.

    Args:
        paths: file paths as given or walked.
        on_repeat: told about each dropped path (e.g. to print a warning).

    Returns:
        The paths kept, as ``str``, spelled as first given.
    """
    seen: dict[tuple[int, int] | str, str] = {}
    out: list[str] = []
    for given in paths:
        p = os.fspath(given)
        key = _identity(p)
        first = seen.get(key)
        if first is not None:
            if on_repeat is not None:
                on_repeat(p, first)
            continue
        seen[key] = p
        out.append(p)
    return out


def walk_files(paths: Iterable[str | os.PathLike[str]],
               suffixes: tuple[str, ...] | None = None) -> Iterator[str]:
    """Files as given; a folder's files (recursively, sorted by name at each level)
    whose names end with one of ``suffixes`` (``None``: every file). Repeats are not
    removed here (:func:`unique_files`)."""
    for given in paths:
        p = os.fspath(given)
        if os.path.isdir(p):
            for d, dirs, names in os.walk(p):
                dirs.sort()
                yield from (os.path.join(d, n) for n in sorted(names)
                            if suffixes is None or n.endswith(suffixes))
        else:
            yield p


def collection_warcs(root: str | os.PathLike[str]) -> list[str]:
    """The (W)ARC files a collection folder indexes, where they are: each name its
    index holds, found through ``locations.loc``, ``warcs/`` and the configured
    locations (so WARCs added ``--in-place`` count, and a copy left in ``warcs/`` after
    ``collection remove`` does not).

    Raises:
        FileNotFoundError: an indexed WARC is nowhere to be found (the message names
            it and where it was looked for).
        CollectionError: the folder is not a readable collection.
    """
    from webark.index.collection import Collection

    out: list[str] = []
    with Collection.open(root) as coll:
        resolver = coll.resolver()
        for f in coll.indexed():
            tried = resolver.candidates(f.name)
            found = next((c for c in tried if os.path.isfile(c)), None)
            if found is None:
                raise FileNotFoundError(
                    f"collection {os.fspath(root)}: indexed WARC {f.name} not found "
                    f"(looked at {', '.join(tried) or 'no location'})"
                )
            out.append(found)
    return out


def archive_inputs(paths: Iterable[str | os.PathLike[str]], *,
                   on_repeat: OnRepeat | None = None) -> list[str]:
    """(W)ARC files from ``paths``: files as given; a folder's archive files
    (:data:`ARCHIVE_SUFFIXES`, sorted, recursively); a collection folder
    (``collection.toml``) gives the WARCs its index holds (:func:`collection_warcs`).
    A file reached twice (given twice, under two names, or also inside a given folder)
    is listed once, where first reached (:func:`unique_files`, which calls
    ``on_repeat``).

    Raises:
        FileNotFoundError, CollectionError: see :func:`collection_warcs`.
    """
    out: list[str] = []
    for given in paths:
        p = os.fspath(given)
        if os.path.isdir(p) and os.path.exists(os.path.join(p, "collection.toml")):
            out += collection_warcs(p)
        else:
            out += walk_files([p], ARCHIVE_SUFFIXES)
    return unique_files(out, on_repeat=on_repeat)


__all__ = [
    "ARCHIVE_SUFFIXES",
    "archive_inputs",
    "collection_warcs",
    "unique_files",
    "walk_files",
]
