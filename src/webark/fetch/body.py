"""The entity body of a fetched response, decoded for reading (link extraction, robots.txt)
within a byte limit, so a decompression bomb cannot exhaust memory.

The WARC keeps the bytes on the wire; this module only makes the *reading view*: the
body after the head, with the chunked transfer-coding (RFC 9112 §7.1) and the content
codings (``gzip``/``x-gzip``, ``deflate`` zlib or raw, ``br``; RFC 9110 §8.4, undone
right to left) removed. Every stage stops after ``limit`` bytes of output: a 1 MB gzip
body that inflates to 1 GB yields its first ``limit`` bytes and ``complete=False``, the
memory used staying within a small multiple of ``limit``. Heritrix 3 decodes into a
file-backed buffer without such a cap; browsers stream. A body that is not valid for
its coding yields the bytes as they are (what :func:`webark.warc.payload.decode_content`
callers did), flagged ``coding_error``.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass
from typing import Final

import brotli

from webark.fetch.exchange import Exchange
from webark.warc.payload import dechunk

__all__ = ["MAX_DECODED_BYTES", "DecodedBody", "decode_bounded", "decoded_body"]

MAX_DECODED_BYTES: Final = 20 * 1024 * 1024
"""Default limit (bytes) of a decoded body: 20 MiB, the crawler's extraction limit."""

_PIECE: Final = 1 << 20
"""Bytes of input fed to a decompressor at once."""


@dataclass(frozen=True, slots=True)
class DecodedBody:
    """A decoded entity body.

    Attributes:
        data: at most the limit's bytes of the decoded body.
        complete: False when the body was cut at the limit (wire bytes or decoded
            bytes), so ``data`` is a prefix of the whole decoded body.
        coding_error: True when a content coding could not be undone (the bytes are
            then returned as they were before that coding's decoder).
    """

    data: bytes
    complete: bool = True
    coding_error: bool = False


def decode_bounded(data: bytes, coding: str | None, limit: int) -> DecodedBody:
    """Undo the content codings ``coding`` (a ``Content-Encoding`` value, e.g. ``"gzip"``
    or ``"gzip, br"``; unknown codings and ``identity`` are left as they are) of
    ``data``, producing at most ``limit`` bytes (> 0; a longer result is cut).

    Concatenated gzip members are all decoded (as ``gzip -d`` does). Never raises for
    bad input: see :attr:`DecodedBody.coding_error`.
    """
    if limit <= 0:
        raise ValueError("limit must be a positive number of bytes")
    complete = True
    codings = [c.strip().lower() for c in (coding or "").split(",") if c.strip()]
    for c in reversed(codings):
        if c in ("gzip", "x-gzip"):
            out, whole, ok = _gunzip(data, limit)
        elif c == "deflate":
            out, whole, ok = _inflate(data, limit, zlib.MAX_WBITS)
            if not ok:
                out, whole, ok = _inflate(data, limit, -zlib.MAX_WBITS)
        elif c == "br":
            out, whole, ok = _unbrotli(data, limit)
        else:
            continue
        if not ok:
            return DecodedBody(data[:limit], complete and len(data) <= limit, coding_error=True)
        data, complete = out, complete and whole
    return DecodedBody(data[:limit], complete and len(data) <= limit)


def decoded_body(ex: Exchange, limit: int = MAX_DECODED_BYTES) -> DecodedBody:
    """The entity body of ``ex`` with transfer and content codings undone, at most
    ``limit`` bytes of it (see the module docstring). Reads at most ``limit`` bytes of
    the body as recorded (the response may be spooled to a temporary file of any size).
    """
    with ex.response.open() as f:
        f.seek(ex.head_length)
        raw = f.read(limit + 1)
    complete = len(raw) <= limit and not ex.truncated
    raw = raw[:limit]
    if "chunked" in (ex.header("Transfer-Encoding") or "").lower():
        raw, _ = dechunk(raw)
    decoded = decode_bounded(raw, ex.header("Content-Encoding"), limit)
    return DecodedBody(decoded.data, complete and decoded.complete, decoded.coding_error)


def _gunzip(data: bytes, limit: int) -> tuple[bytes, bool, bool]:
    """(output, whole, ok) of gzip members in ``data``, output capped at ``limit``."""
    out = bytearray()
    rest = data
    first = True
    while rest and len(out) < limit:
        d = zlib.decompressobj(zlib.MAX_WBITS | 16)
        got, whole, ok = _drain(d, rest, limit - len(out))
        if not ok:
            if first:
                return b"", False, False
            break  # garbage after a complete member: ignored, as gzip does
        out += got
        first = False
        if not whole or not d.eof:  # cut at the limit, or the stream ends early
            return bytes(out), whole, True
        rest = d.unused_data
    return bytes(out), not rest, True


def _inflate(data: bytes, limit: int, wbits: int) -> tuple[bytes, bool, bool]:
    d = zlib.decompressobj(wbits)
    return _drain(d, data, limit)


def _drain(d: zlib._Decompress, data: bytes, limit: int) -> tuple[bytes, bool, bool]:
    """Feed ``data`` to ``d`` a piece at a time, stopping at ``limit`` output bytes:
    (output, whole, ok); ``whole`` is False when output was cut at the limit."""
    out = bytearray()
    view = memoryview(data)
    try:
        for i in range(0, len(data), _PIECE):
            piece: bytes | memoryview = view[i : i + _PIECE]
            while piece:
                got = d.decompress(piece, limit - len(out) + 1)
                out += got
                if len(out) > limit:
                    del out[limit:]
                    return bytes(out), False, True
                if d.eof:
                    return bytes(out), True, True
                piece = d.unconsumed_tail
        out += d.flush(limit - len(out) + 1)
    except zlib.error:
        return b"", False, False
    if len(out) > limit:
        del out[limit:]
        return bytes(out), False, True
    return bytes(out), True, True


def _unbrotli(data: bytes, limit: int) -> tuple[bytes, bool, bool]:
    """(output, whole, ok) of a brotli stream, output capped at ``limit``."""
    d = brotli.Decompressor()
    out = bytearray()
    view = memoryview(data)
    try:
        for i in range(0, len(data), _PIECE):
            got = d.process(bytes(view[i : i + _PIECE]), output_buffer_limit=_PIECE)
            while True:
                out += got
                if len(out) > limit:
                    del out[limit:]
                    return bytes(out), False, True
                if d.can_accept_more_data():
                    break
                got = d.process(b"", output_buffer_limit=_PIECE)
    except brotli.error:
        return b"", False, False
    return bytes(out), True, True
