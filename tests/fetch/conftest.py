"""Fixtures of the fetcher tests (helpers live in fetch_support.py)."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def tmp_warcs(tmp_path: Path) -> Path:
    d = tmp_path / "warcs"
    d.mkdir()
    return d
