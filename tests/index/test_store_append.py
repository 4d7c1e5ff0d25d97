"""Appending the lines of a WARC while it is written (``IndexStore.append_to``), on both
stores: batches visible once committed, a batch sent twice indexed once, a writer
killed with ``-9`` leaves lines that all point at records on disk, and ``collection add``
of the finished WARC completes it. Plus what only PostgreSQL has: locations in the
database, a password never in collection.toml, psycopg missing."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from live_writer import run_live_writer

from index_stores import StoreChoice
from webark.cdx.indexer import FileIndex, index_file
from webark.cdx.line import CdxLine
from webark.index.collection import Collection, CollectionConfig, CollectionError
from webark.index.record_loader import RecordLoader
from webark.index.source import KeyRange
from webark.index.store import AlreadyIndexed
from webark.warc.repair import repair_open_file


def _key(x: CdxLine) -> tuple[object, ...]:
    return (x.urlkey, x.timestamp, x.offset, x.length, x.digest, x.filename)


def test_batches_marks_and_finish(tmp_path: Path, corpus: Path, index_store: StoreChoice) -> None:
    lines = list(index_file(corpus / "pywb/warcs/iana.warc.gz"))
    assert len(lines) == 171
    store = index_store.new_store(tmp_path / "s.sqlite3")
    app = store.append_to("iana.warc.gz")
    assert app.indexed_to == 0
    assert app.add(lines[:50], lines[50].offset) == 50
    f = store.get_file("iana.warc.gz")
    assert f is not None and (f.complete, f.lines, f.indexed_to) == (False, 50, lines[50].offset)
    assert sum(1 for _ in store.scan(KeyRange("", None))) == 50  # visible once committed
    # the writer died after the commit and sends the batch again, with the next ones
    again = index_store.new_store(tmp_path / "s.sqlite3") if index_store.kind == "sqlite" \
        else store  # fmt: skip
    resumed = again.append_to("iana.warc.gz")
    assert resumed.indexed_to == lines[50].offset
    assert resumed.add(lines[:120], lines[120].offset) == 70
    assert resumed.finish(lines, size=786828) == 51
    f = again.get_file("iana.warc.gz")
    assert f is not None and (f.complete, f.lines, f.size, f.indexed_to) == (True, 171, 786828,
                                                                          None)  # fmt: skip
    got = sorted(_key(x) for x in again.scan(KeyRange("", None)))
    assert got == sorted(_key(x) for x in lines)
    with pytest.raises(AlreadyIndexed):
        again.append_to("iana.warc.gz")
    with pytest.raises(AlreadyIndexed):
        resumed.add(lines[:1], 0)  # complete: no more lines
    store.close()
    again.close()


def test_killed_writer_leaves_lines_of_records_on_disk(
    tmp_path: Path, index_store: StoreChoice
) -> None:
    """kill -9 of the writer after some batches: each indexed line is a record of the
    WARC (loaded from its offset), none twice; the repaired WARC, added, is complete."""
    coll = index_store.init(tmp_path / "c")
    proc = run_live_writer(coll.root, tmp_path / "w", 400, 7)
    assert proc.stdout is not None
    opened = proc.stdout.readline().split()
    assert opened[0] == "OPEN"
    name, open_path = opened[1], Path(opened[2])
    for line in proc.stdout:
        if line.startswith("BATCH") and int(line.split()[1]) >= 70:
            break
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(30)
    f = coll.store().get_file(name)
    assert f is not None and not f.complete and f.lines >= 70  # a line per response
    lines = list(coll.source().scan(KeyRange("", None)))
    assert len(lines) == f.lines and len({x.offset for x in lines}) == len(lines)
    loader = RecordLoader(coll.resolver())
    for x in lines:  # every line points at its record in the .open WARC
        rec = loader.load(x)
        assert rec.target_uri == x.url and rec.offset == x.offset
        assert x.offset + x.length <= (f.indexed_to or 0)
    # the crawler's restart repairs the WARC (cut after its last whole record) ...
    final = repair_open_file(open_path).new_path
    assert Path(final).name == name
    # ... and `collection add` of the finished WARC indexes the rest, nothing twice
    (res,) = list(coll.add([final], "in-place"))
    assert res.status == "indexed", res
    want = sorted(_key(x) for x in FileIndex(final, filename=name))
    got = sorted(_key(x) for x in coll.source().scan(KeyRange("", None)))
    assert got == want and res.lines == len(want) >= 70
    done = coll.store().get_file(name)
    assert done is not None and done.complete and done.lines == len(want)
    coll.close()


def test_postgres_locations_are_in_the_database(tmp_path: Path, pg: object,
                                                corpus: Path) -> None:  # fmt: skip
    """A PostgreSQL collection keeps WARC locations in the database: another folder with
    the same collection.toml (a second machine) resolves in-place WARCs too."""
    choice = StoreChoice("postgres", pg)  # type: ignore[arg-type]
    a = choice.init(tmp_path / "a" / "web")
    warc = corpus / "pywb/warcs/example.warc.gz"
    assert next(a.add([warc], "in-place")).status == "indexed"
    assert not (tmp_path / "a/web/locations.loc").exists()
    b_root = tmp_path / "b" / "web"
    b_root.mkdir(parents=True)
    (b_root / "collection.toml").write_bytes((a.root / "collection.toml").read_bytes())
    b = Collection.open(b_root)
    assert b.resolver().resolve("example.warc.gz") == str(warc.resolve())
    assert [f.name for f in b.indexed()] == ["example.warc.gz"]
    b.locate("example.warc.gz", "https://warcs.example.org/example.warc.gz")
    assert a.resolver().candidates("example.warc.gz")[0] == (
        "https://warcs.example.org/example.warc.gz")  # fmt: skip
    assert a.remove(["example.warc.gz"])[0].status == "removed"
    assert b.resolver().candidates("example.warc.gz") == []
    a.close()
    b.close()


def test_password_never_in_collection_toml(tmp_path: Path) -> None:
    for url in ("postgresql://webark:s3cret@db.example.org/archive",
                "postgresql://db.example.org/archive?user=w&password=s3cret"):
        with pytest.raises(CollectionError, match="password") as err:
            Collection.init(tmp_path / "x", store="postgres", url=url)
        assert "s3cret" not in str(err.value) and "PGPASSFILE" in str(err.value)
        assert not (tmp_path / "x").exists()
        text = ('[index]\nstore = "postgres"\n'
                f'url = "{url}"\n')  # fmt: skip
        with pytest.raises(CollectionError, match="password"):
            CollectionConfig.from_toml(text)
    with pytest.raises(CollectionError, match="needs url"):
        CollectionConfig.from_toml('[index]\nstore = "postgres"\n')
    with pytest.raises(CollectionError, match="schema"):
        CollectionConfig.from_toml('[index]\nstore = "postgres"\nurl = "postgresql://h/d"\n'
                                   'schema = "Bad-Name"\n')  # fmt: skip
    ok = CollectionConfig.from_toml('[collection]\nname = "My Web"\n[index]\nstore = "postgres"\n'
                                    'url = "postgresql://webark@h:5432/d?service=x"\n')  # fmt: skip
    assert ok.pg_schema == "webark_my_web" and ok.search == "postgres"


def test_without_psycopg_the_error_names_the_extra(tmp_path: Path) -> None:
    code = ("import sys; sys.modules['psycopg'] = None\n"
            "from webark.index.collection import Collection\n"
            f"Collection.init({str(tmp_path / 'c')!r}, store='postgres', "
            "url='postgresql://webark@127.0.0.1:1/x')\n")  # fmt: skip
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert res.returncode != 0
    assert "pip install 'webark[postgres]'" in res.stderr
    assert not (tmp_path / "c").exists()
