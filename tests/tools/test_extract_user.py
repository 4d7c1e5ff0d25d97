"""`webark extract` used the way an archivist would, with inputs that go wrong: a WARC
cut short, the same WARC twice, empty files and folders, a pipe, a collection with a
WARC added in place, an interrupted write."""

from __future__ import annotations

import csv
import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from webark.cli.main import cli
from webark.index.collection import Collection
from webark.tools.extract import MANIFEST_NAME, PARTIAL_PREFIX, TreeWriter
from webark.warc.reader import ArchiveReader

PYWB = "pywb/warcs"


def manifest(out: Path) -> list[dict[str, str]]:
    with open(out / f"{MANIFEST_NAME}.csv", encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f))


def cut_copy(src: Path, dst: Path, size: int) -> Path:
    dst.write_bytes(src.read_bytes()[:size])
    return dst


def test_cut_record_is_flagged_not_passed_off_as_complete(corpus: Path, tmp_path: Path) -> None:
    # iana.warc.gz cut at 300,000 bytes: the OpenSans-Bold.ttf response at 198285
    # declares 224888 block bytes and has 193807
    warc = cut_copy(corpus / PYWB / "iana.warc.gz", tmp_path / "cut.warc.gz", 300_000)
    res = CliRunner().invoke(cli, ["extract", str(warc), "-o", str(tmp_path / "out")])
    assert res.exit_code == 1, res.output  # before: 0, and nothing said about the font
    rows = {r["url"]: r for r in manifest(tmp_path / "out")}
    bold = rows["http://www.iana.org/_css/2013.1/fonts/OpenSans-Bold.ttf"]
    assert bold["truncated"] == "file-ends-early" and bold["offset"] == "198285"
    assert [u for u, r in rows.items() if r["truncated"]] == [bold["url"]]
    assert "1 truncated" in res.stdout
    assert f"{warc} @ 198285: payload of {bold['url']} is incomplete" in res.stderr
    # the bytes there are kept (nothing lost), and they are what the record holds
    rec = next(r for r in ArchiveReader(warc) if r.offset == 198285)
    assert (tmp_path / "out" / bold["file"]).read_bytes() == rec.payload()


def test_same_warc_twice_is_read_once(corpus: Path, tmp_path: Path) -> None:
    warc = corpus / PYWB / "iana.warc.gz"
    once = CliRunner().invoke(cli, ["extract", "--all-captures", "--json", str(warc),
                                    "-o", str(tmp_path / "a")])
    twice = CliRunner().invoke(cli, ["extract", "--all-captures", "--json", str(warc),
                                     str(warc), "-o", str(tmp_path / "b")])
    assert once.exit_code == twice.exit_code == 0, twice.output
    # before: 88 files, every capture a second time as NAME~2
    assert json.loads(twice.stdout)["files"] == json.loads(once.stdout)["files"] == 44
    assert "read once" in twice.stderr


def test_nothing_to_extract_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "empty-dir").mkdir()
    res = CliRunner().invoke(cli, ["extract", "--json", str(tmp_path / "empty-dir"),
                                   "-o", str(tmp_path / "out")])
    assert res.exit_code == 1  # before: 0 and an empty manifest
    assert json.loads(res.stdout)["error"].startswith(
        f"no WARC/ARC files found in {tmp_path / 'empty-dir'}")
    empty = tmp_path / "empty.warc.gz"
    empty.write_bytes(b"")
    res = CliRunner().invoke(cli, ["extract", str(empty), "-o", str(tmp_path / "out2")])
    assert res.exit_code == 1
    assert f"{empty} @ 0: error: no WARC or ARC record found" in res.stderr


def test_pipe_is_refused(tmp_path: Path) -> None:
    fifo = tmp_path / "in.warc.gz"
    os.mkfifo(fifo)
    res = CliRunner().invoke(cli, ["extract", str(fifo), "-o", str(tmp_path / "out")])
    assert res.exit_code == 1  # before: hung reading the pipe
    assert "is not a regular file (a pipe?)" in res.output


def test_collection_gives_its_indexed_warcs_in_place_too(corpus: Path, tmp_path: Path) -> None:
    coll = Collection.init(tmp_path / "coll")
    added = list(coll.add([corpus / PYWB / "example.warc.gz"], "in-place"))
    coll.close()
    assert [a.status for a in added] == ["indexed"]
    res = CliRunner().invoke(cli, ["extract", str(tmp_path / "coll"), "-o",
                                   str(tmp_path / "out")])
    # before: the collection folder was listed non-recursively: 0 files
    assert res.exit_code == 0, res.output
    (row,) = manifest(tmp_path / "out")
    assert row["url"] == "http://example.com?example=1" and row["bytes"] == "1270"


def test_interrupted_write_leaves_no_file_under_its_final_name(tmp_path: Path) -> None:
    tree = TreeWriter(tmp_path / "out")
    try:
        with pytest.raises(KeyboardInterrupt), tree.open(["example.com", "big.bin"]) as f:
            f.write(b"x" * 100_000)
            raise KeyboardInterrupt
        with tree.open(["example.com", "ok.txt"]) as f:
            f.write(b"done")
    finally:
        tree.close()
    assert sorted(os.listdir(tmp_path / "out" / "example.com")) == ["ok.txt"]
    assert (tmp_path / "out" / "example.com" / "ok.txt").read_bytes() == b"done"
    assert not any(n.startswith(PARTIAL_PREFIX) for n in os.listdir(tmp_path / "out"))


def test_ctrl_c_leaves_no_manifest_and_no_partial_files(corpus: Path, tmp_path: Path) -> None:
    import signal
    import subprocess
    import sys
    import time

    warc = tmp_path / "iana-x40.warc.gz"  # gzip members concatenate: 40 copies, 13,720 records
    warc.write_bytes((corpus / PYWB / "iana.warc.gz").read_bytes() * 40)
    out = tmp_path / "out"
    proc = subprocess.Popen(
        [sys.executable, "-c", "from webark.cli.main import main; main()", "extract",
         "--all-captures", "-o", str(out), str(warc)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )
    while not (out / "www.iana.org").is_dir() and proc.poll() is None:
        time.sleep(0.01)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert b"interrupted" in err and b"Traceback" not in err
    names = [p.name for p in out.rglob("*")]
    assert f"{MANIFEST_NAME}.csv" not in names  # no manifest: the tree is not finished
    assert not [n for n in names if n.startswith(PARTIAL_PREFIX)]


def test_skipped_revisits_point_to_include_revisits(corpus: Path, tmp_path: Path) -> None:
    """pywb's dupes.warc.gz holds revisits: the summary says how many were skipped and
    which option writes them (a fresh user thought a deduplicated crawl could not be
    extracted whole); with it, every capture is written (one file per capture here)."""
    warc = str(corpus / PYWB / "dupes.warc.gz")
    plain = CliRunner().invoke(cli, ["extract", "--all-captures", warc,
                                     "-o", str(tmp_path / "a")])
    assert plain.exit_code == 0, plain.output
    assert "revisit record(s) skipped; --include-revisits writes" in plain.stdout
    full = CliRunner().invoke(cli, ["extract", "--all-captures", "--include-revisits", warc,
                                    "-o", str(tmp_path / "b")])
    assert full.exit_code == 0, full.output
    assert "revisit record(s) skipped" not in full.stdout
    assert len(manifest(tmp_path / "b")) > len(manifest(tmp_path / "a"))


def test_two_urls_on_one_file_are_not_called_older_captures(tmp_path: Path) -> None:
    """``/`` and ``/index.html`` both become ``index.html``: the later capture is
    written and the other counted as ``same-file-url``, not ``older-capture`` (which
    a fresh user read as "an earlier capture of the same URL")."""
    from datetime import UTC, datetime

    from webark.tools.extract import extract
    from webark.warc.writer import WarcWriter

    def ok(body: bytes) -> bytes:
        return b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: %d\r\n\r\n%s" % (
            len(body), body)

    with WarcWriter(tmp_path / "w", prefix="T") as w:
        for url, day in (("http://h.test/", 1), ("http://h.test/index.html", 2),
                         ("http://h.test/a.html", 1), ("http://h.test/a.html", 3)):
            path = url.split("h.test", 1)[1].encode()
            req = b"GET " + path + b" HTTP/1.1\r\nHost: h.test\r\n\r\n"
            w.write(*w.builder.exchange(url, ok(url.encode()), req,
                                        date=datetime(2024, 1, day, tzinfo=UTC)))
    report = extract(w.paths, tmp_path / "out")
    assert report.skipped == {"same-file-url": 1, "older-capture": 1}
    assert (tmp_path / "out" / "h.test" / "index.html").read_bytes() == b"http://h.test/index.html"
    assert (tmp_path / "out" / "h.test" / "a.html").read_bytes() == b"http://h.test/a.html"
