"""Streaming: a 10-million-line prefix query from a lazily generated source is sent as it
is made — the first bytes arrive at once, the server's memory stays flat while the
client reads, and closing the connection stops the scan. Also: a backend failure
mid-stream aborts the response instead of ending it cleanly; at the start it is a 503.

The server runs in a child process (stream_server.py) so its RSS and CPU are its own.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

HERE = Path(__file__).resolve().parent
LINES = 10_000_000
READ_BYTES = 24 * 1024 * 1024  # what the test reads of the ~2.5 GB answer


def _stat(pid: int) -> tuple[int, float]:
    """(RSS in KiB, CPU seconds) of process ``pid``."""
    rss = 0
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            rss = int(line.split()[1])
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return rss, (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@pytest.fixture(scope="module")
def server() -> Iterator[tuple[str, int]]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE), *sys.path])}
    proc = subprocess.Popen(
        [sys.executable, str(HERE / "stream_server.py"), str(LINES)],
        stdout=subprocess.PIPE, env=env,
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        port = int(proc.stdout.readline())
        base = f"http://127.0.0.1:{port}"
        for _ in range(100):
            try:
                httpx.get(base + "/", timeout=1)
                break
            except httpx.TransportError:
                time.sleep(0.05)
        yield base, proc.pid
    finally:
        proc.terminate()
        proc.wait(10)


def test_ten_million_lines_stream_in_bounded_memory(server: tuple[str, int]) -> None:
    base, pid = server
    httpx.get(base + "/big/cdx", params={"url": "big.com/p0", "limit": "5"})  # warm up
    rss0, _ = _stat(pid)
    peak = rss0
    got = 0
    t0 = time.perf_counter()
    first = None
    with httpx.stream(
        "GET", base + "/big/cdx",
        params={"url": "big.com", "matchType": "host", "output": "json"}, timeout=30,
    ) as r:  # fmt: skip
        assert r.status_code == 200
        assert r.headers.get("transfer-encoding") == "chunked"
        assert "content-length" not in r.headers
        for chunk in r.iter_raw():
            if first is None:
                first = time.perf_counter() - t0
                assert chunk.startswith(b'{"urlkey": "com,big)/p00000000"')
            got += len(chunk)
            if got // (1 << 20) != (got - len(chunk)) // (1 << 20):  # every MiB
                peak = max(peak, _stat(pid)[0])
            if got >= READ_BYTES:
                break
    elapsed = time.perf_counter() - t0
    assert first is not None and first < 1.0, f"first bytes after {first:.2f} s"
    # the whole answer is ~2.5 GB; a server that buffered even 1 % of it would grow by 25 MB
    assert peak - rss0 < 20 * 1024, f"server RSS grew by {(peak - rss0) / 1024:.1f} MiB"
    assert elapsed < 30

    # closing the connection stops the scan: the server goes idle
    time.sleep(1.0)
    _, cpu0 = _stat(pid)
    time.sleep(1.0)
    _, cpu1 = _stat(pid)
    assert cpu1 - cpu0 < 0.2, f"server still busy after the client left ({cpu1 - cpu0:.2f} s)"
    # and it still answers
    r2 = httpx.get(base + "/big/cdx", params={"url": "big.com/p00000002"})
    assert r2.status_code == 200 and r2.text.startswith("com,big)/p00000002 ")


def test_failure_mid_stream_aborts_the_response(server: tuple[str, int]) -> None:
    base, _ = server
    got = 0
    with (
        pytest.raises(httpx.RemoteProtocolError),
        httpx.stream("GET", base + "/flaky/cdx", params={"url": "big.com/*"}, timeout=30) as r,
    ):
        assert r.status_code == 200  # the failure came after the first chunk
        for chunk in r.iter_raw():
            got += len(chunk)
    assert got > 0


def test_failure_at_the_start_is_503(server: tuple[str, int]) -> None:
    base, _ = server
    r = httpx.get(base + "/down/cdx", params={"url": "big.com/*"})
    assert r.status_code == 503 and r.json()["status"] == 503
