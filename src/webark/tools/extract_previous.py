"""What an output folder of ``webark extract`` already holds, and whether a new run may
write there.

Rule (what an archivist expects of a tree whose manifest describes it): a run writes
into a **new or empty** folder. A folder that holds an earlier extract is replaced only
when asked (``replace=True``, ``--replace``), and then only what that extract wrote is
touched:

* the earlier extract's files are the ones its manifest lists
  (``_webark_manifest.csv`` or ``.json``), plus, after an interrupted run (no manifest
  yet), the ones listed in ``_webark_pending.json``, which a run writes before it
  changes anything and removes once its manifest is written;
* such a file is overwritten when the new run writes the same path, and removed when it
  does not (folders left empty by a removal are removed too); files the new run writes
  are never placed over a file that no list names (the run stops before changing
  anything: :class:`OutputInUse`);
* files and folders no list names (notes added by hand, other tools' output) are left
  as they are, and never deleted.

A non-empty folder without a manifest or pending list is refused whatever the options:
nothing says which of its files are the extractor's.
"""

from __future__ import annotations

import csv
import json
import os
from collections.abc import Iterable
from dataclasses import dataclass, field

from webark.core.errors import WebarkError
from webark.tools.extract_paths import RESERVED_PREFIX

MANIFEST_NAME = RESERVED_PREFIX + "_manifest"
"""Stem of the manifest (``.csv`` or ``.json``) at the top of the output folder."""
PENDING_NAME = RESERVED_PREFIX + "_pending.json"
"""The files a run is writing (JSON ``{"files": [...]}``); removed when it finishes."""
MANIFEST_FILES = (f"{MANIFEST_NAME}.csv", f"{MANIFEST_NAME}.json")


class OutputInUse(WebarkError):
    """The output folder holds files this run must not replace: it is not empty and
    holds no earlier extract, or it holds one and replacing was not asked for, or a
    file to write is there without being listed by the earlier extract."""


Path = tuple[str, ...]


def split_listed(text: str, where: str) -> Path:
    """A manifest's ``file`` value (``host/dir/name``) as path components.

    Raises:
        OutputInUse: a component is empty, ``.``, ``..`` or holds a NUL or backslash
            (no extract writes such a path: the list was edited; nothing is trusted).
    """
    parts = tuple(text.split("/"))
    for p in parts:
        if p in ("", ".", "..") or "\0" in p or "\\" in p:
            raise OutputInUse(f"{where} lists {text!r}, which no extract writes: "
                              "refusing to delete or replace files by this list")
    return parts


def _read_listed(root: str, name: str) -> list[str]:
    """The ``file`` values of manifest or pending list ``name`` at ``root``."""
    path = os.path.join(root, name)
    try:  # written by the extractor as a regular file: a symlink there is not ours
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError as e:
        raise OutputInUse(f"{path} cannot be read as an extract's list "
                          f"({e.strerror or e}; a symlink?)") from None
    with os.fdopen(fd, "rb") as raw:
        data = raw.read()
    try:
        text = data.decode("utf-8")
        if name.endswith(".csv"):
            return [row["file"] for row in csv.DictReader(text.splitlines())]
        loaded = json.loads(text)
        rows = loaded["files"] if name == PENDING_NAME else loaded
        return [r if isinstance(r, str) else r["file"] for r in rows]
    except (UnicodeDecodeError, ValueError, KeyError, TypeError) as e:
        raise OutputInUse(f"{path} cannot be read as an extract's list ({e}): "
                          "refusing to delete or replace files by it") from None


@dataclass
class PreviousExtract:
    """What an output folder holds of an earlier extract.

    Attributes:
        root: the output folder (absolute).
        lists: the list files found (manifest names, :data:`PENDING_NAME`).
        files: paths (components) those lists name, relative to ``root``.
    """

    root: str
    lists: list[str] = field(default_factory=list)
    files: set[Path] = field(default_factory=set)

    @property
    def interrupted(self) -> bool:
        """True when the last run did not finish (its pending list is still there)."""
        return PENDING_NAME in self.lists


def previous_extract(outdir: str | os.PathLike[str]) -> PreviousExtract | None:
    """The earlier extract in ``outdir``; None when ``outdir`` is missing or empty.

    Raises:
        OutputInUse: ``outdir`` is not empty and holds no manifest or pending list, or
            a list cannot be read or names an unsafe path.
    """
    root = os.path.abspath(os.fspath(outdir))
    try:
        names = os.listdir(root)
    except FileNotFoundError:
        return None
    if not names:
        return None
    prev = PreviousExtract(root)
    for name in (*MANIFEST_FILES, PENDING_NAME):
        if name in names:
            prev.lists.append(name)
            where = os.path.join(root, name)
            prev.files.update(split_listed(f, where) for f in _read_listed(root, name))
    if not prev.lists:
        raise OutputInUse(
            f"output folder {root} is not empty and holds no extract (no "
            f"{' or '.join(MANIFEST_FILES)}): give a new or empty folder, so the manifest "
            "describes the whole tree"
        )
    return prev


def check_may_write(prev: PreviousExtract | None, planned: Iterable[Path], *,
                    replace: bool) -> None:
    """Raise unless this run may write ``planned`` into ``prev.root`` (module rule).

    Raises:
        OutputInUse: an earlier extract is there and ``replace`` is False, or a planned
            path exists without being listed by it (the message names the first ones).
    """
    if prev is None:
        return
    if not replace:
        what = ("an interrupted extract (" + PENDING_NAME + ")" if prev.interrupted
                else "an earlier extract (" + ", ".join(prev.lists) + ")")
        raise OutputInUse(
            f"output folder {prev.root} already holds {what}: give --replace to replace "
            "it (the files its list names are overwritten or removed, nothing else is "
            "touched), or a new or empty folder"
        )
    clashes = [p for p in planned if p not in prev.files
               and os.path.lexists(os.path.join(prev.root, *p))
               and not _only_listed_below(prev, p)]
    if clashes:
        shown = ", ".join("/".join(p) for p in clashes[:5])
        more = f" and {len(clashes) - 5} more" if len(clashes) > 5 else ""
        raise OutputInUse(
            f"output folder {prev.root}: {shown}{more} would be overwritten, but the "
            f"earlier extract's list ({', '.join(prev.lists)}) does not name "
            f"{'it' if len(clashes) == 1 else 'them'}: nothing was changed; move "
            "those files away or give a new or empty folder"
        )


def _only_listed_below(prev: PreviousExtract, folder: Path) -> bool:
    """True when ``folder`` is a real folder (not a symlink) holding only files the
    earlier extract listed (it is removed with them, so a file may take its place)."""
    top = os.path.join(prev.root, *folder)
    if os.path.islink(top) or not os.path.isdir(top):
        return False
    for d, dirs, names in os.walk(top):  # does not descend into symlinked folders
        rel = tuple(os.path.relpath(d, prev.root).split(os.sep))
        if any(os.path.islink(os.path.join(d, x)) for x in dirs):
            return False
        if any((*rel, n) not in prev.files for n in names):
            return False
    return True


def pending_json(files: Iterable[Path]) -> bytes:
    """The content of :data:`PENDING_NAME` for ``files`` (sorted)."""
    return json.dumps({"files": sorted("/".join(p) for p in files)},
                      ensure_ascii=False).encode("utf-8")


__all__ = [
    "MANIFEST_FILES",
    "MANIFEST_NAME",
    "PENDING_NAME",
    "OutputInUse",
    "PreviousExtract",
    "check_may_write",
    "pending_json",
    "previous_extract",
    "split_listed",
]
