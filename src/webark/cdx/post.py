"""POST/PUT request bodies folded into the URL key, as pywb and cdxj-indexer do.

A POST capture and a GET capture of the same URL must not share a CDX key, or replay
serves one for the other. pywb (``cdx-indexer -p``, ``append_post``) and webrecorder's
cdxj-indexer (``--post-append``) therefore append the request method and a canonical
form of the request body to the URL before computing the key::

    http://httpbin.org/post  +  POST "foo=bar&test=abc"
    → http://httpbin.org/post?__wb_method=POST&foo=bar&test=abc
    → key org,httpbin)/post?__wb_method=post&foo=bar&test=abc

The body is canonicalized by its Content-Type (webrecorder's "request body
canonicalization", shared by pywb ≥ 2.7, cdxj-indexer ≥ 1.4 and wabac.js):

* ``application/x-www-form-urlencoded``: the body, percent- and plus-decoded
  (``unquote_plus``); bodies that are not UTF-8 are treated as binary;
* ``multipart/*``: ``name=value`` pairs of the parts, ``urlencode``-d (file parts by
  their raw bytes); a multipart type without ``boundary`` is binary;
* ``application/json`` (and ``text/plain`` that parses as JSON): the leaf values by
  their member names, repeated names as ``name.2_``, ``name.3_`` …, ``urlencode``-d;
  JSON that does not parse gives no body part for ``application/json`` and binary for
  ``text/plain``; JSON lines (one document per line) are read too;
* anything else: ``__wb_post_data=`` + Base64 of the body.

The result is cut to :data:`MAX_QUERY_LENGTH` characters. :func:`method_url` is the one
place the URL of a request is made from its method and body: the indexer keys a POST
capture with it and replay looks a POST request up with it, so the two keys cannot
drift apart. Where the two peers differ,
see ``docs/cdx-gold-differences.md`` (JSON scalars are written the JavaScript way,
``true``/``false``/``null``, as pywb and wabac.js do; AMF bodies are treated as binary).
"""

from __future__ import annotations

import base64
import json
import math
import re
from collections.abc import Iterator
from typing import Any
from urllib.parse import unquote_plus, urlencode

__all__ = [
    "FOLDED_METHODS",
    "MAX_QUERY_LENGTH",
    "append_method_query",
    "canonical_body_query",
    "json_body_query",
    "method_query",
    "method_url",
    "multipart_fields",
]

MAX_QUERY_LENGTH = 4096
"""Characters of canonical body kept in the key (pywb and cdxj-indexer: 4096)."""

FOLDED_METHODS = frozenset({"POST", "PUT"})
"""Methods whose body is folded into the key (both peers)."""


def _binary(body: bytes) -> str:
    return "__wb_post_data=" + base64.b64encode(body).decode("ascii")


def canonical_body_query(content_type: str | None, body: bytes) -> str:
    """The canonical query form of a request body.

    Args:
        content_type: the request's Content-Type header value (any case, parameters
            allowed), or None.
        body: the request body as sent, without transfer coding (de-chunked).

    Returns:
        A query string without leading ``?`` or ``&`` (``""`` when there is nothing to
        append, e.g. an empty or unparseable JSON body), at most
        :data:`MAX_QUERY_LENGTH` characters.

    Never raises for bad input: what cannot be decoded is Base64-encoded.

    Source: pywb ``MethodQueryCanonicalizer`` and cdxj-indexer ``query_extract``.
    """
    mime = (content_type or "").strip()
    low = mime.lower()
    query: str
    if low.startswith("application/x-www-form-urlencoded"):
        try:
            query = unquote_plus(body.decode("utf-8"))
        except UnicodeDecodeError:
            query = _binary(body)
    elif low.startswith("multipart/"):
        fields = multipart_fields(mime, body)
        query = _binary(body) if fields is None else urlencode(fields, doseq=True)
    elif low.startswith("application/json"):
        try:
            query = json_body_query(body)
        except ValueError:
            query = ""
    elif low.startswith("text/plain"):
        try:
            query = json_body_query(body)
        except ValueError:
            query = _binary(body)
    else:
        query = _binary(body)
    return query[:MAX_QUERY_LENGTH]


def _js_string(value: Any) -> str:
    """A JSON scalar as JavaScript's ``String(value)`` writes it (pywb, wabac.js)."""
    if value is True:
        return "true"
    if value is False:
        return "false"
    if value is None:
        return "null"
    if isinstance(value, float):
        if math.isfinite(value) and value == math.floor(value):
            return str(int(value))
        return str(value)
    return str(value)


def json_body_query(body: bytes | str) -> str:
    """Flatten a JSON body into ``name=value`` pairs (leaf values by member name).

    ``{"some": {"a": "json-data"}}`` → ``a=json-data``; a repeated name gets a suffix:
    ``{"a": 1, "b": {"a": 2}}`` → ``a=1&a.2_=2``; array items repeat their member's name.

    Raises:
        ValueError: the body is not JSON (nor JSON lines).
    """
    data: dict[str, str] = {}
    dupes: dict[str, int] = {}

    def key(name: str) -> str:
        if name not in data:
            return name
        dupes[name] = dupes.get(name, 1) + 1
        return f"{name}.{dupes[name]}_"

    def walk(obj: Any, name: str = "") -> None:
        if isinstance(obj, dict):
            for n, v in obj.items():
                walk(v, n)
        elif isinstance(obj, list):
            for v in obj:
                walk(v, name)
        elif name:
            data[key(name)] = _js_string(obj)

    try:
        walk(json.loads(body))
    except json.JSONDecodeError:
        raw = body.encode("utf-8") if isinstance(body, str) else body
        if b"\n" not in raw:
            raise
        for line in raw.split(b"\n"):
            if line.strip():
                walk(json.loads(line))
    except (UnicodeDecodeError, RecursionError) as e:
        raise ValueError(str(e)) from e
    return urlencode(data)


_BOUNDARY_RE = re.compile(r'boundary=(?:"([^"]+)"|([^;\s]+))', re.IGNORECASE)
_NAME_RE = re.compile(rb'(?:^|;)\s*name\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^;\s]+))', re.IGNORECASE)


def _iter_parts(body: bytes, boundary: bytes) -> Iterator[bytes]:
    delim = b"--" + boundary
    pieces = body.split(delim)
    # pieces[0] is the preamble; a piece starting with "--" is the epilogue
    for piece in pieces[1:]:
        if piece.startswith(b"--"):
            return
        if piece.startswith(b"\r\n"):
            piece = piece[2:]
        elif piece.startswith(b"\n"):
            piece = piece[1:]
        if piece.endswith(b"\r\n"):
            piece = piece[:-2]
        elif piece.endswith(b"\n"):
            piece = piece[:-1]
        yield piece


def multipart_fields(content_type: str, body: bytes) -> list[tuple[str, bytes]] | None:
    """The ``(name, value bytes)`` pairs of a ``multipart/form-data`` body, in order.

    Returns None when the Content-Type has no ``boundary`` parameter (the peers then
    fall back to Base64). Parts without a ``name`` are skipped; names are decoded as
    UTF-8 (Latin-1 if that fails).
    """
    m = _BOUNDARY_RE.search(content_type)
    if not m:
        return None
    boundary = (m.group(1) or m.group(2)).encode("latin-1", "replace")
    out: list[tuple[str, bytes]] = []
    for part in _iter_parts(body, boundary):
        sep = part.find(b"\r\n\r\n")
        skip = 4
        if sep < 0:
            sep = part.find(b"\n\n")
            skip = 2
        if sep < 0:
            continue
        head, value = part[:sep], part[sep + skip :]
        name: str | None = None
        for line in head.split(b"\n"):
            hname, _, hval = line.rstrip(b"\r").partition(b":")
            if hname.strip().lower() == b"content-disposition":
                nm = _NAME_RE.search(hval)
                if nm:
                    raw = nm.group(1) if nm.group(1) is not None else nm.group(2)
                    try:
                        name = raw.decode("utf-8")
                    except UnicodeDecodeError:
                        name = raw.decode("latin-1")
        if name is not None:
            out.append((name, value))
    return out


def append_method_query(url: str, method: str, query: str = "") -> str:
    """Append ``__wb_method=METHOD`` and the canonical body query to ``url``.

    ``append_method_query("http://httpbin.org/post?foo=bar", "POST", "data=^")`` →
    ``"http://httpbin.org/post?foo=bar&__wb_method=POST&data=^"``.

    Args:
        url: the request's target URL.
        method: the request method; written upper-case.
        query: :func:`canonical_body_query` of the body (may be empty).
    """
    out = url + ("&" if "?" in url else "?") + "__wb_method=" + method.upper()
    if query:
        out += "&" + query
    return out


def method_query(method: str, content_type: str | None, body: bytes, *,
                 compat: str = "cdxj-indexer") -> str | None:  # fmt: skip
    """The canonical body query :func:`method_url` appends after ``__wb_method=…``
    (``""``: none), or None when a request with this method is keyed by its URL alone.
    Arguments as for :func:`method_url`."""
    upper = method.upper()
    if compat == "pywb":
        if upper == "GET":
            return None
        return canonical_body_query(content_type, body) if upper in FOLDED_METHODS and body else ""
    if upper not in FOLDED_METHODS:
        return None
    return canonical_body_query(content_type, body)


def method_url(url: str, method: str, content_type: str | None, body: bytes, *,
               compat: str = "cdxj-indexer") -> str | None:  # fmt: skip
    """The URL a request is indexed and looked up under when its method and body are
    folded into the key (its CDX key is ``cdx_key`` of the result), or None when the
    request is keyed by its URL alone.

    Args:
        url: the request's target URL.
        method: the request method (any case).
        content_type: the request's Content-Type value, or None.
        body: the request body without transfer coding (for ``compat="pywb"``: as
            pywb reads it, Content-Length bytes of the recorded block).
        compat: ``"cdxj-indexer"`` (also wabac.js): POST and PUT are folded, an empty
            body included; ``"pywb"``: every method but GET gets ``__wb_method``, the
            body only for POST and PUT and only when not empty, and ``WB_wombat_`` is
            removed (pywb's ``append_post``).

    >>> method_url("http://httpbin.org/post", "post",
    ...            "application/x-www-form-urlencoded", b"foo=bar&test=abc")
    'http://httpbin.org/post?__wb_method=POST&foo=bar&test=abc'
    >>> method_url("http://a.org/", "GET", None, b"") is None
    True
    """
    query = method_query(method, content_type, body, compat=compat)
    if query is None:
        return None
    out = append_method_query(url, method, query)
    return out.replace("WB_wombat_", "") if compat == "pywb" else out
