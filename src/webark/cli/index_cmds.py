"""``webark index``: WARC/ARC files → CDXJ, CDX11, CDX9 or the revised ``ng`` CDX."""

from __future__ import annotations

import logging
import os
import sys
from typing import IO, TYPE_CHECKING

import click

from webark.cdx.formats import FORMATS, header, sort_key
from webark.cdx.indexer import COMPATS, IndexOptions, TextChunk, index_file_text
from webark.warc.record import Problem

if TYPE_CHECKING:
    from rich.console import Console

def _inputs(paths: tuple[str, ...]) -> list[str]:
    """Files as given; directories walked (sorted) for (W)ARC files. A file reached
    twice (given twice, under two names, or also inside a given folder: same device
    and inode) is indexed once, with a warning: its lines would otherwise be in the
    index twice."""
    from webark.tools.input_files import ARCHIVE_SUFFIXES, unique_files, walk_files

    def warn(path: str, first: str) -> None:
        what = "given twice" if path == first else f"is the same file as {first}"
        click.echo(f"warning: {path} {what}: indexed once", err=True)

    return unique_files(walk_files(paths, ARCHIVE_SUFFIXES), on_repeat=warn)


class _Progress:
    """A rich progress bar on stderr (bytes read / total), or nothing."""

    def __init__(self, enabled: bool, total: int):
        self.bar = None
        self.done_files = 0
        if enabled:
            from rich.progress import (
                BarColumn,
                DownloadColumn,
                Progress,
                TextColumn,
                TimeRemainingColumn,
                TransferSpeedColumn,
            )

            self.bar = Progress(
                TextColumn("[bold]indexing[/] {task.description}"),
                BarColumn(),
                DownloadColumn(),
                TransferSpeedColumn(),
                TimeRemainingColumn(),
                transient=True,
                console=_stderr_console(),
            )
            self.task = self.bar.add_task("", total=total)

    def __enter__(self) -> _Progress:
        if self.bar is not None:
            self.bar.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.bar is not None:
            self.bar.__exit__(None, None, None)

    def file(self, name: str, done_before: int) -> None:
        self.done_files = done_before
        if self.bar is not None:
            self.bar.update(self.task, description=os.path.basename(name), completed=done_before)

    def at(self, nbytes: int) -> None:
        if self.bar is not None:
            self.bar.update(self.task, completed=self.done_files + nbytes)

    def say(self, text: str) -> None:
        if self.bar is not None:
            self.bar.console.print(text, markup=False, highlight=False, soft_wrap=True)
        else:
            print(text, file=sys.stderr)


def _stderr_console() -> Console:
    from rich.console import Console

    return Console(stderr=True, highlight=False)


@click.command("index")
@click.argument("warcs", nargs=-1, required=True, type=click.Path(exists=False))
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, writable=True),
    help="Write to FILE (default: standard output).",
)
@click.option(
    "-f",
    "--format",
    "fmt",
    type=click.Choice(FORMATS),
    default="cdxj",
    show_default=True,
    help="Output format (docs/cdx-ng.md for ng).",
)
@click.option(
    "-a",
    "--all-records",
    is_flag=True,
    help="Index every record: also request, warcinfo and warc-fields "
    "metadata records (default: response, revisit, resource, metadata).",
)
@click.option(
    "--sort/--no-sort",
    default=None,
    help="Sort the output byte-wise (LC_ALL=C). Default: sort when several "
    "input files go into one -o file, else file order.",
)
@click.option(
    "--post-append/--no-post-append",
    default=True,
    show_default=True,
    help="Fold POST/PUT request bodies into the URL key "
    "(?__wb_method=post&…, as pywb and cdxj-indexer -p).",
)
@click.option(
    "--compat",
    type=click.Choice(COMPATS),
    default=None,
    help="Whose conventions to follow: pywb (default for cdx11/cdx9: classic "
    "CDX) or cdxj-indexer (default for cdxj and ng).",
)
@click.option(
    "--dir-root",
    type=click.Path(file_okay=False),
    help="Write file names relative to DIR (default: base name).",
)
@click.option(
    "-j",
    "--jobs",
    type=click.IntRange(1, 64),
    default=None,
    help="Processes per file (default: the number of CPUs).",
)
@click.option(
    "--progress/--no-progress",
    default=None,
    help="Progress bar on stderr (default: when stderr is a terminal and the output is not).",
)
def index(
    warcs: tuple[str, ...],
    output: str | None,
    fmt: str,
    all_records: bool,
    sort: bool | None,
    post_append: bool,
    compat: str | None,
    dir_root: str | None,
    jobs: int | None,
    progress: bool | None,
) -> None:
    """Index WARC/ARC files (or directories of them) into a CDX file.

    Broken records are reported on stderr (file @ offset: reason) and skipped; the
    rest of the file is still indexed. Exit status: 0, also when records were
    skipped; 1 when an input could not be read at all (missing, unreadable, or not a
    WARC/ARC file: no record and an error), gave no index line because of errors (a
    whole-file gzip WARC: `webark warc recompress` it), or no input file was found; 2
    for usage errors. With -o, the index is written as FILE.part and renamed when complete (an
    interrupted run leaves no FILE). A file given twice is indexed once.
    """
    files = list(_inputs(warcs))
    sizes: dict[str, int] = {}
    for f in files:
        try:
            sizes[f] = os.path.getsize(f)
        except OSError:
            sizes[f] = 0
    if sort is None:
        sort = output is not None and len(files) > 1
    options = IndexOptions.for_format(
        fmt,
        compat=compat,  # type: ignore[arg-type]
        all_records=all_records,
        post_append=post_append,
        dir_root=dir_root,
    )
    if jobs is None:
        jobs = max(1, min(os.cpu_count() or 1, 8))
    if progress is None:
        progress = sys.stderr.isatty() and (output is not None or not sys.stdout.isatty())
    verbose = logging.getLogger().getEffectiveLevel() <= logging.INFO
    failed = 0
    if not files:
        raise click.ClickException(
            f"no WARC/ARC files found in {', '.join(warcs)} (looked for *.warc, *.warc.gz, "
            "*.warc.zst, *.arc, *.arc.gz)"
        )
    if output and os.path.realpath(output) in {os.path.realpath(f) for f in files}:
        raise click.BadParameter(f"{output} is also an input: it would be overwritten",
                                 param_hint="-o")
    out: IO[bytes]
    # -o FILE is written as FILE.part and renamed at the end: an interrupted run
    # (Ctrl-C) leaves no cut index under the final name
    part = f"{output}.part" if output else None
    try:
        out = open(part, "wb") if part else sys.stdout.buffer  # noqa: SIM115
    except OSError as e:
        raise click.ClickException(f"cannot write {output}: {e.strerror or e}") from e
    held: list[str] = []
    complete = False
    try:
        first = header(fmt)  # type: ignore[arg-type]
        if first:
            out.write(first.encode() + b"\n")
        done = 0
        with _Progress(progress, sum(sizes.values())) as bar:
            for f in files:
                bar.file(f, done)
                ok = _index_one(f, options, fmt, jobs, bar, out, held if sort else None, verbose)
                failed += not ok
                done += sizes.get(f, 0)
                bar.at(0)
        if sort:
            held.sort(key=sort_key)
            for i in range(0, len(held), 4096):
                out.write(
                    "".join(f"{s}\n" for s in held[i : i + 4096]).encode("utf-8", "surrogateescape")
                )
        complete = True
    finally:
        if part:
            out.close()
            if complete:
                os.replace(part, str(output))
            else:
                os.unlink(part)
        else:
            out.flush()
    if failed:
        raise SystemExit(1)


def _index_one(
    path: str,
    options: IndexOptions,
    fmt: str,
    jobs: int,
    bar: _Progress,
    out: IO[bytes],
    held: list[str] | None,
    verbose: bool,
) -> bool:
    """Index one file; write (or hold, to sort) its lines; report its problems.
    Returns False when the file could not be read at all."""
    problems: list[Problem] = []
    records = 0
    indexed = False
    try:
        for chunk in index_file_text(path, options, fmt, jobs=jobs, progress=bar.at):
            _emit(chunk, out, held)
            problems += chunk.problems
            records += chunk.records
            indexed = indexed or bool(chunk.data if chunk.data is not None else chunk.lines)
    except OSError as e:
        bar.say(f"{path}: cannot read: {e.strerror or e}")
        return False
    for p in problems:
        if p.severity != "forgiven" or verbose:
            bar.say(str(p))
    errors = any(p.severity == "error" for p in problems)
    if records == 0 and errors:
        bar.say(f"{path}: no WARC/ARC record could be read")
        return False
    if not indexed and errors:
        # records were read, but the errors kept every one of them out of the index
        # (whole-file gzip: no offsets to seek to)
        bar.say(f"{path}: no index line: its {records} records cannot be indexed "
                "(errors above)")
        return False
    if records == 0 and not problems:
        try:
            empty = os.path.getsize(path) == 0
        except OSError:
            empty = False
        if empty:  # as `webark warc check` says (no-records): not a WARC at all
            bar.say(f"{path}: error: empty file, no record found")
            return False
    return True


def _emit(chunk: TextChunk, out: IO[bytes], held: list[str] | None) -> None:
    if held is not None:
        held.extend(chunk.lines)
        return
    if chunk.data is not None:  # encoded by a worker process
        out.write(chunk.data)
        return
    lines = chunk.lines
    for i in range(0, len(lines), 4096):
        out.write("".join(f"{s}\n" for s in lines[i : i + 4096]).encode("utf-8", "surrogateescape"))
