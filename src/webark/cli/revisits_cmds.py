"""``webark revisits …``: reports on revisit records and the originals they depend on.

The work is done by :mod:`webark.tools.revisit_refs`; this module parses arguments and
prints text or JSON.
"""

from __future__ import annotations

import json

import click
from rich.console import Console

from webark.index.collection import Collection, CollectionError
from webark.index.record_loader import RecordLoader
from webark.index.source import IndexUnavailable
from webark.tools.revisit_refs import lost_if, revisit_refs

err = Console(stderr=True, highlight=False)


@click.group()
def revisits() -> None:
    """Revisit records: which originals they depend on.

    \b
    webark revisits refs archive/coll --top 20
    webark revisits refs archive/coll --lost-if CRAWL-2024-00042.warc.gz
    """


@revisits.command("refs")
@click.argument("collection_dir", type=click.Path(exists=True, file_okay=False))
@click.option("--json", "as_json", is_flag=True, help="JSON instead of text.")
@click.option("--top", type=click.IntRange(min=0), default=10, show_default=True,
              help="How many entries each list shows: most-cited originals, unresolved "
                   "revisits, captures --lost-if would lose (JSON: the lists; counts are "
                   "always whole).")
@click.option("--all", "list_all", is_flag=True,
              help="List everything (originals most-cited first), not only --top.")
@click.option("--group-by", type=click.Choice(["file", "prefix", "year"]), default="file",
              show_default=True,
              help="Harvests citations are counted in: the revisit's WARC file, its "
                   "name prefix before the timestamp (one crawl job), or its year.")
@click.option("--cited-more-than", "cited_more_than", type=int, metavar="N",
              help="Write the originals cited more than N times to -o FILE (JSON lines, "
                   "by WARC and offset: the records to replicate).")
@click.option("-o", "--output", "output", type=click.Path(dir_okay=False),
              help="File for --cited-more-than.")
@click.option("--lost-if", "lost", metavar="WARCNAME",
              help="List the captures in other WARCs that would lose their payload if "
                   "this WARC were lost.")
@click.option("--index-only", is_flag=True,
              help="Do not read revisit records for WARC-Refers-To when the index alone "
                   "does not resolve them.")
def refs(
    collection_dir: str,
    as_json: bool,
    top: int,
    list_all: bool,
    group_by: str,
    cited_more_than: int | None,
    output: str | None,
    lost: str | None,
    index_only: bool,
) -> None:
    """For each original record of COLLECTION_DIR, how many revisits (in which
    harvests) depend on it; the most-cited originals; what losing one WARC costs.

    Originals are found as replay finds them (same URL and digest, then
    WARC-Refers-To-Target-URI/-Date, then the digest alone).
    """
    if cited_more_than is not None and not output:
        raise click.UsageError("--cited-more-than needs -o FILE")
    try:
        coll = Collection.open(collection_dir)
    except CollectionError as exc:
        raise click.UsageError(str(exc)) from exc
    try:
        if lost and lost not in {f.name for f in coll.indexed()}:
            raise click.UsageError(f"--lost-if {lost}: no WARC of that name is indexed")
        source = coll.source()
        loader = None if index_only else RecordLoader(coll.resolver())
        report = revisit_refs(source, loader, group_by=group_by)  # type: ignore[arg-type]
        lost_report = lost_if(report, source, lost) if lost else None
    except IndexUnavailable as exc:
        raise click.ClickException(str(exc)) from exc
    finally:
        coll.close()
    if list_all:
        top = max(len(report.originals), len(report.unresolved),
                  len(lost_report.lost) if lost_report else 0)
    written = 0
    if cited_more_than is not None and output:
        with open(output, "w", encoding="utf-8") as f:
            for o in report.cited_more_than(cited_more_than):
                f.write(json.dumps(o.to_json()) + "\n")
                written += 1
    if as_json:
        data = report.to_json(top)
        if lost_report is not None:
            data["lost_if"] = lost_report.to_json(top)
        if cited_more_than is not None:
            data["cited_more_than"] = {"n": cited_more_than, "originals": written,
                                       "file": output}
        click.echo(json.dumps(data, indent=1))
        return
    click.echo(
        f"{report.revisits} revisits: {report.resolved} resolved to {len(report.originals)} "
        f"originals, {report.empty_payload} of the empty payload, "
        f"{len(report.unresolved)} unresolved"
    )
    by_warc = report.by_warc()
    if by_warc:
        click.echo("citations by WARC holding the originals:")
        for name, n in sorted(by_warc.items(), key=lambda kv: (-kv[1], kv[0])):
            click.echo(f"  {n:>8}  {name}")
    if top > 0 and report.originals:
        click.echo(f"most-cited originals (harvests by {group_by}):")
        for o in report.most_cited(top):
            line = o.original
            groups = ", ".join(f"{k}×{v}" for k, v in sorted(o.harvests.items()))
            click.echo(f"  {o.citations:>8}  {line.filename}@{line.offset} "
                       f"{line.timestamp} {line.url}  [{groups}]")
    for r in report.unresolved[:top]:
        click.echo(f"  unresolved: {r.filename}@{r.offset} {r.timestamp} {r.url} {r.digest}")
    if cited_more_than is not None:
        click.echo(f"{written} originals cited more than {cited_more_than} times -> {output}")
    if lost_report is not None:
        click.echo(
            f"if {lost_report.warc} were lost: {len(lost_report.lost)} captures in other "
            f"WARCs would lose their payload; {len(lost_report.recoverable)} more have "
            "another copy"
        )
        for rv, orig in lost_report.lost[:top]:
            click.echo(f"  lost: {rv.filename}@{rv.offset} {rv.timestamp} {rv.url} "
                       f"(original @{orig.offset})")
        if len(lost_report.lost) > top:
            click.echo(f"  … {len(lost_report.lost) - top} more (--top N or --all lists them)")
