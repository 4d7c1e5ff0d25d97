"""Collections: init/open, add (copy, link, in-place), remove, every store (SQLite,
PostgreSQL, per-WARC CDXJ), dropped-in indexes, locations, the CLI."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from index_stores import StoreChoice
from webark.cdx.line import CdxLine
from webark.cli.main import cli
from webark.index.collection import Collection, CollectionConfig, CollectionError
from webark.index.merge import MergedSource
from webark.index.sorted_file import SortedCdxFile
from webark.index.source import IndexUnavailable, KeyRange, key_range
from webark.index.sqlite_store import SqliteStore
from webark.index.zipnum import ZipNumIndex

Proj = Callable[[CdxLine], tuple[object, ...]]


def _all(coll: Collection, proj: Proj) -> list[tuple[object, ...]]:
    return sorted(proj(x) for x in coll.source().scan(KeyRange("", None)))


def test_init_layout_and_config(tmp_path: Path) -> None:
    coll = Collection.init(tmp_path / "archive" / "demo")
    root = tmp_path / "archive" / "demo"
    assert (root / "warcs").is_dir() and (root / "indexes").is_dir()
    assert (root / "indexes" / "index.sqlite3").is_file()
    cfg = CollectionConfig.from_toml((root / "collection.toml").read_text())
    assert (cfg.name, cfg.store, cfg.add_mode, cfg.compat) == (
        "demo",
        "sqlite",
        "copy",
        "cdxj-indexer",
    )
    assert Collection.open(root).config == coll.config
    with pytest.raises(CollectionError, match="already a collection"):
        Collection.init(root)
    with pytest.raises(CollectionError, match="not a collection"):
        Collection.open(tmp_path)
    (root / "collection.toml").write_text('[index]\nstore = "postgres"\n')
    with pytest.raises(CollectionError, match="store"):
        Collection.open(root)
    (root / "collection.toml").write_text("[collection\n")
    with pytest.raises(CollectionError):
        Collection.open(root)


def test_add_query_remove(
    tmp_path: Path, warcs: list[Path], proj: Proj, collection_lines: dict[str, list[CdxLine]],
    index_store: StoreChoice,
) -> None:
    """SQLite and PostgreSQL stores."""
    coll = index_store.init(tmp_path / "c")
    _add_query_remove(coll, tmp_path, warcs, index_store.kind, proj, collection_lines)


def test_add_query_remove_cdxj(
    tmp_path: Path, warcs: list[Path], proj: Proj, collection_lines: dict[str, list[CdxLine]]
) -> None:
    coll = Collection.init(tmp_path / "c", store="cdxj")
    _add_query_remove(coll, tmp_path, warcs, "cdxj", proj, collection_lines)


def _add_query_remove(
    coll: Collection, tmp_path: Path, warcs: list[Path], store: str, proj: Proj,
    collection_lines: dict[str, list[CdxLine]],
) -> None:
    seen: list[tuple[str, int, int]] = []
    res = list(coll.add(warcs, progress=lambda n, d, t: seen.append((n, d, t))))
    assert [r.status for r in res] == ["indexed"] * 10
    assert {r.name: r.lines for r in res} == {n: len(ls) for n, ls in collection_lines.items()}
    assert sum(r.lines for r in res) == 199
    iana = [s for s in seen if s[0] == "iana.warc.gz"]
    assert [d for _, d, _ in iana] == sorted(d for _, d, _ in iana)
    assert iana[-1] == ("iana.warc.gz", 786828, 786828)
    assert sorted(p.name for p in (tmp_path / "c" / "warcs").iterdir()) == [p.name for p in warcs]
    assert [f.name for f in coll.indexed()] == [p.name for p in warcs]

    want = sorted(proj(x) for ls in collection_lines.values() for x in ls)
    assert _all(coll, proj) == want
    assert any(t[0].startswith("org,httpbin)/post?__wb_method=post&") for t in want)
    got = list(coll.source().scan(key_range("http://iana.org/")))
    assert [(x.timestamp, x.filename) for x in got] == [
        ("20140126200624", "iana.warc.gz"),
        ("20140127171238", "dupes.warc.gz"),
        ("20140127171238", "dupes.warc.gz"),
    ]
    assert len(list(coll.source().by_digest("LNMEDYOENSOEI5VPADCKL3CB6N3GWXPR"))) == 5
    if store == "cdxj":
        assert (tmp_path / "c/indexes/per-warc/iana.warc.gz.cdxj.digests").is_file()

    # again: skipped, nothing doubled
    assert [r.status for r in coll.add(warcs[:2])] == ["skipped", "skipped"]
    assert _all(coll, proj) == want

    rm = coll.remove(["dupes.warc.gz", "nothere.warc.gz"])
    assert [(r.status, r.lines) for r in rm] == [("removed", 12), ("not-indexed", 0)]
    assert all(t[8] != "dupes.warc.gz" for t in _all(coll, proj))
    assert len(_all(coll, proj)) == 199 - 12
    assert (tmp_path / "c/warcs/dupes.warc.gz").exists()  # kept unless delete=True
    assert coll.unindexed_warcs() == ["dupes.warc.gz"]
    assert [r.status for r in coll.add([tmp_path / "c/warcs/dupes.warc.gz"])] == ["indexed"]
    assert coll.remove(["dupes.warc.gz"], delete=True)[0].deleted
    assert not (tmp_path / "c/warcs/dupes.warc.gz").exists()
    coll.close()


def test_link_and_in_place(tmp_path: Path, warcs: list[Path]) -> None:
    src = tmp_path / "src"
    src.mkdir()
    for p in warcs[:3]:
        shutil.copy(p, src / p.name)
    a, b, _ = sorted(src.iterdir())
    coll = Collection.init(tmp_path / "c")
    assert next(coll.add([a], "link")).status == "indexed"
    assert (tmp_path / "c/warcs" / a.name).is_symlink()
    assert os.readlink(tmp_path / "c/warcs" / a.name) == str(a.resolve())
    r = next(coll.add([b], "in-place"))
    assert r.status == "indexed" and r.location == str(b.resolve())
    assert not (tmp_path / "c/warcs" / b.name).exists()
    assert (tmp_path / "c/locations.loc").read_text() == f"{b.name}\t{b.resolve()}\n"
    res = coll.resolver()
    assert res.resolve(a.name) == str(tmp_path / "c/warcs" / a.name)
    assert res.resolve(b.name) == str(b.resolve())

    # moving a WARC: record the new place, no re-indexing
    moved = tmp_path / "elsewhere"
    moved.mkdir()
    shutil.move(b, moved / b.name)
    coll.locate(b.name, moved / b.name)
    assert coll.resolver().resolve(b.name) == str(moved / b.name)
    assert [f.name for f in coll.indexed()] == sorted([a.name, b.name])

    # removing an in-place WARC never deletes the original
    assert coll.remove([b.name], delete=True)[0].deleted is False
    assert (moved / b.name).exists()
    assert (tmp_path / "c/locations.loc").read_text() == ""
    coll.close()


def test_name_clash_and_junk_fail(
    tmp_path: Path, warcs: list[Path], index_store: StoreChoice
) -> None:
    coll = index_store.init(tmp_path / "c")
    assert next(coll.add([warcs[0]])).status == "indexed"
    other = tmp_path / "x" / warcs[0].name  # same name, other content
    other.parent.mkdir()
    shutil.copy(warcs[1], other)
    r = next(coll.add([other]))
    assert r.status == "failed" and "different WARC" in r.message
    junk = tmp_path / "junk.warc.gz"
    junk.write_bytes(b"hello world\n" * 100)
    r = next(coll.add([junk]))
    assert r.status == "failed" and "no record could be read" in r.message
    assert not (tmp_path / "c/warcs/junk.warc.gz").exists()
    assert [f.name for f in coll.indexed()] == [warcs[0].name]
    coll.close()


def test_no_index_is_unavailable(tmp_path: Path) -> None:
    """A collection without any index (cdxj store, nothing added yet) cannot answer a
    query: IndexUnavailable naming the collection (the resolution API answers 503),
    not an empty source."""
    coll = Collection.init(tmp_path / "empty-coll", store="cdxj")
    assert coll.sources() == []
    with pytest.raises(IndexUnavailable, match=r"'empty-coll'.*no index"):
        coll.source()
    pywb = Collection(tmp_path / "bare", CollectionConfig(name="bare", store="cdxj"))
    with pytest.raises(IndexUnavailable, match="'bare'"):
        pywb.source()


def test_dropped_in_indexes_are_merged(
    tmp_path: Path, corpus: Path, warcs: list[Path], proj: Proj
) -> None:
    """indexes/ may also hold sorted CDX files and ZipNum indexes: queries merge them
    with the SQLite store."""
    coll = Collection.init(tmp_path / "c")
    list(coll.add([w for w in warcs if w.name == "example.warc.gz"]))
    shutil.copy(corpus / "pywb/cdx/iana.cdx", tmp_path / "c/indexes/iana.cdx")
    for n in ("zipnum-sample.idx", "zipnum-sample.loc", "zipnum-sample.cdx.gz"):
        shutil.copy(corpus / "pywb/misc" / n, tmp_path / "c/indexes" / n)
    kinds = sorted(type(s).__name__ for s in coll.sources())
    assert kinds == ["SortedCdxFile", "SqliteStore", "ZipNumIndex"]
    src = coll.source()
    assert isinstance(src, MergedSource)
    rng = key_range("http://iana.org/")
    got = [(x.timestamp, x.filename) for x in src.scan(rng)]
    # iana.cdx: 1; ZipNum sample: 3 (iana + dupes); example.warc.gz: none for this URL
    assert got == [
        ("20140126200624", "iana.warc.gz"),
        ("20140126200624", "iana.warc.gz"),
        ("20140127171238", "dupes.warc.gz"),
        ("20140127171238", "dupes.warc.gz"),
    ]
    want = sorted(
        [
            proj(x)
            for s in (
                SortedCdxFile(tmp_path / "c/indexes/iana.cdx"),
                ZipNumIndex(tmp_path / "c/indexes/zipnum-sample.idx"),
                SqliteStore(tmp_path / "c/indexes/index.sqlite3"),
            )
            for x in s.scan(key_range("*.example.com"))
        ]
    )
    assert sorted(proj(x) for x in src.scan(key_range("*.example.com"))) == want
    assert len(want) > 3
    coll.close()


def test_cli(tmp_path: Path, warcs: list[Path]) -> None:
    run = CliRunner().invoke
    c = str(tmp_path / "arch" / "demo")
    r = run(cli, ["collection", "init", c])
    assert r.exit_code == 0, r.output
    r = run(cli, ["collection", "add", c, *map(str, warcs[:4]), "--no-progress"])
    assert r.exit_code == 0, r.output
    assert "indexed dupes.warc.gz: 12 lines" in r.output
    r = run(cli, ["collection", "add", c, str(warcs[0])])
    assert r.exit_code == 0 and "skipped" in r.output
    junk = tmp_path / "junk.warc"
    junk.write_text("not a warc\n")
    r = run(cli, ["collection", "add", c, str(junk)])
    assert r.exit_code == 1 and "failed" in r.output
    r = run(cli, ["collection", "ls", c])
    assert r.exit_code == 0
    assert r.output.splitlines()[0].split("\t")[:2] == ["dupes.warc.gz", "12"]
    r = run(cli, ["collection", "query", c, "http://example.com/", "--output", "cdx11"])
    assert r.exit_code == 0, r.output
    assert (
        "com,example)/ 20140127171200 http://example.com text/html 200 "
        "B2LTWWPUOYAH7UIPQ7ZUPQ4VMBSVC36A - - 1046 334 dupes.warc.gz"
    ) in r.output.splitlines()
    stamps = [ln.split(" ")[1] for ln in r.output.splitlines()]
    assert stamps == ["20130729195151", "20140127171200", "20140127171251", "20140216012908"]
    r = run(cli, ["collection", "query", c, "*.example.com", "--reverse", "--limit", "2"])
    assert r.exit_code == 0 and len(r.output.splitlines()) == 2
    r = run(cli, ["collection", "query", c, "http://example.com/", "--from", "20xx"])
    assert r.exit_code != 0
    r = run(cli, ["collection", "locate", c, "dupes.warc.gz"])
    assert r.output.strip() == str(Path(c) / "warcs" / "dupes.warc.gz")
    r = run(cli, ["collection", "remove", c, "dupes.warc.gz", "--delete"])
    assert r.exit_code == 0 and "removed dupes.warc.gz: 12 lines (file deleted)" in r.output
    r = run(cli, ["collection", "query", c, "http://example.com/", "--output", "cdx11"])
    assert "dupes.warc.gz" not in r.output
    r = run(cli, ["collection", "ls", str(tmp_path)])
    assert r.exit_code != 0 and "not a collection" in r.output
