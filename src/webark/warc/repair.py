"""``webark warc repair``: make a ``.warc.gz.open`` left by a killed writer whole again.

A WarcWriter writes each record with one write of its complete bytes, so after a crash
only the tail of the file can be incomplete. Repair keeps every complete record, cuts the
file after the last one (the cut bytes are saved next to it as ``….truncated-tail`` so
nothing is destroyed), completes a record terminator cut inside its CRLF CRLF, and
renames the file without ``.open`` (Heritrix and warcprox use the same suffix
convention). Everything is decided before the file is touched.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from webark.core.errors import FormatError
from webark.warc.reader import ArchiveReader
from webark.warc.record import Problem

INCOMPLETE_CODES = frozenset({
    "truncated-record", "truncated-member", "missing-record-end", "content-length-mismatch",
    "truncated-header", "bad-member",
})
OPEN_SUFFIX = ".open"


@dataclass(frozen=True)
class RepairResult:
    """What :func:`repair_open_file` did.

    Attributes:
        records_kept: complete records left in the file.
        bytes_cut: bytes removed from the end (saved to ``tail_path`` when > 0).
        terminator_added: bytes of CRLF CRLF appended to complete the last record.
        new_path: final path of the WARC.
        tail_path: where the cut bytes were saved, or None.
        problems: errors the careful reader found on the way (a damaged record in the
            middle is reported, never cut: only the tail after the last complete record
            is removed).
    """

    records_kept: int
    bytes_cut: int
    terminator_added: int
    new_path: str
    tail_path: str | None
    problems: tuple[Problem, ...] = field(default=())


def _free_name(base: str) -> str:
    if not os.path.exists(base):
        return base
    n = 1
    while os.path.exists(f"{base}.{n}"):
        n += 1
    return f"{base}.{n}"


def repair_open_file(path: str | os.PathLike[str], rename: bool = True,
                     force: bool = False) -> RepairResult:
    """Cut ``path`` after its last complete record and drop the ``.open`` suffix.

    Args:
        path: the file, normally ``NAME.warc.gz.open``.
        rename: drop the ``.open`` suffix when done.
        force: also repair a file whose name does not end in ``.open`` (a finished WARC
            should not need repair; refusing protects it from a slip of the finger).

    Raises:
        FileNotFoundError: no such file.
        FileExistsError: the name without ``.open`` is taken (checked before any change).
        webark.core.errors.FormatError: not a ``.open`` file (without ``force``), an empty
            file, a whole-file-gzip WARC (use ``webark warc recompress``), or no complete
            record at all.
    """
    p = os.fspath(path)
    if not p.endswith(OPEN_SUFFIX) and not force:
        raise FormatError(f"not a {OPEN_SUFFIX} file: a finished WARC is not repaired "
                          "unless --force is given", p)
    size = os.path.getsize(p)
    if size == 0:
        raise FormatError("empty file: nothing to keep (delete it if the writer never "
                          "wrote a record)", p, 0)
    new_path = p[: -len(OPEN_SUFFIX)] if rename and p.endswith(OPEN_SUFFIX) else p
    if new_path != p and os.path.exists(new_path):
        raise FileExistsError(f"{new_path} exists; nothing was changed")
    reader = ArchiveReader(p, careful=True)
    last_end = 0
    kept = 0
    pad = 0
    for rec in reader:
        if any(pr.code in INCOMPLETE_CODES for pr in rec.forgiven) or rec.length < 0:
            continue
        kept += 1
        last_end, pad = _record_end(p, rec.offset, rec.length, reader.compression != "none")
    if not reader.seekable:
        raise FormatError("whole-file compressed WARC: records cannot be cut apart; "
                          "rewrite it with `webark warc recompress`", p, 0)
    if kept == 0:
        raise FormatError("no complete WARC record in file; nothing to keep", p, 0)
    errors = tuple(pr for pr in reader.problems if pr.severity == "error")
    tail_path = None
    if last_end < size:
        tail_path = _free_name(p + ".truncated-tail")
        with open(p, "rb") as f, open(tail_path, "xb") as out:
            f.seek(last_end)
            while chunk := f.read(1 << 20):
                out.write(chunk)
            out.flush()
            os.fsync(out.fileno())
    if last_end < size or pad:
        with open(p, "r+b") as f:
            f.truncate(last_end)
            if pad:
                f.seek(last_end)
                f.write(b"\r\n\r\n"[4 - pad :])
            f.flush()
            os.fsync(f.fileno())
    if new_path != p:
        os.rename(p, new_path)
    return RepairResult(kept, size - last_end, pad, new_path, tail_path, errors)


def _record_end(path: str, offset: int, length: int, compressed: bool) -> tuple[int, int]:
    """``(end offset in the file, CRLF bytes to append)`` of a complete record."""
    if compressed:
        return offset + length, 0
    end = offset + length
    with open(path, "rb") as f:
        f.seek(end)
        trailer = f.read(4)
    if trailer == b"\r\n\r\n":
        return end + 4, 0
    # a terminator cut short by the crash: keep what is there and complete it
    if b"\r\n\r\n".startswith(trailer):
        return end + len(trailer), 4 - len(trailer)
    return end, 4
