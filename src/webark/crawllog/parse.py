"""Reading crawl.log lines: :func:`parse_line`, :func:`iter_crawl_log`, :class:`CrawlLogError`.

Heritrix 1.x and 3.x logs differ in these ways, all accepted:

* **Columns.** Heritrix 3 writes 12 space-separated columns plus, when
  ``logExtraInfo`` is on, a 13th: one-line JSON (``{"warcFilename":…}``). Later Heritrix
  1.x (the 2006–2012 NetarchiveSuite logs of the corpus) writes the same 12 columns,
  never the JSON; the earliest 1.x formatter (2004–5) wrote 11: no source-tag column,
  annotations right after the digest.
* **Digest.** ``sha1:`` + Base32 in Heritrix 3 and later 1.x (the 2007 Heritrix 1.12
  log of the corpus); plain Base32 in older 1.x logs (2005–6).
* **Annotations.** Heritrix 3: ``duplicate:digest``, ``ip:…``, ``Nt``, ``err=…``;
  Heritrix 1.x with the DeDuplicator: ``duplicate:"<arcfile>,<offset>"`` (a quoted comma),
  ``content-size:N``, ``le:<Exception>@<module>``.
* **Wrappers.** A crawl.log taken out of a NetarchiveSuite metadata ARC starts with the
  ARC record header line (``metadata://…crawl.log?heritrixVersion=… ip date mime len``);
  :func:`iter_crawl_log` skips it.

Columns are split on ASCII spaces; the status and size columns are right-aligned with
leading spaces. The annotations column may itself contain spaces (UKWA's virus scanner
wrote ``1: stream: Eicar-Test-Signature FOUND``): it is everything between the source
tag and the JSON extra info, which is recognised as a trailing ``{…}`` that parses as a
JSON object.
"""

from __future__ import annotations

import gzip
import json
import logging
import re
import zlib
from collections.abc import Iterator
from datetime import UTC, datetime
from os import PathLike
from typing import IO, Final

from webark.core.digests import Digest
from webark.core.errors import DigestError, FormatError
from webark.crawllog.annotations import split_annotations
from webark.crawllog.line import CrawlLogLine

log = logging.getLogger(__name__)

FIELD_NAMES: Final[tuple[str, ...]] = (
    "timestamp",
    "status",
    "size",
    "uri",
    "hop path",
    "via",
    "mime type",
    "thread",
    "fetch timestamp+duration",
    "digest",
    "source tag",
    "annotations",
    "extra info",
)
"""Names of the 13 columns, in order (column ``n`` is ``FIELD_NAMES[n - 1]``)."""

#: Start of the reason (for people) of the error :func:`iter_crawl_log` yields last for
#: a crawl.log.gz that ends early or is damaged. Programs test
#: ``CrawlLogError.code == CUT_GZIP_CODE`` instead.
CUT_GZIP: Final = "gzip stream damaged or cut short"

#: :attr:`CrawlLogError.code` of a line that does not parse (reading goes on).
BAD_LINE: Final = "bad-line"

#: :attr:`CrawlLogError.code` of the error ending a crawl.log.gz that is cut short or
#: damaged: the file was not read to its end (callers report it as incomplete).
CUT_GZIP_CODE: Final = "cut-gzip"


class CrawlLogError(FormatError, ValueError):
    """A crawl.log line that cannot be read.

    Attributes:
        reason: what is wrong, e.g. ``"size is not a number or '-': 'xyz'"``.
        field: the column name (:data:`FIELD_NAMES`), or ``None`` for the whole line.
        field_number: the 1-based column number (1–13), or ``None``.
        column: 1-based character position in the line where the bad field starts.
        text: the line (without its line ending).
        path: the file, when known (set by :func:`iter_crawl_log`).
        line_number: the 1-based line number in ``path``, when known.
        offset: byte offset of the line's start in ``path``, when known.
        code: what kind of error, for programs (the message is for people):
            :data:`BAD_LINE` (a line that does not parse; reading goes on) or
            :data:`CUT_GZIP_CODE` (a crawl.log.gz that ends early or is damaged; the
            last item :func:`iter_crawl_log` yields, the file was not read to its end).
    """

    def __init__(
        self,
        reason: str,
        *,
        code: str = BAD_LINE,
        field: str | None = None,
        column: int | None = None,
        text: str = "",
        path: str | None = None,
        line_number: int | None = None,
        offset: int | None = None,
    ) -> None:
        self.field = field
        self.field_number = FIELD_NAMES.index(field) + 1 if field in FIELD_NAMES else None
        self.column = column
        self.text = text
        self.line_number = line_number
        self.code = code
        super().__init__(reason, path, offset)
        self.args = (self._message(),)

    def _message(self) -> str:
        where = ""
        if self.path is not None:
            where = f"{self.path}:{self.line_number}: " if self.line_number else f"{self.path}: "
        elif self.line_number is not None:
            where = f"line {self.line_number}: "
        what = ""
        if self.field is not None:
            what = f"field {self.field_number} ({self.field})"
            if self.column is not None:
                what += f" at column {self.column}"
            what += ": "
        return f"{where}{what}{self.reason}"

    def __str__(self) -> str:
        return self._message()

    def located(self, path: str, line_number: int, offset: int | None = None) -> CrawlLogError:
        """A copy of this error that names the file, line number and byte offset."""
        return CrawlLogError(
            self.reason,
            code=self.code,
            field=self.field,
            column=self.column,
            text=self.text,
            path=path,
            line_number=line_number,
            offset=offset,
        )


# re.ASCII: \d is 0-9 only (int() would choke on other Unicode digits)
_TIMESTAMP = re.compile(
    r"^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,6}))?Z$", re.ASCII
)
_STATUS = re.compile(r"^-?\d+$", re.ASCII)
_SIZE = re.compile(r"^\d+$", re.ASCII)
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*:\S")
_HOP_PATH = re.compile(r"^(?:\d+\+)?[A-Z]+$", re.ASCII)
_THREAD = re.compile(r"^#(\d+)$", re.ASCII)
_FETCH = re.compile(r"^(\d{17})\+(-?\d+)$", re.ASCII)


def _parse_timestamp(value: str) -> datetime | None:
    m = _TIMESTAMP.match(value)
    if not m:
        return None
    y, mo, d, hh, mi, ss, frac = m.groups()
    try:
        return datetime(
            int(y),
            int(mo),
            int(d),
            int(hh),
            int(mi),
            int(ss),
            int((frac or "0").ljust(6, "0")),
            tzinfo=UTC,
        )
    except ValueError:
        return None


def _parse_17(value: str) -> datetime | None:
    try:
        return datetime.strptime(value[:14], "%Y%m%d%H%M%S").replace(
            microsecond=int(value[14:17]) * 1000, tzinfo=UTC
        )
    except ValueError:
        return None


def _tokens(text: str, count: int) -> tuple[list[tuple[str, int]], int]:
    """Up to ``count`` space-separated tokens with their 0-based start positions, and
    the position right after the last token taken."""
    out: list[tuple[str, int]] = []
    i, n = 0, len(text)
    while len(out) < count:
        while i < n and text[i] == " ":
            i += 1
        if i >= n:
            break
        j = text.find(" ", i)
        if j < 0:
            j = n
        out.append((text[i:j], i))
        i = j
    return out, i


def _split_extra(rest: str) -> tuple[str, str | None]:
    """Split the tail after the source tag into (annotations column, JSON or None)."""
    if not rest.rstrip(" ").endswith("}"):
        return rest, None
    rest = rest.rstrip(" ")
    pos = rest.find(" {")
    while pos >= 0:
        candidate = rest[pos + 1 :]
        try:
            value = json.loads(candidate)
        except ValueError:
            value = None
        if isinstance(value, dict):
            return rest[:pos].rstrip(" "), candidate
        pos = rest.find(" {", pos + 1)
    return rest, None


def parse_line(text: str) -> CrawlLogLine:
    """Parse one crawl.log line (Heritrix 3 or 1.x, see the module docstring).

    Args:
        text: the line; a trailing ``\\n`` / ``\\r\\n`` is ignored.

    Returns:
        The :class:`CrawlLogLine`. ``format_line(parse_line(s)) == s`` for every line
        Heritrix 3 writes.

    Raises:
        CrawlLogError: a column is missing or malformed; ``field`` and ``column`` say
            which one and where.
    """
    line = text.rstrip("\r\n")

    def fail(reason: str, field: str | None, column: int | None = None) -> CrawlLogError:
        return CrawlLogError(reason, field=field, column=column, text=line)

    toks, end = _tokens(line, 11)
    if len(toks) < 11:
        missing = FIELD_NAMES[len(toks)]
        raise fail(
            f"line has {len(toks)} fields, at least 11 are needed ({missing} is missing)",
            missing,
            len(line) + 1,
        )
    rest = line[end:].lstrip(" ")
    rest_col = len(line) - len(rest) + 1
    values = [t for t, _ in toks]
    cols = [p + 1 for _, p in toks]

    timestamp = _parse_timestamp(values[0])
    if timestamp is None:
        raise fail(
            f"not a W3C timestamp like 2018-11-26T14:27:46.376Z: {values[0]!r}",
            "timestamp",
            cols[0],
        )
    if not _STATUS.match(values[1]):
        raise fail(f"not an integer status: {values[1]!r}", "status", cols[1])
    status = int(values[1])
    size: int | None = None
    if values[2] != "-":
        if not _SIZE.match(values[2]):
            raise fail(f"size is not a number or '-': {values[2]!r}", "size", cols[2])
        size = int(values[2])
    uri = values[3]
    if not _SCHEME.match(uri):
        raise fail(f"not an absolute URI (no scheme): {uri!r}", "uri", cols[3])
    hop_path = "" if values[4] == "-" else values[4]
    if hop_path and not _HOP_PATH.match(hop_path):
        raise fail(f"not a hop path (letters like LLE, or '-'): {values[4]!r}", "hop path", cols[4])
    via = None if values[5] == "-" else values[5]
    if via is not None and not _SCHEME.match(via):
        raise fail(f"via is not an absolute URI or '-': {via!r}", "via", cols[5])
    mime = None if values[6] == "-" else values[6]
    m = _THREAD.match(values[7])
    if not m:
        raise fail(f"not a worker thread like #001: {values[7]!r}", "thread", cols[7])
    thread = int(m.group(1))
    fetch_began: datetime | None = None
    duration: int | None = None
    if values[8] != "-":
        fm = _FETCH.match(values[8])
        fetch_began = _parse_17(fm.group(1)) if fm else None
        if fm is None or fetch_began is None:
            raise fail(
                f"not a fetch start+duration like 20181126142745781+41 or '-': {values[8]!r}",
                "fetch timestamp+duration",
                cols[8],
            )
        duration = int(fm.group(2))
    digest = None if values[9] == "-" else values[9]
    if digest is not None:
        try:
            Digest.parse(digest)
        except DigestError as e:
            raise fail(
                f"not a digest (sha1:BASE32 or BASE32): {digest!r} ({e})", "digest", cols[9]
            ) from None

    if not rest:
        # Early Heritrix 1.x layout: no source-tag column; column 11 is the annotations.
        source_tag, annotations_col, extra = None, values[10], None
    else:
        source_tag = None if values[10] == "-" else values[10]
        annotations_col, extra = _split_extra(rest)
        if extra is None and rest.rstrip(" ").endswith("}") and " {" in rest:
            brace = rest.find(" {") + 1
            raise fail("extra info is not a one-line JSON object", "extra info",
                       rest_col + brace)
        if not annotations_col:
            raise fail("annotations column is missing before the extra info", "annotations",
                       rest_col)
    return CrawlLogLine(
        timestamp,
        status,
        size,
        uri,
        hop_path,
        via,
        mime,
        thread,
        fetch_began,
        duration,
        digest,
        source_tag,
        split_annotations(annotations_col),
        extra,
    )


_ARC_HEADER = re.compile(r"^\S+ \S+ \d{12,17} \S+ \d+$")


def _decode(raw: bytes) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.decode("latin-1")


def _open(path: str | PathLike[str]) -> IO[bytes] | gzip.GzipFile:
    p = str(path)
    with open(p, "rb") as probe:
        magic = probe.read(2)
    if magic == b"\x1f\x8b":
        return gzip.open(p, "rb")
    return open(p, "rb")


def iter_crawl_log(
    path: str | PathLike[str], *, skip_arc_header: bool = True
) -> Iterator[tuple[int, CrawlLogLine | CrawlLogError]]:
    """Read a crawl.log file, yielding every line's result and carrying on past bad ones.

    Args:
        path: a crawl.log, plain or gzip-compressed (``crawl.log.gz``, detected by its
            magic bytes).
        skip_arc_header: skip a first line that is an ARC v1 record header
            (crawl.logs extracted from NetarchiveSuite metadata ARCs start with one).

    Yields:
        ``(line_number, CrawlLogLine)`` for good lines and ``(line_number,
        CrawlLogError)`` for bad ones, the error naming the file, line number, byte
        offset (``None`` in a gzip file), field and column. A gzip stream that ends
        early or is damaged ends the iteration with an error whose ``code`` is
        :data:`CUT_GZIP_CODE` (test the code, not the message). Line numbers are 1-based
        and count every line of the file (skipped header and blank lines included), so
        they match ``sed -n Np``.
        Blank lines are skipped. Lines are decoded as UTF-8, or Latin-1 if that fails.

    Raises:
        OSError: the file cannot be opened or read.
    """
    name = str(path)
    offset = 0
    with _open(path) as fh:
        compressed = isinstance(fh, gzip.GzipFile)
        lines = _lines_until_damage(fh)
        for number, raw in enumerate(lines, start=1):
            if raw is None:  # the gzip stream ends early or is damaged
                yield number, CrawlLogError(
                    f"{CUT_GZIP} after line {number - 1} "
                    "(the lines before it were read)", code=CUT_GZIP_CODE, path=name,
                    line_number=number)
                return
            start = offset
            offset += len(raw)
            text = _decode(raw).rstrip("\r\n")
            if not text.strip():
                continue
            if number == 1 and skip_arc_header and _ARC_HEADER.match(text):
                log.debug("%s: skipping ARC record header line %r", name, text)
                continue
            try:
                yield number, parse_line(text)
            except CrawlLogError as e:
                yield number, e.located(name, number, None if compressed else start)


def _lines_until_damage(fh: IO[bytes] | gzip.GzipFile) -> Iterator[bytes | None]:
    """The lines of ``fh``, then None if decompression fails (a crawl.log.gz copied
    while Heritrix was still writing it, or damaged): the lines before are kept."""
    try:
        yield from fh
    except (EOFError, zlib.error, gzip.BadGzipFile):
        yield None


def read_crawl_log(path: str | PathLike[str]) -> list[CrawlLogLine]:
    """All good lines of a crawl.log; bad lines are logged (``logging`` WARNING) and
    skipped. Use :func:`iter_crawl_log` to handle them yourself."""
    out: list[CrawlLogLine] = []
    for _, item in iter_crawl_log(path):
        if isinstance(item, CrawlLogError):
            log.warning("%s", item)
        else:
            out.append(item)
    return out
