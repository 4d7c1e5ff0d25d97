"""``kill -9`` of ``webark serve --record`` while two clients record: the open WARC is
repairable and every line of the collection's index points at a complete record of the
URL it names, on disk (the capture back end's invariant, as for ``webark proxy``)."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import httpx

from collection_checks import index_names_complete_records, kill_9
from http_wait import webark_serve_process
from record_site import new_collection
from sites import HTML, TestSite, html
from webark.warc.check import check_file
from webark.warc.repair import repair_open_file


def test_kill_9_while_recording_leaves_a_repairable_warc_and_a_consistent_index(
    tmp_path: Path,
) -> None:
    pages = {f"/p{i}.html": (200, HTML, html(f"page {i} " + "x" * (2000 + i)))
             for i in range(40)}  # fmt: skip
    coll = new_collection(tmp_path)
    stop = threading.Event()
    done: list[int] = []
    errors: list[str] = []

    def client(base: str, k: int) -> None:
        with httpx.Client(timeout=10) as c:
            i = k
            while not stop.is_set():
                try:
                    r = c.get(f"{base}rec/record/{site.url(f'/p{i % 40}.html')}")
                except httpx.HTTPError:
                    return
                if r.status_code != 200:
                    errors.append(f"{r.status_code} {r.text[:200]}")
                    return
                done.append(i)
                i += 2

    with TestSite(pages) as site, webark_serve_process(
        str(tmp_path), "--record", "--allow-private", "--resolve-only"
    ) as (base, proc):
        threads = [threading.Thread(target=client, args=(base, k)) for k in range(2)]
        for t in threads:
            t.start()
        deadline = time.monotonic() + 60
        while len(done) < 60 and not errors and time.monotonic() < deadline:
            time.sleep(0.02)
        assert not errors and len(done) >= 60, errors
        kill_9(proc, stop, threads)
    (opened,) = list((coll / "warcs").iterdir())
    assert opened.name.endswith(".open")
    assert index_names_complete_records(coll) >= 60
    repaired = repair_open_file(opened)
    assert check_file(repaired.new_path).ok
