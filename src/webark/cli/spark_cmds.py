"""``webark spark``: indexing and analysis jobs on Apache Spark (see :mod:`webark.spark`)."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import click

from webark.cdx.formats import FORMATS
from webark.cdx.options import COMPATS

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from webark.spark.report import JobReport

F = TypeVar("F", bound=Callable[..., Any])


def _common(f: F) -> F:
    """The options every job has: inputs, --manifest, --master."""
    f = click.option("--master", default=None, metavar="URL",
                     help="Spark master: local[N] (default: local[CPUs]), spark://HOST:PORT, "
                     "yarn, k8s://… (under spark-submit: the one given there).")(f)
    f = click.option("--manifest", type=click.Path(exists=True, dir_okay=False),
                     help="A file listing WARC/ARC paths, one a line (as Common Crawl's "
                     "warc.paths), read after the INPUTS.")(f)
    f = click.argument("inputs", nargs=-1, type=click.Path())(f)
    return f


def _files(inputs: tuple[str, ...], manifest: str | None) -> list[str]:
    """(W)ARC files from folders, collections, files and the manifest; each once."""
    from webark.index.collection import CollectionError
    from webark.spark.tasks import InputError, local_path
    from webark.tools.input_files import archive_inputs

    given = list(inputs)
    if manifest:
        with open(manifest, encoding="utf-8") as f:
            given += [s.strip() for s in f if s.strip() and not s.startswith("#")]
    if not given:
        raise click.UsageError("give WARC/ARC files, folders or --manifest")

    def warn(path: str, first: str) -> None:
        what = "given twice" if path == first else f"is the same file as {first}"
        click.echo(f"warning: {path} {what}: read once", err=True)

    try:
        files = archive_inputs([local_path(g) for g in given], on_repeat=warn)
    except (InputError, OSError, CollectionError) as e:
        raise click.ClickException(str(e)) from e
    if not files:
        raise click.ClickException("no WARC/ARC files found (looked for *.warc, *.warc.gz, "
                                   "*.warc.zst, *.arc, *.arc.gz)")
    return files


def _session(master: str | None, job: str) -> SparkSession:
    from webark.spark.session import SparkUnavailable, spark_session

    try:
        return spark_session(master, f"webark spark {job}")
    except SparkUnavailable as e:
        raise click.ClickException(str(e)) from e


def _finish(report: JobReport) -> None:
    """Problems (file @ offset), the summary line, the exit status."""
    for p in report.problems.listed:
        click.echo(p, err=True)
    if (more := report.problems.summary()) is not None:
        click.echo(more, err=True)
    for u in report.unreadable:
        click.echo(f"error: {u}", err=True)
    click.echo(report.summary(), err=True)
    if report.exit_status:
        sys.exit(report.exit_status)


@click.group("spark")
def spark() -> None:
    """Indexing and analysis of many WARCs on Apache Spark (pip install 'webark[spark]').

    Each job prints the address of Spark's UI (progress of every stage) when it starts
    and a summary when it ends. Broken records are reported with file and offset and the
    rest is processed; the exit status is 1 when a record was broken or a file unreadable.
    """


@spark.command("index")
@_common
@click.option("--cdx", "cdx_path", type=click.Path(dir_okay=False),
              help="Write the sorted index to this file (as `webark index --sort`).")
@click.option("--zipnum", "zipnum_dir", type=click.Path(file_okay=False),
              help="Write a ZipNum index (NAME.idx, NAME.loc, NAME-NNNNN.cdx.gz) into this "
              "folder (e.g. a collection's indexes/).")
@click.option("--name", default="index", show_default=True, help="Base name of the ZipNum files.")
@click.option("-f", "--format", "fmt", type=click.Choice(FORMATS), default="cdxj",
              show_default=True, help="Output format.")
@click.option("--compat", type=click.Choice(COMPATS), default=None,
              help="pywb or cdxj-indexer conventions (as `webark index`).")
@click.option("--post-append/--no-post-append", default=True, show_default=True,
              help="Fold POST/PUT request bodies into the URL key.")
@click.option("--shards", type=click.IntRange(1, 100_000), default=None,
              help="Sort partitions = ZipNum shards (default: one per 2M lines).")
@click.option("--block-lines", type=click.IntRange(1), default=3000, show_default=True,
              help="Lines per ZipNum gzip block.")
def index(inputs: tuple[str, ...], manifest: str | None, master: str | None,
          cdx_path: str | None, zipnum_dir: str | None, name: str, fmt: str,
          compat: str | None, post_append: bool, shards: int | None, block_lines: int) -> None:
    """Index WARC/ARC files into a sorted CDX(J) file and/or ZipNum shards.

    The lines are those of `webark index` (byte for byte, sorted as with --sort); big
    files are split at record boundaries over several tasks.
    """
    from webark.cdx.options import IndexOptions
    from webark.spark.cdx_job import run_index

    if cdx_path is None and zipnum_dir is None:
        raise click.UsageError("give --cdx FILE and/or --zipnum DIR")
    files = _files(inputs, manifest)
    options = IndexOptions.for_format(fmt, compat=compat,  # type: ignore[arg-type]
                                      post_append=post_append)
    session = _session(master, "index")
    try:
        report, out = run_index(session, files, cdx_path=cdx_path, zipnum_dir=zipnum_dir,
                                name=name, fmt=fmt, options=options, shards=shards,
                                block_lines=block_lines)
    finally:
        session.stop()
    if out.cdx:
        click.echo(f"wrote {out.cdx}", err=True)
    if out.idx:
        click.echo(f"wrote {out.idx} ({len(out.shards)} shards)", err=True)
    _finish(report)


@spark.command("captures")
@_common
@click.option("-o", "--output", "out_dir", required=True, type=click.Path(file_okay=False),
              help="Folder of the Parquet table (crawl=…/subset=…/part-….parquet).")
@click.option("--crawl", default=None, help="The crawl column (default: each WARC's harvest).")
@click.option("--dir-root", type=click.Path(file_okay=False),
              help="warc_filename relative to DIR (default: base names).")
@click.option("--mode", type=click.Choice(["errorifexists", "overwrite", "append"]),
              default="errorifexists", show_default=True, help="When the table exists.")
def captures(inputs: tuple[str, ...], manifest: str | None, master: str | None, out_dir: str,
             crawl: str | None, dir_root: str | None, mode: str) -> None:
    """A Parquet capture table with Common Crawl's column names (url_surtkey, url,
    url_host_name, fetch_time, fetch_status, content_digest, content_mime_type,
    warc_filename, warc_record_offset, warc_record_length …), partitioned by crawl and
    subset."""
    from webark.spark.captures_job import run_captures

    files = _files(inputs, manifest)
    session = _session(master, "captures")
    try:
        report = run_captures(session, files, out_dir, crawl=crawl, dir_root=dir_root, mode=mode)
    except Exception as e:  # Spark's AnalysisException: the table exists
        if type(e).__name__ != "AnalysisException":
            raise
        raise click.ClickException(str(e).splitlines()[0]) from e
    finally:
        session.stop()
    click.echo(f"wrote {out_dir}", err=True)
    _finish(report)


@spark.command("dedup")
@click.argument("index_path", metavar="INDEX", type=click.Path(dir_okay=False))
@_common
@click.option("--prefer", type=click.Choice(["earliest", "latest"]), default=None,
              help="Which original to keep when several share a digest (as dedup build).")
@click.option("--status", "statuses", multiple=True, type=int,
              help="HTTP status worth deduplicating (default 200); repeatable.")
@click.option("--skip-mime", multiple=True, help="MIME type (text/html) or top-level type "
              "(video/) not to index.")
@click.option("--only-mime", multiple=True, help="Index only these MIME types.")
@click.option("--min-size", type=click.IntRange(min=0), default=0, show_default=True,
              help="Minimum payload size in bytes.")
def dedup(index_path: str, inputs: tuple[str, ...], manifest: str | None, master: str | None,
          prefer: str | None, statuses: tuple[int, ...], skip_mime: tuple[str, ...],
          only_mime: tuple[str, ...], min_size: int) -> None:
    """Add the originals of WARC/ARC files to the dedup INDEX (an SQLite file): the
    entries `webark dedup build --from-warc` adds, read by the executors."""
    from webark.dedup.policy import DedupPolicy
    from webark.spark.dedup_job import run_dedup

    files = _files(inputs, manifest)
    policy = DedupPolicy(statuses=frozenset(statuses or (200,)), skip_mime_types=skip_mime,
                         only_mime_types=only_mime or None, min_size=min_size)
    session = _session(master, "dedup")
    try:
        report, reports = run_dedup(session, index_path, files, policy=policy,
                                    prefer=prefer)  # type: ignore[arg-type]
    except ValueError as e:
        raise click.ClickException(str(e)) from e
    finally:
        session.stop()
    for r in reports:
        skipped = ", ".join(f"{k} {v}" for k, v in sorted(r.skipped.items())) or "none"
        click.echo(f"{r.path}: {r.loaded} originals loaded; skipped: {skipped}")
    _finish(report)


@spark.command("stats")
@_common
@click.option("--json", "as_json", is_flag=True, help="Print the statistics as JSON.")
@click.option("--top", type=click.IntRange(min=1), default=15, show_default=True,
              help="Rows of the MIME-type and host tables (text output).")
def stats(inputs: tuple[str, ...], manifest: str | None, master: str | None, as_json: bool,
          top: int) -> None:
    """The statistics of `webark stats` (captures, URLs, hosts, bytes stored and
    represented, per MIME type, year and harvest), computed on Spark."""
    from webark.cli.stats_cmds import _print_tables
    from webark.spark.stats_job import run_stats

    files = _files(inputs, manifest)
    session = _session(master, "stats")
    try:
        report, result = run_stats(session, files)
    finally:
        session.stop()
    if as_json:
        click.echo(json.dumps(result.to_json(), indent=2))
    else:
        _print_tables(result, top)
    _finish(report)
