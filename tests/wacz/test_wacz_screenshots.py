"""Screenshot records in a WACZ (issue 13): ``webark wacz create`` keeps the
``urn:view:`` / ``urn:thumbnail:`` resource records in ``archive/`` and their lines in
``indexes/index.cdx.gz`` (cdxj-indexer's keys, the ones ReplayWeb.page looks up), and
does not list them as pages (json-pages-1.0: pages are what a user navigates to)."""

from __future__ import annotations

import gzip
import json
import subprocess
import zipfile
from pathlib import Path

from test_wacz_create import validate

from http_wait import WEBARK
from screenshot_site import PAGE, image_size, images, write_screenshot_warc
from webark.warc.reader import read_record_at


def test_screenshots_packed_and_indexed_not_pages(tmp_path: Path) -> None:
    warc = write_screenshot_warc(tmp_path / "warcs")
    out = tmp_path / "shots.wacz"
    res = subprocess.run([*WEBARK, "wacz", "create", str(warc), "-o", str(out), "--json"],
                         capture_output=True, text=True, timeout=120)  # fmt: skip
    assert res.returncode == 0, res.stderr
    validate(out)
    with zipfile.ZipFile(out) as zf:
        lines = gzip.decompress(zf.read("indexes/index.cdx.gz")).decode().splitlines()
        pages = [json.loads(x) for x in zf.read("pages/pages.jsonl").decode().splitlines()[1:]]
        packed = zf.read(f"archive/{warc.name}")
    views = [x for x in lines if x.startswith(f"urn:view:{PAGE} ")]
    thumbs = [x for x in lines if x.startswith(f"urn:thumbnail:{PAGE} ")]
    assert [x.split(" ")[1] for x in views] == ["20240501120002", "20240501120022"]
    assert len(thumbs) == 2
    assert not [p for p in pages if p["url"].startswith("urn:")]
    assert PAGE in {p["url"] for p in pages}
    # the index line points at the PNG inside the packed WARC
    fields = json.loads(views[0].split(" ", 2)[2])
    assert fields["mime"] == "image/png" and fields["filename"] == warc.name
    (tmp_path / "packed.warc.gz").write_bytes(packed)
    rec = read_record_at(str(tmp_path / "packed.warc.gz"), int(fields["offset"]))
    assert rec.type == "resource" and rec.target_uri == f"urn:view:{PAGE}"
    png = rec.block.read_all()
    assert png == images().view_1 and image_size(png) == (640, 400)
