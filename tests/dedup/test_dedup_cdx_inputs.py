"""`webark dedup build --from-cdx` on the CDX layouts archives have (a ` CDX …` header
naming any field order, NetarchiveSuite's headerless ARC CDX) and on hostile lines (an
offset that is a JSON list or 10^30, bytes that are not UTF-8): every bad line is
reported as FILE:LINE and skipped, and an input nothing could be taken from fails."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from click.testing import CliRunner

from webark.cli.dedup_cmds import dedup
from webark.dedup.build import load
from webark.dedup.sqlite_dedup import open_index
from webark.warc.reader import ArchiveReader

IANA_CDX = "pywb/cdx/iana.cdx"


def _build(tmp_path: Path, *args: str) -> tuple[int, str, str]:
    res = CliRunner().invoke(dedup, ["build", str(tmp_path / "d.sqlite"), *args])
    if res.exception and not isinstance(res.exception, SystemExit):
        raise res.exception
    return res.exit_code, res.stdout, res.stderr


def _nas_cdx(arc: Path, *, checksum: bool = True) -> str:
    """NetarchiveSuite's CDX of an ARC (ExtractCDXJob: ``A e b m n g v c``, no header):
    URL, IP, date, MIME, length and offset of each record as the ARC header line gives
    them, the ARC file name, and the MD5 of the record's content."""
    out = []
    for rec in ArchiveReader(arc):
        if rec.type != "response":
            continue
        url, ip, date, mime, length = rec.headers.get("ARC-Header-Line").rsplit(" ", 4)
        fields = [url, ip, date, mime, length, arc.name, str(rec.offset)]
        if checksum:
            fields.append(hashlib.md5(rec.block.read_all()).hexdigest())
        out.append(" ".join(fields) + "\n")
    return "".join(out)


def test_netarchivesuite_arc_cdx_is_read_and_said_to_have_no_digest(
    corpus: Path, tmp_path: Path
) -> None:
    arc = corpus / "jwat/arc/IAH-20080430204825-00000-blackbook.arc.gz"
    cdx = tmp_path / "nas.cdx"
    cdx.write_text(_nas_cdx(arc))
    n = len(cdx.read_text().splitlines())
    assert n == 299  # the responses of the ARC (dns: included)
    code, out, err = _build(tmp_path, "--json", "-c", str(cdx))
    # before: "expected 11 CDX fields" for each of the 299 lines, and exit status 0
    assert "expected 11" not in err
    assert code == 1
    assert f"{cdx}:1: CDX layout 'A e b m n g v c' (NetarchiveSuite's ARC CDX" in err
    assert "has no payload digest (k)" in err and "crawl.logs (-l)" in err
    assert f"error: {cdx}: nothing loaded: its CDX layout has no payload digest" in err
    row = json.loads(out)
    assert row["loaded"] == 0 and row["skipped"] == {"no-digest": n}
    assert "no payload digest" in row["unusable"]
    # the 7-field variant (ExtractCDXJob(false)) is recognised the same way
    cdx7 = tmp_path / "nas7.cdx"
    cdx7.write_text(_nas_cdx(arc, checksum=False))
    code, _, err = _build(tmp_path, "-c", str(cdx7))
    assert code == 1 and "CDX layout 'A e b m n g v'" in err


def test_header_line_names_the_fields(corpus: Path, tmp_path: Path) -> None:
    """A CDX whose header puts the fields in another order (and names the URL 'A', the
    offset 'v', as NetarchiveSuite does) gives the same originals as pywb's CDX11."""
    src = (corpus / IANA_CDX).read_text().splitlines()
    letters = src[0].split()[1:]
    assert letters == ["N", "b", "a", "m", "s", "k", "r", "M", "S", "V", "g"]
    order = ["a", "b", "m", "s", "g", "k", "V"]
    lines = [" CDX A b m s g k v"]
    for raw in src[1:]:
        f = dict(zip(letters, raw.split(" "), strict=True))
        lines.append(" ".join(f[x] for x in order))
    other = tmp_path / "reordered.cdx"
    other.write_text("\n".join(lines) + "\n")
    with open_index(tmp_path / "a.sqlite") as a, open_index(tmp_path / "b.sqlite") as b:
        ra = load(a, "cdx", corpus / IANA_CDX)
        rb = load(b, "cdx", other)
        assert ra.loaded == rb.loaded == 28 and rb.errors == 0
        q = "SELECT urlkey, hex(digest), ts, offset FROM by_url"
        assert sorted(a._db.execute(q).fetchall()) == sorted(b._db.execute(q).fetchall())
        hit = b.lookup("http://www.iana.org/", "sha1:OSSAPWJ23L56IYVRW3GFEAR4MCJMGPTB")
        assert hit is not None and hit.warc_filename == "iana.warc.gz"


def test_netarchivesuite_warc_cdx_loads(corpus: Path, tmp_path: Path) -> None:
    """NetarchiveSuite's WARC CDX is CDX9 without a header (N b a m s k r V g)."""
    src = (corpus / IANA_CDX).read_text().splitlines()[1:]
    cdx9 = tmp_path / "nas-warc.cdx"
    cdx9.write_text("".join(" ".join(ln.split(" ")[:7] + ln.split(" ")[9:]) + "\n" for ln in src))
    code, out, err = _build(tmp_path, "-c", str(cdx9))
    assert code == 0, err
    assert f"{cdx9}: 28 originals loaded" in out


def _cdxj(offset: object, filename: str = "a.warc.gz", url: str = "http://example.com/") -> str:
    return "com,example)/ 20140101000000 " + json.dumps({
        "url": url, "mime": "text/html", "status": "200",
        "digest": "sha1:OSSAPWJ23L56IYVRW3GFEAR4MCJMGPTB", "offset": offset,
        "filename": filename,
    })


def test_hostile_lines_are_reported_and_skipped(tmp_path: Path) -> None:
    """Hardening item 14: each of these was a traceback (TypeError, OverflowError,
    UnicodeEncodeError in SQLite) that lost the rest of the build."""
    cdxj = tmp_path / "hostile.cdxj"
    good = _cdxj("10", url="http://example.com/good")
    cdxj.write_bytes("\n".join([
        _cdxj([1, 2]),
        _cdxj(10**30),
        _cdxj(str(10**30)),
        good,
        _cdxj("7", filename="a\udcff.warc.gz"),
        _cdxj("8", url="http://example.com/\udcfe"),
        _cdxj(True),
    ]).encode("utf-8", "surrogateescape") + b"\n")
    cdx = tmp_path / "hostile.cdx"
    cdx.write_bytes(
        b"com,example)/ 20140101000000 http://example.com/ text/html 200 "
        b"OSSAPWJ23L56IYVRW3GFEAR4MCJMGPTB - - 100 " + str(10**30).encode() + b" a.warc.gz\n"
        b"com,example)/ 20140101000000 http://example.com/ text/html 200 "
        b"OSSAPWJ23L56IYVRW3GFEAR4MCJMGPTB - - 100 5 b\xff.warc.gz\n"
    )
    code, out, err = _build(tmp_path, "-c", str(cdxj), "-c", str(cdx))
    assert "Traceback" not in err
    assert f"{cdxj}:1: skipped: offset is not a number: [1, 2]" in err
    assert f"{cdxj}:2: skipped: offset {10**30} is beyond any file" in err
    assert f"{cdxj}:3: skipped: offset {10**30} is beyond any file" in err
    assert f"{cdxj}:5: skipped: http://example.com/: WARC file name is not UTF-8: " \
           "'a\\xff.warc.gz'" in err
    assert f"{cdxj}:6: skipped: http://example.com/\\xfe: URL is not UTF-8" in err
    assert f"{cdxj}:7: skipped: offset is not a number: True" in err
    assert f"{cdxj}: 1 originals loaded; skipped: error 6" in out
    assert f"{cdx}:1: skipped: offset {10**30} is beyond any file" in err
    assert f"{cdx}:2: skipped: http://example.com/: WARC file name is not UTF-8: " \
           "'b\\xff.warc.gz'" in err
    # nothing could be taken from the CDX: an input error, whatever the other file gave
    assert f"error: {cdx}: nothing loaded: none of its 2 lines could be read" in err
    assert code == 1
    with open_index(tmp_path / "d.sqlite", readonly=True) as idx:
        hit = idx.lookup("http://example.com/good", "sha1:OSSAPWJ23L56IYVRW3GFEAR4MCJMGPTB")
        assert hit is not None and (hit.warc_filename, hit.offset) == ("a.warc.gz", 10)


def test_every_line_rejected_is_exit_1(tmp_path: Path) -> None:
    """An input whose every line is rejected was exit status 0 with 0 originals."""
    cdx = tmp_path / "junk.cdx"
    cdx.write_text("this is not a cdx line\nnor is this one\n")
    code, _, err = _build(tmp_path, "-c", str(cdx))
    assert code == 1
    assert f"{cdx}:1: skipped:" in err and f"{cdx}:2: skipped:" in err
    assert f"error: {cdx}: nothing loaded: none of its 2 lines could be read" in err
    empty = tmp_path / "empty.cdx"
    empty.write_text(" CDX N b a m s k r M S V g\n")
    code, _, err = _build(tmp_path, "-c", str(empty))
    assert code == 1 and f"error: {empty}: nothing loaded: no lines" in err
