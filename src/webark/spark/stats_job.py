"""``webark spark stats``: the figures of ``webark stats`` ("how big is your archive") for
many WARCs.

One task per (W)ARC file reads it with its own
:class:`~webark.tools.stats.StatsCollector` (the executors do the reading, decoding and
digest look-ups); the driver merges the collectors in input order
(:meth:`StatsCollector.merge`) and resolves the revisits, so the result is exactly
``webark stats`` of the same files. The driver holds what ``webark stats`` holds: one
8-byte hash per distinct URL and one entry per distinct payload digest.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING

from webark.spark.report import JobReport
from webark.spark.tasks import WarcTask, plan_tasks
from webark.tools.stats import ArchiveStats, StatsCollector

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ["run_stats"]


def _collect(tasks: Iterable[WarcTask]) -> Iterator[tuple[int, StatsCollector | None, str | None]]:
    for t in tasks:
        c = StatsCollector()
        try:
            c.add_file(t.path)
        except OSError as e:
            yield t.number, None, f"{t.path}: cannot read: {e.strerror or e}"
            continue
        yield t.number, c, None


def run_stats(spark: SparkSession, inputs: list[str]) -> tuple[JobReport, ArchiveStats]:
    """The :class:`ArchiveStats` of the (W)ARC files ``inputs``.

    Returns:
        ``(report, stats)``; broken records are in ``stats.problems`` (as ``webark
        stats`` lists them) and counted in ``report.errors``.
    """
    sc = spark.sparkContext
    report = JobReport("stats", master=str(sc.master))
    tasks = plan_tasks(inputs, split_bytes=0)
    report.tasks = report.files = len(tasks)
    report.input_bytes = sum(t.size for t in tasks)
    total = StatsCollector()
    if tasks:
        sc.setJobGroup("webark-stats", f"webark spark stats: {len(tasks)} files")
        parts = sc.parallelize(tasks, len(tasks)).mapPartitions(_collect)
        for _, collector, unreadable in parts.toLocalIterator(prefetchPartitions=True):
            if collector is None:
                report.unreadable.append(unreadable or "")
                continue
            total.merge(collector)
    stats = total.finish()
    report.records = stats.records
    report.written = stats.total.captures
    report.errors = stats.problems.total
    report.problems.merge(stats.problems)
    return report.end(), stats
