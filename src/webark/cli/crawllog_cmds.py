"""``webark crawllog``: crawl.log tools. ``webark crawllog to-warc`` writes WARC revisit
records for the duplicates a crawl.log records but no (W)ARC does (see
:mod:`webark.tools.crawllog_to_warc`).
"""

from __future__ import annotations

import json
import os
import sys
import tempfile

import click

from webark.index.source import IndexUnavailable


@click.group("crawllog")
def crawllog() -> None:
    """crawl.log tools: to-warc."""


@crawllog.command("to-warc")
@click.argument("crawl_logs", nargs=-1, required=True, type=click.Path())
@click.option("-o", "--output", "outdir", required=True, type=click.Path(file_okay=False),
              help="Folder for the WARC files (created).")
@click.option("--cdx", "cdx", type=click.Path(dir_okay=False, exists=True),
              help="Sorted CDX/CDXJ file to find originals in by digest (its "
                   "FILE.digests side index when present, else one built in a "
                   "temporary folder).")
@click.option("--collection", "collection", type=click.Path(file_okay=False, exists=True),
              help="Collection to find originals in (its index; its WARCs give "
                   "WARC-Refers-To record ids).")
@click.option("--warcs", "warc_dirs", multiple=True,
              type=click.Path(file_okay=False, exists=True),
              help="With --cdx: folder holding the indexed WARCs, to read the "
                   "originals' record ids; repeatable.")
@click.option("--max-size", type=click.IntRange(min=1), default=10**9, show_default=True,
              help="Rotate before a WARC would pass this many bytes.")
@click.option("--prefix", default="CRAWLLOG-REVISITS", show_default=True,
              help="WARC file-name prefix.")
@click.option("--metadata/--no-metadata", default=True, show_default=True,
              help="Write a metadata record (the crawl.log line, via, hops) beside "
                   "each revisit.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON on stdout.")
@click.option("--progress/--no-progress", default=None,
              help="Lines converted so far on stderr (default: when stderr is a terminal).")
def to_warc(
    crawl_logs: tuple[str, ...],
    outdir: str,
    cdx: str | None,
    collection: str | None,
    warc_dirs: tuple[str, ...],
    max_size: int,
    prefix: str,
    metadata: bool,
    as_json: bool,
    progress: bool | None,
) -> None:
    """Write a WARC revisit record (profile identical-payload-digest, empty block) for
    every line of CRAWL_LOGS annotated as a duplicate (Heritrix 1 DeDuplicator
    duplicate:"ARC,OFFSET", Heritrix 3 duplicate:digest, warcRevisit:…,
    unwritten:identicalDigest).

    WARC-Date is the line's fetch-begin time. With --cdx or --collection the original
    is looked up by payload digest and named in WARC-Refers-To-Target-URI/-Date (and
    WARC-Refers-To when its WARC can be read). Lines that are not duplicates are
    skipped; lines that cannot be parsed are reported as FILE:LINE and skipped (a
    cut-off crawl.log.gz: the lines before the cut are converted). A crawl.log given
    twice is read once. Exit status: 0; 1 when any line was malformed or skipped, or
    on an error (with --json, stdout then holds {"error": …}); 2 for usage errors; 130
    when interrupted (the WARCs written so far are renamed *.incomplete).
    """
    from webark.cli.user_io import StatusLine, fail, unique_regular_files
    from webark.index.collection import Collection, CollectionError
    from webark.index.locations import LocationResolver, PrefixLocator
    from webark.tools.crawllog_to_warc import INCOMPLETE_SUFFIX, convert_crawl_logs
    from webark.tools.crawllog_to_warc_originals import OriginalFinder, sorted_cdx_with_digests

    if cdx and collection:
        raise click.UsageError("give --cdx or --collection, not both")
    if warc_dirs and not cdx:
        raise click.UsageError("--warcs goes with --cdx (a collection knows its WARCs)")
    if not prefix or "/" in prefix or os.sep in prefix or prefix.startswith("."):
        raise click.BadParameter(
            "a file-name prefix: not empty, no '/', not starting with '.'",
            param_hint="--prefix",
        )
    crawl_logs = tuple(unique_regular_files(crawl_logs, what="crawl.log", as_json=as_json))
    finder = None
    index_name = None
    coll = None
    if collection:
        try:
            coll = Collection.open(collection)
            finder = OriginalFinder(coll.source(), coll.resolver())
        except (CollectionError, IndexUnavailable) as e:
            fail(str(e), as_json=as_json)
        index_name = os.path.abspath(collection)
    with tempfile.TemporaryDirectory(prefix="webark-digests-") as workdir:
        try:
            if cdx:
                resolver = (
                    LocationResolver([PrefixLocator(d) for d in warc_dirs]) if warc_dirs else None
                )
                finder = OriginalFinder(sorted_cdx_with_digests(cdx, workdir), resolver)
                index_name = os.path.abspath(cdx)
            status = StatusLine(sys.stderr.isatty() if progress is None else progress)
            report = convert_crawl_logs(
                crawl_logs, outdir, finder=finder, index_name=index_name, prefix=prefix,
                max_size=max_size, metadata=metadata,
                progress=lambda path, n: status.show(f"{path}: {n:,} lines converted"),
            )
            status.done()
        except (OSError, IndexUnavailable) as e:
            fail(str(e), as_json=as_json)
        except KeyboardInterrupt:
            click.echo(
                f"interrupted: WARCs written so far in {outdir} are named "
                f"*{INCOMPLETE_SUFFIX} (not a finished conversion); run again to convert "
                "everything",
                err=True,
            )
            raise SystemExit(130) from None
        finally:
            if coll is not None:
                coll.close()
    for message in report.problems:
        click.echo(message, err=True)
    extra = report.malformed + sum(report.skipped.values()) - len(report.problems)
    if extra > 0:
        click.echo(f"… {extra} more problems", err=True)
    if as_json:
        click.echo(json.dumps(report.to_json(), indent=2))
    else:
        click.echo(
            f"{report.revisits} revisit records ({report.resolved} with their original, "
            f"{report.with_record_id} with WARC-Refers-To, {report.unresolved} unresolved) "
            f"and {report.metadata} metadata records in {len(report.warcs)} WARC files; "
            f"{report.not_duplicate} lines not duplicates, {report.malformed} malformed, "
            f"{sum(report.skipped.values())} duplicates skipped"
        )
        for path in report.warcs:
            click.echo(f"  {path}")
    if report.malformed or report.skipped:
        sys.exit(1)
