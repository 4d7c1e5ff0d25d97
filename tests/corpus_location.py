"""Where the third-party corpus lives: ../shared/corpus beside the repository, or
$WEBARK_CORPUS. Tests read it and never write to it. (A module of its own, not conftest,
because several conftest.py files exist and `import conftest` would be ambiguous.)

Test modules may read corpus files at import (tables of cases): tests/conftest.py checks
:data:`CORPUS` before any module is collected and stops the run with :func:`missing`'s
message, so a clone without the corpus says where to put it instead of failing at
collection with a FileNotFoundError."""

from __future__ import annotations

import os
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
_BESIDE = REPO.parent / "shared" / "corpus"
CORPUS = _BESIDE if _BESIDE.is_dir() else Path(os.environ.get("WEBARK_CORPUS", _BESIDE))


def missing() -> str | None:
    """None when the corpus is there (its PROVENANCE.md), else what to do about it."""
    if (CORPUS / "PROVENANCE.md").is_file():
        return None
    env = os.environ.get("WEBARK_CORPUS")
    where = f"WEBARK_CORPUS={env} has no PROVENANCE.md" if env else "WEBARK_CORPUS is not set"
    return (
        f"the test corpus (third-party WARC/ARC/CDX/crawl.log files, described in its "
        f"PROVENANCE.md) is not at {_BESIDE} ({where}): put it there, as CI does "
        f"(shared/corpus beside the clone), or set WEBARK_CORPUS to its folder"
    )
