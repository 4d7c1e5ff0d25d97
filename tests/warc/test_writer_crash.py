"""Crash safety: a writer process killed with SIGKILL at random moments leaves a ``.open``
file whose complete prefix is a valid WARC for warcio (``warcio check``) and fastwarc."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
import zlib
from pathlib import Path

import pytest
from fastwarc.warc import ArchiveIterator

WARCIO = str(Path(sys.executable).parent / "warcio")

CHILD = r"""
import os, random, sys
from webark.warc.builders import MetadataFields, WarcinfoFields
from webark.warc.writer import WarcWriter

directory, compression, seed = sys.argv[1], sys.argv[2], int(sys.argv[3])
rng = random.Random(seed)
w = WarcWriter(directory, compression=compression, warcinfo=WarcinfoFields(hostname="h"))
i = 0
while True:
    size = rng.choice([200, 5_000, 60_000, 700_000, 2_000_000])
    body = os.urandom(size // 2).hex().encode()[:size]
    resp = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: %d\r\n\r\n" % len(body)
    req = b"GET /%d HTTP/1.1\r\nHost: example.com\r\n\r\n" % i
    w.write(*w.builder.exchange(f"http://example.com/{i}", resp + body, req,
                                metadata=MetadataFields(via="http://example.com/")))
    if i == 0:
        print("ready", flush=True)
    i += 1
"""


def complete_prefix(data: bytes, compression: str) -> tuple[bytes, int]:
    """The longest prefix made of whole records, and how many records it holds."""
    pos = count = 0
    while pos < len(data):
        if compression == "gzip":
            d = zlib.decompressobj(31)
            d.decompress(data[pos:])
            if not d.eof:
                break
            end = len(data) - len(d.unused_data)
        else:
            head_end = data.find(b"\r\n\r\n", pos)
            if head_end < 0:
                break
            head = data[pos:head_end].decode()
            length = int(head.split("Content-Length: ")[1].split("\r\n")[0])
            end = head_end + 4 + length + 4
            if end > len(data):
                break
        pos = end
        count += 1
    return data[:pos], count


@pytest.mark.parametrize("compression", ["gzip", "none"])
def test_sigkill_leaves_every_complete_record_readable(tmp_path: Path, compression: str) -> None:
    rng = random.Random(20241130)
    for run in range(4):
        d = tmp_path / f"{compression}-{run}"
        d.mkdir()
        child = subprocess.Popen(
            [sys.executable, "-c", CHILD, str(d), compression, str(run)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        assert child.stdout is not None
        assert child.stdout.readline() == b"ready\n", child.stderr.read() if child.stderr else ""
        time.sleep(rng.uniform(0.05, 0.6))
        child.send_signal(signal.SIGKILL)
        child.wait()
        [name] = os.listdir(d)
        assert name.endswith(".open")  # killed: never renamed
        data = (d / name).read_bytes()
        prefix, count = complete_prefix(data, compression)
        assert count >= 4  # warcinfo + the capture announced as ready
        assert len(data) - len(prefix) < 2_100_000  # at most the record being written is cut
        good = d / ("prefix" + (".warc.gz" if compression == "gzip" else ".warc"))
        good.write_bytes(prefix)
        proc = subprocess.run([WARCIO, "check", str(good)], capture_output=True, text=True)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        with open(good, "rb") as f:
            kinds = [
                (r.headers.get("WARC-Type"), r.verify_block_digest())
                for r in ArchiveIterator(f, parse_http=False)
            ]
        assert len(kinds) == count
        assert kinds[0] == ("warcinfo", True)
        assert all(ok for _, ok in kinds)
        assert [k for k, _ in kinds[1:]] == (["response", "request", "metadata"] * count)[
            : count - 1
        ]
