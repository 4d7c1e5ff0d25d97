"""The problems of a run over many records (``webark stats``, ``webark extract``), kept
in bounded memory: exact counts per kind, and only the first :data:`MAX_LISTED` as
examples (``file @ offset: severity: code: message``).

A damaged multi-gigabyte WARC can have millions of broken records; keeping each one's
text would grow memory without bound and print a report nobody can read. What an
archivist needs is where the damage starts (the first examples, with file and offset
for ``webark warc extract FILE OFFSET`` or ``webark warc check``), and how much of it
there is of each kind (the counts).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Final

from webark.warc.record import Problem

MAX_LISTED: Final = 100
"""Problems kept as text examples per run; the rest are only counted."""


@dataclass
class ProblemTally:
    """Problems of a run: every one counted per kind, the first ``limit`` kept as text.

    Attributes:
        limit: how many examples to keep (:data:`MAX_LISTED`).
        listed: the first ``limit`` problems, as ``file @ offset: …`` text, in the
            order found.
        counts: problems per kind (a reader :attr:`Problem.code` such as
            ``bad-content-length``, or a tool's own kind such as ``empty-file``).
    """

    limit: int = MAX_LISTED
    listed: list[str] = field(default_factory=list)
    counts: Counter[str] = field(default_factory=Counter)

    def add(self, kind: str, text: str) -> None:
        """Count a problem of ``kind``; keep ``text`` while fewer than ``limit`` are."""
        self.counts[kind] += 1
        if len(self.listed) < self.limit:
            self.listed.append(text)

    def add_reader_errors(self, problems: Iterable[Problem]) -> None:
        """Add the ``error`` problems among a reader's (:class:`Problem`: broken
        records, file-level errors); warnings and forgiven ones are not problems of
        the run."""
        for p in problems:
            if p.severity == "error":
                self.add(p.code, str(p))

    def merge(self, other: ProblemTally) -> None:
        """Add ``other``'s problems after these (the tally of two runs one after the
        other: its listed ones while fewer than ``limit`` are, all its counts)."""
        self.counts.update(other.counts)
        room = self.limit - len(self.listed)
        if room > 0:
            self.listed.extend(other.listed[:room])

    @property
    def total(self) -> int:
        """Problems found (listed or not)."""
        return sum(self.counts.values())

    @property
    def not_listed(self) -> int:
        """Problems counted but not kept as text."""
        return self.total - len(self.listed)

    def __bool__(self) -> bool:
        return self.total > 0

    def summary(self) -> str | None:
        """``… N more problems not listed; all problems by kind: code N, …`` when some
        were not listed, else None (counts with thousands separators)."""
        if self.not_listed <= 0:
            return None
        kinds = ", ".join(f"{k} {n:,}" for k, n in sorted(self.counts.items()))
        return (f"… {self.not_listed:,} more problems not listed (the first "
                f"{len(self.listed):,} are); all {self.total:,} by kind: {kinds}")

    def to_json(self) -> dict[str, object]:
        """``problems`` (the listed text, a list as before), ``problem_counts`` (per
        kind, sorted), ``problems_total`` and ``problems_not_listed``: the keys the
        ``--json`` outputs carry."""
        return {
            "problems": list(self.listed),
            "problem_counts": dict(sorted(self.counts.items())),
            "problems_total": self.total,
            "problems_not_listed": self.not_listed,
        }


__all__ = ["MAX_LISTED", "ProblemTally"]
