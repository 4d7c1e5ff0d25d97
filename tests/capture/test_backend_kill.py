"""``kill -9`` of a process in the middle of :meth:`WarcCaptureBackend.archive`, at
random moments, ten times: the dedup index never names a record that is not on disk.

A child process fetches pages of a loopback site (seven distinct payloads under forty
URLs, so most captures are revisits) and archives them through one back end, without
end. The test kills it at random moments; after each kill the ``.open`` WARC is
repaired (``webark warc repair``) and every original in the dedup index is read back at
its file and offset: a response record with the digest the index says. Then the next
child continues on the same folder and index."""

from __future__ import annotations

import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from sites import Page, TestSite, html
from webark.core.digests import Digest
from webark.warc.check import check_file
from webark.warc.reader import read_record_at
from webark.warc.repair import repair_open_file

CHILD = r"""
import asyncio, sys
from pathlib import Path
from webark.capture import CaptureConfig, CaptureMeta, SeriesConfig, WarcCaptureBackend
from webark.fetch import HttpFetcher

base, out = sys.argv[1], Path(sys.argv[2])

async def main():
    backend = WarcCaptureBackend(CaptureConfig(
        series=SeriesConfig(out / "warcs", prefix="KILL", max_size=200_000),
        dedup_index=out / "dedup.sqlite"))
    async with HttpFetcher("webark-test (archive@example.org)", allow_private=True) as f:
        i = 0
        while True:
            ex = await f.fetch(f"{base}p{i % 40}.html?round={i // 40}")
            await backend.archive(ex, CaptureMeta(hop_path="L"))
            i += 1
            if i % 10 == 0:
                print(i, flush=True)

asyncio.run(main())
"""


@pytest.fixture(scope="module")
def site() -> Iterator[TestSite]:
    pages: dict[str, Page] = {}
    for i in range(40):
        body = html(f"<p>payload {i % 7}</p>" + "x" * 2000)
        pages[f"/p{i}.html"] = (200, (("Content-Type", "text/html"),), body)

    def strip_query(path: str, headers: object) -> Page | None:
        return pages.get(path.split("?", 1)[0])

    with TestSite(pages, handler=strip_query) as s:
        yield s


def originals(out: Path) -> list[tuple[str, int, bytes]]:
    """Every original the index names: (file, offset, raw digest)."""
    db = sqlite3.connect(out / "dedup.sqlite")
    try:
        return [(str(name), int(offset), bytes(digest)) for name, offset, digest in db.execute(
            "SELECT f.name, u.offset, u.digest FROM by_url AS u JOIN files AS f"
            " ON f.id = u.file_id")]  # fmt: skip
    finally:
        db.close()


def test_dedup_index_never_points_past_the_warcs(tmp_path: Path, site: TestSite) -> None:
    rng = random.Random(11)
    out = tmp_path / "job"
    seen = 0
    for _ in range(10):
        proc = subprocess.Popen([sys.executable, "-c", CHILD, site.url("/"), str(out)],
                                stdout=subprocess.PIPE, text=True)  # fmt: skip
        assert proc.stdout is not None
        assert proc.stdout.readline().strip().isdigit()  # it has started archiving
        time.sleep(rng.uniform(0.05, 0.6))
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        for p in sorted((out / "warcs").glob("*.open")):
            if p.stat().st_size:
                repair_open_file(p)
            else:
                p.unlink()
        entries = originals(out)
        assert len(entries) >= seen  # nothing the index had is lost
        seen = len(entries)
        for name, offset, digest in entries:
            path = out / "warcs" / name
            assert path.is_file(), f"index names {name}, which is not on disk"
            rec = read_record_at(str(path), offset)
            assert rec.type == "response"
            assert Digest.parse(rec.headers.payload_digest or "").raw == digest
    assert seen >= 7  # every distinct payload became an original
    for w in sorted((out / "warcs").iterdir()):
        assert check_file(w).ok, w
