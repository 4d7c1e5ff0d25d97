"""A collection: a folder of WARCs, their index and a small configuration file.

Layout of ``DIR/NAME`` (made by :meth:`Collection.init`)::

    NAME/
      collection.toml          configuration (below)
      warcs/                   WARCs added by copy (default) or as symlinks (--link)
      indexes/
        index.sqlite3          the SQLite store (store = "sqlite", the default),
                               with -wal/-shm beside it while in use
        per-warc/NAME.cdxj     one sorted CDXJ per WARC (store = "cdxj"), each with a
        per-warc/NAME.cdxj.digests   digest side index (see sorted_file)
        *.cdx, *.cdxj          any other sorted CDX/CDXJ files you drop in (read only)
        *.idx + *.loc          ZipNum indexes you drop in (read only)
      locations.loc            WARC path index (pywb format, filename<TAB>location…):
                               WARCs added --in-place, and WARCs moved since (see
                               ``webark collection locate``)

Every index under ``indexes/`` is queried, merged into one sorted result
(:meth:`Collection.source`). WARCs are found by :meth:`Collection.resolver`:
``locations.loc`` first, then ``warcs/``, then the ``[warcs] locations`` prefixes.

``collection.toml`` (written by ``init``; TOML, read with :mod:`tomllib`)::

    [collection]
    format = 1                # version of this layout
    name = "NAME"
    created = "2026-11-30T03:00:00Z"

    [index]
    store = "sqlite"          # "sqlite" or "cdxj"
    compat = "cdxj-indexer"   # indexer flavour (webark.cdx.indexer): "cdxj-indexer" | "pywb"
    post_append = true        # POST/PUT captures keyed by method and body (?__wb_method=post&…,
                              # as pywb's wb-manager does): replay finds a POST by its body

    [warcs]
    add = "copy"              # default of `collection add`: "copy" | "link" | "in-place"
    locations = []            # more folders or URL prefixes where WARCs may be found

Missing keys take these defaults; an unknown value is an error (:class:`CollectionError`).

Adding WARCs (:meth:`Collection.add`): **copy** (default) copies the WARC into
``warcs/`` (to a temporary name, fsync, rename: a copy is complete or absent) so the
collection is self-contained; **link** makes ``warcs/NAME`` a symlink to the absolute
path (no copy, but moving the original breaks it); **in-place** leaves the file where it
is and records its absolute path in ``locations.loc``. Then the WARC is indexed; with
the SQLite store its lines and its "indexed" mark are one transaction, with the cdxj
store the per-WARC index is renamed into place after its side index is written, so
after ``kill -9`` every WARC is either fully indexed or not at all. A WARC copied but not
indexed (killed in between) is indexed by the next ``add`` of the same file.

File names are the WARCs' identity in the index (CDX ``filename``): adding a second,
different WARC with a name already indexed is refused.

Removing (:meth:`Collection.remove`) drops the WARC's index lines (one transaction) and
its ``locations.loc`` entry; the WARC file itself is left alone unless ``delete=True``,
which deletes only what the collection owns (the copy or symlink in ``warcs/``), never an
in-place original.

Concurrency: adds and removes from several processes are serialized by SQLite's
lock; queries run concurrently with them (WAL). Two processes adding the *same* WARC at
once are not supported.
"""

from __future__ import annotations

import filecmp
import os
import shutil
import tomllib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal, get_args

from webark.cdx.indexer import FileIndex, IndexOptions
from webark.cdx.line import CdxLine
from webark.core.errors import StorageError
from webark.index.locations import LocationResolver, Locator, PathIndex, PrefixLocator
from webark.index.merge import MergedSource
from webark.index.sorted_file import (
    DIGEST_SUFFIX,
    SortedCdxFile,
    build_digest_index,
    fsync_dir,
    is_sorted_index,
    write_sorted_cdxj,
)
from webark.index.source import IndexSource, IndexUnavailable
from webark.index.sqlite_store import IndexedFile, SqliteStore
from webark.index.zipnum import ZipNumIndex

AddMode = Literal["copy", "link", "in-place"]
StoreKind = Literal["sqlite", "cdxj"]
Compat = Literal["cdxj-indexer", "pywb"]

CONFIG_NAME = "collection.toml"
LAYOUT_VERSION = 1
#: Progress callback: ``(warc name, bytes indexed so far, WARC size in bytes)``.
Progress = Callable[[str, int, int], None]


class CollectionError(StorageError):
    """A collection operation that cannot be done (no collection there, bad
    configuration, a name clash between two different WARCs, …)."""


@dataclass
class CollectionConfig:
    """The contents of ``collection.toml`` (see the module docstring)."""

    name: str
    created: str = ""
    store: StoreKind = "sqlite"
    compat: Compat = "cdxj-indexer"
    post_append: bool = True
    add_mode: AddMode = "copy"
    locations: list[str] = field(default_factory=list)

    def to_toml(self) -> str:
        """The file text (hand-written TOML: the standard library reads TOML only)."""

        def s(v: str) -> str:
            out = v.replace("\\", "\\\\").replace('"', '\\"')
            for c in "\b\t\n\f\r":
                out = out.replace(c, f"\\u{ord(c):04x}")
            return f'"{out}"'

        locs = ", ".join(s(x) for x in self.locations)
        return (
            "# webark collection configuration (TOML); see `webark collection --help`.\n"
            "[collection]\n"
            f"format = {LAYOUT_VERSION}\n"
            f"name = {s(self.name)}\n"
            f"created = {s(self.created)}\n"
            "\n[index]\n"
            '# "sqlite": indexes/index.sqlite3; "cdxj": indexes/per-warc/NAME.cdxj\n'
            f"store = {s(self.store)}\n"
            '# indexer flavour: "cdxj-indexer" or "pywb"\n'
            f"compat = {s(self.compat)}\n"
            "# POST/PUT captures keyed by method and body (?__wb_method=post&...), so that\n"
            "# replay finds them for the same request (WARCs added before a change keep\n"
            "# their keys: re-add them with --reindex)\n"
            f"post_append = {'true' if self.post_append else 'false'}\n"
            "\n[warcs]\n"
            '# default of `webark collection add`: "copy", "link" or "in-place"\n'
            f"add = {s(self.add_mode)}\n"
            "# more folders or URL prefixes where WARCs are looked for, after\n"
            "# locations.loc and warcs/\n"
            f"locations = [{locs}]\n"
        )

    @classmethod
    def from_toml(cls, text: str, where: str = CONFIG_NAME) -> CollectionConfig:
        """Parse and check ``collection.toml``.

        Raises:
            CollectionError: not TOML, a newer layout, or a value out of its choices.
        """
        try:
            d = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise CollectionError(f"{where}: {exc}") from exc
        coll, idx, warcs = d.get("collection", {}), d.get("index", {}), d.get("warcs", {})
        fmt = coll.get("format", LAYOUT_VERSION)
        if fmt != LAYOUT_VERSION:
            raise CollectionError(f"{where}: collection format {fmt} is not supported")

        def choice(section: dict[str, Any], key: str, default: str, allowed: object) -> Any:
            v = section.get(key, default)
            opts = get_args(allowed)
            if v not in opts:
                raise CollectionError(f"{where}: {key} = {v!r}; expected one of {opts}")
            return v

        post_append = idx.get("post_append", True)
        if not isinstance(post_append, bool):
            raise CollectionError(f"{where}: post_append = {post_append!r}; expected true or false")
        locs = warcs.get("locations", [])
        if not isinstance(locs, list) or not all(isinstance(x, str) for x in locs):
            raise CollectionError(f"{where}: [warcs] locations must be a list of strings")
        return cls(
            name=str(coll.get("name", "")),
            created=str(coll.get("created", "")),
            store=choice(idx, "store", "sqlite", StoreKind),
            compat=choice(idx, "compat", "cdxj-indexer", Compat),
            post_append=post_append,
            add_mode=choice(warcs, "add", "copy", AddMode),
            locations=list(locs),
        )


@dataclass(frozen=True, slots=True)
class AddResult:
    """Outcome of adding one WARC: ``status`` is ``indexed``, ``skipped`` (already
    indexed) or ``failed`` (``message`` says why; the collection is unchanged for that
    WARC, except a completed copy in ``warcs/``); ``lines`` indexed; ``location`` where
    the collection will read it; ``problems`` the reader's error/warning count, of
    which ``errors`` are errors (a damaged WARC: truncated, a broken record),
    ``first_error`` the first of them as text (``file @ offset: …``)."""

    name: str
    status: Literal["indexed", "skipped", "failed"]
    lines: int = 0
    location: str = ""
    message: str = ""
    problems: int = 0
    errors: int = 0
    first_error: str = ""


@dataclass(frozen=True, slots=True)
class RemoveResult:
    """Outcome of removing one WARC: ``removed`` (``lines`` dropped, ``deleted`` if its
    file in ``warcs/`` was deleted too) or ``not-indexed``."""

    name: str
    status: Literal["removed", "not-indexed"]
    lines: int = 0
    deleted: bool = False


class Collection:
    """An existing collection folder; make one with :meth:`init`, open one with
    :meth:`open`.

    Attributes:
        root: the collection folder. config: its :class:`CollectionConfig`.
        warcs_dir, indexes_dir, per_warc_dir: ``warcs/``, ``indexes/``,
            ``indexes/per-warc/``. sqlite_path: ``indexes/index.sqlite3``.
        locations_path: ``locations.loc``.
    """

    def __init__(self, root: str | os.PathLike[str], config: CollectionConfig):
        self.root = Path(root)
        self.config = config
        self.warcs_dir = self.root / "warcs"
        self.indexes_dir = self.root / "indexes"
        self.per_warc_dir = self.indexes_dir / "per-warc"
        self.sqlite_path = self.indexes_dir / "index.sqlite3"
        self.locations_path = self.root / "locations.loc"
        self._store: SqliteStore | None = None

    def __repr__(self) -> str:
        return f"Collection({str(self.root)!r})"

    # -- lifecycle ---------------------------------------------------------------------

    @classmethod
    def init(
        cls,
        root: str | os.PathLike[str],
        *,
        store: StoreKind = "sqlite",
        compat: Compat = "cdxj-indexer",
        add_mode: AddMode = "copy",
        post_append: bool = True,
    ) -> Collection:
        """Create the folder layout and ``collection.toml`` (name = the folder's name;
        the other arguments are its keys, see the module docstring).

        Raises:
            CollectionError: a collection already exists there, or ``root`` is a file.
        """
        root = Path(root)
        if (root / CONFIG_NAME).exists():
            raise CollectionError(f"{root}: already a collection")
        if root.exists() and not root.is_dir():
            raise CollectionError(f"{root}: not a folder")
        now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        cfg = CollectionConfig(
            name=root.resolve().name, created=now, store=store, compat=compat,
            post_append=post_append, add_mode=add_mode,
        )  # fmt: skip
        coll = cls(root, cfg)
        for d in (coll.warcs_dir, coll.indexes_dir):
            d.mkdir(parents=True, exist_ok=True)
        if store == "cdxj":
            coll.per_warc_dir.mkdir(exist_ok=True)
        tmp = root / (CONFIG_NAME + ".tmp")
        tmp.write_text(cfg.to_toml(), encoding="utf-8")
        os.replace(tmp, root / CONFIG_NAME)
        if store == "sqlite":
            coll.store().close()
            coll._store = None
        return coll

    @classmethod
    def open(cls, root: str | os.PathLike[str]) -> Collection:
        """Open the collection at ``root``.

        Raises:
            CollectionError: no ``collection.toml`` there, or a bad one.
        """
        root = Path(root)
        cfg_path = root / CONFIG_NAME
        try:
            text = cfg_path.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise CollectionError(
                f"{root}: not a collection (no {CONFIG_NAME}); "
                "create one with `webark collection init`"
            ) from None
        return cls(root, CollectionConfig.from_toml(text, str(cfg_path)))

    def store(self) -> SqliteStore:
        """The collection's SQLite store (read-write; created if missing)."""
        if self._store is None:
            self._store = SqliteStore(self.sqlite_path)
        return self._store

    def close(self) -> None:
        if self._store is not None:
            self._store.close()
            self._store = None

    def __enter__(self) -> Collection:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- what is there -----------------------------------------------------------------

    def indexed(self) -> list[IndexedFile]:
        """The WARCs indexed by this collection's own store, by name."""
        if self.config.store == "sqlite":
            return self.store().files()
        out = []
        for p in sorted(self.per_warc_dir.glob("*.cdxj")):
            st = p.stat()
            with open(p, "rb") as f:
                n = sum(1 for _ in f)
            stamp = datetime.fromtimestamp(st.st_mtime, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
            out.append(IndexedFile(p.name[: -len(".cdxj")], None, None, n, stamp))
        return out

    def _is_indexed(self, name: str) -> IndexedFile | None:
        if self.config.store == "sqlite":
            return self.store().get_file(name)
        p = self.per_warc_dir / (name + ".cdxj")
        return IndexedFile(name, None, None, -1, "") if p.exists() else None

    def unindexed_warcs(self) -> list[str]:
        """Files in ``warcs/`` that are not indexed (e.g. a copy whose indexing was
        interrupted)."""
        done = {f.name for f in self.indexed()}
        return sorted(
            p.name
            for p in self.warcs_dir.iterdir()
            if not p.name.startswith(".") and p.name not in done
        )

    # -- queries -----------------------------------------------------------------------

    def sources(self, *, recheck: float = 0.0) -> list[IndexSource]:
        """Every index of the collection: the SQLite store (if it exists), per-WARC and
        other sorted CDX(J) files, ZipNum indexes (``*.idx``). ``recheck``: seconds
        between looks at a sorted file for a replacement (see
        :class:`~webark.index.sorted_file.SortedLines`; 0 = before every query)."""
        out: list[IndexSource] = []
        if self.sqlite_path.exists():
            out.append(self.store())
        for d in (self.per_warc_dir, self.indexes_dir):
            if d.is_dir():
                out += [
                    SortedCdxFile(p, recheck=recheck)
                    for p in sorted(d.iterdir())
                    if is_sorted_index(p)
                ]
        out += [ZipNumIndex(p) for p in sorted(self.indexes_dir.glob("*.idx"))]
        return out

    def source(self, *, recheck: float = 0.0) -> IndexSource:
        """One :class:`IndexSource` over :meth:`sources` (merged, sorted, streaming).

        Raises:
            IndexUnavailable: the collection has no index at all (no SQLite store, no
                sorted or ZipNum index under ``indexes/``): a query could only answer
                "nothing", which the resolution API must not (it answers 503).
        """
        srcs = self.sources(recheck=recheck)
        if not srcs:
            name = self.config.name or self.root.name
            raise IndexUnavailable(f"collection {name!r}: no index (nothing in {self.indexes_dir})")
        return srcs[0] if len(srcs) == 1 else MergedSource(srcs)

    def resolver(self) -> LocationResolver:
        """Where the WARCs are: ``locations.loc``, then ``warcs/``, then the configured
        ``[warcs] locations`` (relative ones are relative to the collection folder)."""
        locs: list[Locator] = [PathIndex(self.locations_path), PrefixLocator(self.warcs_dir)]
        for p in self.config.locations:
            if "://" not in p and not os.path.isabs(p):
                p = str(self.root / p)
            locs.append(PrefixLocator(p))
        return LocationResolver(locs)

    def locate(self, name: str, location: str | os.PathLike[str]) -> None:
        """Record that WARC ``name`` is now at ``location`` (path or URL) in
        ``locations.loc``; no re-indexing."""
        loc = os.fspath(location)
        if "://" not in loc:
            loc = os.path.abspath(loc)
        PathIndex(self.locations_path).update({name: [loc]})

    # -- add / remove ------------------------------------------------------------------

    def add(
        self,
        paths: Iterable[str | os.PathLike[str]],
        mode: AddMode | None = None,
        *,
        reindex: bool = False,
        progress: Progress | None = None,
        index: Callable[[str, str], Iterable[CdxLine]] | None = None,
    ) -> Iterator[AddResult]:
        """Add and index WARCs, one at a time; yields one :class:`AddResult` per path
        as soon as that WARC is done (so a caller can report progress).

        Args:
            paths: (W)ARC files (any format :mod:`webark.warc.reader` reads).
            mode: ``copy``, ``link`` or ``in-place`` (default: the configuration's).
            reindex: index again a WARC that is already indexed (same name).
            progress: called while indexing with (name, bytes done, bytes total).
            index: ``(path, name) → CdxLine iterable`` to use instead of
                :class:`webark.cdx.indexer.FileIndex` with the configured ``compat``
                (tests, other indexers).

        A WARC that fails (unreadable, name clash) gives a ``failed`` result and the
        next one is added; nothing of the failed WARC is in the index.
        """
        mode = mode or self.config.add_mode
        if mode not in get_args(AddMode):
            raise CollectionError(f"unknown add mode {mode!r}")
        for p in paths:
            try:
                yield self._add_one(Path(p), mode, reindex, progress, index)
            except (CollectionError, OSError, ValueError) as exc:
                yield AddResult(Path(p).name, "failed", message=str(exc))

    def _add_one(
        self,
        src: Path,
        mode: AddMode,
        reindex: bool,
        progress: Progress | None,
        index: Callable[[str, str], Iterable[CdxLine]] | None,
    ) -> AddResult:
        if not src.is_file():
            raise CollectionError(f"{src}: not a file")
        name = src.name
        if any(c in name for c in "\t\r\n"):
            raise CollectionError(f"{src}: tab or newline in the file name")
        size = src.stat().st_size
        have = self._is_indexed(name)
        if have is not None and not reindex:
            if have.size is not None and have.size != size:
                raise CollectionError(
                    f"{name}: a different WARC with this name is already indexed "
                    f"({have.size} bytes, this one {size})"
                )
            return AddResult(name, "skipped", have.lines, message="already indexed")

        location, created = self._place(src, mode)
        mtime = os.stat(location).st_mtime_ns
        fi: FileIndex | None = None
        if index is not None:
            lines: Iterable[CdxLine] = index(location, name)
        else:
            fi = FileIndex(location, IndexOptions(compat=self.config.compat,
                                                 post_append=self.config.post_append),
                           filename=name)  # fmt: skip
            lines = fi

        def on_line(line: CdxLine) -> None:
            if progress is not None and fi is not None and fi.last_offset >= 0:
                progress(name, fi.last_offset, size)

        if self.config.store == "sqlite":
            n = self.store().add_file(
                name, lines, size=size, mtime_ns=mtime, replace=reindex, on_line=on_line
            )
        else:
            n = self._write_per_warc(name, lines, on_line)
        problems = [] if fi is None else [p for p in fi.problems if p.severity != "forgiven"]
        if n == 0 and any(p.severity == "error" for p in problems):
            # nothing readable: not a (W)ARC file; undo what this call did
            self._unindex(name)
            if created:
                self._unplace(name, mode)
            raise CollectionError(f"{name}: no record could be read ({problems[0]})")
        if progress is not None:
            progress(name, size, size)
        errors = [p for p in problems if p.severity == "error"]
        return AddResult(name, "indexed", n, location, problems=len(problems),
                         errors=len(errors), first_error=str(errors[0]) if errors else "")

    def _place(self, src: Path, mode: AddMode) -> tuple[str, bool]:
        """Put the WARC where the collection reads it; return that path and whether this
        call created it (a copy, a symlink or a ``locations.loc`` entry)."""
        name = src.name
        if mode == "in-place":
            loc = str(src.resolve())
            known = PathIndex(self.locations_path).locate(name)
            self.locate(name, loc)
            return loc, not known
        self.warcs_dir.mkdir(parents=True, exist_ok=True)
        dest = self.warcs_dir / name
        if os.path.lexists(dest):
            if dest.resolve() == src.resolve():
                return str(dest), False  # already there (or already linked to it)
            if mode == "copy" and dest.is_file() and filecmp.cmp(src, dest, shallow=False):
                return str(dest), False  # an earlier copy, not indexed yet
            raise CollectionError(f"{name}: warcs/ already holds a different file of that name")
        if mode == "link":
            os.symlink(src.resolve(), dest)
        else:
            tmp = self.warcs_dir / f".{name}.part"
            with open(src, "rb") as fi, open(tmp, "wb") as fo:
                shutil.copyfileobj(fi, fo, 1 << 20)
                fo.flush()
                os.fsync(fo.fileno())
            shutil.copystat(src, tmp)
            os.replace(tmp, dest)
        fsync_dir(self.warcs_dir)
        return str(dest), True

    def _unplace(self, name: str, mode: AddMode) -> None:
        if mode == "in-place":
            PathIndex(self.locations_path).update(remove=[name])
        else:
            (self.warcs_dir / name).unlink(missing_ok=True)

    def _write_per_warc(
        self, name: str, lines: Iterable[CdxLine], on_line: Callable[[CdxLine], None]
    ) -> int:
        self.per_warc_dir.mkdir(parents=True, exist_ok=True)
        final = self.per_warc_dir / (name + ".cdxj")
        tmp = self.per_warc_dir / f".{name}.cdxj.part"

        def tap() -> Iterator[CdxLine]:
            for line in lines:
                yield line
                on_line(line)

        try:
            n = write_sorted_cdxj(tap(), tmp)
            build_digest_index(tmp, str(final) + DIGEST_SUFFIX)
            os.replace(tmp, final)  # the commit point
        finally:
            if tmp.exists():
                tmp.unlink()
        fsync_dir(self.per_warc_dir)
        return n

    def remove(self, names: Iterable[str], *, delete: bool = False) -> list[RemoveResult]:
        """Un-index WARCs (by file name; a path is reduced to its name).

        Args:
            names: WARC file names.
            delete: also delete the collection's own copy or symlink in ``warcs/``
                (never a file outside the collection).
        """
        out = []
        for raw in names:
            name = os.path.basename(os.fspath(raw))
            known, n = self._unindex(name)
            pi = PathIndex(self.locations_path)
            if any(n_ == name for n_, _ in pi.entries()):
                pi.update(remove=[name])
            deleted = False
            dest = self.warcs_dir / name
            if delete and os.path.lexists(dest):
                dest.unlink()
                deleted = True
            out.append(RemoveResult(name, "removed" if known else "not-indexed", n, deleted))
        return out

    def _unindex(self, name: str) -> tuple[bool, int]:
        """Drop the index lines of ``name``: (was it indexed, lines dropped)."""
        if self.config.store == "sqlite":
            known = self.store().get_file(name) is not None
            return known, self.store().remove_file(name)
        p = self.per_warc_dir / (name + ".cdxj")
        known = p.exists()
        n = 0
        if known:
            with open(p, "rb") as f:
                n = sum(1 for _ in f)
            p.unlink()
            fsync_dir(self.per_warc_dir)
        side = self.per_warc_dir / (name + ".cdxj" + DIGEST_SUFFIX)
        side.unlink(missing_ok=True)
        return known, n
