"""`webark dedup build`, run through click's runner on the `dedup` group (the lead
registers it in webark.cli.main's SUBCOMMANDS)."""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path

from click.testing import CliRunner

from webark.cli.dedup_cmds import dedup
from webark.dedup.sqlite_dedup import open_index


def test_build_from_all_three_sources(corpus: Path, tmp_path: Path) -> None:
    index = tmp_path / "d.sqlite"
    res = CliRunner().invoke(
        dedup,
        [
            "build",
            str(index),
            "--json",
            "--from-crawl-log",
            str(corpus / "crawllog/netarchivesuite/invalid-crawl.log"),
            "-l",
            str(corpus / "crawllog/ukwa/h3-crawl.log"),
            "--from-warc",
            str(corpus / "pywb/warcs/dupes.warc.gz"),
            "--from-cdx",
            str(corpus / "pywb/cdxj/iana.cdxj"),
        ],
    )
    assert res.exit_code == 0, res.output
    rows = [json.loads(line) for line in res.stdout.splitlines()]
    assert [(r["kind"], r["loaded"]) for r in rows] == [
        ("crawl-log", 0),
        ("crawl-log", 52),
        ("warc", 1),
        ("cdx", 28),
    ]
    assert rows[0]["skipped"] == {"error": 3, "status": 1}
    # skipped lines are reported on stderr with file and line
    assert f"{corpus / 'crawllog/netarchivesuite/invalid-crawl.log'}:2: skipped:" in res.stderr
    assert "81 originals added from 4 files" in res.stderr
    with open_index(index, readonly=True) as idx:
        hit = idx.lookup("http://www.iana.org/", "sha1:OSSAPWJ23L56IYVRW3GFEAR4MCJMGPTB")
        assert hit is not None and hit.warc_filename == "iana.warc.gz"


def test_build_walks_directories_and_is_idempotent(corpus: Path, tmp_path: Path) -> None:
    index = tmp_path / "d.sqlite"
    args = ["build", str(index), "-w", str(corpus / "pywb/warcs")]
    first = CliRunner().invoke(dedup, args)
    assert first.exit_code == 0, first.output
    with open_index(index) as idx:
        counts = idx.counts()
    again = CliRunner().invoke(dedup, args)
    assert again.exit_code == 0, again.output
    with open_index(index) as idx:
        assert idx.counts() == counts
    assert "iana.warc.gz: 28 originals loaded" in first.stdout


def test_policy_options_and_prefer(corpus: Path, tmp_path: Path) -> None:
    index = tmp_path / "d.sqlite"
    res = CliRunner().invoke(
        dedup,
        [
            "build",
            str(index),
            "--json",
            "--prefer",
            "latest",
            "--skip-mime",
            "text/html",
            "--min-size",
            "1000",
            "--status",
            "200",
            "--status",
            "404",
            "-l",
            str(corpus / "crawllog/ukwa/h3-crawl.log"),
        ],
    )
    assert res.exit_code == 0, res.output
    [row] = [json.loads(line) for line in res.stdout.splitlines()]
    assert row["skipped"]["mime"] > 0 and row["skipped"]["size"] > 0
    with open_index(index) as idx:
        assert idx.prefer == "latest"
    clash = CliRunner().invoke(
        dedup,
        [
            "build",
            str(index),
            "--prefer",
            "earliest",
            "-l",
            str(corpus / "crawllog/ukwa/h3-crawl.log"),
        ],
    )
    assert clash.exit_code == 1 and "latest" in clash.output


def test_missing_input_exit_1_and_no_input_usage(corpus: Path, tmp_path: Path) -> None:
    index = tmp_path / "d.sqlite"
    res = CliRunner().invoke(
        dedup,
        [
            "build",
            str(index),
            "-w",
            str(tmp_path / "nope.warc.gz"),
            "-c",
            str(corpus / "pywb/cdx/dupes.cdx"),
        ],
    )
    assert res.exit_code == 1
    assert "nope.warc.gz" in res.stderr
    assert "dupes.cdx: 1 originals loaded" in res.stdout  # the other input was still loaded
    usage = CliRunner().invoke(dedup, ["build", str(index)])
    assert usage.exit_code == 2


def test_gzipped_crawl_log_with_progress_bar(corpus: Path, tmp_path: Path) -> None:
    import gzip

    log = tmp_path / "crawl.log.gz"
    log.write_bytes(gzip.compress((corpus / "crawllog/netarchivesuite/crawl-9.log").read_bytes()))
    res = CliRunner().invoke(
        dedup, ["build", str(tmp_path / "d.sqlite"), "--progress", "-l", str(log)]
    )
    assert res.exit_code == 0, res.output
    assert f"{log}: 61 originals loaded; skipped: duplicate 122, status 36" in res.stdout


def test_build_reads_a_file_given_twice_once(corpus: Path, tmp_path: Path) -> None:
    """The same WARC, crawl.log or CDX file given twice, under another spelling, through
    a symlink, or again inside a folder argument is loaded once: the per-file rows and
    the summary count it once."""
    warcs = corpus / "pywb/warcs"
    warc = warcs / "iana.warc.gz"
    log = corpus / "crawllog/ukwa/h3-crawl.log"
    cdx = corpus / "pywb/cdxj/iana.cdxj"
    link = tmp_path / "link.warc.gz"
    link.symlink_to(warc)
    once = CliRunner().invoke(
        dedup,
        ["build", str(tmp_path / "once.sqlite"), "--json", "-w", str(warcs),
         "-l", str(log), "-c", str(cdx)],
    )
    assert once.exit_code == 0, once.output
    twice = CliRunner().invoke(
        dedup,
        [
            "build", str(tmp_path / "twice.sqlite"), "--json",
            "-w", str(warc), "-w", str(warc), "-w", str(warcs / ".." / "warcs" / warc.name),
            "-w", str(link), "-w", str(warcs),
            "-l", str(log), "-l", f"{log.parent}/./{log.name}",
            "-c", str(cdx), "-c", str(cdx),
        ],
    )
    assert twice.exit_code == 0, twice.output
    rows = [json.loads(line) for line in twice.stdout.splitlines()]
    paths = [r["path"] for r in rows]
    assert len(paths) == len(set(paths))
    assert paths.count(str(warc)) == 1 and paths.count(str(log)) == 1
    assert paths.count(str(cdx)) == 1
    # the warc folder's 16 (W)ARC files, iana.warc.gz among them, + 1 crawl.log + 1 CDX
    assert len(rows) == 18
    iana = next(r for r in rows if r["path"] == str(warc))
    assert iana["loaded"] == 28
    assert next(r for r in rows if r["kind"] == "crawl-log")["loaded"] == 52
    first = [json.loads(line) for line in once.stdout.splitlines()]
    total = sum(r["loaded"] for r in first)
    assert sum(r["loaded"] for r in rows) == total
    assert f"{total} originals added from 18 files" in twice.stderr
    assert f"warning: {warc} given twice: read once" in twice.stderr
    assert f"warning: {link} is the same file as {warc}: read once" in twice.stderr
    assert f"warning: {log.parent}/./{log.name} is the same file as {log}" in twice.stderr
    with open_index(tmp_path / "once.sqlite", readonly=True) as a, open_index(
        tmp_path / "twice.sqlite", readonly=True
    ) as b:
        assert a.counts() == b.counts()


def test_cut_crawl_log_gz_after_many_bad_lines_fails(corpus: Path, tmp_path: Path) -> None:
    """A crawl.log.gz cut short is reported and gives exit status 1 even when more bad
    lines than the listed maximum (MAX_PROBLEMS) come before the cut (the cut is
    recognised by its code, not by looking for its message among the listed ones)."""
    from webark.dedup.build import MAX_PROBLEMS, load

    text = (corpus / "crawllog/netarchivesuite/crawl-9.log").read_bytes()
    bad = MAX_PROBLEMS + 200
    data = gzip.compress(b"not a crawl.log line\n" * bad + text)
    log = tmp_path / "crawl.log.gz"
    log.write_bytes(data[:-200])
    res = CliRunner().invoke(dedup, ["build", str(tmp_path / "d.sqlite"), "-l", str(log)])
    assert res.exit_code == 1, res.output
    # 1201 errors (1200 bad lines + the cut): 1000 bad lines listed, then the cut
    assert f"{log}: … 200 more\n" in res.stderr
    m = re.search(re.escape(str(log)) + r":(\d+): skipped: gzip stream damaged or cut short "
                  r"after line (\d+)", res.stderr)
    assert m is not None and int(m[1]) == int(m[2]) + 1 > bad
    assert res.stderr.index("200 more") < m.start()
    with open_index(tmp_path / "e.sqlite") as idx:
        report = load(idx, "crawl-log", log)
    assert report.cut_short and report.errors == bad + 1
    assert len(report.problems) == MAX_PROBLEMS + 1
    assert f"{log}: {report.loaded} originals loaded" in res.stdout
    assert report.loaded > 0
    # the same lines without the cut: exit 0, not cut short
    whole = tmp_path / "whole.log.gz"
    whole.write_bytes(data)
    ok = CliRunner().invoke(dedup, ["build", str(tmp_path / "w.sqlite"), "-l", str(whole)])
    assert ok.exit_code == 0, ok.output
    assert "cut short" not in ok.stderr
