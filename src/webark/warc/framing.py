"""The careful WARC reader: a pure-Python parser over a :class:`LogicalStream` that
checks the framing of every record, reports what is wrong with file and offset, and
resynchronises on the next ``WARC/`` version line so that nothing after a bad record is
lost. It is the reference for ``webark warc check`` and the fallback of the fast reader.

Framing rules (WARC 1.1 §4): version line, named fields, CRLF, block of Content-Length
bytes, CRLF CRLF. Forgiven (reported as ``forgiven``): LF-only line endings, folded field
values (WARC 0.17/0.18 files), leading blank lines between records.
"""

from __future__ import annotations

import mmap
import re
from collections.abc import Callable, Iterator
from typing import BinaryIO

from webark.warc.headers import WarcHeaders
from webark.warc.record import SPOOL_LIMIT, Block, Problem, Severity, WarcRecord
from webark.warc.streams import Compression, LogicalStream

_VERSION_RE = re.compile(rb"^WARC/(\d+\.\d+)\s*$", re.IGNORECASE)
_RESYNC_RE = re.compile(rb"WARC/\d+\.\d+\r*\n", re.IGNORECASE)
_INNER_RECORD_RE = re.compile(rb"WARC/\d+\.\d+\r?\n[!-9;-~]+:")
"""A version line followed by a field name: where a record starts inside the declared
block of a record that was cut short (a crashed writer's file appended to)."""
MAX_HEADER_BYTES = 1 << 20
"""A WARC header larger than this (bytes) is treated as garbage."""


def _decode(raw: bytes, not_utf8: list[bytes]) -> str:
    """Header bytes as text: UTF-8, or (appending ``raw`` to ``not_utf8``) with the bytes
    that are not UTF-8 kept as surrogate escapes, so that ``WarcHeaders.to_bytes`` writes
    them back unchanged (never U+FFFD)."""
    if raw.isascii():
        return raw.decode("ascii")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        not_utf8.append(raw)
        return raw.decode("utf-8", "surrogateescape")


class ProblemLog:
    """The problems of one file, in file order (:attr:`problems`); a problem met while a
    record is read also goes to that record's own list (:attr:`current`, set by the
    reader while it reads a record)."""

    def __init__(self, path: str):
        self.path = path
        self.problems: list[Problem] = []
        self.current: list[Problem] | None = None

    def stream_problem(self, code: str, message: str, offset: int | None,
                       severity: Severity = "error", between_records: bool = False) -> None:
        """The :class:`~webark.warc.streams.ProblemSink` of the file's stream. A stream
        problem found while a record is being read belongs to that record; one found
        between records (a corrupt member dropped whole, garbage skipped, NUL bytes
        between members) is a file-level problem only."""
        p = Problem(severity, code, message, self.path, offset)
        self.problems.append(p)
        if self.current is not None and not between_records:
            self.current.append(p)

    def report(self, severity: Severity, code: str, message: str, offset: int | None,
               into: list[Problem] | None = None) -> Problem:
        """Record a problem of the file, and of a record when ``into`` is its list."""
        p = Problem(severity, code, message, self.path, offset)
        self.problems.append(p)
        if into is not None:
            into.append(p)
        return p


class CarefulReader:
    """Iterate the WARC records of one file, checking framing.

    Args:
        f: binary file positioned at ``base``.
        path: name used in problem reports.
        compression: ``"none"``, ``"gzip"`` or ``"zstd"`` (see ``detect_compression``).
        base: file offset of ``f``'s position (to resume after the fast reader).
        end: stop before the first record whose stored offset is ``end`` or more (a
            byte range of the file; the last record is read to its end, past ``end``).
        window_over: in an uncompressed file, blocks larger than this (bytes) are not
            read but referenced as a range of the file (:meth:`Block.window`); None
            (default) reads every block. For single-record reads (replay).

    After (or during) iteration, :attr:`problems` lists everything reported, in file order;
    each record also carries its own in ``record.forgiven``.
    """

    def __init__(self, f: BinaryIO, path: str, compression: Compression, base: int = 0,
                 end: int | None = None, window_over: int | None = None):
        self.path = path
        self.end = end
        self.window_over = window_over if compression == "none" else None
        self.log = ProblemLog(path)
        self.problems = self.log.problems
        self.stream = LogicalStream(f, compression, self.log.stream_problem, base=base)
        self.compression = compression
        self.not_seekable = False
        self.misaligned = False

    def __iter__(self) -> Iterator[WarcRecord]:
        s = self.stream
        while True:
            # skip blank lines between records (lenient) and detect EOF
            self.log.current = None
            while True:
                c = s.peek(1)
                if c in (b"\r", b"\n"):
                    s.read(1)
                    continue
                break
            if not c:
                return
            start = s.tell()
            offset, exact = s.stored_offset(start)
            if self.end is not None and offset >= self.end:
                return
            mine: list[Problem] = []
            self.log.current = mine
            if not exact and self.compression != "none":
                m = s.member_at(start)
                # a member that starts with the previous record's CRLF CRLF is still a
                # usable seek point: readers skip blank lines before a version line
                exact = m is not None and m.ws_done and m.u_start + m.ws == start
                if exact and not self.misaligned and s.peek(5).upper() == b"WARC/":
                    self.misaligned = True
                    self.log.report(
                        "warning", "misaligned-members",
                        "a compressed member starts with the end of the previous record "
                        "(member boundaries do not match record boundaries); offsets still "
                        "work; fix with `webark warc recompress`", offset, mine)
            if self.compression == "none" and c == b"\x00":
                self._skip_nul_run(offset)
                continue
            if s.peek(5).upper() != b"WARC/":
                self.log.report("error", "not-a-record",
                                f"expected a WARC version line, found {s.peek(24)!r}; "
                                "skipping to the next record", offset, mine)
                self._resync()
                continue
            if self.compression != "none" and not exact and not self.not_seekable:
                self.not_seekable = True
                self.log.report(
                    "warning", "offsets-not-seekable",
                    "records do not start at compressed member boundaries (whole-file "
                    "compression or misaligned members): offsets are those of the enclosing "
                    "member and cannot be used to seek; fix with `webark warc recompress`",
                    offset, mine)
            header = self._read_header(offset, mine)
            if header is None:
                self._resync()
                continue
            version, fields, lf_only, folded = header
            headers = WarcHeaders(fields)
            if lf_only:
                self.log.report("forgiven", "lf-line-endings",
                                "WARC header lines end with LF, not CRLF", offset, mine)
            if folded:
                self.log.report("forgiven", "folded-field",
                                "field value continued on a folded line (WARC 0.17/0.18)",
                                offset, mine)
            clen = headers.content_length
            if clen is None or clen < 0:
                self.log.report("error", "bad-content-length",
                                f"Content-Length missing or invalid: "
                                f"{headers.get('Content-Length')!r}; skipping the record",
                                offset, mine)
                self._resync()
                continue
            block_start = s.tell()
            block = self._read_block(clen)
            end_ok = self._read_trailer(offset, mine, block.size == clen)
            if not end_ok:
                # The framing is broken: the Content-Length is wrong or the record was
                # cut short. If another record starts inside the block, the record was
                # cut there: keep what is before it and go on from it.
                inner = self._record_inside(block)
                if inner is not None:
                    block = self._split_block(block, inner)
                    end_ok = True
                    self.log.report("error", "truncated-record",
                                    f"block has {inner} of {clen} bytes: the next record "
                                    "starts inside the declared block", offset, mine)
                elif block.size < clen:
                    self.log.report("error", "truncated-record",
                                    f"block has {block.size} of {clen} bytes (file ends early)",
                                    offset, mine)
                else:
                    self.log.report("error", "content-length-mismatch",
                                    f"the block is not followed by CRLF CRLF (found "
                                    f"{s.peek(4)!r}): the Content-Length is probably wrong; "
                                    "resynchronising", offset, mine)
            end = s.tell()
            if self.compression == "none":
                length = block_start - start + block.size
            else:
                stored_end = s.stored_end(end) if exact else -1
                length = stored_end - offset if stored_end >= 0 else -1
            self.log.current = None
            yield WarcRecord(headers=headers, block=block, version=version, path=self.path,
                             offset=offset, length=length, forgiven=tuple(mine))
            if not end_ok:
                self._resync()
            s.forget_before(end)

    def _skip_nul_run(self, offset: int) -> None:
        """Skip NUL bytes between the records of an uncompressed file and report them as
        the compressed streams do (:mod:`webark.warc.streams`): an error when data
        follows (a zeroed stretch), a warning when they only pad the end of the file."""
        s = self.stream
        n = 0
        while True:
            chunk = s.peek(1 << 16)
            rest = chunk.lstrip(b"\x00")
            if len(rest) != len(chunk):
                s.read(len(chunk) - len(rest))
                n += len(chunk) - len(rest)
            if rest or not chunk:
                break
        if s.peek(1):
            self.log.report("error", "nul-bytes",
                            f"{n} NUL bytes at {offset}-{offset + n} between records, data "
                            "follows: a zeroed stretch of the file (records there are lost)",
                            offset)
        else:
            self.log.report("warning", "nul-padding",
                            f"{n} NUL bytes at {offset}-{offset + n} pad the end of the file",
                            offset)

    def _read_header(self, offset: int, mine: list[Problem]
                     ) -> tuple[str, list[tuple[str, str]], bool, bool] | None:
        s = self.stream
        first = s.readline()
        m = _VERSION_RE.match(first)
        if not m:
            self.log.report("error", "bad-version-line", f"bad version line {first[:40]!r}",
                            offset, mine)
            return None
        version = "WARC/" + m.group(1).decode()
        if not first.startswith(b"WARC/"):
            self.log.report("forgiven", "lowercase-version-line",
                            f"version line {first.strip()!r} is not upper case", offset, mine)
        odd_eol = first.endswith(b"\r\r\n")
        lf_only = not first.endswith(b"\r\n")
        folded = False
        fields: list[tuple[str, str]] = []
        not_utf8: list[bytes] = []
        total = len(first)
        while True:
            if _RESYNC_RE.match(s.peek(16)):
                self.log.report("error", "truncated-header",
                                "the WARC header ends without an empty line: the next record "
                                "starts here", offset, mine)
                return None
            line = s.readline()
            total += len(line)
            if not line:
                self.log.report("error", "truncated-header", "file ends inside the WARC header",
                                offset, mine)
                return None
            cut = _RESYNC_RE.search(line, 1)
            if cut is not None and cut.end() == len(line):
                # the header was cut short and the next record glued onto this line
                s.unread(line[cut.start() :])
                self.log.report("error", "truncated-header",
                                "the WARC header was cut short: the next record starts inside "
                                "a header line", offset, mine)
                return None
            if total > MAX_HEADER_BYTES:
                self.log.report("error", "header-too-long", "no end of WARC header within 1 MiB",
                                offset, mine)
                return None
            if not line.strip(b"\r\n"):
                break
            if not line.endswith(b"\r\n"):
                lf_only = True
            elif line.endswith(b"\r\r\n"):
                odd_eol = True
            text = line.rstrip(b"\r\n")
            if text[:1] in (b" ", b"\t") and fields:
                folded_name, folded_value = fields[-1]
                more = _decode(text.strip(), not_utf8)
                fields[-1] = (folded_name, f"{folded_value} {more}" if folded_value else more)
                folded = True
                continue
            name, sep, value = text.partition(b":")
            if not sep:
                self.log.report("error", "bad-field-line",
                                f"header line without colon: {text[:60]!r}", offset, mine)
                if name.startswith(b"WARC/") or b"HTTP/" in name:
                    return None
                continue
            fields.append((_decode(name.strip(), not_utf8), _decode(value.strip(), not_utf8)))
        if not_utf8:
            shown = ", ".join(repr(b[:60]) for b in not_utf8[:3])
            self.log.report("forgiven", "non-utf8-field-value",
                            f"WARC header bytes that are not UTF-8 (WARC 1.1 §4: fields are "
                            f"UTF-8): {shown}; kept as they are (surrogate escapes)",
                            offset, mine)
        if odd_eol:
            self.log.report("forgiven", "cr-cr-lf-line-endings",
                            "WARC header lines end with CR CR LF", offset, mine)
        return version, fields, lf_only, folded

    def _read_trailer(self, offset: int, mine: list[Problem], complete: bool) -> bool:
        """Consume the CRLF CRLF after a block. Returns False if the framing is broken."""
        s = self.stream
        tail = s.peek(4)
        if tail == b"\r\n\r\n":
            s.read(4)
            return True
        if not complete:
            return False
        if tail[:2] == b"\n\n" or tail[:3] == b"\r\n\n" or tail == b"\n\r\n":
            n = 2 if tail[:2] == b"\n\n" else 3
            s.read(n)
            self.log.report("forgiven", "lf-record-end",
                            "record ends with LF LF instead of CRLF CRLF", offset, mine)
            return True
        if s.peek(6) == b"\r\r\n\r\r\n":
            s.read(6)
            self.log.report("forgiven", "cr-cr-lf-record-end",
                            "record ends with CR CR LF CR CR LF", offset, mine)
            return True
        if tail[:2] == b"\r\n" and (tail == b"\r\n" or _RESYNC_RE.match(s.peek(18)[2:])):
            s.read(2)
            self.log.report("error", "single-crlf-after-block",
                            "only one CRLF after the block (two required)", offset, mine)
            return True
        if not tail:
            self.log.report("error", "missing-record-end",
                            "file ends right after the block (CRLF CRLF missing)", offset, mine)
            return True
        if _RESYNC_RE.match(s.peek(16)):
            self.log.report("error", "missing-record-end",
                            "the next record starts right after the block (CRLF CRLF missing)",
                            offset, mine)
            return True
        return False

    def _resync(self) -> None:
        """Advance to the next ``WARC/x.y`` version line (which may be right here)."""
        s = self.stream
        if _RESYNC_RE.match(s.peek(16)):
            return
        s.read(1)
        while s.find(b"WARC/") >= 0:
            if _RESYNC_RE.match(s.peek(16)):
                return
            s.read(1)

    def _record_inside(self, block: Block) -> int | None:
        """Index of the first record start inside a block (its version line may run past
        the block's end), or None."""
        tail = self.stream.peek(256)
        if block.in_memory:
            m = _INNER_RECORD_RE.search(block.read_all() + tail)
            return m.start() if m and m.start() < block.size else None
        window = block.file_window
        path, base = window if window is not None else (None, 0)
        with (open(path, "rb") if path is not None else block.open()) as f, \
                mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as mm:
            end = base + block.size
            m = _INNER_RECORD_RE.search(mm, base, end)
            if m:
                return m.start() - base
            edge = max(base, end - 64)
            m = _INNER_RECORD_RE.search(mm[edge:end] + tail)
        at = edge - base + m.start() if m else None
        return at if at is not None and at < block.size else None

    def _split_block(self, block: Block, at: int) -> Block:
        """Put the bytes of ``block`` from ``at`` back into the stream; return the rest."""
        if block.in_memory:
            data = block.read_all()
            self.stream.unread(data[at:])
            return Block(data[:at])
        with block.open() as f:
            f.seek(at)
            self.stream.unread(f.read())
            f.seek(0)
            return Block.from_reader(_bounded(f.read, at), SPOOL_LIMIT)

    def _read_block(self, clen: int) -> Block:
        return read_block(self.stream, clen, self.path, self.window_over)


def read_block(s: LogicalStream, size: int, path: str, window_over: int | None) -> Block:
    """The next ``size`` bytes of ``s`` (fewer at its end) as a block: in memory up to
    :data:`SPOOL_LIMIT`, spooled to a temporary file beyond, or, in an uncompressed
    file, a window on ``path`` (not read) when over ``window_over`` bytes."""
    if window_over is not None and size > window_over:
        start, _ = s.stored_offset(s.tell())
        return Block.window(path, start, s.skip(size))
    if size <= SPOOL_LIMIT:
        return Block(s.read(size))
    return Block.from_reader(_bounded(s.read, size), SPOOL_LIMIT)


def _bounded(read: Callable[[int], bytes], size: int) -> Callable[[int], bytes]:
    """``read`` that gives at most ``size`` bytes in all."""
    remaining = size

    def bounded(n: int) -> bytes:
        nonlocal remaining
        data = read(min(n, remaining))
        remaining -= len(data)
        return data

    return bounded
