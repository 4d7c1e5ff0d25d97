"""`webark crawllog to-warc` used the way an archivist would, with the inputs that go
wrong in practice: a crawl.log.gz copied while Heritrix was still writing it, the same
log given twice, a pipe, a bad --prefix, --json on errors, Ctrl-C mid-run."""

from __future__ import annotations

import gzip
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from webark.cli.main import cli
from webark.tools.crawllog_to_warc import INCOMPLETE_SUFFIX, convert_crawl_logs
from webark.warc.check import check_file
from webark.warc.reader import ArchiveReader

NAS = "crawllog/netarchivesuite"


def count_duplicates(text: str) -> int:
    """Duplicate-annotated lines, by plain splitting (12th column), independent of
    webark.crawllog."""
    n = 0
    for line in text.splitlines():
        f = line.split()
        if len(f) >= 12 and "duplicate:" in f[11]:
            n += 1
    return n


def cut_gzip_log(src: Path, dst: Path, keep: int) -> str:
    """gzip ``src`` into ``dst`` and keep only the first ``keep`` compressed bytes (a
    log copied while it was being written). Returns the text the cut stream still
    yields."""
    data = gzip.compress(src.read_bytes())
    dst.write_bytes(data[:keep])
    d = __import__("zlib").decompressobj(31)
    return d.decompress(data[:keep]).decode("utf-8", "replace")


def test_cut_gzip_log_converts_lines_before_the_cut(corpus: Path, tmp_path: Path) -> None:
    log = tmp_path / "crawl.log.gz"
    readable = cut_gzip_log(corpus / NAS / "crawl-9.log", log, 5000)
    whole_lines = readable[: readable.rfind("\n") + 1]
    expected = count_duplicates(whole_lines)
    assert 0 < expected < 122
    res = CliRunner().invoke(cli, ["crawllog", "to-warc", "-o", str(tmp_path / "out"), str(log)])
    # before: click's "Aborted!" (an EOFError), exit 1, no WARC, no message
    assert res.exit_code == 1
    assert "Aborted" not in res.output
    last = whole_lines.count("\n")
    assert f"{log}:{last + 1}: gzip stream damaged or cut short after line {last}" in res.output
    (warc,) = (tmp_path / "out").iterdir()
    revisits = [r for r in ArchiveReader(warc) if r.type == "revisit"]
    assert len(revisits) == expected
    assert check_file(warc).ok


def test_same_log_twice_is_read_once(corpus: Path, tmp_path: Path) -> None:
    log = corpus / NAS / "crawl-9.log"
    other_name = tmp_path / "link.log"
    other_name.symlink_to(log)
    res = CliRunner().invoke(
        cli, ["crawllog", "to-warc", "--json", "-o", str(tmp_path / "out"), str(log),
              str(other_name)]
    )
    assert res.exit_code == 0, res.output
    assert f"warning: {other_name} is the same file as {log}: read once" in res.stderr
    report = json.loads(res.stdout)
    # before: 244 revisits, every capture twice
    assert report["revisits"] == count_duplicates(log.read_text("latin-1")) == 122
    assert len(report["logs"]) == 1


def test_pipe_is_refused_not_read_as_empty(corpus: Path, tmp_path: Path) -> None:
    fifo = tmp_path / "crawl.log"
    os.mkfifo(fifo)
    res = CliRunner().invoke(cli, ["crawllog", "to-warc", "-o", str(tmp_path / "out"), str(fifo)])
    # before: it hung (FIFO) or, with <(zcat …), read the log in the survey and wrote nothing
    assert res.exit_code == 1
    assert f"{fifo} is not a regular file (a pipe?)" in res.output
    assert not (tmp_path / "out").exists()


def test_prefix_with_slash_is_a_usage_error(corpus: Path, tmp_path: Path) -> None:
    res = CliRunner().invoke(cli, ["crawllog", "to-warc", "-o", str(tmp_path / "out"),
                                   "--prefix", "a/b", str(corpus / NAS / "crawl-9.log")])
    assert res.exit_code == 2
    assert "--prefix" in res.output and "Traceback" not in res.output
    assert not (tmp_path / "out").exists()


def test_json_on_error_is_json(tmp_path: Path) -> None:
    missing = tmp_path / "nope.log"
    res = CliRunner().invoke(cli, ["crawllog", "to-warc", "--json", "-o", str(tmp_path / "o"),
                                   str(missing)])
    assert res.exit_code == 1
    got = json.loads(res.stdout)
    assert got == {"error": f"{missing}: cannot read crawl.log: No such file or directory",
                   "exit_status": 1}


def test_interrupt_leaves_incomplete_names(corpus: Path, tmp_path: Path) -> None:
    text = (corpus / NAS / "crawl-9.log").read_bytes()
    big = tmp_path / "big-crawl.log"
    big.write_bytes(text * 300)  # 65,700 lines, 36,600 duplicates: a few seconds
    out = tmp_path / "out"
    proc = subprocess.Popen(
        [sys.executable, "-c", "from webark.cli.main import main; main()",
         "crawllog", "to-warc", "-o", str(out), str(big)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )
    def written() -> int:  # bytes in the output so far (the warcinfo alone: ~630)
        return sum(p.stat().st_size for p in out.iterdir()) if out.is_dir() else 0

    # interrupt once records beyond the warcinfo are on disk (not at the first file)
    while written() < 4096 and proc.poll() is None:
        time.sleep(0.02)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    names = [p.name for p in out.iterdir()]
    assert names and all(n.endswith(".warc.gz" + INCOMPLETE_SUFFIX) for n in names), names
    assert b"interrupted" in err and b"Traceback" not in err
    # what was written is whole records, just not the whole conversion
    (part,) = out.iterdir()
    assert len(list(ArchiveReader(part))) > 1


def test_library_renames_on_error(corpus: Path, tmp_path: Path) -> None:
    calls = 0

    def progress(path: str, n: int) -> None:
        nonlocal calls
        calls += 1
        raise RuntimeError("disk full")

    log = tmp_path / "many.log"
    log.write_bytes((corpus / NAS / "crawl-9.log").read_bytes() * 10)
    with pytest.raises(RuntimeError):
        convert_crawl_logs([log], tmp_path / "out", progress=progress)
    assert calls == 1
    names = [p.name for p in (tmp_path / "out").iterdir()]
    assert len(names) == 1 and names[0].endswith(INCOMPLETE_SUFFIX)


def test_cdx_that_is_a_warc_is_a_clear_error(corpus: Path, tmp_path: Path) -> None:
    warc = corpus / "pywb/warcs/iana.warc.gz"
    res = CliRunner().invoke(cli, ["crawllog", "to-warc", "--json", "-o", str(tmp_path / "o"),
                                   "--cdx", str(warc), str(corpus / NAS / "crawl-9.log")])
    # before: a UnicodeEncodeError traceback from the digest side index
    assert res.exit_code == 1
    assert json.loads(res.stdout)["error"].startswith(
        f"{warc}: gzip data, not a plain CDX/CDXJ index")
    assert not (tmp_path / "o").exists()


def test_warcs_without_cdx_is_a_usage_error(corpus: Path, tmp_path: Path) -> None:
    res = CliRunner().invoke(cli, ["crawllog", "to-warc", "-o", str(tmp_path / "o"),
                                   "--warcs", str(tmp_path), str(corpus / NAS / "crawl-9.log")])
    assert res.exit_code == 2  # before: --warcs silently ignored
    assert "--warcs goes with --cdx" in res.output
