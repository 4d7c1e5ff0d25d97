"""Waiting for a server a test started (``webark serve`` in a child process) to answer."""

from __future__ import annotations

import time

import httpx


def wait_until_serving(url: str, tries: int = 200, pause: float = 0.05) -> None:
    """Return once ``GET url`` gets any HTTP answer; after ``tries`` refused
    connections (~10 s by default), return anyway and let the test's own request
    fail with its message."""
    for _ in range(tries):
        try:
            httpx.get(url, timeout=2)
            return
        except httpx.TransportError:
            time.sleep(pause)
