"""``webark spark index``: (W)ARC files → one sorted CDX(J) file and/or ZipNum shards.

The shape is Common Crawl's cc-index job: the tasks (:func:`~webark.spark.tasks.plan_tasks`:
files, and record-aligned byte ranges of big ones) are ``parallelize``-d one per
partition; each executor maps its task with :func:`~webark.cdx.ranges.exact_range`, the
indexer's pure function (the lines ``webark index`` writes for those records, byte for
byte); the lines are range-partitioned and sorted byte-wise (``sortBy``: Spark samples
the keys, cuts N ranges, sorts each partition), and each sorted partition is written by
its executor as one ZipNum shard (gzip blocks of 3,000 lines) and, for the plain file,
one part. The driver writes the ``.idx`` summary and ``.loc`` file (the shards' block
lists in range order are sorted) and concatenates the parts. The sorted file equals
``webark index --sort`` of the same inputs; a collection or ``webark serve`` reads the
ZipNum index from its ``indexes/`` folder (``*.idx``), or the sorted file.

Executors write their shards and parts into the output folders themselves: on a cluster
these must be on a filesystem the executors and the driver share.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from functools import partial
from typing import TYPE_CHECKING, Any

from webark.cdx.formats import header
from webark.cdx.indexer import IndexOptions, exact_range
from webark.index.zipnum import ZipNumBlock
from webark.index.zipnum_write import BLOCK_LINES, write_shard, write_summary
from webark.spark.report import JobReport
from webark.spark.tasks import WarcTask, plan_tasks

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ["LINES_PER_SHARD", "IndexOutputs", "run_index"]

LINES_PER_SHARD = 2_000_000
"""Default shard size: lines per ZipNum shard (and sort partition)."""


@dataclass
class IndexOutputs:
    """What the job wrote: the sorted file (or None), the ZipNum summary (or None) and
    the shard files."""

    cdx: str | None = None
    idx: str | None = None
    shards: list[str] = field(default_factory=list)


# -- executors ---------------------------------------------------------------------------
def _index_tasks(tasks: Iterable[WarcTask], options: IndexOptions, fmt: str
                 ) -> Iterator[tuple[Any, ...]]:
    """Per task: its lines, encoded, as one ``("c", bytes)`` blob (one pickle instead of
    one per line; ``("l", line)`` items when a line holds a line end), then ``("m", task
    number, records, problems, unreadable)``."""
    for t in tasks:
        try:
            chunk = exact_range(t.path, t.start, t.end, options, fmt)
        except OSError as e:
            yield ("m", t.number, 0, [], f"{t.path}: cannot read: {e.strerror or e}")
            continue
        data = chunk.encoded()
        if data.count(b"\n") == len(chunk.lines):
            if data:
                yield ("c", data)
        else:
            for line in chunk.lines:
                yield ("l", line.encode("utf-8", "surrogateescape"))
        yield ("m", t.number, chunk.records, chunk.problems, None)


def _lines(item: tuple[Any, ...]) -> list[tuple[bytes, None]]:
    """The ``(line, None)`` pairs (sort keys) of a tagged item (none for metas)."""
    if item[0] == "c":
        return [(b, None) for b in item[1].split(b"\n")[:-1]]
    if item[0] == "l":
        return [(item[1], None)]
    return []


def _write_partition(index: int, lines: Iterator[bytes], *, zipnum_dir: str | None,
                     parts_dir: str | None, name: str, block_lines: int
                     ) -> Iterator[tuple[int, int, list[ZipNumBlock]]]:
    """Write sorted partition ``index``: its ZipNum shard and/or its part of the sorted
    file. Yields ``(index, lines, blocks)`` once."""
    count = 0
    part = open(os.path.join(parts_dir, f"part-{index:05d}"), "wb") if parts_dir else None  # noqa: SIM115

    def counted() -> Iterator[bytes]:
        nonlocal count
        for line in lines:
            count += 1
            if part is not None:
                part.write(line + b"\n")
            yield line

    blocks: list[ZipNumBlock] = []
    try:
        if zipnum_dir is not None:
            shard = f"{name}-{index:05d}"
            path = os.path.join(zipnum_dir, shard + ".cdx.gz")
            blocks = write_shard(counted(), path, shard, block_lines=block_lines)
            if not blocks:
                os.unlink(path)
        else:
            for _ in counted():
                pass
    finally:
        if part is not None:
            part.close()
    yield index, count, blocks


# -- driver ------------------------------------------------------------------------------
def run_index(
    spark: SparkSession,
    inputs: list[str],
    *,
    cdx_path: str | None = None,
    zipnum_dir: str | None = None,
    name: str = "index",
    fmt: str = "cdxj",
    options: IndexOptions | None = None,
    shards: int | None = None,
    block_lines: int = BLOCK_LINES,
    split_bytes: int | None = None,
) -> tuple[JobReport, IndexOutputs]:
    """Index ``inputs`` into a sorted file and/or a ZipNum index.

    Args:
        spark: the session (:func:`~webark.spark.session.spark_session`).
        inputs: (W)ARC paths, in order (file names in the lines: ``options.file_name``).
        cdx_path: write the sorted lines (with the format's header) to this file.
        zipnum_dir: write ``NAME.idx``, ``NAME.loc`` and ``NAME-NNNNN.cdx.gz`` here.
        name: base name of the ZipNum files.
        fmt: ``cdxj``, ``cdx11``, ``cdx9`` or ``ng``.
        options: :class:`IndexOptions` (default: ``webark index``'s, POST folding on).
        shards: sort partitions = ZipNum shards (default: one per
            :data:`LINES_PER_SHARD` lines).
        block_lines: lines per ZipNum block.
        split_bytes: files this big or bigger are cut into ranges of about this size
            (default :data:`~webark.cdx.parallel.CHUNK_BYTES`).

    Returns:
        ``(report, outputs)``. Broken records are in ``report.problems`` (file @
        offset) and the rest of their file is indexed; an unreadable file is in
        ``report.unreadable``.

    Raises:
        ValueError: neither ``cdx_path`` nor ``zipnum_dir``.
        InputError: an input URL the executors cannot open.
        OSError: an output cannot be written.
    """
    from pyspark import StorageLevel

    if cdx_path is None and zipnum_dir is None:
        raise ValueError("give cdx_path or zipnum_dir (or both)")
    opts = options or IndexOptions.for_format(fmt, post_append=True)
    sc = spark.sparkContext
    report = JobReport("index", master=str(sc.master))
    kw = {} if split_bytes is None else {"split_bytes": split_bytes}
    tasks = plan_tasks(inputs, **kw)
    report.tasks = len(tasks)
    report.files = len({t.path for t in tasks})
    report.input_bytes = sum(t.size for t in tasks if t.start == 0)
    outputs = IndexOutputs()
    if not tasks:
        return report.end(), outputs
    sc.setJobGroup("webark-index", f"webark spark index: {report.files} files")
    tagged = (
        sc.parallelize(tasks, len(tasks))
        .mapPartitions(partial(_index_tasks, options=opts, fmt=fmt))
        .persist(StorageLevel.MEMORY_AND_DISK)
    )
    try:
        report.read_task_metas(tagged)
        keyed = tagged.flatMap(_lines)  # (line, None): the line is its own sort key
        total = keyed.count()
        n = shards or max(1, -(-total // LINES_PER_SHARD))
        ordered: Any = keyed.sortByKey(ascending=True, numPartitions=n).keys()
        parts_dir = None
        if cdx_path is not None:
            parts_dir = tempfile.mkdtemp(prefix=".webark-spark-",
                                         dir=os.path.dirname(os.path.abspath(cdx_path)))
        if zipnum_dir is not None:
            os.makedirs(zipnum_dir, exist_ok=True)
        try:
            written = sorted(ordered.mapPartitionsWithIndex(partial(
                _write_partition, zipnum_dir=zipnum_dir, parts_dir=parts_dir, name=name,
                block_lines=block_lines)).collect())
            report.written = sum(c for _, c, _ in written)
            if zipnum_dir is not None:
                outputs.idx = _write_zipnum_summary(zipnum_dir, name, written)
                outputs.shards = sorted({os.path.join(zipnum_dir, b.shard + ".cdx.gz")
                                         for _, _, bl in written for b in bl})
            if cdx_path is not None and parts_dir is not None:
                _concatenate(cdx_path, header(fmt),  # type: ignore[arg-type]
                             [os.path.join(parts_dir, f"part-{i:05d}") for i, _, _ in written])
                outputs.cdx = cdx_path
        finally:
            if parts_dir is not None:
                shutil.rmtree(parts_dir, ignore_errors=True)
    finally:
        tagged.unpersist()
    return report.end(), outputs


def _write_zipnum_summary(zipnum_dir: str, name: str,
                          written: list[tuple[int, int, list[ZipNumBlock]]]) -> str:
    """Number the blocks across shards and write ``NAME.idx`` and ``NAME.loc``."""
    blocks: list[ZipNumBlock] = []
    locations: dict[str, str] = {}
    for _, _, shard_blocks in written:
        for b in shard_blocks:
            blocks.append(replace(b, block_no=len(blocks)))
            locations[b.shard] = os.path.join(zipnum_dir, b.shard + ".cdx.gz")
    idx = os.path.join(zipnum_dir, name + ".idx")
    write_summary(blocks, idx, locations)
    return idx


def _concatenate(path: str, first_line: str, parts: list[str]) -> None:
    """Write ``first_line`` (if any) and the parts in order to ``path`` (via .part)."""
    tmp = path + ".part"
    try:
        with open(tmp, "wb") as out:
            if first_line:
                out.write(first_line.encode() + b"\n")
            for p in parts:
                with open(p, "rb") as f:
                    shutil.copyfileobj(f, out, 1 << 20)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
