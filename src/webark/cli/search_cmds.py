"""``webark search …``: build a collection's full-text index, query it, export it.

The work is done by :mod:`webark.search`; this module parses arguments, draws progress
(rich) on stderr and prints results.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator

import click
from rich.console import Console
from rich.markup import escape

from webark.apps.replay.fulltext import results_json
from webark.apps.replay.paths import archival_url, coll_prefix
from webark.cli.user_io import open_collection
from webark.index.collection import Collection, CollectionError
from webark.index.source import IndexUnavailable
from webark.search import open_search
from webark.search.backend import SearchIndex, SearchResults, Snippet
from webark.search.build import BuildReport, build_search
from webark.search.query import EmptyQuery

err = Console(stderr=True, highlight=False)


def _index(coll: Collection, create: bool) -> SearchIndex:
    try:
        return open_search(coll, create=create)
    except IndexUnavailable as exc:
        hint = "" if create else " (run `webark search build` first)"
        raise click.ClickException(f"search index unavailable: {exc}{hint}") from exc
    except CollectionError as exc:
        raise click.ClickException(str(exc)) from exc


@click.group()
def search() -> None:
    """Full-text search of a collection's captures (HTML, PDF, plain text).

    \b
    webark search build archive/demo             # index new WARCs' text (incremental)
    webark search query archive/demo '"exact phrase" words -notthis'
    webark search export archive/demo -o docs.jsonl   # for Solr / OpenSearch

    The index is SQLite FTS5 in COLLECTION/search/ by default, PostgreSQL for a
    collection whose index is on PostgreSQL ([search] backend in collection.toml).
    `webark collection add` keeps an existing search index up to date, and
    `webark serve` has a search page at /COLLECTION/search.
    """


@search.command("build")
@click.argument("path", type=click.Path(exists=True, file_okay=False))
@click.option("-j", "--jobs", type=click.IntRange(1, 64), default=1, show_default=True,
              help="Processes reading WARCs (text extraction is CPU-bound).")  # fmt: skip
@click.option("--no-progress", is_flag=True, help="No progress line.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON on stdout.")
def build_cmd(path: str, jobs: int, no_progress: bool, as_json: bool) -> None:
    """Index the text of the collection at PATH: the documents of WARCs added since the
    last build, and none of WARCs removed since (one transaction per WARC, so an
    interrupted build loses nothing and the next one goes on).

    Exit status 1 when a WARC could not be found or had broken records (listed)."""
    coll = open_collection(path)
    index = _index(coll, create=True)
    show = not no_progress and err.is_terminal

    def progress(name: str, docs: int, done: int, total: int) -> None:
        if show:
            err.print(f"[{done}/{total}] {escape(name)}: {docs} documents", end="\r")

    try:
        report = build_search(coll, index, jobs=jobs, progress=progress)
    except IndexUnavailable as exc:
        raise click.ClickException(f"index unavailable: {exc}") from exc
    finally:
        index.close()
        coll.close()
    _report(report, as_json)
    sys.exit(1 if report.failed or report.problems else 0)


def _report(report: BuildReport, as_json: bool) -> None:
    if as_json:
        click.echo(json.dumps({
            "added": report.added, "removed": report.removed, "failed": report.failed,
            "documents": report.documents, "skipped": dict(report.skips.reasons),
            "problems": report.problems + report.skips.problems,
        }))  # fmt: skip
    for name, n in report.added.items():
        err.print(f"[green]indexed[/] {escape(name)}: {n} documents")
    for name, n in report.removed.items():
        err.print(f"[yellow]removed[/] {escape(name)}: {n} documents")
    for name, why in report.failed.items():
        err.print(f"[red]failed[/] {escape(name)}: {escape(why)}")
    for p in report.problems + report.skips.problems:
        err.print(f"[red]problem[/] {escape(p)}")
    skipped = ", ".join(f"{k} {v}" for k, v in sorted(report.skips.reasons.items()))
    if not report.added and not report.removed and not report.failed:
        err.print("search index up to date")
    elif skipped:
        err.print(f"records without a document: {skipped}")


@search.command("query")
@click.argument("path", type=click.Path(exists=True, file_okay=False))
@click.argument("query")
@click.option("-n", "--limit", type=click.IntRange(1, 1000), default=10, show_default=True,
              help="Results per page.")  # fmt: skip
@click.option("--page", type=click.IntRange(1), default=1, show_default=True)
@click.option("--base", default="/", show_default=True,
              help="Replay server base URL for the links (http://host:8080/).")  # fmt: skip
@click.option("--json", "as_json", is_flag=True, help="One JSON object on stdout.")
def query_cmd(path: str, query: str, limit: int, page: int, base: str, as_json: bool) -> None:
    """Search the collection at PATH; ranked results, one per URL, with the matching
    words highlighted and the link of the capture.

    \b
    QUERY is web-search syntax: words (all must match), "a phrase",
    a OR b, -word (must not match). English words match their other forms
    (running: runs, ran is another word)."""
    coll = open_collection(path)
    index = _index(coll, create=False)
    try:
        results = index.search(query, limit=limit, offset=(page - 1) * limit)
    except EmptyQuery as exc:
        raise click.UsageError(str(exc)) from exc
    except IndexUnavailable as exc:
        raise click.ClickException(f"search index unavailable: {exc}") from exc
    finally:
        index.close()
        coll.close()
    prefix = coll_prefix(base, coll.config.name or coll.root.name)
    if as_json:
        click.echo(json.dumps(results_json(results, prefix), ensure_ascii=False))
        return
    _print_results(results, prefix)


def _marked(parts: Snippet) -> str:
    return "".join(f"[bold yellow]{escape(t)}[/]" if on else escape(t) for t, on in parts)


def _print_results(results: SearchResults, prefix: str) -> None:
    out = Console(highlight=False, soft_wrap=True)
    if not results.hits:
        err.print(f"no results for {results.query!r}")
        return
    first = results.offset + 1
    err.print(f"{results.total} URLs match; {first}–{results.offset + len(results.hits)}:")
    for i, h in enumerate(results.hits, first):
        title = _marked(h.title_parts) if h.title_parts else escape(h.url)
        more = f", {h.captures} captures" if h.captures > 1 else ""
        out.print(f"{i}. [bold]{title}[/]")
        out.print(f"   {escape(h.url)}  [dim]{h.crawl_date}{more}[/]")
        if h.snippet:
            out.print(f"   {_marked(h.snippet)}")
        out.print(f"   [cyan]{escape(archival_url(prefix, h.wayback_date, h.url))}[/]")


@search.command("export")
@click.argument("path", type=click.Path(exists=True, file_okay=False))
@click.option("-o", "--output", default="-", show_default=True,
              help="File to write (as FILE.part, renamed when complete); - is stdout.")  # fmt: skip
@click.option("--format", "fmt", type=click.Choice(["solr", "opensearch"]), default="solr",
              show_default=True,
              help="solr: one document per line (POST to /solr/CORE/update/json/docs); "
                   "opensearch: _bulk lines (an index action before each document).")  # fmt: skip
@click.option("--index", "index_name", help="OpenSearch index name (default: the "
              "collection's name, lowercased).")  # fmt: skip
def export_cmd(path: str, output: str, fmt: str, index_name: str | None) -> None:
    """Write every search document of the collection at PATH as JSON lines, with
    webarchive-discovery's field names (the UKWA/SolrWayback Solr schema), so that Solr
    or OpenSearch take them as they are:

    \b
    curl -H 'Content-Type: application/json' --data-binary @docs.jsonl \\
         'http://solr:8983/solr/discovery/update/json/docs?commit=true'
    curl -H 'Content-Type: application/x-ndjson' --data-binary @bulk.jsonl \\
         'http://opensearch:9200/_bulk'
    """
    coll = open_collection(path)
    index = _index(coll, create=False)
    name = index_name or (coll.config.name or coll.root.name).lower()

    def lines() -> Iterator[str]:
        for doc in index.documents():
            if fmt == "opensearch":
                yield json.dumps({"index": {"_index": name, "_id": doc.id}})
            yield json.dumps(doc.to_solr(), ensure_ascii=False)

    try:
        n = _write_lines(lines(), output)
    except IndexUnavailable as exc:
        raise click.ClickException(f"search index unavailable: {exc}") from exc
    finally:
        index.close()
        coll.close()
    docs = n // 2 if fmt == "opensearch" else n
    err.print(f"exported {docs} documents" + ("" if output == "-" else f" to {output}"))


def _write_lines(lines: Iterator[str], output: str) -> int:
    n = 0
    if output == "-":
        for line in lines:
            click.echo(line)
            n += 1
        return n
    tmp = output + ".part"
    try:
        with open(tmp, "w", encoding="utf-8") as f:
            for line in lines:
                f.write(line + "\n")
                n += 1
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, output)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return n
