"""The indexer writes, on every corpus file, the very bytes it wrote before it was split
into modules (issue 16): 64 option set × format × compat digests recorded with the
single-module indexer (tests/cdx/indexer_snapshot.py)."""

from __future__ import annotations

import json
from pathlib import Path

from indexer_snapshot import snapshot

RECORDED = Path(__file__).parent / "data" / "indexer_snapshot.json"


def test_output_is_byte_identical_to_the_recorded_one() -> None:
    want = json.loads(RECORDED.read_text())
    got = snapshot()
    assert len(want) == 64
    changed = sorted(k for k in want if got.get(k) != want[k])
    assert not changed, f"indexer output changed for {changed}"
