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
@click.argument("crawl_logs", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("-o", "--output", "outdir", required=True, type=click.Path(file_okay=False),
              help="Folder for the WARC files (created).")
@click.option("--cdx", "cdx", type=click.Path(dir_okay=False, exists=True),
              help="Sorted CDX/CDXJ file to find originals in by digest (its "
                   "FILE.digests side index when present, else one built in a "
                   "temporary folder).")
@click.option("--collection", "collection", type=click.Path(file_okay=False, exists=True),
              help="Collection to find originals in (its index; its WARCs give "
                   "WARC-Refers-To record ids).")
@click.option("--warcs", "warc_dirs", multiple=True, type=click.Path(file_okay=False),
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
) -> None:
    """Write a WARC revisit record (profile identical-payload-digest, empty block) for
    every line of CRAWL_LOGS annotated as a duplicate (Heritrix 1 DeDuplicator
    duplicate:"ARC,OFFSET", Heritrix 3 duplicate:digest, warcRevisit:…,
    unwritten:identicalDigest).

    WARC-Date is the line's fetch-begin time. With --cdx or --collection the original
    is looked up by payload digest and named in WARC-Refers-To-Target-URI/-Date (and
    WARC-Refers-To when its WARC can be read). Lines that are not duplicates are
    skipped; lines that cannot be parsed are reported as FILE:LINE and skipped. Exit
    status 1 when any line was malformed or skipped.
    """
    from webark.index.collection import Collection, CollectionError
    from webark.index.locations import LocationResolver, PrefixLocator
    from webark.tools.crawllog_to_warc import convert_crawl_logs
    from webark.tools.crawllog_to_warc_originals import OriginalFinder, sorted_cdx_with_digests

    if cdx and collection:
        raise click.UsageError("give --cdx or --collection, not both")
    finder = None
    index_name = None
    coll = None
    if collection:
        try:
            coll = Collection.open(collection)
            finder = OriginalFinder(coll.source(), coll.resolver())
        except (CollectionError, IndexUnavailable) as e:
            raise click.ClickException(str(e)) from e
        index_name = os.path.abspath(collection)
    with tempfile.TemporaryDirectory(prefix="webark-digests-") as workdir:
        try:
            if cdx:
                resolver = (
                    LocationResolver([PrefixLocator(d) for d in warc_dirs]) if warc_dirs else None
                )
                finder = OriginalFinder(sorted_cdx_with_digests(cdx, workdir), resolver)
                index_name = os.path.abspath(cdx)
            report = convert_crawl_logs(
                crawl_logs, outdir, finder=finder, index_name=index_name, prefix=prefix,
                max_size=max_size, metadata=metadata,
            )
        except (OSError, IndexUnavailable) as e:
            raise click.ClickException(str(e)) from e
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
