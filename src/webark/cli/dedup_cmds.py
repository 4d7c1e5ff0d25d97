"""``webark dedup``: dedup index tools. ``webark dedup build`` fills an index outside any
crawl from crawl.logs, WARC/ARC files and CDX/CDXJ files (see :mod:`webark.dedup.build`).
"""

from __future__ import annotations

import json
import os
import sqlite3
import sys
import zlib
from typing import TYPE_CHECKING

import click

from webark.crawllog.parse import CUT_GZIP, CUT_GZIP_CODE
from webark.dedup.build import NO_DIGEST_LAYOUT, SourceKind, SourceReport, load
from webark.dedup.policy import DedupPolicy
from webark.dedup.sqlite_dedup import open_index

if TYPE_CHECKING:
    from rich.console import Console

def _inputs(
    crawl_logs: tuple[str, ...], warcs: tuple[str, ...], cdxs: tuple[str, ...]
) -> list[tuple[SourceKind, str]]:
    """The files to load, in order: crawl.logs and CDX files as given or found in a
    folder (every file); (W)ARC files as ``webark stats`` and ``extract`` find them
    (:func:`~webark.tools.input_files.archive_inputs`: folders walked for archive
    names, a collection folder gives the WARCs its index holds). Each file is read
    once per kind however often, and under whatever names, it is reached (a warning on
    stderr says so): loading it twice would count its originals twice.

    Raises:
        click.ClickException: a collection folder cannot be read, or a WARC its index
            holds is missing.
    """
    from webark.index.collection import CollectionError
    from webark.tools.input_files import archive_inputs, unique_files, walk_files

    def warn(path: str, first: str) -> None:
        same = "given twice" if path == first else f"is the same file as {first}"
        click.echo(f"warning: {path} {same}: read once", err=True)

    try:
        warc_files = archive_inputs(warcs, on_repeat=warn)
    except (OSError, CollectionError) as e:
        raise click.ClickException(str(e)) from e
    return [
        *(("crawl-log", p) for p in unique_files(walk_files(crawl_logs), on_repeat=warn)),
        *(("warc", p) for p in warc_files),
        *(("cdx", p) for p in unique_files(walk_files(cdxs), on_repeat=warn)),
    ]


def _stderr_console() -> Console:
    from rich.console import Console

    return Console(stderr=True, highlight=False)


@click.group("dedup")
def dedup() -> None:
    """Dedup index: build it from crawl.logs, WARCs and CDX files."""


@dedup.command("build")
@click.argument("index", type=click.Path(dir_okay=False))
@click.option(
    "--from-crawl-log",
    "-l",
    "crawl_logs",
    multiple=True,
    type=click.Path(),
    help="Heritrix 1/3 crawl.log (plain or .gz); repeatable.",
)
@click.option(
    "--from-warc",
    "-w",
    "warcs",
    multiple=True,
    type=click.Path(),
    help="WARC/ARC file, a directory of them, or a collection folder (the WARCs its "
    "index holds); repeatable.",
)
@click.option(
    "--from-cdx",
    "-c",
    "cdxs",
    multiple=True,
    type=click.Path(),
    help="CDX (any layout: ` CDX …` header, or CDX11, CDX9, NetarchiveSuite), CDXJ or "
    "ng file (plain or .gz); repeatable.",
)
@click.option(
    "--prefer",
    type=click.Choice(["earliest", "latest"]),
    default=None,
    help="Which original to keep when several share a digest (new index: "
    "earliest; an existing index keeps its choice).",
)
@click.option(
    "--status",
    "statuses",
    multiple=True,
    type=int,
    help="HTTP status worth deduplicating (default 200); repeatable.",
)
@click.option(
    "--skip-mime",
    multiple=True,
    help="MIME type (text/html) or top-level type (video/) not to index.",
)
@click.option(
    "--only-mime", multiple=True, help="Index only these MIME types (same syntax); repeatable."
)
@click.option(
    "--min-size",
    type=click.IntRange(min=0),
    default=0,
    show_default=True,
    help="Minimum payload size in bytes (crawl.logs and WARCs).",
)
@click.option(
    "--json", "as_json", is_flag=True, help="Print one JSON object per input file on stdout."
)
@click.option(
    "--progress/--no-progress",
    default=None,
    help="Progress bar on stderr (default: when stderr is a terminal).",
)
def build(
    index: str,
    crawl_logs: tuple[str, ...],
    warcs: tuple[str, ...],
    cdxs: tuple[str, ...],
    prefer: str | None,
    statuses: tuple[int, ...],
    skip_mime: tuple[str, ...],
    only_mime: tuple[str, ...],
    min_size: int,
    as_json: bool,
    progress: bool | None,
) -> None:
    """Add the originals found in crawl.logs, WARCs and CDX files to the dedup INDEX
    (an SQLite file, created when missing).

    Originals are captures with a payload digest and an accepted status: crawl.log lines
    not annotated as duplicates, response/resource records, non-revisit CDX lines.
    Folders given to --from-crawl-log and --from-cdx are walked for every file, to
    --from-warc for *.warc, *.warc.gz, *.warc.zst, *.arc, *.arc.gz. A file given twice
    (also under another name, or again inside a folder) is read once, with a warning.
    Lines and records that cannot be read are reported with file and line or offset and
    skipped. CDX files: any classic layout named by a ` CDX …` header line, or without
    one CDX11, CDX9 or NetarchiveSuite's 7/8 fields (`A e b m n g v c`, which has no
    payload digest and so gives no originals: use the harvest's crawl.logs), CDXJ, ng.

    Exit status 1 when an input file could not be read at all (missing, no line or
    record, none of them readable, a CDX layout without payload digests) or to the end
    (a cut crawl.log.gz); 0 otherwise, also when some lines were skipped (listed).
    """
    inputs = _inputs(crawl_logs, warcs, cdxs)
    if not inputs:
        raise click.UsageError("give at least one --from-crawl-log, --from-warc or --from-cdx")
    policy = DedupPolicy(
        statuses=frozenset(statuses or (200,)),
        skip_mime_types=skip_mime,
        only_mime_types=only_mime or None,
        min_size=min_size,
    )
    err = _stderr_console()
    show = sys.stderr.isatty() if progress is None else progress
    failed = 0
    try:
        idx = open_index(index, prefer=prefer)  # type: ignore[arg-type]
    except ValueError as e:
        raise click.ClickException(str(e)) from e
    except sqlite3.DatabaseError as e:  # an existing file that is not an SQLite database
        raise click.ClickException(
            f"{index} is not a dedup index (SQLite: {e}); give a new file name or an index "
            "made by `webark dedup build`"
        ) from e
    reports: list[SourceReport] = []
    with idx:
        bar = None
        if show:
            from rich.progress import MofNCompleteColumn, Progress, SpinnerColumn, TextColumn

            bar = Progress(
                SpinnerColumn(),
                TextColumn("[bold]dedup build[/] {task.description}"),
                MofNCompleteColumn(),
                TextColumn("{task.fields[items]} items"),
                console=err,
                transient=True,
            )
            bar.start()
            task = bar.add_task("", total=len(inputs), items=0)
        try:
            for n, (kind, path) in enumerate(inputs):
                if bar is not None:
                    bar.update(task, description=os.path.basename(path), completed=n, items=0)

                def tick(items: int) -> None:
                    if bar is not None:
                        bar.update(task, items=items)

                try:
                    report = load(idx, kind, path, policy, progress=tick)
                except OSError as e:
                    failed += 1
                    err.print(f"[red]error[/]: {path}: {e.strerror or e}")
                    continue
                except (EOFError, zlib.error) as e:  # a cut or damaged .gz crawl.log/CDX
                    failed += 1
                    err.print(
                        f"[red]error[/]: {path}: {CUT_GZIP} "
                        f"({e or 'ends early'}); the file could not be read to the end",
                        soft_wrap=True,
                    )
                    continue
                reports.append(report)
                _print_problems(err, report)
        finally:
            if bar is not None:
                bar.stop()
        counts = idx.counts()
    for r in reports:
        if as_json:
            click.echo(
                json.dumps(
                    {
                        "path": r.path,
                        "kind": r.kind,
                        "loaded": r.loaded,
                        "skipped": dict(sorted(r.skipped.items())),
                        **({"chunked_digest_readings": dict(r.readings)} if r.readings else {}),
                        **({"unusable": r.unusable} if r.unusable else {}),
                    }
                )
            )
        else:
            skipped = ", ".join(f"{k} {v}" for k, v in sorted(r.skipped.items())) or "none"
            click.echo(f"{r.path}: {r.loaded} originals loaded; skipped: {skipped}")
            if r.readings:
                readings = ", ".join(f"{k} {v}" for k, v in sorted(r.readings.items()))
                click.echo(f"  digests of chunked responses, by reading: {readings} "
                           "(a recrawl looks chunked responses up under both)")  # fmt: skip
    total = sum(r.loaded for r in reports)
    summary = (
        f"{index}: {total} originals added from {len(reports)} files; index has "
        f"{counts['by_url']} URL+digest entries, {counts['by_digest']} digests"
    )
    if as_json:
        err.print(summary, markup=False, soft_wrap=True)
    else:
        click.echo(summary)
    cut = [r for r in reports if r.cut_short]
    unusable = [r for r in reports if r.unusable]
    for r in unusable:
        err.print(f"[red]error[/]: {r.path}: nothing loaded: {r.unusable}", soft_wrap=True)
    if failed or cut or unusable:
        # an input could not be read at all, or to the end (bad lines alone: exit 0)
        sys.exit(1)


def _print_problems(err: Console, report: SourceReport) -> None:
    """The listed problems of one file on stderr: a note about the whole file first,
    then the bad lines (``… N more`` past the listed ones), then the notice of a file
    cut short (kept past the cap)."""
    notes = [s for s in report.problems if s.code == NO_DIGEST_LAYOUT]
    cut_notes = [s for s in report.problems if s.code == CUT_GZIP_CODE]
    lines = [s for s in report.problems if s not in notes and s not in cut_notes]
    for s in notes:
        err.print(f"{report.path}:{s.line}: {s.message}", markup=False, soft_wrap=True)
    for s in lines:
        err.print(f"{report.where(s)}: skipped: {s.message}", markup=False, soft_wrap=True)
    more = report.errors - len(lines) - len(cut_notes)
    if more > 0:
        err.print(f"{report.path}: … {more} more", markup=False, soft_wrap=True)
    for s in cut_notes:
        err.print(f"{report.where(s)}: skipped: {s.message}", markup=False, soft_wrap=True)
