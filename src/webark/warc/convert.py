"""``webark warc recompress``: rewrite a (W)ARC file as a WARC with one compressed member
per record.

* WARC in (whole-file gzip, misaligned members, zstd, uncompressed): every record is kept
  with its fields and block; folded or LF-only header lines are written in the canonical
  form (CRLF, one line per field). A record whose block is shorter than its
  Content-Length gets the real length and ``WARC-Truncated: unspecified``.
* ARC in: migration to WARC/1.1 that keeps all data: a new ``warcinfo`` says where the
  records came from; the ARC ``filedesc`` record (version block and XML metadata) becomes
  a ``resource`` record with target ``filedesc://…``; URLs with raw spaces are
  percent-encoded (the ARC header line keeps the original); a record shorter than its ARC
  length gets ``WARC-Truncated: unspecified``; each ARC record becomes a
  ``response`` (block starting with an HTTP status line) or a ``resource`` (anything else,
  e.g. ``dns:``), with WARC-Date, WARC-IP-Address, block and payload digests, and the
  original ARC header line in ``WARC-ARC-Header-Line`` (an extension field; readers ignore
  unknown fields, WARC 1.1 §5).
"""

from __future__ import annotations

import os
import platform
import socket
from collections.abc import Iterator
from dataclasses import dataclass, field
from urllib.parse import quote

from webark import __version__
from webark.core.digests import Hasher
from webark.core.ids import RecordIdFactory, new_record_id, utc_now
from webark.core.timestamps import format_w3c_date
from webark.warc.headers import WarcHeaders
from webark.warc.payload import dechunk
from webark.warc.reader import ArchiveReader
from webark.warc.record import Block, Problem, WarcRecord
from webark.warc.serialize import codec_for, write_record


@dataclass
class RecompressResult:
    """Counts of what :func:`recompress` wrote, and the problems met in the input."""

    records_in: int = 0
    records_out: int = 0
    bytes_out: int = 0
    problems: list[Problem] = field(default_factory=list)


def _digest(data: bytes) -> str:
    h = Hasher("sha1")
    h.update(data)
    return h.label()


def _uri(text: str) -> str:
    """ARC URLs may hold raw spaces and other characters a WARC-Target-URI may not
    (WARC 1.1 §5.8: an RFC 3986 URI): percent-encode them, keep everything else."""
    return quote(text, safe="!#$%&'()*+,/:;=?@[]~-._")


def _arc_records(src: str, records: Iterator[WarcRecord], new_id: RecordIdFactory
                 ) -> Iterator[tuple[str, WarcHeaders, Block]]:
    info_id = new_id()
    fields = (f"software: webark/{__version__}\r\nformat: WARC File Format 1.1\r\n"
              f"conformsTo: http://iipc.github.io/warc-specifications/specifications/"
              f"warc-format/warc-1.1/\r\nhostname: {socket.gethostname()}\r\n"
              f"python: {platform.python_version()}\r\n"
              f"description: migrated from the ARC file {os.path.basename(src)} by webark "
              f"warc recompress; every ARC record is kept, its header line in "
              f"WARC-ARC-Header-Line\r\n").encode()
    info = WarcHeaders([("WARC-Type", "warcinfo"), ("WARC-Record-ID", info_id),
                        ("WARC-Date", format_w3c_date(utc_now())),
                        ("WARC-Filename", os.path.basename(src)),
                        ("Content-Type", "application/warc-fields"),
                        ("Content-Length", str(len(fields)))])
    yield "WARC/1.1", info, Block(fields)
    for rec in records:
        block = rec.block.read_all()
        h = rec.headers
        arc_line = h.get("ARC-Header-Line") or ""
        date = h.date_str or format_w3c_date(utc_now())
        out = WarcHeaders()
        arc_mime = h.get("ARC-Content-Type") or ""
        if "/" not in arc_mime:  # ARC writers put "-", "no-type", "html" … here
            arc_mime = "application/octet-stream"
        if rec.type == "warcinfo":  # the ARC filedesc record: a resource of the file
            out.add("WARC-Type", "resource")
            out.add("WARC-Record-ID", new_id())
            out.add("WARC-Date", date)
            out.add("WARC-Target-URI", "filedesc://" + _uri(h.filename or ""))
            out.add("Content-Type", arc_mime if arc_mime != "application/octet-stream"
                    else "text/plain")
        else:
            is_http = block[:5] == b"HTTP/"
            out.add("WARC-Type", "response" if is_http else "resource")
            out.add("WARC-Record-ID", new_id())
            out.add("WARC-Date", date)
            out.add("WARC-Target-URI", _uri(rec.target_uri or ""))
            if h.ip_address:
                out.add("WARC-IP-Address", h.ip_address)
            out.add("Content-Type", "application/http;msgtype=response" if is_http
                    else arc_mime)
            if any(p.code == "arc-length-mismatch" for p in rec.forgiven):
                out.add("WARC-Truncated", "unspecified")
            out.add("WARC-Block-Digest", _digest(block))
            head = rec.http
            if head is not None:
                body = block[head.head_length :]
                if head.is_chunked:
                    body = dechunk(body)[0]
                out.add("WARC-Payload-Digest", _digest(body))
            elif not is_http:
                out.add("WARC-Payload-Digest", _digest(block))
        out.add("WARC-Warcinfo-ID", info_id)
        out.add("WARC-ARC-Header-Line", arc_line)
        out.add("Content-Length", str(len(block)))
        yield "WARC/1.1", out, Block(block)


def _warc_records(records: Iterator[WarcRecord]) -> Iterator[tuple[str, WarcHeaders, Block]]:
    for rec in records:
        block = rec.block
        headers = rec.headers.copy()
        declared = headers.content_length
        if declared is not None and declared != block.size:
            headers.set("Content-Length", str(block.size))
            if "WARC-Truncated" not in headers:
                headers.add("WARC-Truncated", "unspecified")
        yield rec.version, headers, block


def recompress(src: str | os.PathLike[str], dst: str | os.PathLike[str],
               new_id: RecordIdFactory = new_record_id) -> RecompressResult:
    """Rewrite ``src`` into ``dst`` with one member per record (codec from ``dst``'s
    name: ``.gz`` gzip, ``.zst`` zstd, else uncompressed). ``dst`` is written as
    ``dst + ".open"`` and renamed when complete.

    Raises:
        FileExistsError: ``dst`` or ``dst.open`` exists (so the source, even when it is
            ``dst.open`` itself, is never overwritten).
    """
    src_s, dst_s = os.fspath(src), os.fspath(dst)
    tmp = dst_s + ".open"
    for taken in (dst_s, tmp):
        if os.path.exists(taken):
            raise FileExistsError(f"{taken} exists; nothing was written")
    reader = ArchiveReader(src_s, careful=True)
    result = RecompressResult()

    def counted(it: Iterator[WarcRecord]) -> Iterator[WarcRecord]:
        for rec in it:
            result.records_in += 1
            yield rec

    it = iter(reader)
    first = next(it, None)
    if first is None:
        result.problems = list(reader.problems)
        raise ValueError(f"{src_s}: no record could be read")

    def chained() -> Iterator[WarcRecord]:
        yield first
        yield from it

    source = (_arc_records(src_s, counted(chained()), new_id) if first.is_arc
              else _warc_records(counted(chained())))
    codec = codec_for(dst_s)
    with open(tmp, "xb") as out:
        for version, headers, block in source:
            result.bytes_out += write_record(out, version, headers, block, codec)
            result.records_out += 1
        out.flush()
        os.fsync(out.fileno())
    os.rename(tmp, dst_s)
    result.problems = list(reader.problems)
    return result
