"""Running ``webark proxy`` as a child process on 127.0.0.1 for the proxy tests, and
curl through it."""

from __future__ import annotations

import subprocess

from http_wait import crawl_log_lines, proxy_process  # noqa: F401  (re-exported)


def curl(port: int, url: str, *args: str,
         timeout: float = 60) -> subprocess.CompletedProcess[bytes]:  # fmt: skip
    """``curl -s -x http://127.0.0.1:PORT ARGS URL`` (output as bytes)."""
    return subprocess.run(["curl", "-s", "-x", f"http://127.0.0.1:{port}", *args, url],
                          capture_output=True, timeout=timeout, check=False)  # fmt: skip
