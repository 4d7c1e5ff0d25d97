"""AsyncWarcWriter: 50 concurrent tasks, captures never interleaved or split across files."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

from warcio.archiveiterator import ArchiveIterator

from webark.warc.builders import MetadataFields, WarcinfoFields
from webark.warc.writer import AsyncWarcWriter, WarcWriter

WARCIO = str(Path(sys.executable).parent / "warcio")


def exchange_blocks(i: int) -> tuple[bytes, bytes]:
    body = (b"<html><body>page %d " % i) + os.urandom(500 + 97 * i).hex().encode() + b"</body>"
    response = (
        b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: %d\r\n\r\n" % len(body)
        + body
    )
    request = b"GET /p/%d HTTP/1.1\r\nHost: example.com\r\nAccept: */*\r\n\r\n" % i
    return response, request


async def crawl(w: AsyncWarcWriter, n: int) -> list[list[str]]:
    async def task(i: int) -> list[str]:
        await asyncio.sleep((i * 7 % 11) / 1000)  # shuffle the arrival order
        response, request = exchange_blocks(i)
        recs = w.builder.exchange(
            f"http://example.com/p/{i}",
            response,
            request,
            ip_address="93.184.216.34",
            metadata=MetadataFields(via="http://example.com/", hops_from_seed="L"),
        )
        written = await w.write(*recs)
        return [r.path for r in written]

    return await asyncio.gather(*(task(i) for i in range(n)))


def test_fifty_concurrent_tasks(tmp_path: Path) -> None:
    async def main() -> tuple[WarcWriter, list[list[str]]]:
        writer = WarcWriter(
            tmp_path,
            prefix="ASYNC",
            max_size=40_000,
            warcinfo=WarcinfoFields(hostname="h", operator="t"),
        )
        async with AsyncWarcWriter(writer) as w:
            paths = await crawl(w, 50)
        assert writer.closed
        return writer, paths

    writer, paths = asyncio.run(main())
    assert all(len(set(p)) == 1 for p in paths)  # each capture in one file
    assert len(writer.paths) > 3  # and the files did rotate
    seen: set[str] = set()
    for path in writer.paths:
        assert not os.path.exists(path + ".open")
        proc = subprocess.run([WARCIO, "check", path], capture_output=True, text=True)
        assert proc.returncode == 0, proc.stdout
        with open(path, "rb") as f:
            recs = [(r.rec_type, r.rec_headers) for r in ArchiveIterator(f)]
        assert recs[0][0] == "warcinfo"
        assert os.path.getsize(path) <= 40_000 or len(recs) == 4
        body = recs[1:]
        assert len(body) % 3 == 0
        for k in range(0, len(body), 3):  # response, request, metadata back to back
            (t1, h1), (t2, h2), (t3, h3) = body[k : k + 3]
            assert (t1, t2, t3) == ("response", "request", "metadata")
            rid = h1.get_header("WARC-Record-ID")
            assert h2.get_header("WARC-Concurrent-To") == rid == h3.get_header("WARC-Concurrent-To")
            uri = h1.get_header("WARC-Target-URI")
            assert h2.get_header("WARC-Target-URI") == uri == h3.get_header("WARC-Target-URI")
            assert h1.get_header("WARC-Date") == h2.get_header("WARC-Date")
            seen.add(uri)
    assert seen == {f"http://example.com/p/{i}" for i in range(50)}
