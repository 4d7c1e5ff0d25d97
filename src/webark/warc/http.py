"""Lenient parsing of the HTTP message head stored in request/response/revisit blocks.

Real archives contain status lines that RFC 9112 would reject; we read them and say what
was forgiven (warc.md "Known interop bugs"): ``HTTP/2 200`` (no minor version),
``HTTPX/1.1 200 OK`` (pywb example-extra.warc), a missing reason phrase
(``HTTP/1.0 302 ``), LF-only line endings (ClueWeb09), obs-fold continuation lines.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_STATUS_RE = re.compile(
    rb"^([A-Za-z][A-Za-z0-9]*/\d+(?:\.\d+)?)[ \t]+(\d{3})(?:[ \t]+(.*?))?[ \t]*$"
)
_REQUEST_RE = re.compile(rb"^([!#$%&'*+\-.^_`|~0-9A-Za-z]+)[ \t]+(\S+)(?:[ \t]+(\S+))?[ \t]*$")


@dataclass(frozen=True, slots=True)
class HttpHead:
    """The start line and header fields of an HTTP/1.x message as recorded.

    Attributes:
        is_request: True for a request head (method, target), False for a response.
        protocol: e.g. ``"HTTP/1.1"`` (as written; may be ``"HTTP/2"`` or ``"HTTPX/1.1"``).
        status: response status code (int), None for requests.
        reason: response reason phrase ('' when missing).
        method: request method (``"GET"``), None for responses.
        target: request target (``"/path?q"``), None for responses.
        headers: ``(name, value)`` pairs in order, names as written, values decoded
            from ISO-8859-1 (RFC 9110 §5.5) with surrounding whitespace removed.
        head_length: bytes from the start of the block to the first body byte.
        forgiven: what was accepted although not RFC 9112 (short reasons).
    """

    is_request: bool
    protocol: str
    status: int | None
    reason: str
    method: str | None
    target: str | None
    headers: tuple[tuple[str, str], ...]
    head_length: int
    forgiven: tuple[str, ...] = field(default=())

    @property
    def status_line(self) -> str:
        if self.is_request:
            return f"{self.method} {self.target} {self.protocol}"
        return f"{self.protocol} {self.status} {self.reason}".rstrip()

    def get(self, name: str, default: str | None = None) -> str | None:
        """First value of a header (case-insensitive)."""
        low = name.lower()
        for n, v in self.headers:
            if n.lower() == low:
                return v
        return default

    def get_all(self, name: str) -> list[str]:
        low = name.lower()
        return [v for n, v in self.headers if n.lower() == low]

    @property
    def is_chunked(self) -> bool:
        te = self.get("Transfer-Encoding")
        return te is not None and "chunked" in te.lower()

    @property
    def content_encoding(self) -> str | None:
        ce = self.get("Content-Encoding")
        return ce.strip().lower() if ce else None

    @property
    def mime(self) -> str | None:
        """Media type of the Content-Type header without parameters, lowercased."""
        ct = self.get("Content-Type")
        if ct is None:
            return None
        return ct.split(";", 1)[0].strip().lower()


_WS = " \t\r\n\x0b\x0c"  # what bytes.strip() removes, for str.strip on latin-1 text
_LF_PATTERNS = (b"\n\r\n", b"\n\r\r\n")


def find_head_end(data: bytes) -> tuple[int, bool] | None:
    """Return ``(index after the blank line, lf_only)`` for the end of an HTTP head at
    the start of ``data``, or None if no blank line is found.

    The earliest of CRLF CRLF, LF LF, LF CRLF and LF CR CR LF wins; the LF-only patterns
    are searched only before the first CRLF CRLF, so a normal head costs one scan."""
    i = data.find(b"\r\n\r\n")
    best: int | None = i if i >= 0 else None
    end, lf = (i + 4, False) if i >= 0 else (0, False)
    j = data.find(b"\n\n", 0, best + 4 if best is not None else len(data))
    if j >= 0 and (best is None or j < best):
        best, end, lf = j, j + 2, True
    for pat in _LF_PATTERNS:
        k = data.find(pat, 0, best + len(pat) - 1 if best is not None else len(data))
        if k >= 0 and (best is None or k < best):
            best, end, lf = k, k + len(pat), True
    return (end, lf) if best is not None else None


def parse_http_head(block: bytes, expect_request: bool | None = None) -> HttpHead | None:
    """Parse the HTTP head at the start of ``block``.

    Args:
        block: the record block (or at least its first bytes, including the blank line).
        expect_request: True for request records, False for response/revisit, None to
            guess from the start line.

    Returns:
        The parsed head, or None when the block does not start with an HTTP message
        (e.g. a ``dns:`` response, an empty block, or a head without its blank line).
    """
    end = find_head_end(block)
    if end is None:
        # A head that is the whole block (revisit records sometimes omit the blank line).
        if block.startswith((b"HTTP", b"GET ", b"POST ", b"HEAD ")) and len(block) < 65536:
            end = (len(block), b"\r\n" not in block)
            missing_blank = True
        else:
            return None
    else:
        missing_blank = False
    head_length, lf_only = end
    raw = block[:head_length]
    forgiven: list[str] = []
    if lf_only:
        forgiven.append("LF-only line endings in HTTP head")
    if missing_blank:
        forgiven.append("HTTP head not terminated by an empty line")
    nl = raw.find(b"\n")
    first = raw if nl < 0 else raw[:nl]
    start = first.rstrip(b"\r")
    if first.endswith(b"\r\r"):
        forgiven.append("CR CR LF line endings in HTTP head")
    is_request = False
    protocol: str
    status: int | None = None
    reason = ""
    method: str | None = None
    target: str | None = None
    m = _STATUS_RE.match(start) if expect_request is not True else None
    if m:
        protocol = m.group(1).decode("latin-1")
        status = int(m.group(2))
        reason = (m.group(3) or b"").decode("latin-1")
        if not protocol.startswith("HTTP/"):
            forgiven.append(f"non-HTTP protocol token {protocol!r} in status line")
        elif protocol.startswith("HTTP/2"):
            forgiven.append("HTTP/2 status line (write HTTP/1.1 and WARC-Protocol: h2)")
        if not reason:
            forgiven.append("status line without reason phrase")
    else:
        rm = _REQUEST_RE.match(start) if expect_request is not False else None
        if not rm:
            return None
        is_request = True
        method = rm.group(1).decode("latin-1")
        target = rm.group(2).decode("latin-1")
        protocol = (rm.group(3) or b"HTTP/0.9").decode("latin-1")
    headers: list[tuple[str, str]] = []
    text = raw[nl + 1 :].decode("latin-1") if nl >= 0 else ""
    for line in text.split("\n"):
        line = line.rstrip("\r")
        if not line:
            continue
        if line[0] in " \t" and headers:
            n, v = headers[-1]
            headers[-1] = (n, (v + " " + line.strip(_WS)).strip())
            if "obs-fold continuation line in HTTP head" not in forgiven:
                forgiven.append("obs-fold continuation line in HTTP head")
            continue
        name, sep, value = line.partition(":")
        if not sep:
            forgiven.append("HTTP header line without colon ignored")
            continue
        headers.append((name.strip(_WS), value.strip(_WS)))
    return HttpHead(
        is_request=is_request, protocol=protocol, status=status, reason=reason,
        method=method, target=target, headers=tuple(headers), head_length=head_length,
        forgiven=tuple(forgiven),
    )


def warcio_head_end(data: bytes) -> int:
    """Index after the blank line that ends an HTTP head as warcio reads it, or -1.

    warcio (and so pywb and cdxj-indexer, whose CDX lines :mod:`webark.cdx` reproduces)
    reads head lines up to the first empty line, with CRLF or LF-only line ends: the
    earliest LF LF or LF CRLF before the first CRLF CRLF wins. Unlike
    :func:`find_head_end` (the lenient reader of replay and checks), LF CR CR LF does not
    end a head, and an LF CRLF that overlaps the first CRLF CRLF does not count."""
    i = data.find(b"\r\n\r\n")
    lim = len(data) if i < 0 else i
    j = data.find(b"\n\n", 0, lim)
    k = data.find(b"\n\r\n", 0, lim)
    if j >= 0 and (k < 0 or j < k):
        return j + 2
    if k >= 0:
        return k + 3
    return -1 if i < 0 else i + 4


class RawHttpHead:
    """The HTTP head at the start of a record block, kept as bytes and read only as far as
    needed (the CDX indexer's view: one header looked up per line, no full parse).

    Args:
        raw: start line and header lines, without the blank line (bytes).
        end: index of the first payload byte in the block.

    Attributes:
        raw, end: as given.
        first: the start line, trailing whitespace removed (bytes).
        empty: True when warcio sees no head at all (an empty start line without
            header lines; its lines are still consumed before the payload).

    Values are decoded as UTF-8, else ISO-8859-1, as warcio does; :class:`HttpHead` is
    the full, lenient parse (RFC 9112 with what real archives break).
    """

    __slots__ = ("_low", "empty", "end", "first", "raw")

    def __init__(self, raw: bytes, end: int):
        self.raw = raw
        self.end = end
        nl = raw.find(b"\n")
        first = self.first = (raw if nl < 0 else raw[:nl]).rstrip()
        self._low: bytes | None = None
        self.empty = b" " not in first.lstrip() and (nl < 0 or raw.find(b":", nl) < 0)

    @classmethod
    def of_block(cls, data: bytes, end: int | None = None) -> RawHttpHead:
        """The head at the start of ``data`` (the whole of ``data`` when no blank line
        ends it); ``end``: ``warcio_head_end(data)`` when already known."""
        if end is None:
            end = warcio_head_end(data)
        if end < 0:
            return cls(data.rstrip(b"\r\n"), len(data))
        return cls(data[:end].rstrip(b"\r\n"), end)

    def get(self, name: bytes) -> str | None:
        """First value of header ``name`` (lowercase bytes), stripped; None if absent."""
        low = self._low
        if low is None:
            low = self._low = self.raw.lower()
        i = low.find(b"\n" + name + b":")
        if i < 0:
            return None
        start = i + len(name) + 2
        j = self.raw.find(b"\n", start)
        v = (self.raw[start:] if j < 0 else self.raw[start:j]).strip()
        try:
            return v.decode("utf-8")
        except UnicodeDecodeError:
            return v.decode("latin-1")

    def tokens(self) -> tuple[str, str]:
        """``(first token, rest)`` of the start line as warcio splits it: protocol and
        status line of a response, method and target of a request."""
        try:
            line = self.first.decode("utf-8")
        except UnicodeDecodeError:
            line = self.first.decode("latin-1")
        proto, _, rest = line.partition(" ")
        return proto, rest.strip()

    def status(self) -> str:
        """warcio's ``get_statuscode()``: first word after the protocol ('' if none)."""
        code = self.first.partition(b" ")[2].strip().partition(b" ")[0]
        if code.isascii():
            return code.decode("ascii")
        return self.tokens()[1].split(" ", 1)[0]
