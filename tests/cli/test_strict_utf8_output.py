"""Commands whose output holds bytes that are not UTF-8 (file names, CDX fields carried
as surrogate escapes) print them as ``\\xNN`` when stdout and stderr are strict UTF-8
(``PYTHONIOENCODING=utf-8``) instead of dying with UnicodeEncodeError (issue 20
item 15). Run as a user would: the ``webark`` entry point in a child process."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from webark.index.collection import Collection

#: A file name with the bytes 0xff and 0xe9 (not UTF-8), as a Linux path may have.
ODD = os.fsdecode(b"caf\xe9-\xff.warc.gz")


def _webark(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONIOENCODING": "utf-8", "LC_ALL": "C.UTF-8"}
    code = "from webark.cli.main import main; main()"
    done = subprocess.run([sys.executable, "-c", code, *args], env=env, capture_output=True,
                          timeout=120, encoding="utf-8", errors="strict")  # fmt: skip
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
    return done


@pytest.fixture()
def odd_warc(tmp_path: Path, corpus: Path) -> Path:
    path = tmp_path / ODD
    shutil.copyfile(corpus / "pywb/warcs/example.warc.gz", path)
    return path


def test_warc_check_prints_an_undecodable_file_name(odd_warc: Path) -> None:
    done = _webark("warc", "check", str(odd_warc))
    assert done.returncode == 0, done.stderr
    assert "caf\\xe9-\\xff.warc.gz" in done.stdout
    assert done.stdout.startswith("OK ") or "\nOK " in done.stdout, done.stdout


def test_collection_query_prints_undecodable_cdx_fields(tmp_path: Path) -> None:
    coll = Collection.init(tmp_path / "colls" / "c")
    line = (b'com,example)/caf 20140101000000 {"url": "http://example.com/caf\xe9", '
            b'"status": "200", "offset": "0", "length": "10", "filename": "b\xff.warc.gz"}\n')
    (coll.indexes_dir / "odd.cdxj").write_bytes(line)
    done = _webark("collection", "query", str(coll.root), "http://example.com/caf",
                   "--output", "cdx11")  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["com,example)/caf", "20140101000000",
                                   "http://example.com/caf\\xe9", "-", "200", "-", "-", "-",
                                   "10", "0", "b\\xff.warc.gz"]  # fmt: skip
    # CDXJ keeps JSON's escapes, which read back to the same bytes
    done = _webark("collection", "query", str(coll.root), "http://example.com/caf")
    assert done.returncode == 0 and '"filename": "b\\udcff.warc.gz"' in done.stdout
