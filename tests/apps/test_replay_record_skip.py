"""Record mode's ``Recorder-Skip: 1`` (pywb's request header) through curl against a
site on 127.0.0.1: the request is fetched live and answered as a recorded one would be
(the same rewritten body), but nothing is written: no WARC record, no crawl.log line,
no index line."""

from __future__ import annotations

import subprocess
from pathlib import Path

from test_replay_record import curl, record_args, responses

from http_wait import webark_serve_process
from record_site import new_collection, record_pages
from sites import TestSite


def crawl_log_lines(coll: Path) -> list[str]:
    return [line for p in sorted((coll / "proxy").rglob("crawl.log*"))
            for line in p.read_text().splitlines() if line.strip()]  # fmt: skip


def test_recorder_skip_serves_live_and_writes_nothing(tmp_path: Path) -> None:
    coll = new_collection(tmp_path)
    site = TestSite(record_pages()).start()
    try:
        with webark_serve_process(str(tmp_path), *record_args()) as (base, _):
            rec = f"{base}rec/record/{site.url('/')}"
            skipped = curl(rec, "-H", "Recorder-Skip: 1")
            assert skipped[0] == 200 and b'<p id="p">recorded</p>' in skipped[1]
            # nothing written yet (the folders may not even exist)
            assert not (coll / "warcs").exists() or responses(coll) == {}
            assert not (coll / "proxy").exists() or crawl_log_lines(coll) == []
            recorded = curl(rec)
            assert recorded[0] == 200
            assert skipped[1] == recorded[1]  # rewritten the same way
            # and replay finds the one capture only
            listing = subprocess.run(["curl", "-s", f"{base}rec/cdx?url={site.url('/')}"],
                                     capture_output=True, text=True, timeout=60)  # fmt: skip
        assert [h.path for h in site.snapshot()] == ["/", "/"]  # both reached the site
    finally:
        site.stop()
    assert responses(coll) == {site.url("/"): 1}
    assert len(crawl_log_lines(coll)) == 1
    (line,) = [x for x in listing.stdout.splitlines() if x.strip()]
    assert f'"url": "{site.url("/")}"' in line and '"status": "200"' in line, line
