"""System packages some tests need (Debian's Chromium, python3-doc, wget, PostgreSQL …),
installed by ``scripts/setup.sh`` on request (``.ci/run`` asks for all of them). Outside
CI a missing one skips the tests that need it, naming the command that installs it;
under ``CI=true`` it fails them: CI installs them, so a missing one there is a broken
set-up."""

from __future__ import annotations

import os

import pytest


def in_ci() -> bool:
    """True under CI (``CI=true``, as ``.ci/run`` is run)."""
    return os.environ.get("CI", "").lower() in ("true", "1", "yes")


def require(present: bool, what: str, install: str) -> None:
    """Skip (outside CI) or fail (in CI) when a system package is missing."""
    if present:
        return
    msg = f"{what} is not installed; install it with: {install}"
    if in_ci():
        pytest.fail(f"{msg} (.ci/run exports it: the CI set-up is broken)")
    pytest.skip(msg)
