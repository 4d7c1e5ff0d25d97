"""ARC v1 reading (IA ARC file format 1.0/1.1), built on warcio's ARC parser.

fastwarc does not read ARC; warcio does, leniently (invalid lengths such as ``abc`` or
``-1``, URLs with spaces). We use warcio for the framing (offsets, lengths) and map each
ARC record to a :class:`WarcRecord` with WARC-named fields so the rest of webark sees one
model:

* the ``filedesc://`` record becomes type ``warcinfo`` with its full original text
  (version block and, for v1.1, the XML metadata) as block;
* every other record becomes type ``response``: WARC-Target-URI, WARC-Date (from the
  14-digit archive-date), WARC-IP-Address, Content-Type of the ARC header as
  ``ARC-Content-Type`` and the block (HTTP head + body) as stored.

``version`` is ``"ARC/1.0"``/``"ARC/1.1"`` so writers and checkers know the origin; the
original ARC header line is kept in the ``ARC-Header-Line`` field for lossless migration.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator
from typing import BinaryIO

from webark.core.timestamps import format_w3c_date, from_timestamp14
from webark.warc.headers import WarcHeaders
from webark.warc.record import Block, Problem, WarcRecord


def looks_like_arc(head: bytes) -> bool:
    """True when decompressed file content starts like an ARC file (``filedesc://``) or
    an ARC record header line (``http://… 1.2.3.4 20080430204825 text/html 123``)."""
    if head.startswith(b"filedesc://"):
        return True
    line = head.split(b"\n", 1)[0]
    parts = line.split(b" ")
    return (len(parts) >= 5 and b"://" in parts[0] and parts[-3][:8].isdigit()
            and not head.startswith(b"WARC/"))


def _raw_record(f: BinaryIO, offset: int, length: int, gz: bool) -> bytes:
    f.seek(offset)
    data = f.read(length)
    if gz:
        d = zlib.decompressobj(zlib.MAX_WBITS | 16)
        try:
            return d.decompress(data)
        except zlib.error:
            return b""
    return data


def iter_arc(f: BinaryIO, path: str, gz: bool) -> Iterator[WarcRecord]:
    """Iterate the records of an ARC (or ``.arc.gz``) file ``f`` (seekable, binary).

    Record-level problems (non-numeric length, length mismatch, bad date) are attached to
    ``record.forgiven``. When warcio cannot go on (a header line that is not an ARC header),
    :class:`ArcStop` is raised carrying the problem; records before it were yielded.
    """
    # warcio is imported here, not at module level: only ARC files need it (saves ~24 ms
    # and 7 MB for every process that reads WARCs only)
    from warcio.archiveiterator import ArchiveIterator
    from warcio.exceptions import ArchiveLoadFailed

    f.seek(0)
    it = ArchiveIterator(f, no_record_parse=True)
    gen = iter(it)
    while True:
        try:
            rec = next(gen)
        except StopIteration:
            return
        except ArchiveLoadFailed as e:
            # warcio's ``offset`` is where the record it could not parse begins
            where = getattr(it, "offset", None)
            raise ArcStop(Problem("error", "bad-arc-record", str(e).strip(), path,
                                  where if isinstance(where, int) else None)) from e
        body = rec.raw_stream.read()
        offset = it.get_record_offset()
        length = it.get_record_length()
        h = dict(rec.rec_headers.headers)
        if rec.rec_type == "arc_header":
            pos = f.tell()
            raw = _raw_record(f, offset, length, gz)
            f.seek(pos)
            nl = raw.find(b"\n")
            body = raw[nl + 1 :] if nl >= 0 else b""
        yield _to_record(rec.rec_type, h, body, offset, length, path)


def _to_record(rec_type: str, h: dict[str, str], body: bytes, offset: int, length: int,
               path: str) -> WarcRecord:
    problems: list[Problem] = []
    uri = h.get("uri", "")
    length_field = h.get("length", "")
    if not length_field.isdigit():
        problems.append(Problem("error", "bad-arc-length",
                                f"ARC length {length_field!r} is not a number", path, offset))
    elif int(length_field) != len(body) and rec_type != "arc_header":
        problems.append(Problem("error", "arc-length-mismatch",
                                f"ARC length {length_field} but {len(body)} bytes read",
                                path, offset))
    fields: list[tuple[str, str]] = []
    if rec_type == "arc_header":
        fields += [("WARC-Type", "warcinfo"), ("WARC-Filename", uri.removeprefix("filedesc://"))]
    else:
        fields += [("WARC-Type", "response"), ("WARC-Target-URI", uri)]
    date14 = h.get("archive-date", "")
    try:
        fields.append(("WARC-Date", format_w3c_date(from_timestamp14(date14))))
    except ValueError:
        problems.append(Problem("error", "bad-arc-date",
                                f"archive-date {date14!r} is not a date", path, offset))
    if h.get("ip-address"):
        fields.append(("WARC-IP-Address", h["ip-address"]))
    fields.append(("ARC-Content-Type", h.get("content-type", "")))
    fields.append(("ARC-Header-Line", " ".join(
        h.get(k, "") for k in ("uri", "ip-address", "archive-date", "content-type", "length"))))
    fields.append(("Content-Length", str(len(body))))
    version = "ARC/1.0"
    if rec_type == "arc_header" and body.startswith(b"1 1"):
        version = "ARC/1.1"
    return WarcRecord(headers=WarcHeaders(fields), block=Block(body), version=version,
                      path=path, offset=offset, length=length, forgiven=tuple(problems))


class ArcStop(Exception):
    """warcio could not continue reading an ARC file; carries the problem report."""

    def __init__(self, problem: Problem):
        super().__init__(str(problem))
        self.problem = problem
