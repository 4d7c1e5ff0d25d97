"""``webark wacz create``: a crawl job and WARCs other tools wrote, packed as WACZ 1.1.1
and checked by Webrecorder's own validator (the ``wacz`` package) and by reading the
zip back: every resource's hash, WARCs stored as they are, the index equal to
``webark index``'s CDXJ, the pages of the job."""

from __future__ import annotations

import gzip
import hashlib
import json
import shutil
import subprocess
import zipfile
from pathlib import Path

from http_wait import WEBARK
from sites import TestSite
from wacz_site import EXPECTED_PAGES


def webark(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*WEBARK, *map(str, args)], capture_output=True, text=True,
                          timeout=300)  # fmt: skip


def validate(path: Path) -> None:
    """Webrecorder's validator (the ``wacz`` package, as ``wacz validate -f``)."""
    from wacz.validate import Validation

    v = Validation(str(path))
    assert v.version == "1.1.1"
    assert v.check_required_contents() == 0
    assert v.frictionless_validate() is True
    assert v.check_file_paths() is True
    assert v.check_file_hashes() is True
    assert v.check_data_package_hash_and_sig() is True


def _cdxj(lines: str) -> list[str]:
    return sorted(x for x in lines.splitlines() if x and not x.startswith("!"))


def test_a_crawl_job_packed(crawled: tuple[TestSite, Path], tmp_path: Path) -> None:
    site, job_dir = crawled
    out = tmp_path / "site.wacz"
    res = webark("wacz", "create", job_dir, "-o", out, "--json")
    assert res.returncode == 0, res.stderr
    report = json.loads(res.stdout)
    assert report["pages"] == len(EXPECTED_PAGES) and report["problems"] == []
    validate(out)

    warcs = sorted(job_dir.glob("warcs/*.warc.gz"))
    with zipfile.ZipFile(out) as zf:
        names = zf.namelist()
        assert sorted(n for n in names if n.startswith("archive/")) == \
            sorted(f"archive/{w.name}" for w in warcs)  # fmt: skip
        for w in warcs:
            info = zf.getinfo(f"archive/{w.name}")
            assert info.compress_type == zipfile.ZIP_STORED
            assert zf.read(info) == w.read_bytes()
        assert zf.getinfo("indexes/index.cdx.gz").compress_type == zipfile.ZIP_STORED
        package = json.loads(zf.read("datapackage.json"))
        for res_ in package["resources"]:
            data = zf.read(res_["path"])
            assert res_["hash"] == "sha256:" + hashlib.sha256(data).hexdigest()
            assert res_["bytes"] == len(data)
        assert {r["path"] for r in package["resources"]} == set(names) - {
            "datapackage.json", "datapackage-digest.json"}
        digest = json.loads(zf.read("datapackage-digest.json"))
        assert digest["hash"] == "sha256:" + hashlib.sha256(zf.read("datapackage.json")).hexdigest()
        assert package["wacz_version"] == "1.1.1"
        assert package["mainPageURL"] == site.url("/")
        assert package["software"].startswith("webark ")
        assert "logs/crawl.log" in names
        assert zf.read("pages/pages.jsonl") == (job_dir / "pages" / "pages.jsonl").read_bytes()
        # the index: webark index's CDXJ of the same WARCs, sorted, in gzip members
        # listed by index.idx (offset, length, digest of each member)
        blob = zf.read("indexes/index.cdx.gz")
        idx = zf.read("indexes/index.idx").decode().splitlines()
    assert idx[0] == '!meta 0 {"format": "cdxj-gzip-1.0", "filename": "index.cdx.gz"}'
    packed = []
    for line in idx[1:]:
        key, meta = line.split(" {", 1)
        m = json.loads("{" + meta)
        member = blob[m["offset"]:m["offset"] + m["length"]]
        assert m["digest"] == "sha256:" + hashlib.sha256(member).hexdigest()
        text = gzip.decompress(member).decode()
        assert text.startswith(key + " ")
        packed += text.splitlines()
    assert sum(1 for _ in idx[1:]) == -(-len(packed) // 300)
    want = webark("index", "--format", "cdxj", *warcs)
    assert want.returncode == 0, want.stderr
    assert packed == _cdxj(want.stdout)


def test_warcs_of_other_tools_packed(corpus: Path, tmp_path: Path) -> None:
    """The pywb sample archive and a WARC cut short (warcio's): the broken record is
    reported with file and offset, the exit status is 1, and the WACZ is still valid
    with every other record in its index."""
    src = tmp_path / "in"
    src.mkdir()
    for f in ("pywb/warcs/example.warc.gz", "warcio/example-trunc.warc"):
        shutil.copy(corpus / f, src)
    out = tmp_path / "foreign.wacz"
    res = webark("wacz", "create", src, "-o", out, "--title", "Foreign", "--json")
    assert res.returncode == 1, res.stderr
    report = json.loads(res.stdout)
    assert any(p["path"].endswith("example-trunc.warc") and p["offset"] is not None
               for p in report["problems"])  # fmt: skip
    validate(out)
    with zipfile.ZipFile(out) as zf:
        pages = [json.loads(x) for x in zf.read("pages/pages.jsonl").splitlines()[1:]]
        assert json.loads(zf.read("datapackage.json"))["title"] == "Foreign"
    assert "http://example.com/" in {p["url"] for p in pages}
    assert report["index_lines"] > 0


def test_refusals(crawled: tuple[TestSite, Path], tmp_path: Path, corpus: Path) -> None:
    """Exit status 2 and nothing written: an output that exists (without --replace),
    two WARCs with one name (one archive/ folder), nothing to pack."""
    _, job_dir = crawled
    out = tmp_path / "x.wacz"
    out.write_bytes(b"keep me")
    res = webark("wacz", "create", job_dir, "-o", out)
    assert res.returncode == 2 and "exists" in res.stderr
    assert out.read_bytes() == b"keep me"
    assert webark("wacz", "create", job_dir, "-o", out, "--replace").returncode == 0
    validate(out)

    a, b = tmp_path / "a", tmp_path / "b"
    for d in (a, b):
        d.mkdir()
        shutil.copy(corpus / "pywb/warcs/example.warc.gz", d)
    res = webark("wacz", "create", a, b, "-o", tmp_path / "twice.wacz")
    assert res.returncode == 2 and "two WARCs named example.warc.gz" in res.stderr
    empty = tmp_path / "empty"
    empty.mkdir()
    res = webark("wacz", "create", empty, "-o", tmp_path / "none.wacz")
    assert res.returncode == 2 and "no WARC" in res.stderr
    assert not list(tmp_path.glob("*.partial")) and not (tmp_path / "none.wacz").exists()


