"""``webark wacz …``: pack a crawl job, a collection or WARC files as WACZ 1.1.1, and
write a job's page list (pages.jsonl).

The work is done by :mod:`webark.tools.wacz` and :mod:`webark.search.pages`; this module
parses arguments and reports on stderr.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from webark.cli.user_io import StatusLine


@click.group()
def wacz() -> None:
    """WACZ packages (Web Archive Collection Zipped, 1.1.1) for ReplayWeb.page, pywb
    and Browsertrix users.

    \b
    webark wacz create demo-out/job -o pydocs.wacz        # a crawl job
    webark wacz create archive/demo -o demo.wacz --text   # a collection, with page text
    webark wacz pages demo-out/job                        # (re)write the job's pages.jsonl

    Open the package in ReplayWeb.page (https://replayweb.page, or its npm package
    `replaywebpage` served locally): the pages list is pages/pages.jsonl.
    """


@wacz.command("create")
@click.argument("sources", nargs=-1, required=True, type=click.Path(exists=True))
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False),
              help="The .wacz file to write.")  # fmt: skip
@click.option("--title", help="Title of the package (default: the folder's name).")
@click.option("--desc", "description", help="Description of the package.")
@click.option("--text", "with_text", is_flag=True,
              help="Put each page's visible text in pages.jsonl (searchable in ReplayWeb.page).")
@click.option("--replace", is_flag=True, help="Overwrite OUTPUT if it exists.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON on stdout.")
def create_cmd(sources: tuple[str, ...], output: str, title: str | None,
               description: str | None, with_text: bool, replace: bool,
               as_json: bool) -> None:  # fmt: skip
    """Pack SOURCES as a WACZ file: one `webark crawl` job folder (its WARCs, crawl.log
    and logs, and its pages.jsonl), or collections, folders and WARC/ARC files.

    The WARCs are stored as they are; the CDXJ index is webark's (as cdxj-indexer
    writes it). Broken records are listed (file @ offset) and packed as they are; the
    exit status is then 1. Exit status 2: nothing to pack, or OUTPUT exists."""
    from webark.index.collection import CollectionError
    from webark.tools.wacz import WaczError, source_of, write_wacz

    status = StatusLine(not as_json and sys.stderr.isatty())
    try:
        source = source_of(sources)
        report = write_wacz(source, output, title=title, description=description,
                            with_text=with_text, replace=replace,
                            progress=lambda line: status.show(line, force=True))  # fmt: skip
    except (WaczError, CollectionError, FileNotFoundError) as e:
        status.done()
        click.echo(f"webark wacz: {e}", err=True)
        sys.exit(2)
    status.done()
    for p in report.problems:
        click.echo(f"problem: {p}", err=True)
    if as_json:
        click.echo(json.dumps({"path": str(report.path), "bytes": report.size,
                               "warcs": report.warcs, "index_lines": report.index_lines,
                               "pages": report.pages,
                               "problems": [p.to_json() for p in report.problems]}))  # fmt: skip
    else:
        click.echo(f"{report.path}: {report.size:,} bytes, {report.warcs} WARC(s), "
                   f"{report.index_lines} index lines, {report.pages} pages", err=True)  # fmt: skip
    sys.exit(1 if report.problems else 0)


@wacz.command("pages")
@click.argument("job_dir", type=click.Path(exists=True, file_okay=False))
@click.option("--text", "with_text", is_flag=True, help="Include each page's visible text.")
def pages_cmd(job_dir: str, with_text: bool) -> None:
    """Write JOB_DIR/pages/pages.jsonl (json-pages-1.0) from the job's WARCs and
    crawl.log: its seeds and the HTML pages reached by links, with their titles.

    `webark crawl` writes it at the end of a crawl; this rewrites it (e.g. with --text).
    Exit status 1 when broken records were met (listed, the rest read)."""
    from webark.search.pages import HopPaths, pages_of_warcs, write_pages
    from webark.tools.wacz import job_source

    source = job_source(job_dir)
    if not source.crawl_logs:
        click.echo(f"webark wacz pages: {job_dir} has no logs/crawl.log (not a crawl job)",
                   err=True)  # fmt: skip
        sys.exit(2)
    problems: list = []
    hops = HopPaths(source.crawl_logs)
    out = Path(job_dir) / "pages" / "pages.jsonl"
    n = write_pages(out, pages_of_warcs(source.warcs, hops=hops, with_text=with_text,
                                        problems=problems), has_text=with_text)  # fmt: skip
    for p in [*hops.problems, *map(str, problems)]:
        click.echo(f"problem: {p}", err=True)
    click.echo(f"{out}: {n} pages", err=True)
    sys.exit(1 if problems or hops.problems else 0)
