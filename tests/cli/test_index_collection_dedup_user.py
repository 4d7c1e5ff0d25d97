"""`webark index`, `webark collection` and `webark dedup build` used the way an
archivist would, with inputs that go wrong: an -o in a missing folder or equal to an
input, the same WARC twice, an empty folder, a WARC still being written (.open), a
typo in `collection remove`, a dedup INDEX that is not SQLite, a cut crawl.log.gz."""

from __future__ import annotations

import gzip
import re
from pathlib import Path

from click.testing import CliRunner

from webark.cli.main import cli
from webark.index.collection import Collection

PYWB = "pywb/warcs"


def test_index_output_in_missing_folder(corpus: Path, tmp_path: Path) -> None:
    out = tmp_path / "no-such-dir" / "all.cdxj"
    res = CliRunner().invoke(cli, ["index", "-o", str(out), str(corpus / PYWB / "example.warc.gz")])
    assert res.exit_code == 1
    assert not isinstance(res.exception, FileNotFoundError)  # before: a traceback
    assert f"cannot write {out}: No such file or directory" in res.output


def test_index_same_file_twice_once(corpus: Path, tmp_path: Path) -> None:
    warc = corpus / PYWB / "iana.warc.gz"
    one, two = tmp_path / "one.cdxj", tmp_path / "two.cdxj"
    assert CliRunner().invoke(cli, ["index", "-o", str(one), str(warc)]).exit_code == 0
    res = CliRunner().invoke(cli, ["index", "-o", str(two), str(warc), str(warc)])
    assert res.exit_code == 0, res.output
    # before: 342 lines, each capture twice
    assert two.read_bytes() == one.read_bytes()
    assert len(one.read_bytes().splitlines()) == 171
    assert f"warning: {warc} given twice: indexed once" in res.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["one.cdxj", "two.cdxj"]  # no .part
    # under another name (a symlink): still once
    link = tmp_path / "link.warc.gz"
    link.symlink_to(warc)
    three = tmp_path / "three.cdxj"
    res = CliRunner().invoke(cli, ["index", "-o", str(three), str(warc), str(link)])
    assert res.exit_code == 0, res.output
    assert three.read_bytes() == one.read_bytes()
    assert f"warning: {link} is the same file as {warc}: indexed once" in res.stderr


def test_index_output_that_is_an_input_is_refused(corpus: Path, tmp_path: Path) -> None:
    warc = tmp_path / "example.warc.gz"
    data = (corpus / PYWB / "example.warc.gz").read_bytes()
    warc.write_bytes(data)
    res = CliRunner().invoke(cli, ["index", "-o", str(warc), str(warc)])
    assert res.exit_code == 2
    assert "is also an input" in res.output
    assert warc.read_bytes() == data  # before: the WARC was truncated to its index


def test_index_empty_folder(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    res = CliRunner().invoke(cli, ["index", "-o", str(tmp_path / "x.cdxj"), str(tmp_path / "d")])
    assert res.exit_code == 1  # before: 0 and an empty index
    assert "no WARC/ARC files found" in res.output
    assert not (tmp_path / "x.cdxj").exists()


def test_collection_refuses_open_warc(corpus: Path, tmp_path: Path) -> None:
    live = tmp_path / "crawl-00000.warc.gz.open"
    live.write_bytes((corpus / PYWB / "example.warc.gz").read_bytes())
    Collection.init(tmp_path / "coll").close()
    res = CliRunner().invoke(cli, ["collection", "add", str(tmp_path / "coll"), str(live)])
    assert res.exit_code == 1  # before: copied and indexed while being written
    assert "is still being written (.open)" in res.output
    assert list((tmp_path / "coll" / "warcs").iterdir()) == []


def test_collection_remove_typo_exit_1(corpus: Path, tmp_path: Path) -> None:
    coll = Collection.init(tmp_path / "coll")
    list(coll.add([corpus / PYWB / "example.warc.gz"]))
    coll.close()
    res = CliRunner().invoke(cli, ["collection", "remove", str(tmp_path / "coll"),
                                   "exmaple.warc.gz"])
    assert res.exit_code == 1  # before: 0
    assert "not indexed exmaple.warc.gz" in res.output
    with Collection.open(tmp_path / "coll") as c:
        assert [f.name for f in c.indexed()] == ["example.warc.gz"]


def test_dedup_index_not_sqlite(corpus: Path, tmp_path: Path) -> None:
    not_db = tmp_path / "originals.sqlite"
    data = (corpus / PYWB / "example.warc.gz").read_bytes()
    not_db.write_bytes(data)
    res = CliRunner().invoke(cli, ["dedup", "build", str(not_db), "-w",
                                   str(corpus / PYWB / "iana.warc.gz")])
    assert res.exit_code == 1
    assert res.exception is None or isinstance(res.exception, SystemExit)  # no traceback
    assert f"{not_db} is not a dedup index" in res.output
    assert not_db.read_bytes() == data


def test_dedup_cut_gzip_crawl_log(corpus: Path, tmp_path: Path) -> None:
    log = tmp_path / "crawl.log.gz"
    text = (corpus / "crawllog/netarchivesuite/crawl-9.log").read_bytes()
    log.write_bytes(gzip.compress(text)[:5000])
    res = CliRunner().invoke(cli, ["dedup", "build", str(tmp_path / "d.sqlite"), "-l", str(log)])
    assert res.exit_code == 1
    assert "Aborted" not in res.output  # before: click's "Aborted!" and nothing else
    assert re.search(re.escape(str(log)) + r":\d+: skipped: gzip stream damaged or cut short "
                     r"after line \d+", res.output)
    # the lines before the cut were read and their originals kept
    assert re.search(r": [1-9]\d* originals added from 1 files", res.output)


def test_collection_refuses_empty_file(tmp_path: Path) -> None:
    empty = tmp_path / "crawl-00001.warc.gz"
    empty.write_bytes(b"")
    Collection.init(tmp_path / "coll").close()
    res = CliRunner().invoke(cli, ["collection", "add", str(tmp_path / "coll"), str(empty)])
    assert res.exit_code == 1  # before: "indexed crawl-00001.warc.gz: 0 lines", exit 0
    assert "is empty (0 bytes)" in res.output
    with Collection.open(tmp_path / "coll") as c:
        assert c.indexed() == []


def test_index_of_an_empty_file_is_an_error(corpus: Path, tmp_path: Path) -> None:
    """A 0-byte `.warc.gz` is no WARC (`warc check`: no-records); index said nothing and
    exited 0 (found by a fresh-user trial). The other inputs are still indexed."""
    empty = tmp_path / "empty.warc.gz"
    empty.write_bytes(b"")
    out = tmp_path / "out.cdxj"
    warc = corpus / PYWB / "example.warc.gz"
    res = CliRunner().invoke(cli, ["index", "-o", str(out), str(empty), str(warc)])
    assert res.exit_code == 1
    assert f"{empty}: error: empty file, no record found" in res.stderr
    assert out.read_bytes().count(b"\n") > 0  # example.warc.gz indexed all the same


def test_collection_add_of_a_truncated_warc_is_exit_1(corpus: Path, tmp_path: Path) -> None:
    """A WARC cut short (a crawler killed mid-write and the file copied as it was;
    resiliparse's clipped.warc.gz) is added with what could be read, said to be
    damaged, and the exit status is 1, as README says (it was 0: "indexed …: 1 lines,
    2 problems"). A whole WARC added with it is indexed as usual."""
    iana = corpus / PYWB / "iana.warc.gz"
    cut = tmp_path / "crawl-cut.warc.gz"
    cut.write_bytes(iana.read_bytes()[:2500])  # inside the third gzip member
    Collection.init(tmp_path / "coll").close()
    clipped = corpus / "resiliparse/clipped.warc.gz"
    whole = corpus / PYWB / "example.warc.gz"
    res = CliRunner().invoke(cli, ["collection", "add", "--no-progress", str(tmp_path / "coll"),
                                   str(cut), str(clipped), str(whole)])
    assert res.exit_code == 1, res.output
    assert re.search(r"damaged crawl-cut\.warc\.gz: 1 lines indexed, \d+ errors \(first: "
                     r"\S+crawl-cut\.warc\.gz @ \d+: error: truncated-member", res.output)
    assert "damaged clipped.warc.gz: 1 lines indexed, 2 errors" in res.output
    assert f"`webark warc check {clipped}` lists the errors" in res.output
    assert "indexed example.warc.gz: 3 lines" in res.output
    with Collection.open(tmp_path / "coll") as c:
        assert {f.name: f.lines for f in c.indexed()} == {
            "crawl-cut.warc.gz": 1, "clipped.warc.gz": 1, "example.warc.gz": 3}
