"""Shared fixtures: where the third-party corpus lives (never modified by tests).

The corpus is ``shared/corpus`` beside the repository (``../shared/corpus`` from the repo
root), also in CI, which runs from a fresh clone with ``shared/`` next to it. When it is
not there, ``$WEBARK_CORPUS`` names it.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
_BESIDE = REPO.parent / "shared" / "corpus"
CORPUS = _BESIDE if _BESIDE.is_dir() else Path(os.environ.get("WEBARK_CORPUS", _BESIDE))


@pytest.fixture(scope="session")
def corpus() -> Path:
    """Path of ../shared/corpus (or $WEBARK_CORPUS). A missing corpus is an error, not a
    skip: tests that silently skip cannot fail."""
    if not (CORPUS / "PROVENANCE.md").exists():
        raise RuntimeError(f"corpus not found at {CORPUS}; set WEBARK_CORPUS")
    return CORPUS
