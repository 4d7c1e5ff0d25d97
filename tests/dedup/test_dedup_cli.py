"""`webark dedup build`, run through click's runner on the `dedup` group (the lead
registers it in webark.cli.main's SUBCOMMANDS)."""

from __future__ import annotations

import json
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
