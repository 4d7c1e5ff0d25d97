"""``kill -9`` of ``webark proxy`` recording into a collection under load (four
clients, small WARCs so that files rotate): every closed WARC is valid, the open one is
repairable, and every line of the collection's index points at a complete record of
the URL it names, on disk."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import httpx
from proxy_support import proxy_process
from test_proxy_http import _init_collection

from collection_checks import index_names_complete_records, kill_9
from sites import HTML, TestSite, html
from webark.warc.check import check_file
from webark.warc.repair import repair_open_file


def test_kill_9_leaves_valid_warcs_and_a_consistent_index(tmp_path: Path) -> None:
    pages = {f"/p{i}.html": (200, HTML, html(f"page {i} " + "x" * (3000 + i)))
             for i in range(60)}  # fmt: skip
    coll = _init_collection(tmp_path / "colls", "k")
    stop = threading.Event()
    done: list[int] = []

    def client(port: int, k: int) -> None:
        with httpx.Client(proxy=f"http://127.0.0.1:{port}", timeout=10) as c:
            i = k
            while not stop.is_set():
                try:
                    c.get(site.url(f"/p{i % 60}.html"))
                    done.append(i)
                except httpx.HTTPError:
                    return
                i += 4

    with TestSite(pages) as site, proxy_process(
        "--collection", str(coll), "--max-warc-size", "60000"
    ) as (port, proc):
        threads = [threading.Thread(target=client, args=(port, k)) for k in range(4)]
        for t in threads:
            t.start()
        while len(done) < 150:
            time.sleep(0.02)
        kill_9(proc, stop, threads)
    warcs = coll / "warcs"
    closed = [p for p in warcs.iterdir() if p.name.endswith(".warc.gz")]
    opened = [p for p in warcs.iterdir() if p.name.endswith(".open")]
    assert len(closed) >= 2 and len(opened) <= 1
    for p in closed:
        report = check_file(p)
        assert report.ok, report
    assert index_names_complete_records(coll) >= 100
    for p in opened:
        repaired = repair_open_file(p)
        assert check_file(repaired.new_path).ok
