"""``webark stats``: how big is the archive (see :mod:`webark.tools.stats`)."""

from __future__ import annotations

import json
import sys

import click


@click.command("stats")
@click.argument("inputs", nargs=-1, required=True, type=click.Path(exists=True))
@click.option("--json", "as_json", is_flag=True, help="Print the statistics as JSON.")
@click.option("--html", "html_path", type=click.Path(dir_okay=False),
              help="Also write a self-contained HTML page with charts to this file.")
@click.option("--top", type=click.IntRange(min=1), default=15, show_default=True,
              help="Rows of the MIME-type and host tables (text output).")
def stats(inputs: tuple[str, ...], as_json: bool, html_path: str | None, top: int) -> None:
    """Statistics of a collection folder, folders of WARC/ARC files, or files:
    captures, URLs, hosts, bytes stored (compressed records) against bytes represented
    (payloads, revisits at their original's size: the dedup savings), per MIME type,
    per year and per harvest (warcinfo isPartOf, else the WARC name prefix), and the
    revisit ratio.
    """
    from webark.tools.stats import archive_inputs, archive_stats

    files = archive_inputs(inputs)
    if not files:
        raise click.ClickException("no WARC/ARC files found in the inputs")
    try:
        result = archive_stats(files)
    except OSError as e:
        raise click.ClickException(str(e)) from e
    for p in result.problems:
        click.echo(p, err=True)
    if html_path:
        from webark.tools.stats_html import render_html

        with open(html_path, "w", encoding="utf-8") as f:
            f.write(render_html(result))
    if as_json:
        click.echo(json.dumps(result.to_json(), indent=2))
        return
    _print_tables(result, top)


def _print_tables(result: object, top: int) -> None:
    from rich.console import Console
    from rich.table import Table

    from webark.tools.stats import ArchiveStats, Bucket
    from webark.tools.stats_html import human_bytes, summary_rows

    assert isinstance(result, ArchiveStats)
    console = Console(file=sys.stdout, highlight=False, width=120)
    summary = Table(title="Archive", show_header=False)
    summary.add_column("", justify="left")
    summary.add_column("", justify="right")
    for name, value in summary_rows(result):
        summary.add_row(name, value)
    console.print(summary)

    def table(title: str, rows: dict[str, Bucket], keys: list[str]) -> None:
        t = Table(title=title)
        for col in (title.split()[-1], "captures", "revisits", "stored", "represented",
                    "savings"):
            t.add_column(col, justify="left" if col == title.split()[-1] else "right")
        for k in keys:
            b = rows[k]
            t.add_row(k, str(b.captures), str(b.revisits), human_bytes(b.stored),
                      human_bytes(b.represented), human_bytes(b.savings))
        console.print(t)

    mimes = sorted(result.mime, key=lambda k: (-result.mime[k].captures, k))[:top]
    table("Per MIME type", result.mime, mimes)
    table("Per year", result.year, sorted(result.year))
    table("Per harvest", result.harvest, sorted(result.harvest))
    hosts = Table(title=f"Top {top} hosts")
    hosts.add_column("host")
    hosts.add_column("captures", justify="right")
    for host, n in result.hosts.most_common(top):
        hosts.add_row(host, str(n))
    console.print(hosts)
