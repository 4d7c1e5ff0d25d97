"""``webark spark dedup``: a dedup index from many WARCs (``webark dedup build
--from-warc`` at scale).

The expensive part, reading every record and computing missing payload digests, runs on
the executors: one task per (W)ARC file maps it with
:func:`~webark.dedup.build.warc_originals` under the same
:class:`~webark.dedup.policy.DedupPolicy`. The driver streams the results back in input
order (``toLocalIterator``: one partition in memory at a time) and adds them to the
SQLite index with :func:`~webark.dedup.build.load_items`, as ``dedup build`` does, so the
index holds the very entries ``dedup build`` would write (ties between originals of one
digest resolve in the same order).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from functools import partial
from typing import TYPE_CHECKING

from webark.dedup.build import Item, SourceReport, load_items, warc_originals
from webark.dedup.policy import DedupPolicy
from webark.dedup.sqlite_dedup import Prefer, open_index
from webark.spark.report import JobReport
from webark.spark.tasks import WarcTask, plan_tasks

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ["run_dedup"]


def _originals(tasks: Iterable[WarcTask], policy: DedupPolicy
               ) -> Iterator[tuple[int, str, list[Item] | None, str | None]]:
    """``(task number, path, items, None)``, or ``(…, None, reason)`` for an unreadable
    file."""
    for t in tasks:
        try:
            yield t.number, t.path, list(warc_originals(t.path, policy)), None
        except OSError as e:
            yield t.number, t.path, None, f"{t.path}: cannot read: {e.strerror or e}"


def run_dedup(
    spark: SparkSession,
    index_path: str,
    inputs: list[str],
    *,
    policy: DedupPolicy | None = None,
    prefer: Prefer | None = None,
) -> tuple[JobReport, list[SourceReport]]:
    """Add the originals of the (W)ARC files ``inputs`` to the dedup index at
    ``index_path`` (created when missing).

    Returns:
        ``(report, per-file reports)``: the job's counts (``written``: originals added;
        ``records``: items read) and one :class:`SourceReport` per readable file, in
        input order (skips per reason, problems with offsets).

    Raises:
        ValueError: ``prefer`` differs from an existing index's choice.
        sqlite3.DatabaseError: ``index_path`` is not a dedup index.
    """
    pol = policy or DedupPolicy()
    sc = spark.sparkContext
    report = JobReport("dedup", master=str(sc.master))
    tasks = plan_tasks(inputs, split_bytes=0)  # whole files: warc_originals reads one
    report.tasks = report.files = len(tasks)
    report.input_bytes = sum(t.size for t in tasks)
    reports: list[SourceReport] = []
    sc.setJobGroup("webark-dedup", f"webark spark dedup: {len(tasks)} files")
    with open_index(index_path, prefer=prefer) as idx:
        if tasks:
            results = sc.parallelize(tasks, len(tasks)).mapPartitions(
                partial(_originals, policy=pol))
            for _, path, items, unreadable in results.toLocalIterator(prefetchPartitions=True):
                if items is None:
                    report.unreadable.append(unreadable or path)
                    continue
                r = load_items(idx, "warc", path, items)
                reports.append(r)
                report.records += r.items
                report.written += r.loaded
                for s in r.problems:
                    report.problems.add(s.code or s.reason, f"{r.where(s)}: {s.message}")
                report.errors += r.errors
    return report.end(), reports
