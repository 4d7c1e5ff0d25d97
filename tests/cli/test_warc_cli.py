"""The `webark warc` commands, run as a user would (click's runner, real files)."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

from click.testing import CliRunner

from webark.cli.main import cli
from webark.warc.reader import ArchiveReader


def test_ls_lists_every_record_with_offsets(corpus: Path) -> None:
    path = corpus / "warcio/example.warc.gz"
    res = CliRunner().invoke(cli, ["warc", "ls", str(path)])
    assert res.exit_code == 0, res.output
    rows = [json.loads(line) for line in res.stdout.splitlines()]
    assert [r["offset"] for r in rows] == [0, 353, 784, 2012, 2621, 3207]
    assert [r["type"] for r in rows] == ["warcinfo", "warcinfo", "response", "request",
                                         "revisit", "request"]
    assert rows[2]["status"] == 200
    assert rows[2]["target_uri"] == "http://example.com/"


def test_check_exit_codes(corpus: Path) -> None:
    runner = CliRunner()
    good = runner.invoke(cli, ["warc", "check", str(corpus / "pywb/warcs/dupes.warc.gz")])
    assert good.exit_code == 0, good.output
    bad = runner.invoke(cli, ["warc", "check", "--json", str(corpus / "pywb/warcs/example.warc")])
    assert bad.exit_code == 1
    report = json.loads(bad.stdout)
    assert report["ok"] is False and report["records"] == 6


def test_extract_payload_is_dechunked(corpus: Path) -> None:
    path = corpus / "pywb/warcs/iana.warc.gz"
    res = CliRunner().invoke(cli, ["warc", "extract", str(path), "334", "--payload"])
    assert res.exit_code == 0
    assert res.stdout_bytes.startswith(b"<!doctype html>")
    assert b"\r\n0\r\n" not in res.stdout_bytes[-10:]
    head = CliRunner().invoke(cli, ["warc", "extract", str(path), "334", "--headers"])
    assert b"WARC-Target-URI: http://www.iana.org/" in head.stdout_bytes
    assert head.stdout_bytes.endswith(b"\r\n\r\n")
    missing = CliRunner().invoke(cli, ["warc", "extract", str(path), "335"])
    assert missing.exit_code != 0


def test_repair_cuts_a_crash_truncated_open_file(corpus: Path, tmp_path: Path) -> None:
    src = corpus / "pywb/warcs/dupes.warc.gz"
    data = src.read_bytes()
    recs = [(r.offset, r.length) for r in ArchiveReader(src)]
    # cut in the middle of the 11th record's gzip member, as a kill -9 would
    off, length = recs[10]
    cut = off + length // 2
    target = tmp_path / "crawl-0001.warc.gz.open"
    target.write_bytes(data[:cut])
    res = CliRunner().invoke(cli, ["warc", "repair", str(target)])
    assert res.exit_code == 0, res.output
    fixed = tmp_path / "crawl-0001.warc.gz"
    assert fixed.exists() and not target.exists()
    assert fixed.read_bytes() == data[:off]
    assert Path(str(target) + ".truncated-tail").read_bytes() == data[off:cut]
    assert [r.offset for r in ArchiveReader(fixed)] == [o for o, _ in recs[:10]]
    # every member is a whole gzip stream
    assert gzip.decompress(fixed.read_bytes()).count(b"WARC/1.0\r\n") == 10


def test_repair_of_uncompressed_file_keeps_trailer(corpus: Path, tmp_path: Path) -> None:
    src = corpus / "warcio/example.warc"
    data = src.read_bytes()
    target = tmp_path / "x.warc.open"
    target.write_bytes(data[: 2566 + 100])  # 100 bytes into the request record at 2566
    res = CliRunner().invoke(cli, ["warc", "repair", str(target)])
    assert res.exit_code == 0, res.output
    assert (tmp_path / "x.warc").read_bytes() == data[:2566]
    shutil.rmtree(tmp_path)


def test_extract_whole_record_is_byte_exact(corpus: Path) -> None:
    """The default extract is the stored record itself: for the gz file, the member's
    content equals the same record's bytes in the uncompressed twin file."""
    gz = CliRunner().invoke(cli, ["warc", "extract", str(corpus / "warcio/example.warc.gz"),
                                  "784"])
    plain = (corpus / "warcio/example.warc").read_bytes()[1197 : 1197 + 1365]
    assert gz.exit_code == 0
    assert gz.stdout_bytes == plain + b"\r\n\r\n"
    res = CliRunner().invoke(cli, ["warc", "extract", str(corpus / "warcio/example.warc"),
                                   "1197"])
    assert res.stdout_bytes == plain
