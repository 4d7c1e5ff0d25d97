"""``webark warc …``: list, check, extract, recompress and repair (W)ARC files.

Conventions: the command's result goes to stdout (JSON lines for ``ls``, the report for
``check``, record bytes for ``extract``); problems and progress go to stderr. Text taken
from files is never interpreted as rich markup. With several files, a file that cannot be
read is reported and the others are still processed; the exit status says so.
"""

from __future__ import annotations

import json
import os
import sys

import click
from rich.console import Console

from webark.core.errors import FormatError
from webark.warc.reader import ArchiveReader, read_record_at, stored_record_bytes
from webark.warc.record import Problem, WarcRecord

err = Console(stderr=True, highlight=False, soft_wrap=True)
out = Console(highlight=False, soft_wrap=True)

_STYLE = {"error": "red", "warning": "yellow", "forgiven": "dim"}


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _say(console: Console, text: str, style: str | None = None) -> None:
    """Print text from files safely: no markup, no wrapping."""
    console.print(text, style=style, markup=False)


def _unreadable(path: str) -> str | None:
    """Why ``path`` cannot be read as a (W)ARC file, or None."""
    if not os.path.exists(path):
        return "no such file"
    if os.path.isdir(path):
        return "is a directory"
    if not os.access(path, os.R_OK):
        return "permission denied"
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
    except OSError as e:
        return f"cannot be read: {e.strerror or e}"
    if not os.path.isfile(path):
        return "not a regular file (pipes and devices cannot be read: copy it to a file)"
    return None


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
        "content_type": h.get("content-type"),
    }


@warc.command("ls")
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=True))
@click.option("--careful", is_flag=True, help="Use the careful (pure-Python) parser.")
def ls_cmd(files: tuple[str, ...], careful: bool) -> None:
    """List records as JSON lines: file, offset, length (as stored), type, target URI,
    date, HTTP status, payload digest, record id, the record's Content-Type (e.g.
    application/pem-certificate-chain for a server's TLS certificates).

    Problems go to stderr. Exit status 1 when a file could not be read or had errors."""
    failed = False
    stdout = sys.stdout
    try:
        for path in files:
            why = _unreadable(path)
            if why:
                _say(err, f"{path}: {why}", "red")
                failed = True
                continue
            reader = ArchiveReader(path, careful=careful)
            for rec in reader:
                stdout.write(json.dumps(_ls_row(path, rec)) + "\n")
            for p in reader.problems:
                if p.severity != "forgiven":
                    _say(err, str(p), _STYLE[p.severity])
                failed |= p.severity == "error"
            if reader.records_read == 0:
                _say(err, f"{path}: no WARC or ARC record found", "red")
                failed = True
        stdout.flush()
    except BrokenPipeError:  # `webark warc ls … | head`: the reader went away, fine
        sys.stderr.close()
        os._exit(0)
    sys.exit(1 if failed else 0)


@warc.command("check")
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=True))
@click.option("--json", "as_json", is_flag=True, help="One JSON report per file.")
@click.option("--no-digests", is_flag=True, help="Skip block and payload digest checks.")
@click.option("--show-forgiven", is_flag=True, help="Also list what was read leniently.")
@click.option("--all-warnings", is_flag=True,
              help="List every warning (default: each warning code once, with a count).")
def check_cmd(files: tuple[str, ...], as_json: bool, no_digests: bool,
              show_forgiven: bool, all_warnings: bool) -> None:
    """Validate files: framing, fields per record type, digests (JWAT's checklist).

    The report goes to stdout. Exit status 1 when any file has an error or cannot be
    read, 0 otherwise (warnings do not fail)."""
    from webark.warc.check import check_file

    failed = False
    for path in files:
        why = _unreadable(path)
        if why:
            failed = True
            if as_json:
                click.echo(json.dumps({"path": path, "ok": False, "unreadable": why}))
            else:
                _say(out, f"UNREADABLE {path}: {why}", "red")
            continue
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
        types = ", ".join(f"{k} {v}" for k, v in sorted(rep.counts.items()))
        status, style = ("OK", "green") if rep.ok else ("INVALID", "red")
        _say(out, f"{status} {path}: {_plural(len(rep.records), 'record')}"
             + (f" ({types})" if types else "")
             + f", {_plural(len(rep.errors), 'error')}, "
             f"{_plural(ok_digests, 'digest')} verified", style)
    sys.exit(1 if failed else 0)


def _print_problems(problems: list[Problem], show_forgiven: bool, all_warnings: bool) -> None:
    """Errors one per line; warnings and forgiven items condensed per code unless asked:
    the first one, then how many there are and in how many records (one record may
    have a code twice, e.g. a revisit without WARC-Refers-To-Target-URI and -Date)."""
    counts: dict[tuple[str, str], int] = {}
    records: dict[tuple[str, str], set[int | None]] = {}
    for p in problems:
        if p.severity == "forgiven" and not show_forgiven:
            continue
        if p.severity != "error" and not all_warnings:
            key: tuple[str, str] = (p.severity, p.code)
            counts[key] = counts.get(key, 0) + 1
            records.setdefault(key, set()).add(p.offset)
            if counts[key] > 1:
                continue
        _say(out, str(p), _STYLE[p.severity])
    for (severity, code), n in counts.items():
        if n > 1:
            m = len(records[(severity, code)])
            what = f"{_plural(m, 'record')} in all" if m == n else \
                f"{n} in {_plural(m, 'record')}"
            _say(out, f"  … {severity} {code}: {what} (--all-warnings lists them)", "dim")


@warc.command("extract")
@click.argument("file", type=click.Path(exists=True, dir_okay=False))
@click.argument("offset", type=click.IntRange(min=0))
@click.option("--headers", "part", flag_value="headers",
              help="Only the WARC header and the HTTP head.")
@click.option("--payload", "part", flag_value="payload",
              help="Only the payload (transfer-decoding removed).")
@click.option("--decode", is_flag=True, help="With --payload: undo Content-Encoding too.")
def extract_cmd(file: str, offset: int, part: str | None, decode: bool) -> None:
    """Write the record at OFFSET (as stored, e.g. from `webark warc ls`) to stdout.

    By default the whole record exactly as stored (decompressed); --headers gives the
    WARC header (re-serialized, one field per line) and the HTTP head; --payload the
    entity body with the transfer-coding removed (--decode: content-coding too)."""
    if decode and part != "payload":
        raise click.UsageError("--decode only applies to --payload")
    size = os.path.getsize(file)
    if offset >= size:
        raise click.ClickException(f"offset {offset} is past the end of {file} "
                                   f"({size} bytes)")
    try:
        rec = read_record_at(file, offset)
    except FormatError as e:
        raise click.ClickException(f"{e} (list record offsets with `webark warc ls`)") from e
    for p in rec.forgiven:
        if p.severity == "error":
            _say(err, f"warning: {p}", "yellow")
    stdout = sys.stdout.buffer
    if part == "payload":
        try:
            with rec.payload_stream(decode_content_encoding=decode) as f:
                while chunk := f.read(1 << 20):
                    stdout.write(chunk)
        except ValueError as e:
            raise click.ClickException(f"cannot decode payload: {e}") from e
        return
    if part is None and rec.block.size <= (16 << 20):
        raw = stored_record_bytes(rec)
        if raw is not None:
            stdout.write(raw)
            return
    stdout.write(rec.headers.to_bytes(rec.version if not rec.is_arc else "WARC/1.1"))
    if part == "headers":
        h = rec.http
        if h is not None:
            stdout.write(rec.block.head(h.head_length))
        return
    rec.block.copy_to(stdout)
    stdout.write(b"\r\n\r\n")


@warc.command("repair")
@click.argument("files", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False))
@click.option("--keep-name", is_flag=True, help="Do not remove the .open suffix.")
@click.option("--force", is_flag=True, help="Also repair a file not named *.open.")
def repair_cmd(files: tuple[str, ...], keep_name: bool, force: bool) -> None:
    """Cut a WARC left by a crash (FILE.warc.gz.open) after its last complete record and
    rename it without `.open`. Cut bytes are kept in FILE.truncated-tail; a damaged
    record in the middle is reported, never cut."""
    from webark.warc.repair import repair_open_file

    failed = False
    for path in files:
        try:
            res = repair_open_file(path, rename=not keep_name, force=force)
        except (FormatError, FileExistsError) as e:
            _say(err, f"{path}: not repaired: {e}", "red")
            failed = True
            continue
        for p in res.problems:
            _say(err, str(p), "yellow")
        msg = f"{path}: kept {_plural(res.records_kept, 'record')}, " \
              f"cut {_plural(res.bytes_cut, 'byte')}"
        if res.tail_path:
            msg += f" (saved to {res.tail_path})"
        if res.terminator_added:
            msg += f", completed the last record's CRLF CRLF ({res.terminator_added} bytes)"
        _say(err, msg + f" -> {res.new_path}")
    sys.exit(1 if failed else 0)


@warc.command("recompress")
@click.argument("src", type=click.Path(exists=True, dir_okay=False))
@click.argument("dst", type=click.Path(dir_okay=False))
def recompress_cmd(src: str, dst: str) -> None:
    """Rewrite SRC as DST with one compressed member per record (DST's extension picks
    the codec: .warc.gz, .warc.zst or .warc). Fixes whole-file gzip and misaligned
    members; migrates ARC to WARC/1.1 keeping every record and its ARC header line.

    Exit status 1 when SRC had errors: the records that could be read are in DST; the
    errors are listed, since the records at those offsets may be incomplete or missing."""
    from webark.warc.convert import recompress

    if not dst.endswith((".warc", ".warc.gz", ".warc.zst")):
        raise click.UsageError("DST must end in .warc.gz, .warc.zst or .warc")
    parent = os.path.dirname(os.path.abspath(dst))
    if not os.path.isdir(parent):
        raise click.UsageError(f"the directory of DST does not exist: {parent}")
    for taken in (dst, dst + ".open"):
        if os.path.exists(taken):
            raise click.ClickException(f"{taken} exists (choose another DST; nothing was "
                                       "written)")
    try:
        res = recompress(src, dst)
    except (FileExistsError, ValueError) as e:
        raise click.ClickException(str(e)) from e
    errors = [p for p in res.problems if p.severity == "error"]
    for p in errors:
        _say(err, str(p), "yellow")
    _say(err, f"{src} -> {dst}: {_plural(res.records_in, 'record')} read, "
         f"{res.records_out} written, {_plural(res.bytes_out, 'byte')}")
    if errors:
        _say(err, f"{src} had {_plural(len(errors), 'error')} (listed above): the records "
             "at those offsets may be incomplete or missing in the output", "red")
        sys.exit(1)
