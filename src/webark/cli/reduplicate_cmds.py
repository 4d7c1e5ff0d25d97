"""``webark reduplicate``: write a harvest again without revisits (full responses).

The work is done by :mod:`webark.tools.reduplicate`; this module parses arguments,
draws progress (rich) on stderr and prints the summary.
"""

from __future__ import annotations

import json
import sys

import click
from rich.console import Console
from rich.progress import BarColumn, Progress, TaskID, TextColumn, TimeRemainingColumn

from webark.index.collection import Collection, CollectionError
from webark.index.source import IndexUnavailable
from webark.tools.reduplicate import REPORT_NAME, ReduplicateOptions, reduplicate
from webark.tools.reduplicate_harvest import HarvestError, select_harvest
from webark.tools.reduplicate_state import StateError
from webark.warc.writer import DEFAULT_MAX_SIZE

err = Console(stderr=True, highlight=False)

_PHASES = {
    "collect": "collecting revisits",
    "resolve": "resolving (index order)",
    "load": "reading originals",
    "write": "writing",
}


@click.command("reduplicate")
@click.argument("collection_dir", type=click.Path(exists=True, file_okay=False))
@click.argument("warcs", nargs=-1)
@click.option("--harvest-warcs", "harvest_warcs", multiple=True, metavar="GLOB|NAME",
              help="WARCs of the harvest: paths, or names/globs of the collection's "
                   "indexed WARCs (repeatable; also as arguments after COLLECTION_DIR).")
@click.option("--from", "from_ts", metavar="TS",
              help="Harvest = WARCs with a capture at or after TS (1-14 digits).")
@click.option("--to", "to_ts", metavar="TS",
              help="... and at or before TS (1-14 digits, inclusive).")
@click.option("--job", "job_dir", type=click.Path(exists=True, file_okay=False),
              help="Harvest = the finished WARCs of this crawl job (JOBDIR/warcs/).")
@click.option("-o", "--output", "outdir", required=True, type=click.Path(file_okay=False),
              help="Output folder: WARCs, reduplicate-report.json, resume state.")
@click.option("--compression", type=click.Choice(["gzip", "zstd", "none"]), default="gzip",
              show_default=True, help="Compression of the output WARCs.")
@click.option("--max-size", type=int, default=DEFAULT_MAX_SIZE, show_default=True,
              help="Rotate output WARCs before they pass this many bytes.")
@click.option("--strategy", type=click.Choice(["sorted", "file-order"]), default="sorted",
              show_default=True,
              help="sorted: collect all revisits, resolve them in index order and read "
                   "originals in WARC order; file-order: resolve each when met.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.option("--no-progress", is_flag=True, help="No progress bar.")
def reduplicate_cmd(
    collection_dir: str,
    warcs: tuple[str, ...],
    harvest_warcs: tuple[str, ...],
    from_ts: str | None,
    to_ts: str | None,
    job_dir: str | None,
    outdir: str,
    compression: str,
    max_size: int,
    strategy: str,
    as_json: bool,
    no_progress: bool,
) -> None:
    """Write a harvest of COLLECTION_DIR again as a self-contained WARC set: every
    revisit becomes a full response (its HTTP headers, its original's payload,
    digests recomputed and checked against its WARC-Payload-Digest); all other
    records are copied byte for byte.

    \b
    webark reduplicate archive/coll 'CRAWL-2026*' -o redup/
    webark reduplicate archive/coll --from 2014 --to 2014 -o redup-2014/
    webark reduplicate archive/coll --job jobs/weekly-42 -o redup-42/

    Run again with the same -o to resume: finished input WARCs are skipped.
    Exit status: 0 all revisits converted and verified; 1 some revisits
    unresolved (kept as they are), unverified, records not copied or read errors in
    the input (listed in OUTDIR/reduplicate-report.json); 2 bad arguments or harvest.
    """
    try:
        coll = Collection.open(collection_dir)
    except CollectionError as exc:
        raise click.UsageError(str(exc)) from exc
    try:
        harvest = select_harvest(coll, [*warcs, *harvest_warcs], job_dir=job_dir,
                                 from_ts=from_ts, to_ts=to_ts)
    except (HarvestError, ValueError) as exc:
        raise click.UsageError(str(exc)) from exc
    opts = ReduplicateOptions(compression=compression, max_size=max_size,  # type: ignore[arg-type]
                              strategy=strategy)  # type: ignore[arg-type]
    show = not no_progress and err.is_terminal
    bar = Progress(TextColumn("{task.description:<26}"), BarColumn(),
                   TextColumn("{task.percentage:>5.1f}%"), TimeRemainingColumn(),
                   console=err, disable=not show)
    tasks: dict[str, TaskID] = {}

    def progress(phase: str, done: int, total: int) -> None:
        if phase not in tasks:
            tasks[phase] = bar.add_task(_PHASES.get(phase, phase), total=total or None)
        bar.update(tasks[phase], completed=done, total=total or None)

    try:
        with bar:
            report = reduplicate(coll, harvest, outdir, opts, progress=progress)
    except (StateError, IndexUnavailable) as exc:
        raise click.ClickException(str(exc)) from exc
    finally:
        coll.close()
    data = report.to_json()
    if as_json:
        click.echo(json.dumps(data, indent=1))
    else:
        t = data["totals"]
        resumed = sum(1 for i in report.inputs if i.resumed)
        click.echo(
            f"{len(report.inputs)} input WARCs ({resumed} already done), {t['records']} "
            f"records: {t['copied']} copied, {t['revisits']} revisits, {t['converted']} "
            f"made responses ({t['verified']} payloads verified, {t['empty_payload']} "
            f"empty), {t['unresolved']} unresolved, {t['unverified']} unverified, "
            f"{t['not_copied']} not copied, {t['read_errors']} read errors"
        )
        for inp in report.inputs:
            for kind in ("unresolved", "unverified", "not_copied", "read_errors"):
                for f in getattr(inp, kind):
                    click.echo(f"  {kind}: {f['file']} @ {f['offset']} {f['uri'] or ''} "
                               f"{f['digest'] or ''}: {f['reason']}")
        click.echo(f"report: {report.outdir}/{REPORT_NAME}")
    sys.exit(0 if report.ok else 1)
