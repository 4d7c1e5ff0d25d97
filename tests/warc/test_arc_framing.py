"""An ARC record lost by every tool: a zero-length record right after a filedesc whose
body is not followed by the newline ARC puts before each record. NetarchiveSuite's
metadata ARCs are framed so (the filedesc length counts the blank line, the
``duplicatereductionjobs`` record, zero-length when the harvest had none, follows at
once). warcio takes the line after each body for that newline, whatever it holds, so the
zero-length record's header line was thrown away (the blank line after it then reads as
the separator, and nothing said so): `warc ls`, `check` (OK), `index` and `recompress`
all lost it. The file here is BnF's small_BNF.arc of the corpus with that record put
after its filedesc, both ways the newline can be missing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from warcio.archiveiterator import ArchiveIterator as WarcioIterator

from webark.cli.main import cli
from webark.warc.reader import ArchiveReader, read_record_at

DUPLICATE_REDUCTION = (
    "metadata://netarkivet.dk/crawl/setup/duplicatereductionjobs?majorversion=1"
    "&minorversion=0&harvestid=2&harvestnum=2&jobid=12"
)


def _framed(corpus: Path, tmp_path: Path, count_blank_line: bool) -> tuple[Path, int]:
    """small_BNF.arc with a zero-length record right after its filedesc body, no
    newline between them; and the offset of that record."""
    data = (corpus / "jwat/arc/small_BNF.arc").read_bytes()
    head_end = data.index(b"\n") + 1
    assert data[:head_end].endswith(b" 76\n")
    body = data[head_end : head_end + 76]
    assert body.endswith(b"Archive-length\n") and data[head_end + 76 : head_end + 77] == b"\n"
    rest = data[head_end + 77 :]
    if count_blank_line:  # NetarchiveSuite: the length counts the blank line
        filedesc = data[: head_end - 3] + b"77\n" + body + b"\n"
    else:  # the blank line is simply missing
        filedesc = data[:head_end] + body
    zero = f"{DUPLICATE_REDUCTION} 127.0.1.1 20080602165804 text/plain 0\n\n".encode()
    path = tmp_path / "5-metadata-1.arc"
    path.write_bytes(filedesc + zero + rest)
    return path, len(filedesc)


@pytest.mark.parametrize("count_blank_line", [True, False], ids=["nas-length", "no-newline"])
def test_zero_length_record_after_the_filedesc_is_kept(
    corpus: Path, tmp_path: Path, count_blank_line: bool
) -> None:
    path, at = _framed(corpus, tmp_path, count_blank_line)
    # the peer: warcio reads 6 records (the filedesc and BnF's 5), not 7
    with open(path, "rb") as f:
        assert sum(1 for _ in WarcioIterator(f, no_record_parse=True)) == 6
    runner = CliRunner()
    ls = runner.invoke(cli, ["warc", "ls", str(path)])
    rows = [json.loads(line) for line in ls.stdout.splitlines()]
    assert len(rows) == 7
    assert (rows[1]["offset"], rows[1]["type"], rows[1]["target_uri"]) == (
        at, "response", DUPLICATE_REDUCTION)
    assert rows[2]["target_uri"] == "http://cctr.umkc.edu:80/user/jbenz/tst.htm"
    # what was odd is said (a warning: nothing is lost), at the filedesc
    check = runner.invoke(cli, ["warc", "check", str(path)])
    assert check.exit_code == 0, check.output
    assert (f"{path} @ 0: warning: arc-no-newline: the {77 if count_blank_line else 76}-byte "
            "body of this record is not followed by the newline ARC puts before each "
            "record") in check.stdout
    assert check.stdout.splitlines()[-1].startswith(f"OK {path}: 7 records (response 6, ")
    index = runner.invoke(cli, ["index", str(path)])
    assert index.exit_code == 0, index.output
    keys = [ln.split(" {", 1)[0] for ln in index.stdout.splitlines()]
    assert len(keys) == 6 and any('"url": "metadata://' in ln for ln in index.stdout.splitlines())
    out = tmp_path / "migrated.warc.gz"
    rc = runner.invoke(cli, ["warc", "recompress", str(path), str(out)])
    assert rc.exit_code == 0, rc.output
    migrated = list(ArchiveReader(out))
    assert len(migrated) == 8  # a new warcinfo, the filedesc as a resource, 6 records
    zero = [r for r in migrated if r.target_uri == DUPLICATE_REDUCTION]
    assert len(zero) == 1 and zero[0].type == "resource" and zero[0].block.size == 0
    # and replay finds it where the index says
    again = read_record_at(path, at)
    assert again.target_uri == DUPLICATE_REDUCTION and again.block.size == 0
    assert again.length == len(f"{DUPLICATE_REDUCTION} 127.0.1.1 20080602165804 text/plain 0\n")


def test_a_wrong_length_is_reported_and_the_next_record_found(
    corpus: Path, tmp_path: Path
) -> None:
    """A length 10 bytes short leaves the end of the body where a newline should be:
    an error naming the record, and the records after it are still read."""
    data = (corpus / "jwat/arc/small_BNF.arc").read_bytes()
    records = list(ArchiveReader(corpus / "jwat/arc/small_BNF.arc"))
    second = records[2]
    line = second.headers.get("ARC-Header-Line")
    declared = int(line.rsplit(" ", 1)[1])
    short = line.rsplit(" ", 1)[0] + f" {declared - 10}"
    path = tmp_path / "short.arc"
    path.write_bytes(data.replace(line.encode(), short.encode(), 1))
    reader = ArchiveReader(path)
    got = list(reader)
    assert [r.target_uri for r in got] == [r.target_uri for r in records]
    errors = [(p.code, p.offset) for p in reader.problems if p.severity == "error"]
    assert errors == [("arc-length-mismatch", second.offset)]
    assert "the length is probably wrong; 11 bytes skipped" in str(reader.problems[0])
