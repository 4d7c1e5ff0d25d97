"""Fixtures of the resolution API tests: the sample captures in an in-memory source, failing
sources, and collection folders in each layout (sorted CDXJ, an index store: SQLite and
PostgreSQL, pywb's CDX files)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from cdx_api_support import FailingSource, MemorySource, sample_lines
from starlette.testclient import TestClient

from index_stores import StoreChoice
from webark.apps.cdx.api import create_app
from webark.apps.cdx.sources import StaticCollections
from webark.cdx.line import CdxLine
from webark.index.collection import Collection
from webark.index.sorted_file import write_sorted_cdxj


@pytest.fixture
def lines() -> list[CdxLine]:
    return sample_lines()


@pytest.fixture
def mem(lines: list[CdxLine]) -> MemorySource:
    return MemorySource(lines)


@pytest.fixture
def client(mem: MemorySource) -> Iterator[TestClient]:
    """The app over collections ``mem`` (MemorySource), ``down`` (fails at once) and
    ``flaky`` (fails after 3 lines)."""
    colls = StaticCollections(
        {"mem": mem, "down": FailingSource(), "flaky": FailingSource(mem, after=3)}
    )
    with TestClient(create_app(colls)) as c:
        yield c


@pytest.fixture
def colls_dir(
    tmp_path: Path, lines: list[CdxLine], corpus: Path, index_store: StoreChoice
) -> Path:
    """A collections directory with:

    * ``cdxj`` — pywb layout, the sample lines as one sorted CDXJ file;
    * ``split`` — a webark collection (cdxj store) with the lines in two files;
    * ``store`` — a webark collection with the lines in its index store (SQLite, and
      PostgreSQL: the ``index_store`` fixture);
    * ``pywb`` — pywb's CDX test folder (``corpus/pywb/cdx``: 11-field CDX and CDXJ),
      ``iana`` its ``iana.cdx`` alone, ``iana-dupes`` with ``dupes.cdx`` (the sources of
      pywb's ``test_cdxops.py`` doctests);
    * ``nothing`` — ``indexes/`` without index files (503);
    * ``dangling`` — ``indexes/index.cdxj`` a dangling symlink (503).
    """
    root = tmp_path / "colls"
    (root / "cdxj" / "indexes").mkdir(parents=True)
    write_sorted_cdxj(lines, root / "cdxj" / "indexes" / "index.cdxj")
    split = Collection.init(root / "split", store="cdxj")
    groups: dict[str, list[CdxLine]] = {}  # lines of one "urlkey timestamp" stay together
    for x in lines:
        groups.setdefault(f"{x.urlkey} {x.timestamp}", []).append(x)
    halves: tuple[list[CdxLine], list[CdxLine]] = ([], [])
    for i, k in enumerate(sorted(groups)):
        halves[i % 2].extend(groups[k])
    write_sorted_cdxj(halves[0], split.indexes_dir / "one.cdxj")
    write_sorted_cdxj(halves[1], split.indexes_dir / "two.cdxj")
    sq = index_store.init(root / "store")
    by_file: dict[str, list[CdxLine]] = {}
    for x in lines:
        by_file.setdefault(x.filename, []).append(x)
    with sq:
        for name, group in by_file.items():
            sq.store().add_file(name, group)
    (root / "pywb" / "indexes").mkdir(parents=True)
    for p in sorted((corpus / "pywb" / "cdx").iterdir()):
        if p.suffix in (".cdx", ".cdxj"):
            (root / "pywb" / "indexes" / p.name).write_bytes(p.read_bytes())
    for name, files in (("iana", ["iana.cdx"]), ("iana-dupes", ["iana.cdx", "dupes.cdx"])):
        (root / name / "indexes").mkdir(parents=True)
        for f in files:
            (root / name / "indexes" / f).write_bytes((corpus / "pywb" / "cdx" / f).read_bytes())
    (root / "nothing" / "indexes").mkdir(parents=True)
    (root / "dangling" / "indexes").mkdir(parents=True)
    os.symlink(tmp_path / "gone.cdxj", root / "dangling" / "indexes" / "index.cdxj")
    (root / "not-a-collection").mkdir()
    return root


@pytest.fixture
def dir_client(colls_dir: Path) -> Iterator[TestClient]:
    with TestClient(create_app(colls_dir)) as c:
        yield c
