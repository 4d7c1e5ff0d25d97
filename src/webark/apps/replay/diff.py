"""Text-level diff of two captures of an HTML page (``/{coll}/diff/{ts1}/{ts2}/{url}``).

The visible text of each capture is extracted as search does it
(:func:`webark.search.html_text.visible_lines`, lexbor): ``<script>``, ``<style>``,
``<noscript>``, ``<template>``, ``<head>`` contents other than the title, and comments
are dropped; each block of text (block-level elements and ``<br>``) becomes a line with
runs of white space collapsed. The lines are compared with
:class:`difflib.SequenceMatcher` (autojunk off, so long pages with repeated lines are
compared exactly) and laid out side by side; runs of unchanged lines longer than
``2 * context`` are folded into one "… n unchanged lines …" row.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass

from webark.search.html_text import visible_lines

__all__ = ["DiffRow", "side_by_side", "visible_lines"]


@dataclass(frozen=True, slots=True)
class DiffRow:
    """One row of the side-by-side table: ``kind`` is ``same``, ``chg``, ``del``,
    ``add`` or ``skip`` (``count`` folded unchanged lines); line numbers are 1-based,
    None where a side has no line."""

    kind: str
    left: str = ""
    right: str = ""
    left_no: int | None = None
    right_no: int | None = None
    count: int = 0


def side_by_side(a: list[str], b: list[str], context: int = 3) -> tuple[list[DiffRow], int]:
    """Rows comparing ``a`` (left) with ``b`` (right), and the number of changed rows
    (added, removed or changed lines)."""
    rows: list[DiffRow] = []
    changed = 0
    sm = difflib.SequenceMatcher(None, a, b, autojunk=False)
    for tag, i1, i2, j1, j2 in sm.get_opcodes():
        if tag == "equal":
            n = i2 - i1
            if n > 2 * context + 1:
                head = range(0, context) if rows else range(0)
                tail = range(n - context, n) if i2 < len(a) or j2 < len(b) else range(0)
                for k in head:
                    rows.append(DiffRow("same", a[i1 + k], b[j1 + k], i1 + k + 1, j1 + k + 1))
                rows.append(DiffRow("skip", count=n - len(head) - len(tail)))
                for k in tail:
                    rows.append(DiffRow("same", a[i1 + k], b[j1 + k], i1 + k + 1, j1 + k + 1))
            else:
                for k in range(n):
                    rows.append(DiffRow("same", a[i1 + k], b[j1 + k], i1 + k + 1, j1 + k + 1))
            continue
        left, right = a[i1:i2], b[j1:j2]
        for k in range(max(len(left), len(right))):
            lt = left[k] if k < len(left) else None
            rt = right[k] if k < len(right) else None
            kind = "chg" if lt is not None and rt is not None else ("del" if rt is None else "add")
            rows.append(
                DiffRow(
                    kind, lt or "", rt or "",
                    i1 + k + 1 if lt is not None else None,
                    j1 + k + 1 if rt is not None else None,
                )
            )  # fmt: skip
            changed += 1
    return rows, changed
