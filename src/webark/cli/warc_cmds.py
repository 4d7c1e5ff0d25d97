"""``webark warc …``: list, check, extract, recompress and repair (W)ARC files."""

from __future__ import annotations

import json
import sys

import click
from rich.console import Console

from webark.core.errors import FormatError
from webark.warc.reader import ArchiveReader, read_record_at, stored_record_bytes
from webark.warc.record import Problem, WarcRecord

err = Console(stderr=True, highlight=False)


@click.group()
def warc() -> None:
    """Tools for WARC (1.0, 1.1, 0.17/0.18) and ARC files: gz, zst or uncompressed."""


def _ls_row(path: str, rec: WarcRecord) -> dict[str, object]:
    h = rec.headers
    return {
        "file": path, "offset": rec.offset, "length": rec.length, "type": rec.type,
        "target_uri": rec.target_uri, "date": h.date_str,
        "status": rec.http_status if rec.type in ("response", "revisit") else None,
        "digest": h.payload_digest, "record_id": h.record_id,
    }


@warc.command("ls")
@click.argument("files", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False))
@click.option("--careful", is_flag=True, help="Use the careful (pure-Python) parser.")
def ls_cmd(files: tuple[str, ...], careful: bool) -> None:
    """List records as JSON lines: file, offset, length (as stored), type, target URI,
    date, HTTP status, payload digest, record id. Problems go to stderr."""
    out = sys.stdout
    for path in files:
        reader = ArchiveReader(path, careful=careful)
        for rec in reader:
            out.write(json.dumps(_ls_row(path, rec)) + "\n")
        for p in reader.problems:
            if p.severity != "forgiven":
                err.print(f"[yellow]{p}[/]")


@warc.command("check")
@click.argument("files", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False))
@click.option("--json", "as_json", is_flag=True, help="One JSON report per file.")
@click.option("--no-digests", is_flag=True, help="Skip block and payload digest checks.")
@click.option("--show-forgiven", is_flag=True, help="Also list what was read leniently.")
@click.option("--all-warnings", is_flag=True,
              help="List every warning (default: each warning code once, with a count).")
def check_cmd(files: tuple[str, ...], as_json: bool, no_digests: bool,
              show_forgiven: bool, all_warnings: bool) -> None:
    """Validate files: framing, fields per record type, digests (JWAT's checklist).

    Exit status 1 when any file has an error, 0 otherwise (warnings do not fail)."""
    from webark.warc.check import check_file

    failed = False
    for path in files:
        rep = check_file(path, verify_digests=not no_digests)
        failed |= not rep.ok
        if as_json:
            click.echo(json.dumps(rep.to_json()))
            continue
        problems = list(rep.file_problems)
        for r in rep.records:
            problems += r.problems
        problems.sort(key=lambda p: (p.offset if p.offset is not None else -1))
        _print_problems(problems, show_forgiven, all_warnings)
        ok_digests = sum(1 for r in rep.records for d in r.digests if d.status == "ok")
        status = "[green]OK[/]" if rep.ok else "[red]INVALID[/]"
        types = ", ".join(f"{k} {v}" for k, v in sorted(rep.counts.items()))
        err.print(f"{status} {path}: {len(rep.records)} records ({types}), "
                  f"{len(rep.errors)} errors, {ok_digests} digests verified", soft_wrap=True)
    sys.exit(1 if failed else 0)


def _print_problems(problems: list[Problem], show_forgiven: bool, all_warnings: bool) -> None:
    """Errors one per line; warnings and forgiven items condensed per code unless asked."""
    counts: dict[tuple[str, str], int] = {}
    for p in problems:
        if p.severity == "forgiven" and not show_forgiven:
            continue
        if p.severity != "error" and not all_warnings:
            key = (p.severity, p.code)
            counts[key] = counts.get(key, 0) + 1
            if counts[key] > 1:
                continue
        color = {"error": "red", "warning": "yellow"}.get(p.severity, "dim")
        err.print(f"[{color}]{p}[/]", soft_wrap=True)
    for (severity, code), n in counts.items():
        if n > 1:
            err.print(f"[dim]  … {severity} {code}: {n} records in all "
                      "(--all-warnings lists them)[/]", soft_wrap=True)


@warc.command("extract")
@click.argument("file", type=click.Path(exists=True, dir_okay=False))
@click.argument("offset", type=int)
@click.option("--headers", "part", flag_value="headers",
              help="Only the WARC header and the HTTP head.")
@click.option("--payload", "part", flag_value="payload",
              help="Only the payload (transfer-decoding removed).")
@click.option("--decode", is_flag=True, help="With --payload: undo Content-Encoding too.")
def extract_cmd(file: str, offset: int, part: str | None, decode: bool) -> None:
    """Write the record at OFFSET (as stored) to stdout.

    By default the whole record exactly as stored (decompressed); --headers gives the
    WARC header (re-serialized, one field per line) and the HTTP head; --payload the
    entity body with the transfer-coding removed."""
    try:
        rec = read_record_at(file, offset)
    except FormatError as e:
        raise click.ClickException(str(e)) from e
    out = sys.stdout.buffer
    if part == "payload":
        try:
            with rec.payload_stream(decode_content_encoding=decode) as f:
                while chunk := f.read(1 << 20):
                    out.write(chunk)
        except ValueError as e:
            raise click.ClickException(f"cannot decode payload: {e}") from e
        return
    if part is None:
        raw = stored_record_bytes(rec)
        if raw is not None:
            out.write(raw)
            return
    out.write(rec.headers.to_bytes(rec.version if not rec.is_arc else "WARC/1.1"))
    if part == "headers":
        h = rec.http
        if h is not None:
            out.write(rec.block.head(h.head_length))
        return
    rec.block.copy_to(out)


@warc.command("repair")
@click.argument("files", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False))
@click.option("--keep-name", is_flag=True, help="Do not remove the .open suffix.")
def repair_cmd(files: tuple[str, ...], keep_name: bool) -> None:
    """Cut a WARC (typically FILE.warc.gz.open after a crash) after its last complete
    record and rename it without `.open`. Cut bytes are kept in FILE.truncated-tail."""
    from webark.warc.repair import repair_open_file

    for path in files:
        try:
            res = repair_open_file(path, rename=not keep_name)
        except (FormatError, FileExistsError) as e:
            raise click.ClickException(str(e)) from e
        err.print(f"{path}: kept {res.records_kept} records, cut {res.bytes_cut} bytes"
                  + (f" (saved to {res.tail_path})" if res.tail_path else "")
                  + f" -> {res.new_path}")


@warc.command("recompress")
@click.argument("src", type=click.Path(exists=True, dir_okay=False))
@click.argument("dst", type=click.Path(dir_okay=False))
def recompress_cmd(src: str, dst: str) -> None:
    """Rewrite SRC as DST with one compressed member per record (DST's extension picks
    the codec: .warc.gz, .warc.zst or .warc). Fixes whole-file gzip and misaligned
    members; migrates ARC to WARC/1.1 keeping every record and its ARC header line."""
    from webark.warc.convert import recompress

    try:
        res = recompress(src, dst)
    except (FileExistsError, ValueError) as e:
        raise click.ClickException(str(e)) from e
    for p in res.problems:
        if p.severity == "error":
            err.print(f"[yellow]{p}[/]", soft_wrap=True)
    err.print(f"{src} -> {dst}: {res.records_in} records read, {res.records_out} written, "
              f"{res.bytes_out} bytes", soft_wrap=True)
