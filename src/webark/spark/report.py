"""What a ``webark spark`` job did: counts, problems with file and offset, the summary
line printed at the end, and the exit status."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from webark.tools.problem_tally import ProblemTally
from webark.warc.record import Problem

__all__ = ["JobReport"]


@dataclass
class JobReport:
    """The account of one job.

    Attributes:
        job: the job's name (``index``, ``captures``, ``dedup``, ``stats``).
        master: the Spark master it ran on.
        tasks: tasks run (files, or byte ranges of big files).
        files: input files; input_bytes: their total size.
        records: (W)ARC records read.
        written: output units (CDX lines, table rows, index entries).
        unreadable: ``path: reason`` of files that could not be read at all.
        problems: broken records and other problems (``file @ offset: …``), counted per
            kind, the first ones listed (:class:`ProblemTally`).
        errors: problems of severity ``error`` (broken records) among them.
        started: ``time.monotonic()`` at the start; seconds: the duration once ended.
    """

    job: str
    master: str = ""
    tasks: int = 0
    files: int = 0
    input_bytes: int = 0
    records: int = 0
    written: int = 0
    unreadable: list[str] = field(default_factory=list)
    problems: ProblemTally = field(default_factory=ProblemTally)
    errors: int = 0
    started: float = field(default_factory=time.monotonic)
    seconds: float = 0.0

    def add_problems(self, problems: list[Problem]) -> None:
        """Count the problems that are not merely forgiven (in file order)."""
        for p in problems:
            if p.severity == "forgiven":
                continue
            self.problems.add(p.code, str(p))
            self.errors += p.severity == "error"

    def read_task_metas(self, tagged: Any) -> None:
        """Account for the tasks of a tagged RDD (the jobs' executors yield their
        output items and one ``("m", task number, records, problems, unreadable)``
        item per task): collect those, in task order (an action: it runs the tasks)."""
        metas = tagged.filter(lambda x: x[0] == "m").map(lambda x: x[1:]).collect()
        for _number, records, problems, unreadable in sorted(metas, key=lambda m: m[0]):
            self.records += records
            self.add_problems(problems)
            if unreadable:
                self.unreadable.append(unreadable)

    def end(self) -> JobReport:
        self.seconds = time.monotonic() - self.started
        return self

    @property
    def exit_status(self) -> int:
        """0 when every record was read; 1 when a file was unreadable or a record broken
        (what could be read is in the output)."""
        return 1 if (self.unreadable or self.errors) else 0

    def summary(self) -> str:
        """One line: what was read and written, how fast, what went wrong."""
        rate = self.records / self.seconds if self.seconds > 0 else 0.0
        mb = self.input_bytes / 1e6
        parts = [
            f"spark {self.job}: {self.files} files ({mb:,.1f} MB) in {self.tasks} tasks,",
            f"{self.records:,} records, {self.written:,} written, {self.seconds:.1f} s",
            f"({rate:,.0f} records/s) on {self.master};",
            f"{self.problems.total} problems ({self.errors} errors),",
            f"{len(self.unreadable)} unreadable files",
        ]
        return " ".join(parts)

    def to_json(self) -> dict[str, object]:
        return {
            "job": self.job, "master": self.master, "tasks": self.tasks, "files": self.files,
            "input_bytes": self.input_bytes, "records": self.records, "written": self.written,
            "seconds": round(self.seconds, 3), "unreadable": list(self.unreadable),
            "errors": self.errors, **self.problems.to_json(),
        }
