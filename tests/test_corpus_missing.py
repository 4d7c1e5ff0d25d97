"""A clone without the corpus beside it (and no WEBARK_CORPUS): the test run stops at
once with the message that says where the corpus goes. It failed at collection with a
FileNotFoundError from each module that reads corpus files at import."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from corpus_location import REPO


def test_a_clone_without_the_corpus_says_where_it_goes(tmp_path: Path) -> None:
    clone = tmp_path / "webark"
    shutil.copytree(REPO / "tests", clone / "tests",
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(REPO / "pyproject.toml", clone)
    env = {k: v for k, v in os.environ.items() if k != "WEBARK_CORPUS"}
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--collect-only", "-q",
         "tests"],
        cwd=clone, env=env, capture_output=True, text=True, timeout=300,
    )
    out = proc.stdout + proc.stderr
    assert "FileNotFoundError" not in out
    assert proc.returncode == 4, out  # pytest's usage error, before any module is read
    assert (f"the test corpus (third-party WARC/ARC/CDX/crawl.log files, described in its "
            f"PROVENANCE.md) is not at {tmp_path / 'shared' / 'corpus'} (WEBARK_CORPUS is "
            "not set)") in out
    assert "or set WEBARK_CORPUS to its folder" in out
