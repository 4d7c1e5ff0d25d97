"""Running ``webark proxy`` as a child process on 127.0.0.1 for the proxy tests, and
curl through it."""

from __future__ import annotations

import re
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from http_wait import webark_child

_URL = re.compile(r"at http://127\.0\.0\.1:(\d+)/")


@contextmanager
def proxy_process(*args: str) -> Iterator[tuple[int, subprocess.Popen[str]]]:
    """``webark proxy ARGS --port 0 --allow-private``: yields (its port, the process)
    once listening; stopped (SIGTERM) at the end."""
    with webark_child(["proxy", *args, "--port", "0", "--allow-private"], _URL) as (m, proc):
        yield int(m.group(1)), proc


def curl(port: int, url: str, *args: str,
         timeout: float = 60) -> subprocess.CompletedProcess[bytes]:  # fmt: skip
    """``curl -s -x http://127.0.0.1:PORT ARGS URL`` (output as bytes)."""
    return subprocess.run(["curl", "-s", "-x", f"http://127.0.0.1:{port}", *args, url],
                          capture_output=True, timeout=timeout, check=False)  # fmt: skip


def crawl_log_lines(path: Path, n: int, wait: float = 10.0) -> list[str]:
    """The lines of a crawl.log once it has at least ``n`` (the proxy archives after
    the client has its response); fewer after ``wait`` seconds."""
    end = time.monotonic() + wait
    while True:
        lines = path.read_text().splitlines() if path.exists() else []
        if len(lines) >= n or time.monotonic() > end:
            return lines
        time.sleep(0.05)
