"""`webark extract` into a folder that is not empty: refused unless --replace, and then
the tree ends up exactly as the new manifest says, without deleting or overwriting
anything the earlier extract's manifest did not list."""

from __future__ import annotations

import csv
import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from webark.cli.main import cli
from webark.tools.extract import MANIFEST_NAME, OutputInUse, extract
from webark.tools.extract_previous import PENDING_NAME

PYWB = "pywb/warcs"


def tree(out: Path) -> set[str]:
    """Every file under ``out``, relative, with ``/``."""
    return {os.path.relpath(os.path.join(d, n), out).replace(os.sep, "/")
            for d, _, names in os.walk(out) for n in names}


def listed(out: Path) -> set[str]:
    csv_path = out / f"{MANIFEST_NAME}.csv"
    if csv_path.exists():
        with open(csv_path, encoding="utf-8", newline="") as f:
            return {r["file"] for r in csv.DictReader(f)}
    return {r["file"] for r in json.loads((out / f"{MANIFEST_NAME}.json").read_text())}


def test_second_run_into_the_same_folder(corpus: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    first = CliRunner().invoke(cli, ["extract", str(corpus / PYWB / "iana.warc.gz"),
                                     "-o", str(out)])
    assert first.exit_code == 0, first.output
    before = tree(out)
    assert before == listed(out) | {f"{MANIFEST_NAME}.csv"} and len(before) == 30
    (out / "www.iana.org" / "NOTES.txt").write_text("added by hand")
    # before the fix: exit 0, the 29 files of the first run stayed beside the new one
    # and the manifest listed 1 file
    again = CliRunner().invoke(cli, ["extract", str(corpus / PYWB / "example.warc.gz"),
                                     "-o", str(out)])
    assert again.exit_code == 1
    assert "already holds an earlier extract" in again.output and "--replace" in again.output
    assert tree(out) == before | {"www.iana.org/NOTES.txt"}  # nothing changed
    res = CliRunner().invoke(cli, ["extract", str(corpus / PYWB / "example.warc.gz"),
                                   "-o", str(out), "--replace", "--manifest", "json"])
    assert res.exit_code == 0, res.output
    assert "29 files of the earlier extract removed" in res.stdout
    # the tree is what the new manifest lists (+ itself), and the file nobody listed
    assert listed(out) == {"example.com/index@example=1.html"}
    assert tree(out) == listed(out) | {f"{MANIFEST_NAME}.json", "www.iana.org/NOTES.txt"}
    assert (out / "www.iana.org" / "NOTES.txt").read_text() == "added by hand"
    # folders emptied by the removal are gone, the one holding NOTES.txt is not
    assert sorted(p.name for p in (out / "www.iana.org").iterdir()) == ["NOTES.txt"]


def test_replace_with_more_files_overwrites_listed_ones(corpus: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    extract([corpus / PYWB / "example.warc.gz"], out)
    page = out / "example.com" / "index@example=1.html"
    page.write_bytes(b"edited")
    report = extract([corpus / PYWB / "example.warc.gz", corpus / PYWB / "iana.warc.gz"],
                     out, replace=True)
    assert report.removed == 0 and report.files == 30
    assert tree(out) == listed(out) | {f"{MANIFEST_NAME}.csv"}
    assert page.read_bytes() != b"edited" and page.stat().st_size == 1270


def test_unlisted_file_in_the_way_stops_the_run(corpus: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    extract([corpus / PYWB / "example.warc.gz"], out)
    mine = out / "www.iana.org" / "index.html"  # iana.warc.gz would write this path
    mine.parent.mkdir()
    mine.write_bytes(b"not from the extract")
    before = tree(out)
    with pytest.raises(OutputInUse, match=r"www\.iana\.org/index\.html would be overwritten"):
        extract([corpus / PYWB / "iana.warc.gz"], out, replace=True)
    assert tree(out) == before and mine.read_bytes() == b"not from the extract"


def test_folder_without_a_manifest_is_refused(corpus: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "thesis.pdf").write_bytes(b"%PDF")
    for extra in ([], ["--replace"]):
        res = CliRunner().invoke(cli, ["extract", str(corpus / PYWB / "example.warc.gz"),
                                       "-o", str(out), "--json", *extra])
        assert res.exit_code == 1
        assert "is not empty and holds no extract" in json.loads(res.stdout)["error"]
    assert tree(out) == {"thesis.pdf"}
    # an empty folder is fine
    empty = tmp_path / "empty"
    empty.mkdir()
    assert extract([corpus / PYWB / "example.warc.gz"], empty).files == 1


def test_edited_manifest_cannot_delete_outside(corpus: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    extract([corpus / PYWB / "example.warc.gz"], out)
    victim = tmp_path / "victim.txt"
    victim.write_bytes(b"keep me")
    m = out / f"{MANIFEST_NAME}.csv"
    m.write_text(m.read_text() + "../victim.txt,http://x/,,,,,,,,,,,,\n")
    with pytest.raises(OutputInUse, match="which no extract writes"):
        extract([corpus / PYWB / "iana.warc.gz"], out, replace=True)
    assert victim.read_bytes() == b"keep me"


def test_interrupted_run_is_finished_with_replace(corpus: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    extract([corpus / PYWB / "example.warc.gz"], out)

    def stop(done: int, planned: int) -> None:
        if done == 5:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        extract([corpus / PYWB / "iana.warc.gz"], out, replace=True, progress=stop)
    # no manifest; the pending list names what the run may have left
    assert not (out / f"{MANIFEST_NAME}.csv").exists()
    pending = set(json.loads((out / PENDING_NAME).read_text())["files"])
    assert "example.com/index@example=1.html" in pending and len(pending) == 30
    assert len(tree(out) - {PENDING_NAME}) == 5
    with pytest.raises(OutputInUse, match="interrupted extract"):
        extract([corpus / PYWB / "iana.warc.gz"], out)
    report = extract([corpus / PYWB / "iana.warc.gz"], out, replace=True)
    assert report.files == 29
    assert tree(out) == listed(out) | {f"{MANIFEST_NAME}.csv"}  # pending list removed
