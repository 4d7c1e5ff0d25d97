"""``webark extract``: spin WARC/ARC files out into a browsable file tree (see
:mod:`webark.tools.extract`)."""

from __future__ import annotations

import json
import os

import click


def _inputs(paths: tuple[str, ...]) -> list[str]:
    suffixes = (".warc", ".warc.gz", ".arc", ".arc.gz", ".warc.zst")
    out: list[str] = []
    for p in paths:
        if os.path.isdir(p):
            out += sorted(
                os.path.join(p, n) for n in os.listdir(p) if n.endswith(suffixes)
            )
        else:
            out.append(p)
    return out


@click.command("extract")
@click.argument("warcs", nargs=-1, required=True, type=click.Path(exists=True))
@click.option("-o", "--output", "outdir", required=True, type=click.Path(file_okay=False),
              help="Folder of the file tree (created).")
@click.option("--all-captures", is_flag=True,
              help="Every capture, as NAME.TIMESTAMP.EXT (default: the latest per URL).")
@click.option("--include-revisits", is_flag=True,
              help="Revisits count as captures, with their original's payload (found by "
                   "digest in the same inputs).")
@click.option("--manifest", "manifest_format", type=click.Choice(["csv", "json"]),
              default="csv", show_default=True,
              help="Format of OUTDIR/_webark_manifest.* (file → URL, timestamp, WARC, offset).")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
def extract(warcs: tuple[str, ...], outdir: str, all_captures: bool, include_revisits: bool,
            manifest_format: str, as_json: bool) -> None:
    """Write the payload of each capture in WARCS (files or folders of WARC/ARC files)
    to OUTDIR/HOST/PATH: 2xx responses and resource records, the latest capture per URL
    unless --all-captures; directory-like URLs become index.html, the query goes after
    '@', Content-Encoding is decoded. File names are made safe (no '..', no reserved
    characters, length limits, case-insensitive collisions get ~N) and nothing is ever
    written outside OUTDIR (symlinks in OUTDIR are not followed).
    """
    from webark.tools.extract import UnsafeOutput
    from webark.tools.extract import extract as run

    try:
        report = run(_inputs(warcs), outdir, all_captures=all_captures,
                     include_revisits=include_revisits,
                     manifest_format=manifest_format)  # type: ignore[arg-type]
    except (UnsafeOutput, OSError) as e:
        raise click.ClickException(str(e)) from e
    for p in report.problems:
        click.echo(p, err=True)
    if as_json:
        click.echo(json.dumps(vars(report), indent=2))
        return
    skipped = ", ".join(f"{k} {v}" for k, v in sorted(report.skipped.items())) or "none"
    click.echo(f"{report.files} files, {report.bytes} bytes from {report.records} records "
               f"({report.not_decoded} not decodable, kept as stored); skipped: {skipped}")
    click.echo(f"manifest: {report.manifest}")
