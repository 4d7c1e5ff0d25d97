"""Entry point of the ``webark`` command.

Subcommands are imported only when they run (click's lazy-group pattern), so that
``webark warc ls`` does not pay for the web framework of ``webark serve``.
"""

from __future__ import annotations

import codecs
import importlib
import logging
import platform
import sys

import click

from webark import __version__

# command name -> (module, attribute, one-line help shown by `webark --help`)
SUBCOMMANDS: dict[str, tuple[str, str, str]] = {
    "warc": ("webark.cli.warc_cmds", "warc",
             "WARC/ARC tools: ls, check, extract, recompress, repair."),
    "index": ("webark.cli.index_cmds", "index",
              "Index WARC/ARC files into CDXJ, CDX (11 or 9 fields) or the ng format."),
    "collection": ("webark.cli.collection_cmds", "collection",
                   "Create collections and add or remove WARCs (indexed incrementally)."),
    "crawl": ("webark.cli.crawl_cmds", "crawl",
              "Crawl from seeds into WARCs, crawl.log and reports (polite, robots, --resume)."),
    "dedup": ("webark.cli.dedup_cmds", "dedup",
              "Dedup index: build it from crawl.logs, WARCs and CDX files."),
    "crawllog": ("webark.cli.crawllog_cmds", "crawllog", "crawl.log tools: to-warc (revisits)."),
    "extract": ("webark.cli.extract_cmds", "extract", "Spin WARC/ARC files out into a file tree."),
    "stats": ("webark.cli.stats_cmds", "stats", "How big is the archive: captures, bytes, dedup."),
    "reduplicate": ("webark.cli.reduplicate_cmds", "reduplicate_cmd",
                    "Write a harvest again with every revisit made a full response."),
    "rss": ("webark.cli.rss_cmds", "rss",
            "Continuous crawling: sites, feeds and implied pages (while the crawl runs)."),
    "revisits": ("webark.cli.revisits_cmds", "revisits",
                 "Revisit reports: originals and the revisits that depend on them."),
    "search": ("webark.cli.search_cmds", "search",
               "Full-text search of a collection: build, query, export (Solr/OpenSearch)."),
    "wacz": ("webark.cli.wacz_cmds", "wacz",
             "WACZ packages of jobs and collections (ReplayWeb.page), pages.jsonl."),
    "spark": ("webark.cli.spark_cmds", "spark",
              "Spark jobs: sorted CDXJ + ZipNum, Parquet capture table, dedup, stats."),
    "proxy": ("webark.cli.proxy_cmds", "proxy",
              "Archiving proxy: record what browsers and clients fetch through it (HTTP/HTTPS)."),
    "serve": ("webark.cli.serve_cmds", "serve",
              "Serve collections: the CDX resolution API and Memento TimeMaps."),
}


class LazyGroup(click.Group):
    """A click group whose subcommands live in modules imported on first use."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(super().list_commands(ctx)) | set(SUBCOMMANDS))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in SUBCOMMANDS:
            module, attr, _ = SUBCOMMANDS[cmd_name]
            cmd = getattr(importlib.import_module(module), attr)
            assert isinstance(cmd, click.Command)
            return cmd
        return super().get_command(ctx, cmd_name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, SUBCOMMANDS[name][2]) for name in sorted(SUBCOMMANDS)]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


def versions() -> list[str]:
    """What ``webark --version`` prints, one line each: webark, the WARC libraries
    (fastwarc, which the reader runs on; warcio, the peer it reads like), Python (with
    its path, so that a bug report says which installation ran)."""
    from importlib.metadata import PackageNotFoundError, version

    lines = [f"webark {__version__}"]
    for dist in ("fastwarc", "warcio"):
        try:
            lines.append(f"{dist} {version(dist)}")
        except PackageNotFoundError:
            lines.append(f"{dist} not installed")
    lines.append(f"Python {platform.python_version()} ({platform.python_implementation()}, "
                 f"{sys.executable})")
    return lines


def _print_versions(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    if value and not ctx.resilient_parsing:
        click.echo("\n".join(versions()))
        ctx.exit()


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--version", is_flag=True, expose_value=False, is_eager=True,
              callback=_print_versions,
              help="Print the versions of webark, fastwarc, warcio and Python, and exit.")
@click.option("-v", "--verbose", count=True, help="More log output (-vv for debug).")
def cli(verbose: int) -> None:
    """webark: crawl the web into WARC files, index them and replay them.

    Run `webark COMMAND --help` for each command's options.
    """
    level = logging.WARNING - 10 * min(verbose, 2)
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s")


#: Encoding error handler of the CLI's stdout and stderr (see :func:`main`).
ESCAPE_ERRORS = "webark-escape"


def _escape_unencodable(exc: UnicodeError) -> tuple[str, int]:
    """Codec error handler: a byte that was not UTF-8 (a surrogate escape U+DC80–U+DCFF,
    as Python decodes file names and webark carries archive text) becomes ``\\xNN``,
    as :func:`webark.core.text.printable` shows it; any other character the stream
    cannot encode becomes ``\\uNNNN`` (``backslashreplace``)."""
    if not isinstance(exc, UnicodeEncodeError):
        raise exc
    out = []
    for ch in exc.object[exc.start : exc.end]:
        code = ord(ch)
        out.append(f"\\x{code - 0xDC00:02x}" if 0xDC80 <= code <= 0xDCFF else f"\\u{code:04x}")
    return "".join(out), exc.end


def escaping_streams() -> None:
    """Make ``sys.stdout`` and ``sys.stderr`` escape what they cannot encode instead of
    raising UnicodeEncodeError: with ``PYTHONIOENCODING=utf-8`` (strict) a file name
    or CDX field holding bytes that are not UTF-8 killed ``warc check`` and
    ``collection query`` (issue 20 item 15). The encoding itself is kept."""
    codecs.register_error(ESCAPE_ERRORS, _escape_unencodable)
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:  # a TextIOWrapper (not a test runner's buffer)
            reconfigure(errors=ESCAPE_ERRORS)


def main() -> None:
    escaping_streams()
    cli()
