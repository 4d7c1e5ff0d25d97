"""One PostgreSQL index, several writers and a reader at once (issue: "two `collection
add` processes and a crawl writing to one PostgreSQL index at once, while a replay
server reads it"):

* two ``webark collection add`` processes, each adding eight copies of pywb's
  iana.warc.gz (171 lines each), four of them the same files in both lists;
* a crawl writing a WARC and appending its lines batch by batch
  (``IndexStore.append_to``, the API the capture back end uses);
* ``webark serve`` answering CDX queries and mementos all along.

The second ``collection add`` and the crawl are killed with ``-9`` half-way. Then: no
line is lost or indexed twice (every complete WARC has exactly its own lines, the
killed add's WARC in progress has none, the crawl's WARC has the lines of the records
before its mark, each once), the reader never saw a line twice or a 5xx; after the
crawl's WARC is repaired and both adds are run again, the index is the union of the
WARCs' own indexes.
"""

from __future__ import annotations

import collections
import os
import shutil
import signal
import subprocess
import threading
import time
from pathlib import Path

import httpx
from live_writer import run_live_writer

from http_wait import WEBARK, webark_serve_process
from index_stores import StoreChoice
from pg_cluster import PgCluster
from webark.cdx.indexer import FileIndex
from webark.index.collection import Collection
from webark.index.source import KeyRange
from webark.warc.repair import repair_open_file

IANA_LINES = 171


def _poll(base: str, stop: threading.Event, seen: dict[str, object]) -> None:
    """The replay server's reader: CDX queries over every line, counted per file, and
    mementos, until ``stop``."""
    counts: list[int] = []
    errors: list[str] = []
    with httpx.Client(base_url=base, timeout=30) as c:
        while not stop.is_set():
            r = c.get("/web/cdx", params={"url": "", "matchType": "range", "fl": "filename,offset"})
            if r.status_code != 200:
                errors.append(f"cdx {r.status_code}: {r.text[:200]}")
                continue
            rows = [tuple(x.split()) for x in r.text.splitlines()]
            dup = [k for k, n in collections.Counter(rows).items() if n > 1]
            if dup:
                errors.append(f"line twice in one answer: {dup[:3]}")
            counts.append(len(rows))
            for path in ("/web/2014/http://www.iana.org/", "/web/2030/http://live.test/page3.html"):
                m = c.get(path)
                if m.status_code >= 500:
                    errors.append(f"{path}: {m.status_code}")
            time.sleep(0.02)
    seen["counts"] = counts
    seen["errors"] = errors


def test_two_adds_a_crawl_and_a_reader(tmp_path: Path, corpus: Path, pg: PgCluster) -> None:
    choice = StoreChoice("postgres", pg)
    coll = choice.init(tmp_path / "colls" / "web")
    src = tmp_path / "in"
    src.mkdir()
    copies = []
    for i in range(12):
        p = src / f"iana-{i:02d}.warc.gz"
        shutil.copy(corpus / "pywb/warcs/iana.warc.gz", p)
        copies.append(p)
    # 4 files in both lists: a ends with them, b starts with its own (b is killed
    # during those, while a still works on its own)
    first, second = copies[:8], copies[8:] + copies[4:8]
    seen: dict[str, object] = {}
    stop = threading.Event()
    with webark_serve_process(str(tmp_path / "colls")) as (base, _server):
        reader = threading.Thread(target=_poll, args=(base, stop, seen))
        reader.start()
        add = [*WEBARK, "collection", "add", "--no-progress", str(coll.root)]
        a = subprocess.Popen([*add, *map(str, first)], stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, text=True)  # fmt: skip
        b = subprocess.Popen([*add, *map(str, second)], stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, text=True)  # fmt: skip
        live = run_live_writer(coll.root, tmp_path / "crawl", 5000, 5)
        assert live.stdout is not None
        opened = live.stdout.readline().split()
        live_name, live_open = opened[1], Path(opened[2])
        assert live.stdout.readline().startswith("BATCH")
        overlap = [a.poll() is None and b.poll() is None]  # all three writing at once
        # kill b once it has indexed two of its own files, the crawl after 60 batches
        store = coll.store()
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and b.poll() is None:
            mine = {f.name for f in store.files()} & {p.name for p in copies[8:]}
            if len(mine) >= 2:
                break
            time.sleep(0.01)
        overlap.append(a.poll() is None)
        os.kill(b.pid, signal.SIGKILL)
        for line in live.stdout:
            if line.startswith("BATCH") and int(line.split()[1]) >= 300:
                break
        os.kill(live.pid, signal.SIGKILL)
        b.wait(30)
        live.wait(30)
        assert a.wait(180) == 0, a.stderr.read() if a.stderr else ""
        time.sleep(0.3)  # the reader sees the final state
        stop.set()
        reader.join(60)
    assert overlap == [True, True]
    assert seen["errors"] == []
    counts = seen["counts"]
    assert isinstance(counts, list) and len(set(counts)) >= 3  # it read while they wrote
    assert counts == sorted(counts)  # lines only ever came in (no WARC half-visible)

    # consistent after the kills: each complete WARC has exactly its lines, the crawl's
    # WARC the lines before its mark, nothing twice
    files = {f.name: f for f in store.files()}
    per_file = collections.Counter(x.filename for x in store.scan(KeyRange("", None)))
    keys = [(x.filename, x.offset) for x in store.scan(KeyRange("", None))]
    assert len(keys) == len(set(keys))
    for name, f in files.items():
        assert per_file[name] == f.lines, name
        if name != live_name:
            assert f.complete and f.lines == IANA_LINES, name
    assert {p.name for p in first} <= set(files)
    live_file = files[live_name]
    assert not live_file.complete and live_file.lines >= 300
    assert live_file.indexed_to is not None and live_file.indexed_to <= live_open.stat().st_size
    assert all(x.offset < live_file.indexed_to for x in store.scan(KeyRange("", None))
               if x.filename == live_name)  # fmt: skip

    # recovery: the crawl's WARC repaired and added, the killed add run again
    final = repair_open_file(live_open).new_path
    for args in ([*map(str, second)], ["--in-place", final]):
        rerun = subprocess.run([*WEBARK, "collection", "add", "--no-progress", str(coll.root),
                                *args], capture_output=True, text=True, timeout=300)  # fmt: skip
        assert rerun.returncode == 0, rerun.stderr
    want = collections.Counter({p.name: IANA_LINES for p in copies})
    want[live_name] = sum(1 for _ in FileIndex(final, filename=live_name))
    got = collections.Counter(x.filename for x in store.scan(KeyRange("", None)))
    assert got == want
    assert all(f.complete for f in store.files())
    keys = [(x.filename, x.offset) for x in store.scan(KeyRange("", None))]
    assert len(keys) == len(set(keys))
    assert Collection.open(coll.root).unindexed_warcs() == []
    coll.close()
