"""Entry point of the ``webark`` command."""

from __future__ import annotations

import logging

import click

from webark import __version__
from webark.cli.warc_cmds import warc


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="webark")
@click.option("-v", "--verbose", count=True, help="More log output (-vv for debug).")
def cli(verbose: int) -> None:
    """webark: crawl the web into WARC files, index them and replay them.

    Start with `webark warc --help` for the WARC tools (ls, check, extract,
    recompress, repair).
    """
    level = logging.WARNING - 10 * min(verbose, 2)
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s")


cli.add_command(warc)


def main() -> None:
    cli()
