"""The tasks of the Spark jobs (no Spark needed): files, and record-aligned ranges of big
ones, in input order; URLs the executors cannot open are refused with a clear error."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from webark.cdx.indexer import IndexOptions, exact_range, index_file_text
from webark.spark.tasks import InputError, local_path, plan_tasks


def test_big_files_are_cut_at_records_and_ranges_cover_them(corpus: Path) -> None:
    iana = str(corpus / "pywb/warcs/iana.warc.gz")  # 790 kB, one gzip member per record
    arc = str(corpus / "pywb/warcs/example.arc.gz")
    tasks = plan_tasks([iana, arc], split_bytes=100_000)
    ranges = [(t.start, t.end) for t in tasks if t.path == iana]
    assert len(ranges) >= 4 and ranges[0][0] == 0 and ranges[-1][1] == tasks[0].size
    assert all(a[1] == b[0] for a, b in itertools.pairwise(ranges))
    assert [t.number for t in tasks] == list(range(len(tasks)))
    assert tasks[-1].path == arc and tasks[-1].whole_file  # small: one task
    o = IndexOptions(post_append=True)
    got = [s for t in tasks if t.path == iana for s in exact_range(iana, t.start, t.end, o).lines]
    assert got == [s for c in index_file_text(iana, o) for s in c.lines]


def test_urls_other_than_file_are_refused() -> None:
    assert local_path("file:///data/a.warc.gz") == "/data/a.warc.gz"
    assert local_path("/data/a.warc.gz") == "/data/a.warc.gz"
    with pytest.raises(InputError, match="hdfs:// inputs are not read yet"):
        local_path("hdfs://nn/crawl/a.warc.gz")
    with pytest.raises(InputError):
        plan_tasks(["s3a://bucket/a.warc.gz"])
