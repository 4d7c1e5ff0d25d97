"""``webark stats``: how big is the archive (see :mod:`webark.tools.stats`)."""

from __future__ import annotations

import contextlib
import json
import os
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
    revisit ratio. A file given twice is counted once.

    Broken records are listed on stderr (file @ offset) and in the JSON "problems":
    the first 100; all of them are counted per kind (JSON "problem_counts"), and a last
    line says how many more were not listed ("problems_not_listed").
    Exit status: 0; 1 when an input had broken records (the statistics cover what
    could be read) or on an error (with --json, stdout then holds {"error": …}); 2
    for usage errors.
    """
    from webark.cli.user_io import archive_files, fail
    from webark.tools.stats import archive_stats

    files = archive_files(inputs, as_json=as_json)
    try:
        result = archive_stats(files)
    except OSError as e:
        fail(str(e), as_json=as_json)
    for p in result.problems.listed:
        click.echo(p, err=True)
    if (more := result.problems.summary()) is not None:
        click.echo(more, err=True)
    if html_path:
        from webark.tools.stats_html import render_html

        try:
            _write_atomically(html_path, render_html(result))
        except OSError as e:
            fail(f"cannot write the HTML page {html_path}: {e.strerror or e}", as_json=as_json)
    if as_json:
        click.echo(json.dumps(result.to_json(), indent=2))
    else:
        _print_tables(result, top)
    if result.problems:
        sys.exit(1)


def _write_atomically(path: str, text: str) -> None:
    """Write ``text`` to ``path`` through ``path.part`` and a rename: an interrupted
    run leaves no half page under the final name."""
    part = path + ".part"
    try:
        with open(part, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(part, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(part)
        raise


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
