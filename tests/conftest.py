"""Shared fixtures: where the third-party corpus lives (never modified by tests).

The corpus is ``shared/corpus`` beside the repository (``../shared/corpus`` from the repo
root), also in CI, which runs from a fresh clone with ``shared/`` next to it. When it is
not there, ``$WEBARK_CORPUS`` names it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from corpus_location import CORPUS


@pytest.fixture(scope="session")
def corpus() -> Path:
    """Path of ../shared/corpus (or $WEBARK_CORPUS). A missing corpus is an error, not a
    skip: tests that silently skip cannot fail."""
    if not (CORPUS / "PROVENANCE.md").exists():
        raise RuntimeError(f"corpus not found at {CORPUS}; set WEBARK_CORPUS")
    return CORPUS
