"""``webark warc repair``: make a ``.warc.gz.open`` left by a killed writer whole again.

A WarcWriter writes each record with one write of its complete bytes, so after a crash
only the tail of the file can be incomplete. Repair keeps every complete record, cuts the
file after the last one (the cut bytes are saved next to it as ``….truncated-tail`` so
nothing is destroyed) and renames the file without ``.open`` (Heritrix and warcprox use
the same suffix convention).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from webark.warc.reader import ArchiveReader

INCOMPLETE_CODES = frozenset({
    "truncated-record", "truncated-member", "missing-record-end", "content-length-mismatch",
    "truncated-header", "bad-member",
})


@dataclass(frozen=True)
class RepairResult:
    """What :func:`repair_open_file` did: records kept, bytes cut (saved to
    ``tail_path`` when > 0), and the final path of the WARC."""

    records_kept: int
    bytes_cut: int
    new_path: str
    tail_path: str | None


def _record_end(path: str, offset: int, length: int, compressed: bool) -> int:
    if compressed:
        return offset + length
    with open(path, "rb") as f:
        f.seek(offset + length)
        return offset + length + (4 if f.read(4) == b"\r\n\r\n" else 0)


def repair_open_file(path: str | os.PathLike[str], rename: bool = True) -> RepairResult:
    """Truncate ``path`` after its last complete record and drop the ``.open`` suffix.

    Raises:
        FileNotFoundError: no such file.
        webark.core.errors.FormatError: not a WARC file at all (no complete record).
    """
    from webark.core.errors import FormatError

    p = os.fspath(path)
    reader = ArchiveReader(p, careful=True)
    last_end = 0
    kept = 0
    for rec in reader:
        incomplete = any(pr.code in INCOMPLETE_CODES for pr in rec.forgiven)
        if incomplete or rec.length < 0:
            continue
        kept += 1
        last_end = _record_end(p, rec.offset, rec.length, reader.compression != "none")
    size = os.path.getsize(p)
    if kept == 0 and size > 0:
        raise FormatError("no complete WARC record in file; nothing to keep", p, 0)
    tail_path = None
    if last_end < size:
        tail_path = p + ".truncated-tail"
        with open(p, "rb") as f, open(tail_path, "wb") as out:
            f.seek(last_end)
            while chunk := f.read(1 << 20):
                out.write(chunk)
            out.flush()
            os.fsync(out.fileno())
        with open(p, "r+b") as f:
            f.truncate(last_end)
            f.flush()
            os.fsync(f.fileno())
    new_path = p
    if rename and p.endswith(".open"):
        new_path = p[: -len(".open")]
        if os.path.exists(new_path):
            raise FileExistsError(new_path)
        os.rename(p, new_path)
    return RepairResult(kept, size - last_end, new_path, tail_path)
