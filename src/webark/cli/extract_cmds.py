"""``webark extract``: spin WARC/ARC files out into a browsable file tree (see
:mod:`webark.tools.extract`)."""

from __future__ import annotations

import json
import sys

import click


@click.command("extract")
@click.argument("warcs", nargs=-1, required=True, type=click.Path(exists=True))
@click.option("-o", "--output", "outdir", required=True, type=click.Path(file_okay=False),
              help="Folder of the file tree: new or empty (created), or an earlier "
                   "extract with --replace.")
@click.option("--replace", is_flag=True,
              help="OUTDIR holds an earlier extract: overwrite the files its manifest "
                   "lists and remove those this run does not write; nothing it does not "
                   "list is deleted or overwritten.")
@click.option("--all-captures", is_flag=True,
              help="Every capture, as NAME.TIMESTAMP.EXT (default: the latest per URL).")
@click.option("--include-revisits", is_flag=True,
              help="Revisits count as captures, with their original's payload (found by "
                   "digest in the same inputs).")
@click.option("--manifest", "manifest_format", type=click.Choice(["csv", "json"]),
              default="csv", show_default=True,
              help="Format of OUTDIR/_webark_manifest.* (file → URL, timestamp, WARC, offset).")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.option("--progress/--no-progress", default=None,
              help="Files written so far on stderr (default: when stderr is a terminal).")
def extract(warcs: tuple[str, ...], outdir: str, replace: bool, all_captures: bool,
            include_revisits: bool, manifest_format: str, as_json: bool,
            progress: bool | None) -> None:
    """Write the payload of each capture in WARCS (files or folders of WARC/ARC files)
    to OUTDIR/HOST/PATH: 2xx responses and resource records, the latest capture per URL
    unless --all-captures; directory-like URLs become index.html, the query goes after
    '@', Content-Encoding is decoded. File names are made safe (no '..', no reserved
    characters, length limits, case-insensitive collisions get ~N) and nothing is ever
    written outside OUTDIR (symlinks in OUTDIR are not followed).

    OUTDIR must be new or empty, so that its manifest describes the whole tree. An
    OUTDIR that holds an earlier extract (its manifest, or the _webark_pending.json
    list of an interrupted run) is refused unless --replace is given; then the files
    that list names are overwritten or, when this run does not write them, removed
    (with the folders they leave empty), and nothing else is deleted or overwritten:
    a file to write that is there but not listed stops the run before anything
    changes. A non-empty OUTDIR without such a list is always refused. To combine
    several WARCs in one tree, give them all in one run.

    Files are written under a temporary name and renamed when complete; the manifest
    is written last. A payload cut short (WARC-Truncated, or a cut file) is written
    and flagged in the manifest's "truncated" column. A file given twice is read once;
    a collection folder gives the WARCs its index holds. Exit status: 0; 1 when an
    input had broken records (the first 100 listed on stderr with file @ offset, then
    how many more of each kind; the rest is extracted) or on an error (with --json,
    stdout then holds {"error": …}); 2 for usage errors; 130 when interrupted (no
    manifest is written; run again with --replace to finish).
    """
    from webark.cli.user_io import StatusLine, archive_files, fail
    from webark.tools.extract import PARTIAL_PREFIX, OutputInUse, UnsafeOutput
    from webark.tools.extract import extract as run

    files = archive_files(warcs, as_json=as_json)
    status = StatusLine(sys.stderr.isatty() if progress is None else progress)
    try:
        report = run(files, outdir, all_captures=all_captures,
                     include_revisits=include_revisits, replace=replace,
                     manifest_format=manifest_format,  # type: ignore[arg-type]
                     progress=lambda done, planned: status.show(
                         f"{done:,} of {planned:,} files written", force=done == planned))
        status.done()
    except (OutputInUse, UnsafeOutput, OSError) as e:
        fail(str(e), as_json=as_json)
    except KeyboardInterrupt:
        click.echo(f"interrupted: {outdir} is incomplete and has no manifest (files being "
                   f"written were left as {PARTIAL_PREFIX}* or removed); run again with "
                   "--replace to finish", err=True)
        raise SystemExit(130) from None
    for p in report.problems.listed:
        click.echo(p, err=True)
    if (more := report.problems.summary()) is not None:
        click.echo(more, err=True)
    if as_json:
        click.echo(json.dumps(report.to_json(), indent=2))
    else:
        skipped = ", ".join(f"{k} {v}" for k, v in sorted(report.skipped.items())) or "none"
        truncated = f", {report.truncated} truncated" if report.truncated else ""
        removed = (f"; {report.removed} files of the earlier extract removed"
                   if report.removed else "")
        click.echo(f"{report.files} files, {report.bytes} bytes from {report.records} "
                   f"records ({report.not_decoded} not decodable, kept as stored"
                   f"{truncated}); skipped: {skipped}{removed}")
        click.echo(f"manifest: {report.manifest}")
        if report.skipped.get("revisit"):
            click.echo(f"note: {report.skipped['revisit']} revisit record(s) skipped; "
                       "--include-revisits writes their originals' payload under their "
                       "URLs (a deduplicated crawl is then complete)")  # fmt: skip
    if report.problems:
        sys.exit(1)
