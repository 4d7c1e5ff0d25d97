"""``webark spark captures``: a Parquet capture table with Common Crawl's column names.

One row per capture (response, revisit and resource records), from the CDX line the
indexer makes for it (:class:`~webark.cdx.file_index.FileIndex`, cdxj-indexer compat,
no POST folding: ``url`` is the URL as captured). The columns are those of Common
Crawl's ``cc-index-table`` (``url_surtkey`` … ``warc_segment``), so queries written for
it (Spark SQL, Athena, DuckDB) run unchanged; the table is partitioned by ``crawl`` and
``subset`` as theirs is:

* ``crawl``: the ``--crawl`` name, else the WARC's harvest (``webark stats``: the name
  up to its timestamp);
* ``subset``: ``robotstxt`` (``/robots.txt``), ``warc`` (2xx responses and resources),
  ``crawldiagnostics`` (other responses: redirects, 404s …), and ``revisit`` (not in
  Common Crawl, which writes no revisits).

Values webark does not compute are null: ``content_languages`` (Common Crawl's CLD2
guess), ``content_charset``, ``content_truncated``. ``content_mime_detected`` is the
record's ``WARC-Identified-Payload-Type`` (Common Crawl's comes from Tika).
``content_digest`` is the Base32 SHA-1 without its ``sha1:`` label, as theirs. One
extra column, ``warc_record_type``, keeps the record's WARC-Type.
"""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Iterable, Iterator
from functools import partial
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from webark.cdx.indexer import FileIndex, IndexOptions
from webark.cdx.line import CdxLine
from webark.spark.report import JobReport
from webark.spark.tasks import WarcTask, plan_tasks
from webark.tools.stats import harvest_of_name
from webark.url import registered_domain

if TYPE_CHECKING:
    from pyspark.sql import SparkSession
    from pyspark.sql.types import StructType

__all__ = ["COLUMNS", "capture_options", "capture_row", "run_captures"]

_DETECTED = "WARC-Identified-Payload-Type"

COLUMNS: tuple[tuple[str, str], ...] = (
    ("url_surtkey", "string"),
    ("url", "string"),
    ("url_host_name", "string"),
    ("url_host_tld", "string"),
    ("url_host_registered_domain", "string"),
    ("url_protocol", "string"),
    ("url_port", "int"),
    ("url_path", "string"),
    ("url_query", "string"),
    ("fetch_time", "timestamp"),
    ("fetch_status", "short"),
    ("fetch_redirect", "string"),
    ("content_digest", "string"),
    ("content_mime_type", "string"),
    ("content_mime_detected", "string"),
    ("content_charset", "string"),
    ("content_languages", "string"),
    ("content_truncated", "string"),
    ("warc_filename", "string"),
    ("warc_record_offset", "long"),
    ("warc_record_length", "long"),
    ("warc_segment", "string"),
    ("warc_record_type", "string"),
    ("crawl", "string"),
    ("subset", "string"),
)
"""``(column, Spark SQL type)`` in table order; ``crawl`` and ``subset`` partition it."""


def capture_options(dir_root: str | None = None) -> IndexOptions:
    """The indexer options of the table: captures only, redirects, the detected type."""
    return IndexOptions(
        compat="cdxj-indexer", records=frozenset({"response", "revisit", "resource"}),
        fields=(_DETECTED,), redirects=True, dir_root=dir_root,
    )


def _text(s: str | None) -> str | None:
    """``s`` as the JVM can hold it: bytes that were not UTF-8 (surrogate escapes)
    become U+FFFD."""
    if s is None or s.isascii():
        return s
    return s.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def _segment(path: str) -> str | None:
    """Common Crawl's segment of a WARC path (``…/segments/SEGMENT/warc/NAME``)."""
    parts = os.path.normpath(path).split(os.sep)
    if "segments" in parts[:-1]:
        i = parts.index("segments")
        return parts[i + 1] if i + 1 < len(parts) - 1 else None
    return None


def _subset(line: CdxLine, path: str) -> str:
    if line.record_type == "revisit":
        return "revisit"
    if path == "/robots.txt":
        return "robotstxt"
    if line.record_type == "resource" or line.status[:1] == "2":
        return "warc"
    return "crawldiagnostics"


def capture_row(line: CdxLine, crawl: str, segment: str | None) -> tuple[Any, ...]:
    """The table row of one CDX line (values in :data:`COLUMNS` order)."""
    url = line.url
    try:
        parts = urlsplit(url)
        host = (parts.hostname or "").rstrip(".")
        try:
            port = parts.port
        except ValueError:
            port = None
        protocol, path, query = parts.scheme, parts.path, parts.query
    except ValueError:
        host, port, protocol, path, query = "", None, "", "", ""
    tld = host.rsplit(".", 1)[-1] if host and not host.replace(".", "").isdigit() else None
    ts = line.timestamp
    fetch_time = dt.datetime(int(ts[0:4]), int(ts[4:6]), int(ts[6:8]), int(ts[8:10]),
                             int(ts[10:12]), int(ts[12:14]), tzinfo=dt.UTC)
    digest: str | None = line.digest
    if digest == "-":
        digest = None
    elif digest is not None and digest.startswith("sha1:"):
        digest = digest[5:]
    return (
        _text(line.urlkey), _text(url), _text(host) or None, _text(tld),
        _text(registered_domain(host)) or None, protocol or None, port, _text(path),
        _text(query) or None, fetch_time,
        int(line.status) if line.status.isdigit() and len(line.status) <= 4 else None,
        _text(line.redirect) if line.redirect != "-" else None,
        digest, _text(line.mime) if line.mime != "-" else None,
        _text(line.extra.get(_DETECTED)), None, None, None,
        _text(line.filename), line.offset, line.length, segment, line.record_type,
        crawl, _subset(line, path),
    )


def _rows(tasks: Iterable[WarcTask], options: IndexOptions, crawl: str | None
          ) -> Iterator[tuple[Any, ...]]:
    """``("r", row)`` per capture and ``("m", number, records, problems, unreadable)``
    per task."""
    for t in tasks:
        fi = FileIndex(t.path, options)
        name = crawl or harvest_of_name(t.path)
        segment = _segment(t.path)
        try:
            for line in fi:
                yield ("r", capture_row(line, name, segment))
        except OSError as e:
            yield ("m", t.number, fi.records_read, fi.problems,
                   f"{t.path}: cannot read: {e.strerror or e}")
            continue
        yield ("m", t.number, fi.records_read, fi.problems, None)


def schema() -> StructType:
    """The Spark schema of :data:`COLUMNS`."""
    from pyspark.sql.types import StructType, _parse_datatype_string

    return StructType.fromJson({"type": "struct", "fields": [
        {"name": n, "type": _parse_datatype_string(t).jsonValue(), "nullable": True,
         "metadata": {}} for n, t in COLUMNS]})


def run_captures(
    spark: SparkSession,
    inputs: list[str],
    out_dir: str,
    *,
    crawl: str | None = None,
    dir_root: str | None = None,
    mode: str = "errorifexists",
) -> JobReport:
    """Write the capture table of ``inputs`` as Parquet under ``out_dir``
    (``crawl=…/subset=…/part-….parquet``).

    Args:
        crawl: the ``crawl`` value of every row (default: each WARC's harvest name).
        dir_root: ``warc_filename`` relative to this folder (default: base names).
        mode: Spark's save mode (``errorifexists``, ``overwrite``, ``append``).

    Raises:
        pyspark.errors.AnalysisException: ``out_dir`` exists and ``mode`` is
            ``errorifexists``.
    """
    from pyspark import StorageLevel

    sc = spark.sparkContext
    report = JobReport("captures", master=str(sc.master))
    tasks = plan_tasks(inputs, split_bytes=0)
    report.tasks = report.files = len(tasks)
    report.input_bytes = sum(t.size for t in tasks)
    sc.setJobGroup("webark-captures", f"webark spark captures: {len(tasks)} files")
    tagged = (
        sc.parallelize(tasks, max(1, len(tasks)))
        .mapPartitions(partial(_rows, options=capture_options(dir_root), crawl=crawl))
        .persist(StorageLevel.MEMORY_AND_DISK)
    )
    try:
        report.read_task_metas(tagged)
        rows = tagged.filter(lambda x: x[0] == "r").map(lambda x: x[1])
        df = spark.createDataFrame(rows, schema())
        df.write.mode(mode).partitionBy("crawl", "subset").parquet(out_dir)
        report.written = rows.count()
    finally:
        tagged.unpersist()
    return report.end()
