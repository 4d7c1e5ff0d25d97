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

``collection.toml`` holds the configuration (:mod:`webark.index.collection_config`):
the index store (``sqlite``, ``cdxj`` or ``postgres``: a PostgreSQL schema shared by
several writers and replay servers, :mod:`webark.index.postgres_store`), the indexer
flavour, the search backend, the default add mode and extra WARC locations.

Adding WARCs (:meth:`Collection.add`): **copy** (default) copies the WARC into
``warcs/`` (to a temporary name, fsync, rename: a copy is complete or absent) so the
collection is self-contained; **link** makes ``warcs/NAME`` a symlink to the absolute
path (no copy, but moving the original breaks it); **in-place** leaves the file where it
is and records its absolute path in ``locations.loc``. Then the WARC is indexed; with
the SQLite and PostgreSQL stores its lines and its "indexed" mark are one
transaction, with the cdxj
store the per-WARC index is renamed into place after its side index is written, so
after ``kill -9`` every WARC is either fully indexed or not at all. A WARC copied but not
indexed (killed in between) is indexed by the next ``add`` of the same file.

File names are the WARCs' identity in the index (CDX ``filename``): adding a second,
different WARC with a name already indexed is refused.

Removing (:meth:`Collection.remove`) drops the WARC's index lines (one transaction) and
its ``locations.loc`` entry; the WARC file itself is left alone unless ``delete=True``,
which deletes only what the collection owns (the copy or symlink in ``warcs/``), never an
in-place original.

A WARC that a crawl was indexing while writing it (:meth:`IndexStore.append_to
<webark.index.store.IndexStore.append_to>`) and that is not marked complete (the crawl
died) is completed by ``add``: its lines after the indexed mark are added and it is
marked complete, in one transaction.

Concurrency: adds and removes from several processes are serialized by SQLite's
lock (PostgreSQL: run side by side, each WARC its own transaction); queries run
concurrently with them (WAL; PostgreSQL's MVCC). Two processes adding the *same* WARC
at once: one indexes it, the other reports it ``skipped``. With PostgreSQL, WARC
locations (``--in-place`` adds, ``collection locate``) are kept in the database, so
every machine sharing the index sees them; ``locations.loc`` is still read.
"""

from __future__ import annotations

import filecmp
import os
import shutil
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal, get_args

from webark.cdx.indexer import FileIndex, IndexOptions
from webark.cdx.line import CdxLine
from webark.index.collection_config import (
    CONFIG_NAME,
    LAYOUT_VERSION,
    AddMode,
    CollectionConfig,
    CollectionError,
    Compat,
    StoreKind,
)
from webark.index.locations import LocationResolver, Locator, PathIndex, PrefixLocator
from webark.index.merge import MergedSource
from webark.index.postgres_store import PostgresStore
from webark.index.sorted_file import (
    DIGEST_SUFFIX,
    SortedCdxFile,
    build_digest_index,
    fsync_dir,
    is_sorted_index,
    write_sorted_cdxj,
)
from webark.index.source import IndexSource, IndexUnavailable
from webark.index.sqlite_store import SqliteStore
from webark.index.store import AlreadyIndexed, IndexedFile, IndexStore
from webark.index.zipnum import ZipNumIndex

__all__ = [
    "CONFIG_NAME", "LAYOUT_VERSION", "AddMode", "AddResult", "Collection", "CollectionConfig",
    "CollectionError", "Compat", "RemoveResult", "StoreKind",
]  # fmt: skip
#: Progress callback: ``(warc name, bytes indexed so far, WARC size in bytes)``.
Progress = Callable[[str, int, int], None]


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
        self._store: IndexStore | None = None

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
        url: str = "",
        schema: str = "",
    ) -> Collection:
        """Create the folder layout and ``collection.toml`` (name = the folder's name;
        the other arguments are its keys, see the module docstring).

        Args:
            store, compat, add_mode: see :mod:`webark.index.collection_config`.
            url, schema: the PostgreSQL database and schema of ``store="postgres"``
                (schema default: ``webark_{name}``). The schema is created if missing
                and joined if it already holds this collection (a second machine).

        Raises:
            CollectionError: a collection already exists there, ``root`` is a file, or
                a bad PostgreSQL URL (a password in it) or schema name.
            IndexUnavailable: the PostgreSQL server cannot be used (nothing is written).
        """
        root = Path(root)
        if (root / CONFIG_NAME).exists():
            raise CollectionError(f"{root}: already a collection")
        if root.exists() and not root.is_dir():
            raise CollectionError(f"{root}: not a folder")
        now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        cfg = CollectionConfig(name=root.resolve().name, created=now, store=store,
                               compat=compat, post_append=post_append, add_mode=add_mode,
                               url=url, schema=schema)  # fmt: skip
        cfg.check()
        coll = cls(root, cfg)
        if store == "postgres":
            coll.store()  # the schema exists before the collection says it does
        for d in (coll.warcs_dir, coll.indexes_dir):
            d.mkdir(parents=True, exist_ok=True)
        if store == "cdxj":
            coll.per_warc_dir.mkdir(exist_ok=True)
        tmp = root / (CONFIG_NAME + ".tmp")
        tmp.write_text(cfg.to_toml(), encoding="utf-8")
        os.replace(tmp, root / CONFIG_NAME)
        if store != "cdxj":
            coll.store()  # creates the SQLite database
            coll.close()
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

    @property
    def has_store(self) -> bool:
        """True when the index is a store (SQLite or PostgreSQL), not per-WARC files."""
        return self.config.store != "cdxj"

    def store(self) -> IndexStore:
        """The collection's index store, read-write, opened on first use: PostgreSQL
        (the configured schema, created if missing) or SQLite (``indexes/index.sqlite3``,
        created if missing; also for a cdxj collection, whose dropped-in SQLite index
        is read).

        Raises:
            IndexUnavailable: the store cannot be opened.
        """
        if self._store is None:
            cfg = self.config
            if cfg.store == "postgres":
                self._store = PostgresStore(cfg.url, cfg.pg_schema, collection=cfg.name)
            else:
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
        if self.has_store:
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
        if self.has_store:
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
        """Every index of the collection: the PostgreSQL store, or the SQLite store (if
        it exists), per-WARC and other sorted CDX(J) files, ZipNum indexes (``*.idx``).
        ``recheck``: seconds between looks at a sorted file for a replacement (see
        :class:`~webark.index.sorted_file.SortedLines`; 0 = before every query)."""
        out: list[IndexSource] = []
        if self.config.store == "postgres" or self.sqlite_path.exists():
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
        """Where the WARCs are: the PostgreSQL store's locations (a PostgreSQL
        collection), ``locations.loc``, then ``warcs/``, then the configured ``[warcs]
        locations`` (relative ones are relative to the collection folder)."""
        locs: list[Locator] = [PathIndex(self.locations_path), PrefixLocator(self.warcs_dir)]
        pg = self._pg_store()
        if pg is not None:
            locs.insert(0, pg)
        for p in self.config.locations:
            if "://" not in p and not os.path.isabs(p):
                p = str(self.root / p)
            locs.append(PrefixLocator(p))
        return LocationResolver(locs)

    def locate(self, name: str, location: str | os.PathLike[str]) -> None:
        """Record that WARC ``name`` is now at ``location`` (path or URL): in the
        database of a PostgreSQL collection (seen by every server sharing it), else in
        ``locations.loc``; no re-indexing."""
        loc = os.fspath(location)
        if "://" not in loc:
            loc = os.path.abspath(loc)
        pg = self._pg_store()
        if pg is not None:
            pg.set_locations(name, [loc])
        else:
            PathIndex(self.locations_path).update({name: [loc]})

    def _pg_store(self) -> PostgresStore | None:
        if self.config.store != "postgres":
            return None
        store = self.store()
        assert isinstance(store, PostgresStore)
        return store

    def _recorded_location(self, name: str) -> bool:
        """True when a location of ``name`` is recorded (database or ``locations.loc``)."""
        pg = self._pg_store()
        if pg is not None and pg.locate(name):
            return True
        return any(n == name for n, _ in PathIndex(self.locations_path).entries())

    def _forget_location(self, name: str) -> None:
        pg = self._pg_store()
        if pg is not None:
            pg.set_locations(name, [])
        pi = PathIndex(self.locations_path)
        if any(n == name for n, _ in pi.entries()):
            pi.update(remove=[name])

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
        resume = have is not None and not have.complete and not reindex
        if have is not None and not reindex and not resume:
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

        if self.has_store:
            try:
                n = self._store_add(name, lines, size, mtime, reindex, resume, on_line)
            except AlreadyIndexed:  # another process indexed it meanwhile
                done = self._is_indexed(name)
                return AddResult(name, "skipped", done.lines if done else 0,
                                 message="already indexed (by another process)")  # fmt: skip
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

    def _store_add(
        self, name: str, lines: Iterable[CdxLine], size: int, mtime: int, reindex: bool,
        resume: bool, on_line: Callable[[CdxLine], None],
    ) -> int:  # fmt: skip
        """Index ``lines`` into the store: the whole WARC in one transaction, or (a WARC
        a writer was appending to when it died) the lines after its mark and the
        "complete" mark, in one transaction. The number of lines of the WARC."""
        store = self.store()
        if not resume:
            return store.add_file(name, lines, size=size, mtime_ns=mtime, replace=reindex,
                                  on_line=on_line)  # fmt: skip

        def tap() -> Iterator[CdxLine]:
            for line in lines:
                yield line
                on_line(line)

        store.append_to(name).finish(tap(), size=size, mtime_ns=mtime)
        done = store.get_file(name)
        return done.lines if done is not None else 0

    def _place(self, src: Path, mode: AddMode) -> tuple[str, bool]:
        """Put the WARC where the collection reads it; return that path and whether this
        call created it (a copy, a symlink or a ``locations.loc`` entry)."""
        name = src.name
        if mode == "in-place":
            loc = str(src.resolve())
            known = self._recorded_location(name)
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
            tmp = self.warcs_dir / f".{name}.{os.getpid()}.part"  # two adders: two copies
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
            self._forget_location(name)
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
            self._forget_location(name)
            deleted = False
            dest = self.warcs_dir / name
            if delete and os.path.lexists(dest):
                dest.unlink()
                deleted = True
            out.append(RemoveResult(name, "removed" if known else "not-indexed", n, deleted))
        return out

    def _unindex(self, name: str) -> tuple[bool, int]:
        """Drop the index lines of ``name``: (was it indexed, lines dropped)."""
        if self.has_store:
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
