"""Lenient reading of response heads that h11 (strict RFC 9112) refuses but browsers,
curl and Heritrix's HttpClient accept, so an archive does not lose the page (nor retry
it 30 times, 900 s apart, as a broken connection).

Used only after h11 has refused a head: :func:`mend_heads` rewrites the heads at the
start of the bytes received into ones h11 accepts, **keeping every byte offset** (each
line keeps its length), so the body and the WARC block (always the bytes as received)
stay where they are; :func:`lenient_fields` then reads the header fields from the
original head. What is mended, line by line:

* a status line starting ``http/`` in another case: ``HTTP/``;
* a first header line starting with whitespace (not a fold): the whitespace moves to
  the end of the line;
* whitespace between a field name and its colon (``X-A : v``): dropped (RFC 9112 §5.1
  says reject; browsers and curl accept);
* a line that is not a field (no colon, a name with spaces or other non-token bytes,
  an empty name): ignored, as browsers do (blanked, read as an empty fold);
* control characters (NUL, VT, FF, a CR not ending the line …) inside a field value:
  read as spaces;
* ``Transfer-Encoding`` whose last coding is ``chunked`` after others (``gzip,
  chunked``): read as chunked; one without ``chunked`` (``identity``, ``gzip``): the
  body is delimited by the connection close (RFC 9112 §6.3 rule 4) and any
  ``Content-Length`` is ignored;
* a ``Content-Length`` that is not a number (``2x``, ``-1``): ignored (close-delimited).

Conflicting ``Content-Length`` values, a head too long, a status line that is not
``HTTP/d.d ddd`` (e.g. ``HTTP/2 200`` or HTTP/0.9 bodies) are not mended.
"""

from __future__ import annotations

import re
from typing import Final

__all__ = ["lenient_fields", "mend_heads"]

_TOKEN: Final = re.compile(rb"[-!#$%&'*+.^_`|~0-9a-zA-Z]+")
_CTL: Final = re.compile(rb"[\x00-\x08\x0a-\x1f\x7f]")
_STATUS: Final = re.compile(rb"(?i:HTTP)/[0-9]\.[0-9] ([0-9]{3})")
_NEUTRAL: Final = b"X"  # first letter given to a field name h11 must not act on


def mend_heads(data: bytes) -> bytes | None:
    """``data`` (the bytes of a response from its first byte) with its heads, interim
    1xx ones and the final one, mended as the module docstring says; the same length,
    the body bytes unchanged. None when nothing could be mended."""
    out = bytearray(data)
    pos = 0
    while True:
        end, final = _mend_head(out, pos)
        if end < 0 or final:
            break
        pos = end
    return bytes(out) if out != data else None


def _mend_head(buf: bytearray, pos: int) -> tuple[int, bool]:
    """Mend the head starting at ``pos`` in place; (offset after it or -1 when it is
    incomplete, whether it is a final (non-1xx) head)."""
    lines: list[tuple[int, int]] = []  # (start, end of content) of each line
    i = pos
    while True:
        nl = buf.find(b"\n", i)
        if nl < 0:
            return -1, True
        end = nl - 1 if nl > i and buf[nl - 1] == 0x0D else nl
        if end == i:  # the empty line ending the head
            head_end = nl + 1
            break
        lines.append((i, end))
        i = nl + 1
    if not lines:
        return head_end, True
    s0, e0 = lines[0]
    if buf[s0 : s0 + 5].upper() == b"HTTP/":
        buf[s0 : s0 + 4] = b"HTTP"
    m = _STATUS.match(bytes(buf[s0:e0]))
    final = m is None or not m.group(1).startswith(b"1")
    te_without_chunked = False
    lengths: list[int] = []  # where the Content-Length fields start
    for n, (s, e) in enumerate(lines[1:]):
        line = bytes(buf[s:e])
        if n == 0 and line[:1] in (b" ", b"\t"):  # not a fold: nothing to fold into
            stripped = line.lstrip(b" \t")
            line = stripped + b" " * (len(line) - len(stripped))
        elif line[:1] in (b" ", b"\t"):  # obs-fold of the previous field
            buf[s:e] = _CTL.sub(b" ", line)
            continue
        colon = line.find(b":")
        name = line[:colon].rstrip(b" \t") if colon > 0 else b""
        if not _TOKEN.fullmatch(name):  # not a field: ignored (blank: an empty fold)
            if n > 0:
                buf[s:e] = b" " * len(line)
            elif len(line) >= 2:  # nothing to fold into yet: an empty field instead
                buf[s:e] = b"x:".ljust(len(line))
            continue
        value = _CTL.sub(b" ", line[colon + 1 :])
        line = name + b":" + b" " * (colon - len(name)) + value
        low = name.lower()
        if low == b"transfer-encoding":
            codings = [c.strip().lower() for c in value.split(b",") if c.strip()]
            if codings and codings[-1] == b"chunked":
                if len(codings) > 1:
                    line = name + b":" + b" chunked".ljust(len(line) - len(name) - 1)
            else:
                te_without_chunked = True
                line = _NEUTRAL + line[1:]
        elif low == b"content-length":
            lengths.append(s)
            if not value.strip().isdigit():
                line = _NEUTRAL + line[1:]
        buf[s:e] = line
    if te_without_chunked:
        for s in lengths:
            buf[s : s + 1] = _NEUTRAL
    return head_end, final


def lenient_fields(head: bytes) -> tuple[tuple[str, str], ...]:
    """The header fields of a response head (status line first) read as leniently as
    :func:`mend_heads` reads them: ``(name, value)`` with the name's case as sent and
    the value ISO-8859-1-decoded, stripped, folds joined by a space; lines that are
    not fields are skipped."""
    fields: list[list[str]] = []
    for raw in head.split(b"\n")[1:]:
        line = raw[:-1] if raw.endswith(b"\r") else raw
        if not line.strip(b" \t"):
            continue
        if line[:1] in (b" ", b"\t") and fields:
            fields[-1][1] = (fields[-1][1] + " " + line.strip(b" \t").decode("iso-8859-1")).strip()
            continue
        line = line.lstrip(b" \t")
        colon = line.find(b":")
        name = line[:colon].rstrip(b" \t") if colon > 0 else b""
        if not _TOKEN.fullmatch(name):
            continue
        fields.append([name.decode("ascii"), line[colon + 1 :].strip(b" \t").decode("iso-8859-1")])
    return tuple((n, v) for n, v in fields)
