"""Fixtures of the crawler tests."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator

import pytest


@pytest.fixture(autouse=True)
def _end_leftover_crawls() -> Iterator[None]:
    """End the ``webark crawl`` processes a test started through ``test_control.Crawl``
    and left running (it failed before stopping them), by their own PIDs: otherwise
    they crawl on, and hold their ports and job folders, after the test."""
    yield
    import sys

    started = getattr(sys.modules.get("test_control"), "STARTED", None)
    if not started:
        return
    for proc in list(started):
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(10)
        started.remove(proc)
