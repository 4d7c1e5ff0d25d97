"""CDX line formats: :class:`~webark.cdx.line.CdxLine` ⇄ text.

Four formats (one line per capture, fields separated by one space, ``\\n`` line ends):

``cdx11``  classic 11-field CDX, header `` CDX N b a m s k r M S V g``: URL key,
           14-digit timestamp, original URL, MIME, status, payload digest (Base32,
           no ``sha1:`` label), redirect, robot flags, record length, offset, file name
           (pywb ``cdx-indexer``, OpenWayback, IA). Missing values are ``-``.
``cdx9``   classic 9-field CDX, header `` CDX N b a m s k r V g`` (no M, no S).
``cdxj``   ``key timestamp {json}`` with url, mime, status, digest, length, offset,
           filename and any extra fields (pywb, cdxj-indexer, OutbackCDX). Values are
           JSON strings, absent values are left out.
``ng``     the revised format of ``docs/cdx-ng.md``: scope SURT, W3C-DTF date at the
           WARC's precision, URL, labelled digest, WARC type, file name, offset, JSON.

Every writer returns the line *without* its ``\\n``; :func:`header` gives the header
line a file of that format starts with (or None). Readers accept what the writers
write and what pywb, cdxj-indexer and OpenWayback write; :func:`iter_lines` skips
header and ``!`` meta lines and can detect the format.

Sorting: files are sorted byte-wise (``LC_ALL=C sort``) on whole lines;
:func:`sort_key` is that order for :class:`str` lines (UTF-8 bytes).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any, Literal, get_args

from webark.cdx.classic import cdx_int, parse_cdx
from webark.cdx.line import CdxLine
from webark.core.digests import Digest
from webark.core.errors import DigestError
from webark.core.timestamps import parse_w3c_date, to_timestamp14

__all__ = [
    "CDX9_HEADER",
    "CDX11_HEADER",
    "CDXJ_FIELDS",
    "FORMATS",
    "NG_HEADER",
    "Format",
    "detect_format",
    "format_cdx9",
    "format_cdx11",
    "format_cdxj",
    "format_line",
    "format_ng",
    "formatter",
    "header",
    "iter_lines",
    "ng_datetime",
    "ng_digest",
    "ng_key",
    "parse_cdx",
    "parse_cdxj",
    "parse_line",
    "parse_ng",
    "sort_key",
]

Format = Literal["cdxj", "cdx11", "cdx9", "ng"]
FORMATS: tuple[str, ...] = get_args(Format)

CDX11_HEADER = " CDX N b a m s k r M S V g"
CDX9_HEADER = " CDX N b a m s k r V g"
NG_HEADER = "!cdx-ng 1 surt datetime url digest type filename offset {json}"
"""First line of an ng file (``!`` lines sort before every key and are skipped)."""

CDXJ_FIELDS = ("url", "mime", "status", "digest", "length", "offset", "filename")
"""The standard CDXJ keys, in the order pywb and cdxj-indexer write them."""

_SAFE_JSON = re.compile(r"[ !#-\[\]-~]*\Z")


def _q(s: str) -> str:
    """``s`` as a JSON string, as ``json.dumps`` writes it (ASCII only)."""
    if _SAFE_JSON.match(s):
        return '"' + s + '"'
    return json.dumps(s)


def _dash(v: object) -> str:
    if v is None or v == "":
        return "-"
    return str(v)


def _num(v: int) -> str:
    return "-" if v < 0 else str(v)


def _cdx_digest(d: str) -> str:
    return d[5:] if d.startswith("sha1:") else (d or "-")


# -- classic CDX ---------------------------------------------------------------------------
def format_cdx11(line: CdxLine) -> str:
    """`` CDX N b a m s k r M S V g`` line, byte for byte as pywb's ``cdx-indexer``.

    The digest loses its ``sha1:`` label (other labels are kept); ``-`` for unknowns.
    """
    return (
        f"{line.urlkey} {line.timestamp} {_dash(line.url)} {_dash(line.mime)} "
        f"{_dash(line.status)} {_cdx_digest(line.digest)} {_dash(line.redirect)} "
        f"{_dash(line.robotflags)} {_num(line.length)} {_num(line.offset)} "
        f"{_dash(line.filename)}"
    )


def format_cdx9(line: CdxLine) -> str:
    """`` CDX N b a m s k r V g`` line (pywb ``-9``, cdxj-indexer ``--cdx09``)."""
    return (
        f"{line.urlkey} {line.timestamp} {_dash(line.url)} {_dash(line.mime)} "
        f"{_dash(line.status)} {_cdx_digest(line.digest)} {_dash(line.redirect)} "
        f"{_num(line.offset)} {_dash(line.filename)}"
    )


# -- CDXJ ----------------------------------------------------------------------------------
def format_cdxj(line: CdxLine, fields: Sequence[str] | None = None) -> str:
    """``key timestamp {json}`` line as cdxj-indexer writes it (``json.dumps`` spacing).

    Args:
        line: the capture.
        fields: the JSON keys to write, in order (cdxj-indexer's ``replace_fields``);
            None writes :data:`CDXJ_FIELDS` then every key of ``line.extra``.
            Absent values (``-``, empty, negative length/offset) are left out.

    Extra values that are not strings are written as JSON values.
    """
    parts: list[str] = []
    if fields is None:
        url, mime, status, digest, fname = (
            line.url,
            line.mime,
            line.status,
            line.digest,
            line.filename,
        )
        if url and url != "-":
            parts.append('"url": ' + _q(url))
        if mime and mime != "-":
            parts.append('"mime": ' + _q(mime))
        if status and status != "-":
            parts.append('"status": ' + _q(status))
        if digest and digest != "-":
            parts.append('"digest": ' + _q(digest))
        if line.length >= 0:
            parts.append(f'"length": "{line.length}"')
        if line.offset >= 0:
            parts.append(f'"offset": "{line.offset}"')
        if fname and fname != "-":
            parts.append('"filename": ' + _q(fname))
        if line.extra:
            for k, v in line.extra.items():
                if v is not None:
                    parts.append(_q(k) + ": " + (_q(v) if isinstance(v, str) else json.dumps(v)))
    else:
        for k in fields:
            v = line.value(k)
            if v is not None:
                parts.append(_q(k) + ": " + (_q(v) if isinstance(v, str) else json.dumps(v)))
    return f"{line.urlkey} {line.timestamp} {{{', '.join(parts)}}}"


# -- ng --------------------------------------------------------------------------------------
_W3C_PARTS = re.compile(
    r"\s*(\d{4})(?:-(\d\d)(?:-(\d\d)(?:[Tt ](\d\d):(\d\d)(?::(\d\d)(?:[.,](\d+))?)?"
    r"\s*([Zz]|[+-]\d\d:?\d\d)?)?)?)?\s*\Z"
)


def ng_datetime(date: str, timestamp: str = "") -> str:
    """The ng date: W3C-DTF in UTC (``Z``) at the precision the WARC-Date has.

    ``2017-03-06T04:03:48Z`` stays; ``2020-04-12T18:42:50.696509Z`` keeps its
    microseconds; ``2008-10-29T05:21:46-0700`` → ``2008-10-29T12:21:46Z``;
    ``2019-08-15T01:02`` (no zone: UTC) → ``2019-08-15T01:02Z``. An empty or
    unparseable ``date`` falls back to the 14-digit ``timestamp`` (seconds), then ``-``.
    """
    m = _W3C_PARTS.match(date) if date else None
    if m is None:
        if len(timestamp) >= 14 and timestamp[:14].isdigit():
            t = timestamp
            return f"{t[0:4]}-{t[4:6]}-{t[6:8]}T{t[8:10]}:{t[10:12]}:{t[12:14]}Z"
        return "-"
    y, mo, d, hh, mi, ss, frac, tz = m.groups()
    if hh is None:
        return "-".join(p for p in (y, mo, d) if p)
    if tz and tz not in ("Z", "z"):
        sign = 1 if tz[0] == "+" else -1
        digits = tz[1:].replace(":", "")
        try:
            dt = datetime(int(y), int(mo), int(d), int(hh), int(mi), int(ss or 0), tzinfo=UTC)
        except ValueError:
            return ng_datetime("", timestamp)
        dt -= sign * timedelta(hours=int(digits[:2]), minutes=int(digits[2:]))
        y, mo, d = f"{dt.year:04d}", f"{dt.month:02d}", f"{dt.day:02d}"
        hh, mi = f"{dt.hour:02d}", f"{dt.minute:02d}"
        ss = f"{dt.second:02d}" if ss is not None else None
    out = f"{y}-{mo}-{d}T{hh}:{mi}"
    if ss is not None:
        out += ":" + ss
        if frac:
            out += "." + frac
    return out + "Z"


def ng_digest(digest: str) -> str:
    """A digest with its algorithm label: ``sha1:`` + Base32 for SHA-1 (hex and Base64
    values are re-encoded), ``algo:hex`` otherwise; an unlabelled value is SHA-1 (the
    CDX convention). ``-`` stays ``-``; undecodable values are kept as they are."""
    if not digest or digest == "-":
        return "-"
    if digest.startswith("sha1:") and len(digest) == 37 and digest[5:].isupper():
        return digest
    try:
        return Digest.parse(digest).label()
    except DigestError:
        return digest if ":" in digest else "sha1:" + digest


def _scope_fallback(url: str) -> str:
    return re.sub(r"[\x00-\x20\x7f]", lambda m: f"%{ord(m.group()):02X}", url.lower())


def ng_key(line: CdxLine) -> str:
    """The ng key of a line: ``line.surt`` when set, else the scope SURT of its URL with
    the POST/PUT body folded in as pywb does (``?__wb_method=post&…``)."""
    if line.surt:
        return line.surt
    from webark.cdx.post import append_method_query
    from webark.url import to_scope_surt
    from webark.url.errors import InvalidURLError

    url = line.url
    if not url or url == "-":
        return "-"
    if line.method:
        body = line.extra.get("requestBody") or ""
        url = append_method_query(url, line.method, body if isinstance(body, str) else "")
    try:
        return to_scope_surt(url)
    except (InvalidURLError, ValueError):
        return _scope_fallback(url)


_SPACE_ESC = re.compile(r"[\x00-\x20\x7f]")


def _no_space(s: str) -> str:
    if not s:
        return "-"
    if " " in s or not s.isprintable():
        return _SPACE_ESC.sub(lambda m: f"%{ord(m.group()):02X}", s)
    return s


def format_ng(line: CdxLine) -> str:
    """A line of the revised format (``docs/cdx-ng.md``), e.g. (one line)::

        http://(com,example,)/ 2017-03-06T04:02:06Z http://example.com/ sha1:G7HR…
        response example.warc.gz 784 {"status": 200, "mime": "text/html", "length": 1242}

    JSON: ``status`` (number, when numeric), ``mime``, ``length`` (number),
    ``redirect`` (Location of a 3xx, when known), then ``line.extra``.
    """
    j: dict[str, Any] = {}
    if line.status.isdigit():
        j["status"] = int(line.status)
    if line.mime and line.mime != "-":
        j["mime"] = line.mime
    if line.length >= 0:
        j["length"] = line.length
    if line.redirect and line.redirect != "-":
        j["redirect"] = line.redirect
    if line.extra:
        j.update(line.extra)
    return (
        f"{ng_key(line)} {ng_datetime(line.date, line.timestamp)} {_no_space(line.url)} "
        f"{ng_digest(line.digest)} {line.record_type or '-'} {_no_space(line.filename)} "
        f"{_num(line.offset)} {json.dumps(j)}"
    )


# -- dispatch --------------------------------------------------------------------------------
def formatter(fmt: Format, fields: Sequence[str] | None = None) -> Callable[[CdxLine], str]:
    """The writer function of a format (``fields``: CDXJ keys, see :func:`format_cdxj`).

    Raises:
        ValueError: unknown format.
    """
    if fmt == "cdxj":
        if fields is None:
            return format_cdxj
        keys = tuple(fields)
        return lambda line: format_cdxj(line, keys)
    if fmt == "cdx11":
        return format_cdx11
    if fmt == "cdx9":
        return format_cdx9
    if fmt == "ng":
        return format_ng
    raise ValueError(f"unknown CDX format {fmt!r} (one of {', '.join(FORMATS)})")


def format_line(line: CdxLine, fmt: Format, fields: Sequence[str] | None = None) -> str:
    """``line`` in format ``fmt``, without the line end."""
    return formatter(fmt, fields)(line)


def header(fmt: Format) -> str | None:
    """The first line of a file in ``fmt`` (`` CDX …`` for cdx11/cdx9, ``!cdx-ng 1 …``
    for ng), or None (cdxj files have no header)."""
    return {"cdx11": CDX11_HEADER, "cdx9": CDX9_HEADER, "ng": NG_HEADER}.get(fmt)


def sort_key(text: str) -> bytes:
    """Byte-wise (``LC_ALL=C``) sort key of a line: its UTF-8 bytes (lone surrogates from
    undecodable input bytes turn back into those bytes)."""
    return text.encode("utf-8", "surrogateescape")


# -- readers ---------------------------------------------------------------------------------
# classic CDX lines (CDX11, CDX9, NetarchiveSuite, any header): webark.cdx.classic


_STD_JSON = {"url", "mime", "status", "digest", "length", "offset", "filename"}


def _cdxline_from_json(urlkey: str, timestamp: str, data: dict[str, Any], **more: Any) -> CdxLine:
    extra = {k: v for k, v in data.items() if k not in _STD_JSON}

    def num(k: str) -> int:
        return cdx_int(data.get(k), k)

    status = data.get("status")
    method = extra.get("method")
    return CdxLine(
        urlkey=urlkey,
        timestamp=timestamp,
        url=str(data.get("url") or "-"),
        mime=str(data.get("mime") or "-"),
        status="-" if status is None else str(status),
        digest=str(data.get("digest") or "-"),
        length=num("length"),
        offset=num("offset"),
        filename=str(data.get("filename") or "-"),
        method=method if isinstance(method, str) else None,
        extra=extra,
        **more,
    )


def json_object(blob: str, what: str) -> dict[str, Any]:
    """``blob`` (the JSON block of a CDXJ or ng line) as a dict.

    Raises:
        ValueError: not JSON, not an object, or nested too deeply for the parser (a
            ``RecursionError`` of ``json.loads`` is turned into this, so a hostile line
            is one unreadable line, skipped by the readers, not a crash; issue 20
            item 6).
    """
    try:
        data = json.loads(blob)
    except RecursionError:
        raise ValueError(f"{what} JSON nested too deeply ({len(blob)} characters)") from None
    if not isinstance(data, dict):
        raise ValueError(f"{what} JSON is not an object: {blob[:200]!r}")
    return data


def parse_cdxj(text: str) -> CdxLine:
    """Parse a CDXJ line (``key timestamp {json}``). Keys other than the seven standard
    ones go to ``extra`` in file order (``method`` is also set as ``line.method``).

    Raises:
        ValueError: not three parts, or the JSON is not an object (or nested too
            deeply, :func:`json_object`).
    """
    urlkey, ts, blob = text.rstrip("\r\n").split(" ", 2)
    data = json_object(blob, "CDXJ")
    return _cdxline_from_json(urlkey, ts, data)


def parse_ng(text: str) -> CdxLine:
    """Parse an ng line (see :func:`format_ng`). ``urlkey`` and ``surt`` are the line's
    scope SURT, ``date`` its W3C-DTF date, ``timestamp`` the 14 digits of that date.

    Raises:
        ValueError: fewer than eight fields, a bad offset or bad JSON.
    """
    parts = text.rstrip("\r\n").split(" ", 7)
    if len(parts) != 8:
        raise ValueError(f"expected 8 ng fields, found {len(parts)}: {text!r}")
    key, date, url, digest, rtype, filename, offset, blob = parts
    data = json_object(blob, "ng")
    try:
        ts = to_timestamp14(parse_w3c_date(date))
    except ValueError:
        ts = "-"
    status = data.pop("status", None)
    mime = data.pop("mime", None)
    length = data.pop("length", None)
    redirect = data.pop("redirect", None)
    method = data.get("method")
    return CdxLine(
        urlkey=key,
        timestamp=ts,
        url=url,
        mime=str(mime or "-"),
        status="-" if status is None else str(status),
        digest=digest,
        length=cdx_int(length, "length"),
        offset=cdx_int(offset, "offset"),
        filename=filename,
        redirect=str(redirect or "-"),
        record_type=rtype,
        date=date,
        method=method if isinstance(method, str) else None,
        extra=data,
        surt=key,
    )


def detect_format(text: str) -> Format:
    """Guess the format of a (non-header) line: ``ng`` (8+ fields, W3C date second),
    ``cdxj`` (JSON third), ``cdx9`` (9 fields) or ``cdx11``."""
    parts = text.split(" ", 7)
    if len(parts) >= 3 and parts[2].startswith("{"):
        return "cdxj"
    if len(parts) == 8 and len(parts[1]) > 10 and parts[1][4:5] == "-" and parts[7][:1] == "{":
        return "ng"
    return "cdx9" if len(text.split(" ")) == 9 else "cdx11"


def parse_line(text: str, fmt: Format | None = None) -> CdxLine:
    """Parse one line of format ``fmt`` (detected when None).

    Raises:
        ValueError: the line does not parse in that format.
    """
    fmt = fmt or detect_format(text)
    if fmt == "cdxj":
        return parse_cdxj(text)
    if fmt == "ng":
        return parse_ng(text)
    if fmt == "cdx9":
        return parse_cdx(text, CDX9_HEADER.split()[1:])
    return parse_cdx(text)


def iter_lines(lines: Iterable[str], fmt: Format | None = None) -> Iterator[CdxLine]:
    """Parse the lines of a CDX/CDXJ/ng file: a `` CDX …`` header sets the field letters,
    ``!`` lines and blank lines are skipped, the format is detected from the first data
    line unless given.

    Raises:
        ValueError: a line that does not parse (with its line number).
    """
    letters: list[str] | None = None
    for n, raw in enumerate(lines, 1):
        text = raw.rstrip("\r\n")
        if not text or text.startswith("!"):
            continue
        if text.startswith(" CDX ") or text.startswith("CDX "):
            letters = text.split()[1:]
            fmt = fmt or ("cdx9" if letters == CDX9_HEADER.split()[1:] else "cdx11")
            continue
        if fmt is None:
            fmt = detect_format(text)
        try:
            if fmt in ("cdx11", "cdx9"):
                yield parse_cdx(
                    text, letters or (CDX9_HEADER.split()[1:] if fmt == "cdx9" else None)
                )
            else:
                yield parse_line(text, fmt)
        except (ValueError, KeyError) as e:
            raise ValueError(f"line {n}: {e}") from e
