"""`webark stats` used the way an archivist would, with inputs that go wrong: the same
WARC twice, a collection with a WARC added in place and a removed copy still in
warcs/, a cut WARC, an empty file, an --html path that cannot be written."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from webark.cli.main import cli
from webark.index.collection import Collection
from webark.tools.stats import archive_stats

PYWB = "pywb/warcs"


def test_same_file_twice_is_counted_once(corpus: Path, tmp_path: Path) -> None:
    warc = corpus / PYWB / "iana.warc.gz"
    link = tmp_path / "again.warc.gz"
    link.symlink_to(warc)
    res = CliRunner().invoke(cli, ["stats", "--json", str(warc), str(link)])
    assert res.exit_code == 0, res.output
    got = json.loads(res.stdout)
    one = archive_stats([warc])
    # before: files 2, records 686, every capture counted twice
    assert got["files"] == 1 and got["records"] == one.records == 343
    assert got["captures"] == one.total.to_json()


def test_collection_counts_what_its_index_holds(corpus: Path, tmp_path: Path) -> None:
    coll = Collection.init(tmp_path / "coll")
    list(coll.add([corpus / PYWB / "iana.warc.gz"]))
    list(coll.add([corpus / PYWB / "dupes.warc.gz"], "in-place"))
    list(coll.remove(["iana.warc.gz"]))  # the copy stays in warcs/
    coll.close()
    assert (tmp_path / "coll" / "warcs" / "iana.warc.gz").exists()
    res = CliRunner().invoke(cli, ["stats", "--json", str(tmp_path / "coll")])
    assert res.exit_code == 0, res.output
    got = json.loads(res.stdout)
    want = archive_stats([corpus / PYWB / "dupes.warc.gz"])
    # before: counted warcs/iana.warc.gz (no longer indexed), missed dupes.warc.gz
    assert got["files"] == 1 and got["records"] == want.records
    assert got["captures"] == want.total.to_json()


def test_cut_warc_exit_1_json_still_valid(corpus: Path, tmp_path: Path) -> None:
    cut = tmp_path / "cut.warc.gz"
    cut.write_bytes((corpus / PYWB / "iana.warc.gz").read_bytes()[:300_000])
    res = CliRunner().invoke(cli, ["stats", "--json", str(cut)])
    assert res.exit_code == 1  # before: 0
    got = json.loads(res.stdout)
    assert got["records"] == 18
    assert f"{cut} @ 198285: error: truncated-record: block has 193807 of 224888 bytes " \
           "(file ends early)" in got["problems"]


def test_empty_file_is_reported(tmp_path: Path) -> None:
    empty = tmp_path / "empty.warc"
    empty.write_bytes(b"")
    res = CliRunner().invoke(cli, ["stats", "--json", str(empty)])
    assert res.exit_code == 1  # before: 0, "1 file, 0 records"
    assert json.loads(res.stdout)["problems"] == [
        f"{empty} @ 0: error: no WARC or ARC record found (empty file?)"]


def test_html_path_that_cannot_be_written(corpus: Path, tmp_path: Path) -> None:
    page = tmp_path / "no-such-dir" / "stats.html"
    res = CliRunner().invoke(cli, ["stats", "--json", "--html", str(page),
                                   str(corpus / PYWB / "example.warc.gz")])
    assert res.exit_code == 1
    assert res.exception is None or isinstance(res.exception, SystemExit)  # no traceback
    assert json.loads(res.stdout) == {
        "error": f"cannot write the HTML page {page}: No such file or directory",
        "exit_status": 1,
    }
    ok = tmp_path / "stats.html"
    res = CliRunner().invoke(cli, ["stats", "--html", str(ok),
                                   str(corpus / PYWB / "example.warc.gz")])
    assert res.exit_code == 0, res.output
    assert ok.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".part")] == []


def test_no_archive_in_folder_json_error(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "notes.txt").write_text("hello")
    res = CliRunner().invoke(cli, ["stats", "--json", str(tmp_path / "d")])
    assert res.exit_code == 1
    assert json.loads(res.stdout)["error"].startswith("no WARC/ARC files found in")
