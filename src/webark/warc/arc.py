"""ARC v1 reading (IA ARC file format 1.0/1.1): our own framing over a
:class:`~webark.warc.streams.LogicalStream`, so plain, per-record gzip and whole-file
gzip ARCs are read like WARCs, with stored offsets and problems that name file and
offset.

An ARC file is a version block (the ``filedesc://`` record: its header line, then a
version line, the field-spec line and, in 1.1, XML metadata, all counted in its length)
followed by URL records: a header line ``URL IP-address archive-date content-type
length``, then ``length`` bytes, then the newline the format puts before every record.
Each record is mapped to the WARC model so the rest of webark sees one model:

* the ``filedesc://`` record becomes type ``warcinfo`` with its whole body (version
  block and, for v1.1, the XML metadata) as block;
* every other record becomes type ``response``: WARC-Target-URI, WARC-Date (from the
  14-digit archive-date), WARC-IP-Address, Content-Type of the ARC header as
  ``ARC-Content-Type`` and the block (HTTP head + body) as stored.

``version`` is ``"ARC/1.0"``/``"ARC/1.1"`` so writers and checkers know the origin; the
original ARC header line is kept in ``ARC-Header-Line`` for lossless migration.

**Framing, and what is forgiven** (reported with file and offset, nothing skipped that
can be read):

* a body not followed by its newline, the next header line right after it (warning
  ``arc-no-newline``). NetarchiveSuite's metadata ARCs are written so: the filedesc
  length counts the blank line and the next record follows at once. warcio reads the
  line after each body as that newline whatever it holds: the next record's header is
  thrown away, and when that record is zero-length (the blank line after it then reads
  as the separator) nothing says so. This is why webark no longer reads ARC with warcio;
* a filedesc length shorter than its version block (pywb's sample ARCs: 75 for 76
  bytes): the version and field-spec lines are read whole, as warcio and pywb do;
* a length that is not a number (``-1``, ``abc``: error ``bad-arc-length``): the body is
  what comes before the next record header line, blank lines left out (the offsets and
  lengths pywb and cdxj-indexer give such records);
* a body cut by the end of the file (error ``arc-length-mismatch``), blank lines made of
  spaces between records (forgiven ``arc-blank-line-spaces``), a line where a record
  header should be (error ``bad-arc-record``; reading goes on at the next header line),
  an archive-date that is not a date (error ``bad-arc-date``).

Lengths as stored follow warcio/pywb: for a compressed file the gzip member of the
record; for an uncompressed one from the header line to the end of the body.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import BinaryIO, Literal

from webark.core.timestamps import format_w3c_date, from_timestamp14
from webark.warc.framing import ProblemLog, read_block
from webark.warc.headers import WarcHeaders
from webark.warc.record import Block, Problem, WarcRecord
from webark.warc.streams import Compression, LogicalStream

_SCHEME = re.compile(rb"[A-Za-z][A-Za-z0-9+.-]*:")
_IP = re.compile(rb"[0-9A-Fa-f.:]+|-")
_MAX_LINE = 1 << 16
_PEEK = 1 << 13
"""Bytes looked at to tell whether a record header line starts here."""
Strictness = Literal["any", "expected", "strict"]


def looks_like_arc(head: bytes) -> bool:
    """True when decompressed file content starts like an ARC file (``filedesc://``) or
    an ARC record header line (``http://… 1.2.3.4 20080430204825 text/html 123``)."""
    if head.startswith(b"filedesc://"):
        return True
    line = head.split(b"\n", 1)[0]
    parts = line.split(b" ")
    return (len(parts) >= 5 and b"://" in parts[0] and parts[-3][:8].isdigit()
            and not head.startswith(b"WARC/"))


def _text(raw: bytes) -> str:
    if raw.isascii():
        return raw.decode("ascii")
    return raw.decode("utf-8", "surrogateescape")  # written back unchanged on migration


@dataclass(frozen=True, slots=True)
class ArcHeader:
    """An ARC v1 record header line, split as warcio and pywb split it (from the right:
    a URL may hold spaces)."""

    url: str
    ip: str
    date: str
    mime: str
    length: str

    @property
    def is_filedesc(self) -> bool:
        return self.url.startswith("filedesc:")

    @property
    def declared(self) -> int | None:
        """The length as a number, or None when it is not one (``-1``, ``abc``)."""
        return int(self.length) if self.length.isascii() and self.length.isdigit() else None

    @property
    def line(self) -> str:
        return " ".join((self.url, self.ip, self.date, self.mime, self.length))


def parse_header(line: bytes, strictness: Strictness) -> ArcHeader | None:
    """The header line ``line`` (with or without its line end), or None when it is not
    one. ``any``: five fields (the first record of a file: JWAT's test files put ``-``
    or ``blue_monday`` in every field); ``expected`` (where a record must start): a URL
    with a scheme and a date of digits or ``-``; ``strict`` (to tell a header from
    content): also an IP address or ``-``, a 12–18 digit date and a numeric length."""
    parts = line.rstrip(b"\r\n").rsplit(b" ", 4)
    if len(parts) != 5 or not parts[0]:
        return None
    url, ip, date, mime, length = parts
    if strictness != "any":
        if not _SCHEME.match(url) or not (date.isdigit() or date == b"-"):
            return None
        if strictness == "strict" and not (
            _IP.fullmatch(ip) and 12 <= len(date) <= 18 and date.isdigit()
            and (length.isdigit() or (length[:1] == b"-" and length[1:].isdigit()))
        ):
            return None
    return ArcHeader(_text(url), _text(ip), _text(date), _text(mime), _text(length))


class ArcReader:
    """Iterate the records of one ARC file (see the module docstring).

    Args:
        f: binary file positioned at ``base``.
        path: name used in problem reports.
        compression: ``"none"`` or ``"gzip"`` (``detect_compression``).
        base: file offset of ``f``'s position: 0, or where a record starts (one record
            read by :func:`~webark.warc.reader.read_record_at`).
        window_over: in an uncompressed file, bodies larger than this (bytes) are a
            window on the file, not read (single-record reads).

    :attr:`problems` lists everything reported, in file order; each record also carries
    its own in ``record.forgiven``. Iteration never raises for bad content.
    """

    def __init__(self, f: BinaryIO, path: str, compression: Compression, base: int = 0,
                 window_over: int | None = None):
        self.path = path
        self.log = ProblemLog(path)
        self.problems = self.log.problems
        self.compression = compression
        self.window_over = window_over if compression == "none" else None
        self.stream = LogicalStream(f, compression, self.log.stream_problem, base=base)
        self.not_seekable = False
        self._first = base == 0

    def __iter__(self) -> Iterator[WarcRecord]:
        s = self.stream
        while True:
            self.log.current = None
            if not self._skip_blank_lines():
                return
            start = s.tell()
            offset, exact = s.stored_offset(start)
            mine: list[Problem] = []
            self.log.current = mine
            if self.compression != "none" and not exact and not self.not_seekable:
                self.not_seekable = True
                self.log.report(
                    "warning", "offsets-not-seekable",
                    "records do not start at compressed member boundaries (whole-file "
                    "compression): offsets are those of the enclosing member and cannot "
                    "be used to seek; fix with `webark warc recompress`", offset, mine)
            line = s.readline(_MAX_LINE)
            header = parse_header(line, "any" if self._first else "expected")
            if header is None:
                self.log.current = None
                shown = line[:60].rstrip(b"\r\n")
                self.log.report("error", "bad-arc-record",
                                f"not an ARC record header line: {shown!r}; reading goes on "
                                "at the next record header line", offset)
                self._resync()
                continue
            self._first = False
            block = self._read_body(header, offset, mine)
            end = s.tell()
            self._check_after_body(header, block.size, offset, mine)
            date = None
            try:
                date = format_w3c_date(from_timestamp14(header.date))
            except ValueError:
                self.log.report("error", "bad-arc-date",
                                f"archive-date {header.date!r} is not a date", offset, mine)
            if self.compression == "none":
                length = end - start
            else:
                stored_end = s.stored_end(end) if exact else -1
                length = stored_end - offset if stored_end >= 0 else -1
            self.log.current = None
            yield _to_record(header, date, block, offset, length, self.path, mine)
            s.forget_before(end)

    # -- pieces of a record ----------------------------------------------------------
    def _read_body(self, header: ArcHeader, offset: int, mine: list[Problem]) -> Block:
        s = self.stream
        declared = header.declared
        if declared is None:
            self.log.report("error", "bad-arc-length",
                            f"ARC length {header.length!r} is not a number: the record is "
                            "read up to the next record header line", offset, mine)
            return Block(self._up_to_next_header())
        if header.is_filedesc:
            # the version and field-spec lines are read whole, whatever the length says
            # (pywb's sample ARCs count 75 of their 76 bytes)
            head = s.readline(_MAX_LINE)
            head += s.readline(_MAX_LINE)
            if len(head) >= declared:
                return Block(head)
            rest = read_block(s, declared - len(head), self.path, None)
            return Block(head + rest.read_all())
        block = read_block(s, declared, self.path, self.window_over)
        if block.size < declared:
            self.log.report("error", "arc-length-mismatch",
                            f"ARC length {declared} but {block.size} bytes read (the file ends "
                            "inside the record)", offset, mine)
        return block

    def _check_after_body(self, header: ArcHeader, size: int, offset: int,
                          mine: list[Problem]) -> None:
        """What follows a body must be a newline (the one before the next record), the
        end of the file, or, in a compressed file, the start of the next member."""
        s = self.stream
        here = s.tell()
        nxt = s.peek(_PEEK)
        if not nxt or nxt[:1] == b"\n" or nxt[:2] == b"\r\n":
            return
        if self.compression != "none" and s.stored_offset(here)[1]:
            return  # the next record is in a member of its own
        line = nxt.split(b"\n", 1)[0]
        if not line.strip():
            return  # spaces before the newline: forgiven when skipped
        if self._header_here():
            self.log.report(
                "warning", "arc-no-newline",
                f"the {size}-byte body of this record is not followed by the newline ARC "
                "puts before each record: the next record header starts right after it "
                "(readers that take that line for the newline, as warcio does, lose the "
                "next record)", offset, mine)
            return
        skipped = self._resync()
        self.log.report(
            "error", "arc-length-mismatch",
            f"the {size} bytes of ARC length {header.length} are followed by "
            f"{line[:40]!r}, not by a newline: the length is probably wrong; "
            f"{skipped} bytes skipped to the next record header line", offset, mine)

    def _up_to_next_header(self) -> bytes:
        """The lines before the next record header line (or the end of the file), the
        blank lines at their end left out (they separate the records)."""
        s = self.stream
        lines: list[bytes] = []
        while s.peek(1) and not self._header_here():
            lines.append(s.readline(_MAX_LINE))
        while lines and not lines[-1].strip():
            s.unread(lines.pop())
        return b"".join(lines)

    def _skip_blank_lines(self) -> bool:
        """Skip the newlines (and lines of spaces) between records; False at the end of
        the file."""
        s = self.stream
        while True:
            c = s.peek(1)
            if not c:
                return False
            if c == b"\n" or s.peek(2) == b"\r\n":
                s.read(1 if c == b"\n" else 2)
                continue
            if c in b" \t\r":
                line = s.peek(_PEEK).split(b"\n", 1)[0]
                if not line.strip() and len(line) < _PEEK:
                    at, _ = s.stored_offset(s.tell())
                    self.log.report("forgiven", "arc-blank-line-spaces",
                                    f"a line of {len(line)} spaces between records", at)
                    s.read(len(line))
                    continue
            return True

    def _header_here(self) -> bool:
        """Whether a record header line (strict) starts at the stream's position; most
        content lines are told apart by their first bytes."""
        s = self.stream
        if not _SCHEME.match(s.peek(24)):
            return False
        return parse_header(s.peek(_PEEK).split(b"\n", 1)[0], "strict") is not None

    def _resync(self) -> int:
        """Advance to the next line that is a record header (strict), or to the end of
        the file; the bytes skipped."""
        s = self.stream
        start = s.tell()
        while s.peek(1) and not self._header_here():
            s.readline(_MAX_LINE)
        return s.tell() - start


def _to_record(header: ArcHeader, date: str | None, block: Block, offset: int, length: int,
               path: str, problems: list[Problem]) -> WarcRecord:
    fields: list[tuple[str, str]] = []
    if header.is_filedesc:
        fields += [("WARC-Type", "warcinfo"),
                   ("WARC-Filename", header.url.removeprefix("filedesc://"))]
    else:
        fields += [("WARC-Type", "response"), ("WARC-Target-URI", header.url)]
    if date is not None:
        fields.append(("WARC-Date", date))
    if header.ip:
        fields.append(("WARC-IP-Address", header.ip))
    fields.append(("ARC-Content-Type", header.mime))
    fields.append(("ARC-Header-Line", header.line))
    fields.append(("Content-Length", str(block.size)))
    version = "ARC/1.0"
    if header.is_filedesc and block.head(3) == b"1 1":
        version = "ARC/1.1"
    return WarcRecord(headers=WarcHeaders(fields), block=block, version=version,
                      path=path, offset=offset, length=length, forgiven=tuple(problems))
