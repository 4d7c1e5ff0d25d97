"""``webark collection …``: make collections, add and remove WARCs, list, locate, query.

The work is done by :class:`webark.index.collection.Collection`; this module parses
arguments and draws progress (rich) on stderr.
"""

from __future__ import annotations

import os
import sys
import time

import click
from rich.console import Console
from rich.markup import escape
from rich.progress import (
    BarColumn,
    DownloadColumn,
    Progress,
    TextColumn,
    TimeRemainingColumn,
    TransferSpeedColumn,
)

from webark.cli.user_io import open_collection
from webark.index.collection import Collection, CollectionError
from webark.index.source import IndexUnavailable, key_range

err = Console(stderr=True, highlight=False)


@click.group()
def collection() -> None:
    """Collections: a folder with warcs/, indexes/ and collection.toml.

    \b
    webark collection init archive/demo
    webark collection add archive/demo crawl-*.warc.gz
    webark collection query archive/demo 'example.com/*'
    """


@collection.command("init")
@click.argument("path", type=click.Path(file_okay=False))
@click.option(
    "--store",
    type=click.Choice(["sqlite", "cdxj", "postgres"]),
    default="sqlite",
    show_default=True,
    help="Index store: one SQLite database, one sorted CDXJ per WARC (with a digest "
    "side index), or a PostgreSQL schema that several writers and replay servers share "
    "(needs --url).",
)
@click.option(
    "--url",
    default="",
    help="PostgreSQL database of --store postgres: postgresql://user@host:port/dbname. "
    "No password in it: libpq reads ~/.pgpass (or PGPASSFILE), PGPASSWORD or a service "
    "file (?service=NAME).",
)
@click.option(
    "--schema",
    default="",
    help="PostgreSQL schema of the collection (default: webark_NAME). Giving the schema "
    "of an existing collection of the same name joins it (a second machine).",
)
@click.option(
    "--compat",
    type=click.Choice(["cdxj-indexer", "pywb"]),
    default="cdxj-indexer",
    show_default=True,
    help="Indexer flavour (which records, which fields).",
)
@click.option(
    "--add-mode",
    type=click.Choice(["copy", "link", "in-place"]),
    default="copy",
    show_default=True,
    help="Default of `collection add`.",
)
@click.option(
    "--post-append/--no-post-append",
    default=True,
    show_default=True,
    help="Key POST/PUT captures by method and body (?__wb_method=post&..., as pywb's "
    "wb-manager does), so that replay answers a page's POST with the capture of the "
    "same request (collection.toml: [index] post_append).",
)
def init_cmd(path: str, store: str, compat: str, add_mode: str, post_append: bool,
             url: str, schema: str) -> None:  # fmt: skip
    """Create a collection at PATH (DIR/NAME)."""
    if (url or schema) and store != "postgres":
        raise click.UsageError("--url and --schema are for --store postgres")
    try:
        coll = Collection.init(path, store=store, compat=compat, add_mode=add_mode,  # type: ignore[arg-type]
                               post_append=post_append, url=url, schema=schema)  # fmt: skip
    except (CollectionError, IndexUnavailable) as exc:
        raise click.ClickException(str(exc)) from exc
    where = f" (index: PostgreSQL schema {coll.config.pg_schema})" if store == "postgres" else ""
    err.print(f"created collection [bold]{coll.config.name}[/] at {coll.root}{where}")


@collection.command("add")
@click.argument("path", type=click.Path(exists=True, file_okay=False))
@click.argument("warcs", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False))
@click.option("--copy", "mode", flag_value="copy", help="Copy into warcs/ (default).")
@click.option("--link", "mode", flag_value="link", help="Symlink into warcs/ instead.")
@click.option(
    "--in-place",
    "mode",
    flag_value="in-place",
    help="Leave the WARC where it is; record its path in locations.loc.",
)
@click.option("--reindex", is_flag=True, help="Index again WARCs already indexed.")
@click.option("--no-progress", is_flag=True, help="No progress bar.")
@click.option("--no-search", is_flag=True,
              help="Do not update the collection's search index (if it has one).")  # fmt: skip
def add_cmd(
    path: str, warcs: tuple[str, ...], mode: str | None, reindex: bool, no_progress: bool,
    no_search: bool,
) -> None:
    """Add WARCS to the collection at PATH and index them (one transaction per WARC).

    A WARC still being written (NAME.open) is refused: add it once the crawler has
    closed it (or `webark warc repair` it after a crash). A damaged WARC (truncated, a
    broken record) is added with the records that could be read, and said so. When the
    collection has a search index (`webark search build`), the new WARCs' text is added
    to it.

    Exit status 1 when a WARC could not be added or is damaged (`webark warc check`
    lists its errors), 0 when every WARC was added whole (or was already indexed)."""
    for w in warcs:
        if w.endswith(".open"):
            raise click.ClickException(
                f"{w} is still being written (.open): add it after the crawler closes it, "
                "or run `webark warc repair` on it if the crawler died"
            )
        if not os.path.isfile(w):
            raise click.ClickException(f"{w} is not a regular file (a pipe?)")
        if os.path.getsize(w) == 0:
            raise click.ClickException(f"{w} is empty (0 bytes): no WARC record to add")
    coll = open_collection(path)
    total = sum(os.path.getsize(w) for w in warcs)
    failed = 0
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        DownloadColumn(),
        TransferSpeedColumn(),
        TimeRemainingColumn(),
        console=err,
        disable=no_progress or not err.is_terminal,
    ) as bar:
        task = bar.add_task("indexing", total=total)
        base = 0
        last = 0.0

        def progress(name: str, done: int, size: int) -> None:
            nonlocal last
            now = time.monotonic()
            if done < size and now - last < 0.1:
                return
            last = now
            bar.update(task, completed=base + done, description=name)

        try:
            results = coll.add(warcs, mode, reindex=reindex, progress=progress)  # type: ignore[arg-type]
            for warc_path, res in zip(warcs, results, strict=True):
                base += os.path.getsize(warc_path)
                bar.update(task, completed=base)
                if res.status == "failed":
                    failed += 1
                    bar.console.print(f"[red]failed[/] {res.name}: {res.message}")
                elif res.status == "skipped":
                    bar.console.print(f"[yellow]skipped[/] {res.name}: {res.message}")
                elif res.errors:
                    failed += 1
                    bar.console.print(
                        f"[red]damaged[/] {escape(res.name)}: {res.lines} lines indexed, "
                        f"{res.errors} errors (first: {escape(res.first_error)}); the "
                        "records that could be read are indexed, `webark warc check "
                        f"{escape(warc_path)}` lists the errors", soft_wrap=True)
                else:
                    note = f", {res.problems} warnings (webark warc check)" if res.problems \
                        else ""
                    bar.console.print(f"[green]indexed[/] {res.name}: {res.lines} lines{note}")
        except IndexUnavailable as exc:
            raise click.ClickException(f"index not writable: {exc}") from exc
        finally:
            coll.close()
    if not no_search:
        failed += _update_search(coll)
    sys.exit(1 if failed else 0)


def _update_search(coll: Collection) -> int:
    """Bring an existing search index up to date (``webark search build``); the
    number of WARCs that failed."""
    from webark.search import find_search
    from webark.search.build import build_search

    try:
        index = find_search(coll)
        if index is None:
            return 0
        try:
            report = build_search(coll, index)
        finally:
            index.close()
            coll.close()
    except (IndexUnavailable, CollectionError) as exc:
        err.print(f"[red]search index not updated[/]: {exc} (run `webark search build`)")
        return 1
    if report.added or report.removed:
        err.print(f"search index: {report.documents} documents from {len(report.added)} "
                  f"WARCs added, {len(report.removed)} WARCs removed")  # fmt: skip
    for name, why in report.failed.items():
        err.print(f"[red]search: failed[/] {name}: {why}")
    return len(report.failed)


@collection.command("remove")
@click.argument("path", type=click.Path(exists=True, file_okay=False))
@click.argument("warcs", nargs=-1, required=True)
@click.option(
    "--delete", is_flag=True, help="Also delete the collection's copy or symlink in warcs/."
)
def remove_cmd(path: str, warcs: tuple[str, ...], delete: bool) -> None:
    """Remove WARCS (file names) from the index of the collection at PATH (and their
    documents from its search index, if it has one).

    Exit status 1 when a name was not indexed (a typo: `webark collection ls` lists
    the names)."""
    coll = open_collection(path)
    missing = 0
    try:
        for r in coll.remove(warcs, delete=delete):
            if r.status == "removed":
                gone = " (file deleted)" if r.deleted else ""
                err.print(f"removed {r.name}: {r.lines} lines{gone}")
            else:
                missing += 1
                err.print(f"[yellow]not indexed[/] {r.name} (`webark collection ls` lists "
                          "the indexed names)")
    except IndexUnavailable as exc:
        raise click.ClickException(str(exc)) from exc
    finally:
        coll.close()
    _update_search(coll)  # the removed WARCs' documents go too
    if missing:
        sys.exit(1)


@collection.command("ls")
@click.argument("path", type=click.Path(exists=True, file_okay=False))
def ls_cmd(path: str) -> None:
    """List indexed WARCs (name, lines, size, when; a WARC a crawl is still appending to
    also says being-written:OFFSET, the offset indexed up to) and WARCs in warcs/ not
    indexed."""
    coll = open_collection(path)
    try:
        for f in coll.indexed():
            size = "-" if f.size is None else str(f.size)
            being = "" if f.complete else f"\tbeing-written:{f.indexed_to}"
            click.echo(f"{f.name}\t{f.lines}\t{size}\t{f.indexed_at}{being}")
        for name in coll.unindexed_warcs():
            click.echo(f"{name}\tnot-indexed")
    finally:
        coll.close()


@collection.command("locate")
@click.argument("path", type=click.Path(exists=True, file_okay=False))
@click.argument("warc")
@click.argument("location", required=False)
def locate_cmd(path: str, warc: str, location: str | None) -> None:
    """Show where WARC is read from, or record its new LOCATION (path or URL) in
    locations.loc (after moving it; no re-indexing)."""
    coll = open_collection(path)
    if location is not None:
        coll.locate(warc, location)
    for c in coll.resolver().candidates(warc):
        click.echo(c)


@collection.command("query")
@click.argument("path", type=click.Path(exists=True, file_okay=False))
@click.argument("url")
@click.option(
    "--match-type",
    type=click.Choice(["exact", "prefix", "host", "domain"]),
    help="Default: exact, or from the wildcards *.example.com / example.com/*.",
)
@click.option("--from", "from_ts", help="1-14 digit timestamp (inclusive).")
@click.option("--to", "to_ts", help="1-14 digit timestamp (inclusive).")
@click.option("--reverse", is_flag=True)
@click.option("--limit", type=int, default=0, help="At most this many lines (0: all).")
@click.option("--output", type=click.Choice(["cdxj", "cdx11"]), default="cdxj", show_default=True)
def query_cmd(
    path: str,
    url: str,
    match_type: str | None,
    from_ts: str | None,
    to_ts: str | None,
    reverse: bool,
    limit: int,
    output: str,
) -> None:
    """Print the index lines of URL in the collection at PATH (all its indexes merged)."""
    from webark.cdx.formats import format_cdx11, format_cdxj

    fmt = format_cdxj if output == "cdxj" else format_cdx11
    coll = open_collection(path)
    try:
        rng = key_range(url, match_type, from_ts, to_ts)  # type: ignore[arg-type]
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from exc
    try:
        for n, line in enumerate(coll.source().scan(rng, reverse), 1):
            click.echo(fmt(line))
            if limit and n >= limit:
                break
    except IndexUnavailable as exc:
        raise click.ClickException(f"index unavailable: {exc}") from exc
    finally:
        coll.close()
