"""Shared fixtures: where the third-party corpus lives (never modified by tests).

The corpus is ``shared/corpus`` beside the repository (``../shared/corpus`` from the repo
root), also in CI, which runs from a fresh clone with ``shared/`` next to it. When it is
not there, ``$WEBARK_CORPUS`` names it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from corpus_location import CORPUS, missing


def pytest_configure(config: pytest.Config) -> None:
    """Stop before collection when the corpus is missing: test modules read it at
    import, which would fail as a FileNotFoundError per module. A usage error (exit
    status 4), not a skip: tests that silently skip cannot fail."""
    why = missing()
    if why is not None:
        raise pytest.UsageError(why)


@pytest.fixture(scope="session")
def corpus() -> Path:
    """Path of ../shared/corpus (or $WEBARK_CORPUS)."""
    return CORPUS
