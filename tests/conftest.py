"""Shared fixtures: where the third-party corpus lives (never modified by tests)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
CORPUS = Path(os.environ.get("WEBARK_CORPUS", REPO.parent / "shared" / "corpus"))


@pytest.fixture(scope="session")
def corpus() -> Path:
    """Path of ../shared/corpus (or $WEBARK_CORPUS)."""
    if not (CORPUS / "PROVENANCE.md").exists():
        raise RuntimeError(f"corpus not found at {CORPUS}; set WEBARK_CORPUS")
    return CORPUS
