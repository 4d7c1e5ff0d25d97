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


def test_check_summary_counts_records_not_warnings(corpus: Path) -> None:
    """JWAT's revisit lacks both WARC-Refers-To-Target-URI and -Date: two warnings of one
    code in one record, which the summary called "2 records in all"."""
    path = corpus / "jwat/warc/invalid-warcfile-contenttype-recommended.warc"
    res = CliRunner().invoke(cli, ["warc", "check", str(path)])
    lines = res.stdout.splitlines()
    assert "  … warning refers-to-target-recommended: 2 in 1 record (--all-warnings lists " \
           "them)" in lines
    # a conversion and the revisit lack WARC-Refers-To: one warning in each of 2 records
    assert "  … warning refers-to-recommended: 2 records in all (--all-warnings lists " \
           "them)" in lines
    assert lines[-1].endswith(": 7 records (conversion 1, metadata 1, request 1, resource 1, "
                              "response 1, revisit 1, warcinfo 1), 12 errors, 0 digests "
                              "verified")
    every = CliRunner().invoke(cli, ["warc", "check", "--all-warnings", str(path)])
    assert every.stdout.count("warning: refers-to-target-recommended") == 2


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


def test_recompress_never_overwrites_its_source(corpus: Path, tmp_path: Path) -> None:
    """`recompress X.open X` would write X.open while reading it (found by a tester)."""
    src = tmp_path / "y.warc.gz.open"
    src.write_bytes((corpus / "pywb/warcs/dupes.warc.gz").read_bytes())
    before = src.read_bytes()
    res = CliRunner().invoke(cli, ["warc", "recompress", str(src), str(tmp_path / "y.warc.gz")])
    assert res.exit_code != 0
    assert "exists" in res.output
    assert src.read_bytes() == before
    assert not (tmp_path / "y.warc.gz").exists()
    bad = CliRunner().invoke(cli, ["warc", "recompress", str(src), str(tmp_path / "y.bz2")])
    assert bad.exit_code == 2 and "must end in" in bad.output


def test_recompress_reports_input_errors_with_exit_1(corpus: Path, tmp_path: Path) -> None:
    dst = tmp_path / "e.warc.gz"
    res = CliRunner().invoke(cli, ["warc", "recompress", str(corpus / "pywb/warcs/example.warc"),
                                   str(dst)])
    assert res.exit_code == 1
    assert "content-length-mismatch" in res.output
    assert len(list(ArchiveReader(dst))) == 6


def test_arc_migration_passes_check(corpus: Path, tmp_path: Path) -> None:
    from webark.warc.check import check_file

    for name in ("warcio/example-space-in-url.arc", "jwat/arc/test-arc-1.0-dashed-fields.arc"):
        dst = tmp_path / (Path(name).name + ".warc.gz")
        CliRunner().invoke(cli, ["warc", "recompress", str(corpus / name), str(dst)])
        rep = check_file(dst)
        assert rep.ok, [p for r in rep.records for p in r.problems]
        uris = [r.target_uri for r in ArchiveReader(dst)]
        assert all(u is None or " " not in u for u in uris)


def test_file_text_is_not_rich_markup(tmp_path: Path) -> None:
    path = tmp_path / "m.warc"
    path.write_bytes(b"[/x]\n[b]bold\n")
    res = CliRunner().invoke(cli, ["warc", "ls", str(path)])
    assert res.exit_code == 1
    assert "MarkupError" not in repr(res.exception)
    assert "[b]bold" in res.output


def test_ls_goes_on_after_an_unreadable_path(corpus: Path, tmp_path: Path) -> None:
    res = CliRunner().invoke(cli, ["warc", "ls", str(tmp_path / "missing.warc"), str(tmp_path),
                                   str(corpus / "warcio/example.warc.gz")])
    assert res.exit_code == 1
    assert "no such file" in res.output and "is a directory" in res.output
    assert res.stdout.count('"file"') == 6


def test_repair_refusals_change_nothing(corpus: Path, tmp_path: Path) -> None:
    data = (corpus / "pywb/warcs/dupes.warc.gz").read_bytes()
    finished = tmp_path / "done.warc.gz"
    finished.write_bytes(data[:5000])
    res = CliRunner().invoke(cli, ["warc", "repair", str(finished)])
    assert res.exit_code == 1 and "not a .open file" in res.output
    assert finished.read_bytes() == data[:5000]
    # the target name is taken: nothing may be cut before that is known
    cut = tmp_path / "done.warc.gz.open"
    cut.write_bytes(data[:5000])
    res = CliRunner().invoke(cli, ["warc", "repair", str(cut)])
    assert res.exit_code == 1 and "exists" in res.output
    assert cut.read_bytes() == data[:5000]
    assert not list(tmp_path.glob("*.truncated-tail*"))
    empty = tmp_path / "empty.warc.gz.open"
    empty.write_bytes(b"")
    assert CliRunner().invoke(cli, ["warc", "repair", str(empty)]).exit_code == 1


def test_repair_completes_a_cut_terminator(corpus: Path, tmp_path: Path) -> None:
    from webark.warc.check import check_file

    data = (corpus / "warcio/example.warc").read_bytes()
    target = tmp_path / "t2.warc.open"
    target.write_bytes(data[:-2])  # cut inside the last record's CRLF CRLF
    res = CliRunner().invoke(cli, ["warc", "repair", str(target)])
    assert res.exit_code == 0, res.output
    fixed = tmp_path / "t2.warc"
    assert check_file(fixed).ok
    assert len(list(ArchiveReader(fixed))) >= 5
