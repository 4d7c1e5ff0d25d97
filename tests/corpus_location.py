"""Where the third-party corpus lives: ../shared/corpus beside the repository, or
$WEBARK_CORPUS. Tests read it and never write to it. (A module of its own, not conftest,
because several conftest.py files exist and `import conftest` would be ambiguous.)"""

from __future__ import annotations

import os
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
_BESIDE = REPO.parent / "shared" / "corpus"
CORPUS = _BESIDE if _BESIDE.is_dir() else Path(os.environ.get("WEBARK_CORPUS", _BESIDE))
