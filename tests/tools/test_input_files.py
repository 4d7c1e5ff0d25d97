"""One file, many names: `webark stats`, `extract` and `dedup build` read a file once
whatever name reaches it (the shared helper webark.tools.input_files)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from click.testing import CliRunner

from webark.cli.main import cli
from webark.tools.input_files import archive_inputs, unique_files, walk_files


def test_hard_link_symlink_and_folder_are_one_file(corpus: Path, tmp_path: Path) -> None:
    folder = tmp_path / "warcs"
    folder.mkdir()
    warc = folder / "iana.warc.gz"
    warc.write_bytes((corpus / "pywb/warcs/iana.warc.gz").read_bytes())
    hard = tmp_path / "hard.warc.gz"
    os.link(warc, hard)
    soft = tmp_path / "soft.warc.gz"
    soft.symlink_to(warc)
    repeats: list[tuple[str, str]] = []
    got = archive_inputs([hard, soft, folder, f"{folder}/../warcs/iana.warc.gz"],
                         on_repeat=lambda p, first: repeats.append((p, first)))
    assert got == [str(hard)]
    assert repeats == [(str(soft), str(hard)), (str(warc), str(hard)),
                       (f"{folder}/../warcs/iana.warc.gz", str(hard))]
    # a missing path is kept once (its reader reports it), not dropped
    missing = str(tmp_path / "missing.log")
    assert unique_files([missing, missing, str(warc)]) == [missing, str(warc)]
    assert list(walk_files([folder], (".cdxj",))) == []
    # stats counts the hard-linked pair once (before: by resolved path, twice)
    once = json.loads(CliRunner().invoke(cli, ["stats", "--json", str(warc)]).stdout)
    res = CliRunner().invoke(cli, ["stats", "--json", str(warc), str(hard)])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["records"] == once["records"] == 343
