"""``webark index``: output, sorting, headers, problems on stderr, exit status."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from cdx_support import CORPUS
from click.testing import CliRunner

from webark.cli.main import cli

WARCS = CORPUS / "pywb" / "warcs"


def run(*args: str) -> tuple[int, str, str]:
    res = CliRunner().invoke(cli, ["index", *args])
    if res.exception and not isinstance(res.exception, SystemExit):
        raise res.exception
    return res.exit_code, res.stdout, res.stderr


def test_default_is_cdxj_with_post_folding() -> None:
    code, out, err = run(str(WARCS / "post-test.warc.gz"))
    assert code == 0 and err == ""
    lines = out.splitlines()
    assert len(lines) == 3
    assert lines[0].startswith("org,httpbin)/post?__wb_method=post&foo=bar&test=abc ")
    assert '"requestBody": "foo=bar&test=abc", "method": "POST"}' in lines[0]
    code, out, _ = run("--no-post-append", str(WARCS / "post-test.warc.gz"))
    assert out.splitlines()[0].startswith("org,httpbin)/post 20140610000859 ")


def test_formats_and_headers() -> None:
    w = str(WARCS / "example.warc.gz")
    assert run("-f", "cdx11", w)[1].splitlines()[0] == " CDX N b a m s k r M S V g"
    assert run("-f", "cdx9", w)[1].splitlines()[0] == " CDX N b a m s k r V g"
    ng = run("-f", "ng", w)[1].splitlines()
    assert ng[0].startswith("!cdx-ng 1 ") and ng[1].startswith("http://(com,example,)/?example=1 ")
    # --compat switches conventions: pywb CDXJ has no sha1: label, no revisit status
    pywb = run("--compat", "pywb", w)[1]
    assert '"digest": "B2LTWWPUOYAH7UIPQ7ZUPQ4VMBSVC36A"' in pywb


def test_all_records() -> None:
    w = str(WARCS / "example-wget-1-14.warc.gz")
    assert len(run(w)[1].splitlines()) == 4
    assert len(run("--all-records", w)[1].splitlines()) == 6  # + request, warcinfo


def _c_sorted(lines: list[str]) -> list[str]:
    return sorted(lines, key=lambda s: s.encode("utf-8", "surrogateescape"))


def test_sort_is_lc_all_c(tmp_path: Path) -> None:
    out = tmp_path / "all.cdxj"
    inputs = [
        str(WARCS / n)
        for n in (
            "iana.warc.gz",
            "dupes.warc.gz",
            "example.warc.gz",
            "post-test.warc.gz",
            "example-wpull.warc.gz",
        )
    ]
    code, _, _ = run("--sort", "-o", str(out), *inputs)
    assert code == 0
    lines = out.read_text().splitlines()
    assert lines == _c_sorted(lines) and len(lines) == 171 + 12 + 3 + 3 + 2
    sort = shutil.which("sort")
    if sort:  # and GNU/BSD sort agrees
        env = dict(os.environ, LC_ALL="C")
        res = subprocess.run([sort, "-c", str(out)], env=env, capture_output=True)
        assert res.returncode == 0, res.stderr


def test_several_inputs_into_one_file_are_sorted_by_default(tmp_path: Path) -> None:
    out = tmp_path / "x.cdx"
    run("-f", "cdx11", "-o", str(out), str(WARCS / "example.warc.gz"), str(WARCS / "dupes.warc.gz"))
    lines = out.read_text().splitlines()
    assert lines[0] == " CDX N b a m s k r M S V g"
    assert lines[1:] == _c_sorted(lines[1:]) and len(lines) == 1 + 3 + 12
    # to stdout, or with --no-sort: file order
    _, text, _ = run("-f", "cdx11", str(WARCS / "example.warc.gz"), str(WARCS / "dupes.warc.gz"))
    body = text.splitlines()[1:]
    assert body != _c_sorted(body) and len(body) == 15


def test_directory_input_and_dir_root(tmp_path: Path) -> None:
    d = tmp_path / "coll" / "sub"
    d.mkdir(parents=True)
    shutil.copy(WARCS / "example.warc.gz", d)
    shutil.copy(WARCS / "example.arc", d)
    (d / "notes.txt").write_text("not an archive")
    _, text, _ = run("-f", "cdx11", "--dir-root", str(tmp_path / "coll"), str(tmp_path / "coll"))
    names = {ln.rsplit(" ", 1)[1] for ln in text.splitlines()[1:]}
    assert names == {"sub/example.warc.gz", "sub/example.arc"}


def test_broken_records_reported_exit_zero() -> None:
    code, out, err = run(str(WARCS / "example.warc"), "--all-records")
    assert code == 0
    assert "example.warc @ 4061: error: content-length-mismatch" in err
    assert len(out.splitlines()) == 6


def test_unreadable_inputs_exit_one_and_others_indexed(tmp_path: Path) -> None:
    junk = tmp_path / "junk.warc"
    junk.write_bytes(b"this is not a WARC file\r\n" * 10)
    code, out, err = run(
        str(tmp_path / "missing.warc.gz"), str(junk), str(WARCS / "example.warc.gz")
    )
    assert code == 1
    assert "missing.warc.gz: cannot read" in err
    assert "junk.warc: no WARC/ARC record could be read" in err
    assert len(out.splitlines()) == 3  # example.warc.gz still indexed


def test_whole_file_gzip_is_reported() -> None:
    code, out, err = run(str(WARCS / "example-bad.warc.gz.bad"))
    assert out == "" and "cdx-not-addressable" in err
    # its records were read but none can be addressed (recompress it): nothing was
    # indexed, an input error (issue 19: it was exit status 0)
    assert "example-bad.warc.gz.bad: no index line: its 6 records cannot be indexed" in err
    assert code == 1
    # with an addressable file beside it, that one is indexed and the status still 1
    code, out, _ = run(str(WARCS / "example-bad.warc.gz.bad"), str(WARCS / "example.warc.gz"))
    assert code == 1 and len(out.splitlines()) == 3


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_jobs_give_same_output(jobs: str, tmp_path: Path) -> None:
    big = tmp_path / "big.warc.gz"
    data = (WARCS / "iana.warc.gz").read_bytes()
    big.write_bytes(data * 12)
    out = tmp_path / f"{jobs}.cdxj"
    assert run("-j", jobs, "-o", str(out), str(big))[0] == 0
    ref = tmp_path / "ref.cdxj"
    run("-j", "1", "-o", str(ref), str(big))
    assert out.read_bytes() == ref.read_bytes()


def test_ng_sorted_output(tmp_path: Path) -> None:
    out = tmp_path / "x.ng"
    inputs = [str(WARCS / n) for n in ("iana.warc.gz", "example.warc.gz", "post-test.warc.gz")]
    assert run("-f", "ng", "-o", str(out), *inputs)[0] == 0
    lines = out.read_text().splitlines()
    assert lines[0].startswith("!cdx-ng 1 ")
    assert lines[1:] == _c_sorted(lines[1:]) and len(lines) == 1 + 171 + 3 + 3
    assert all(len(ln.split(" ", 7)) == 8 for ln in lines[1:])
    # every key is a scope SURT with the closing comma before ")"
    assert all(",)" in ln.split(" ", 1)[0] for ln in lines[1:])
