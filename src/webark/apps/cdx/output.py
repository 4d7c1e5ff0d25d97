"""Output formats of the resolution API: one capture → one line of bytes.

``output=`` (``fl=`` selects and orders fields; see :mod:`webark.index.filters`):

``cdxj`` (default; pywb's ``text`` is accepted as an alias)
    ``urlkey timestamp {json}`` — the index line as stored when it is CDXJ, else as
    :func:`webark.cdx.formats.format_cdxj` writes it. With ``fl`` the JSON holds only
    the listed fields (pywb ``CDXObject.to_cdxj(fields)``).
``json``
    One JSON object per line (NDJSON), as pywb's ``output=json``:
    ``{"urlkey": …, "timestamp": …, "url": …, "mime": …, …}``; values are strings;
    absent fields are left out; with ``fl`` only those fields, in ``fl`` order. (The IA
    CDX server's ``output=json`` is one JSON array of arrays with a header row; we follow
    pywb, which the replay tools use.)
``cdx``
    Classic space-separated CDX: the 11 fields `` CDX N b a m s k r M S V g`` (no header
    line), or the ``fl`` fields, ``-`` for absent values (pywb ``to_text``).
``link``
    Memento link-format entries (RFC 7089 §5 / RFC 6690), one per capture:
    ``<{replay}/{timestamp}/{url}>; rel="memento"; datetime="{RFC 1123}";
    collection="{coll}"``, separated by ``,\\n`` (the body of a TimeMap).

Every formatter returns bytes *including* the line end (``link`` adds separators in
:class:`LinkWriter`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from email.utils import formatdate

from webark.apps.cdx.params import CdxQuery, ts_seconds
from webark.cdx.formats import format_cdx11, format_cdxj
from webark.cdx.line import CdxLine
from webark.index.filters import FIELDS, field_value

_NEEDS_ESCAPE = re.compile(rb'[^\x20-\x7e]|["\\]')


def json_str_bytes(b: bytes) -> bytes:
    """``b`` (UTF-8) as a JSON string literal, without escaping work when not needed."""
    if _NEEDS_ESCAPE.search(b) is None:
        return b'"' + b + b'"'
    return json.dumps(b.decode("utf-8", "surrogateescape"), ensure_ascii=False).encode(
        "utf-8", "surrogateescape"
    )


def split_raw(raw: bytes) -> tuple[bytes, bytes, bytes] | None:
    """``(urlkey, timestamp, json_blob)`` of a raw CDXJ line, None if it is not CDXJ."""
    parts = raw.split(b" ", 2)
    if len(parts) == 3 and parts[2][:1] == b"{":
        return parts[0], parts[1], parts[2]
    return None


def raw_cdxj_to_json(key: bytes, ts: bytes, blob: bytes) -> bytes:
    """Splice a CDXJ line into pywb's JSON object without parsing the blob:
    ``{"urlkey": key, "timestamp": ts, <the blob's members>}`` + newline (one copy)."""
    if _NEEDS_ESCAPE.search(key) is None and ts.isdigit():
        if blob[1:2] == b"}":
            return b'{"urlkey": "%s", "timestamp": "%s"}\n' % (key, ts)
        return b'{"urlkey": "%s", "timestamp": "%s", %s\n' % (key, ts, blob[1:])
    head = b'{"urlkey": ' + json_str_bytes(key) + b', "timestamp": ' + json_str_bytes(ts)
    inner = blob.strip()[1:]
    if inner.lstrip().startswith(b"}"):
        return head + b"}\n"
    return head + b", " + inner + b"\n"


def line_json_object(line: CdxLine, fields: tuple[str, ...] | None) -> dict[str, str]:
    """The JSON object of a parsed line: every present field (``FIELDS`` order, then the
    extra CDXJ keys) or the ``fl`` fields in their order."""
    out: dict[str, str] = {}
    names = fields if fields is not None else (*FIELDS, *line.extra.keys())
    for name in names:
        v = field_value(line, name)
        if v is not None:
            out[name] = v
    return out


Formatter = Callable[[CdxLine], bytes]


def line_formatter(q: CdxQuery) -> Formatter:
    """The formatter of parsed lines for ``q.output``/``q.fields`` (not ``link``)."""
    fields = q.fields
    if q.output == "json":
        return lambda line: (json.dumps(line_json_object(line, fields)) + "\n").encode(
            "utf-8", "surrogateescape"
        )
    if q.output == "cdx":
        if fields is None:
            return lambda line: (format_cdx11(line) + "\n").encode("utf-8", "surrogateescape")
        return lambda line: (
            " ".join((field_value(line, f) or "-").replace(" ", "%20") for f in fields) + "\n"
        ).encode("utf-8", "surrogateescape")
    if fields is None:
        return lambda line: (format_cdxj(line) + "\n").encode("utf-8", "surrogateescape")
    inner = tuple(f for f in fields if f not in ("urlkey", "timestamp"))

    def cdxj_fl(line: CdxLine) -> bytes:
        obj = line_json_object(line, inner)
        return f"{line.urlkey} {line.timestamp} {json.dumps(obj)}\n".encode(
            "utf-8", "surrogateescape"
        )

    return cdxj_fl


def http_date(ts: str) -> str:
    """14-digit timestamp → RFC 1123 date (``Tue, 20 Jan 2015 00:00:00 GMT``)."""
    try:
        return formatdate(ts_seconds(ts), usegmt=True)
    except (ValueError, OverflowError):
        return formatdate(0, usegmt=True)


class LinkWriter:
    """Memento link-format entries, ``,\\n``-separated across calls (RFC 7089 TimeMap
    body). ``replay_prefix`` ends with ``/`` (``http://host/coll/``); the URI-M of a
    capture is ``{replay_prefix}{timestamp}/{url}`` (pywb's archival URL)."""

    def __init__(self, replay_prefix: str, collection: str):
        self.prefix = replay_prefix
        self.collection = collection.replace('"', "")
        self.count = 0

    def entry(self, line: CdxLine, rel: str = "memento") -> str:
        url = line.url if line.url and line.url != "-" else line.urlkey
        return (
            f'<{self.prefix}{line.timestamp}/{url}>; rel="{rel}"; '
            f'datetime="{http_date(line.timestamp)}"; collection="{self.collection}"'
        )

    def __call__(self, line: CdxLine, rel: str = "memento") -> bytes:
        sep = ",\n" if self.count else ""
        self.count += 1
        return (sep + self.entry(line, rel)).encode("utf-8", "surrogateescape")

    def end(self) -> bytes:
        """The final line end (after the last entry), or nothing."""
        return b"\n" if self.count else b""
