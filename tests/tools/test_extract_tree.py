"""webark extract on corpus WARCs/ARCs: latest and all captures, revisits, decoding,
manifest. Peer: warcio's ArchiveIterator counts the captures independently."""

from __future__ import annotations

import csv
import hashlib
import json
import os
from pathlib import Path

from click.testing import CliRunner
from warcio.archiveiterator import ArchiveIterator as WarcioIterator

from webark.cli.main import cli
from webark.core.digests import Digest
from webark.tools.extract import MANIFEST_NAME, extract

PYWB = "pywb/warcs"


def manifest(out: Path) -> list[dict[str, str]]:
    with open(out / f"{MANIFEST_NAME}.csv", newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def tree_files(out: Path) -> set[str]:
    return {
        str(Path(root, n).relative_to(out))
        for root, _, names in os.walk(out)
        for n in names
        if not n.startswith(MANIFEST_NAME)
    }


def warcio_2xx_responses(path: Path) -> list[tuple[str, str]]:
    """(url, WARC-Date) of 2xx response records, read by warcio."""
    out = []
    with open(path, "rb") as f:
        for rec in WarcioIterator(f, arc2warc=True):
            if rec.rec_type != "response" or rec.http_headers is None:
                continue
            code = rec.http_headers.get_statuscode()
            if code and code.startswith("2"):
                out.append((rec.rec_headers.get_header("WARC-Target-URI"),
                            rec.rec_headers.get_header("WARC-Date")))
    return out


def test_all_captures_one_file_each(corpus: Path, tmp_path: Path) -> None:
    warcs = [corpus / PYWB / "iana.warc.gz", corpus / PYWB / "example.arc.gz"]
    expected = [c for w in warcs for c in warcio_2xx_responses(w)]
    assert len(expected) == 45  # 44 in iana.warc.gz, 1 in the ARC (2014 example.com)
    report = extract(warcs, tmp_path / "out", all_captures=True)
    assert report.files == len(expected)
    rows = manifest(tmp_path / "out")
    assert sorted((r["url"], r["warc_date"]) for r in rows) == sorted(expected)
    assert {r["file"] for r in rows} == tree_files(tmp_path / "out")
    for r in rows:  # name.TIMESTAMP.ext
        assert f".{r['timestamp']}" in Path(r["file"]).name
    # the payload on disk is the one the WARC digested (no Content-Encoding in iana)
    for r in rows:
        if r["warc_file"] == "iana.warc.gz":
            data = (tmp_path / "out" / r["file"]).read_bytes()
            assert int(r["bytes"]) == len(data)
    arc = [r for r in rows if r["warc_file"] == "example.arc.gz"]
    assert arc[0]["file"] == "example.com/index.20140216050221.html"
    assert arc[0]["offset"] == "171"


def test_latest_capture_and_revisits(corpus: Path, tmp_path: Path) -> None:
    warcs = [corpus / PYWB / "iana.warc.gz", corpus / PYWB / "dupes.warc.gz"]
    plain = extract(warcs, tmp_path / "a")
    with_rev = extract(warcs, tmp_path / "b", include_revisits=True)
    assert plain.skipped["revisit"] > 0
    assert "revisit" not in with_rev.skipped
    rows = {r["file"]: r for r in manifest(tmp_path / "b")}
    # www.iana.org/ (http and https are one file): the latest capture is a revisit in
    # dupes.warc.gz; its bytes are the original's, which match the revisit's digest
    latest = max(
        (d, u) for w in warcs for u, d in _all_captures(w)
        if u.rstrip("/").split("://")[1] == "www.iana.org"
    )
    row = rows["www.iana.org/index.html"]
    assert (row["warc_date"], row["url"]) == latest
    assert row["record_type"] == "revisit" and row["original_file"] == "iana.warc.gz"
    body = (tmp_path / "b" / row["file"]).read_bytes()
    digest = _record_digest(corpus / PYWB / "dupes.warc.gz", int(row["offset"]))
    assert Digest.parse(digest).raw == hashlib.sha1(body).digest()
    assert tree_files(tmp_path / "b") == set(rows)


def _all_captures(path: Path) -> list[tuple[str, str]]:
    out = []
    with open(path, "rb") as f:
        for rec in WarcioIterator(f):
            if rec.rec_type in ("response", "revisit"):
                out.append((rec.rec_headers.get_header("WARC-Target-URI"),
                            rec.rec_headers.get_header("WARC-Date")))
    return out


def _record_digest(path: Path, offset: int) -> str:
    with open(path, "rb") as f:
        f.seek(offset)
        rec = next(iter(WarcioIterator(f)))
        return str(rec.rec_headers.get_header("WARC-Payload-Digest"))


def test_content_encoding_decoded(corpus: Path, tmp_path: Path) -> None:
    gz = corpus / "warcio/example.warc.gz"
    br = corpus / "webarchive-discovery/transfer_compression_brotli.warc"
    report = extract([gz, br], tmp_path / "out")
    assert report.not_decoded == 0
    page = (tmp_path / "out/example.com/index.html").read_bytes()
    assert page.startswith(b"<!doctype html>") and b"Example Domain" in page
    page = (tmp_path / "out/tokemon.sb.statsbiblioteket.dk/index.html").read_bytes()
    assert page.startswith(b"<html>") and b"Simple page" in page


def test_undecodable_body_kept_as_stored(corpus: Path, tmp_path: Path) -> None:
    # ClueWeb stored already-decoded bodies under Content-Encoding: gzip
    report = extract([corpus / "resiliparse/clueweb-quirk.warc.gz"], tmp_path / "out")
    rows = manifest(tmp_path / "out")
    flagged = [r for r in rows if r["decoded"] == "False"]
    assert report.not_decoded == len(flagged) > 0
    for r in flagged:
        assert (tmp_path / "out" / r["file"]).stat().st_size == int(r["bytes"]) > 0


def test_cli_json_manifest(corpus: Path, tmp_path: Path) -> None:
    res = CliRunner().invoke(cli, ["extract", str(corpus / PYWB / "example.warc.gz"),
                                   "-o", str(tmp_path / "out"), "--manifest", "json"])
    assert res.exit_code == 0, res.output
    assert res.output.startswith("1 files, 1270 bytes")
    rows = json.loads((tmp_path / "out" / f"{MANIFEST_NAME}.json").read_text())
    # the one 2xx response of the file: a directory-like URL with a query
    assert rows == [{
        "file": "example.com/index@example=1.html", "url": "http://example.com?example=1",
        "timestamp": "20140103030321", "warc_date": "2014-01-03T03:03:21Z",
        "record_type": "response", "status": 200, "mime": "text/html",
        "warc_file": "example.warc.gz", "offset": 333, "original_file": "",
        "original_offset": "", "bytes": 1270, "decoded": True, "truncated": "",
    }]


def test_dns_and_non_2xx_responses_are_skipped(corpus: Path, tmp_path: Path) -> None:
    warc = corpus / "jwat/warc/IAH-20080430204825-00000-blackbook.warc.gz"
    dns = ok = other = 0
    with open(warc, "rb") as f:
        for rec in WarcioIterator(f):
            if rec.rec_type != "response":
                continue
            if rec.rec_headers.get_header("WARC-Target-URI").startswith("dns:"):
                dns += 1
            elif (rec.http_headers.get_statuscode() or "").startswith("2"):
                ok += 1
            else:
                other += 1
    report = extract([warc], tmp_path / "out", all_captures=True)
    assert report.skipped == {"no-http-status": dns, "not-2xx": other}
    assert report.files == ok == len(manifest(tmp_path / "out"))
    assert dns > 0 and other > 0
