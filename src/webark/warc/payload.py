"""Payload decoding: HTTP chunked transfer-coding (RFC 9112 §7.1) and content codings
(gzip, deflate, br; RFC 9110 §8.4).

WARC 1.1 keeps the exact bytes in the block; the *payload* is the entity body with the
transfer-coding removed and the content-coding kept (warc-specifications issue 22). Some
writers stored a de-chunked body under a ``Transfer-Encoding: chunked`` header (warc.md,
interop bug 3): :func:`dechunk` then returns the body unchanged and says so.

Content codings are undone under a byte limit (:func:`decode_bounded`,
:func:`decode_content` with ``limit``): a 1 MB gzip member can inflate to 1 GiB, and
whoever reads an archive (crawler, replay server, indexer) must not hold that.
"""

from __future__ import annotations

import sys
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Final

import brotli

from webark.core.errors import FormatError, WebarkError

MAX_DECODED_BYTES: Final = 20 * 1024 * 1024
"""Default limit (bytes) of a decoded body: 20 MiB, the crawler's extraction limit and
the replay server's default for bodies it rewrites (``webark serve --decode-limit``)."""

_PIECE: Final = 1 << 20
"""Bytes of input fed to a decompressor at once."""
_UNLIMITED: Final = sys.maxsize // 4
"""The limit of :func:`decode_content` without one (fits a decompressor's max_length)."""


class ChunkError(FormatError, ValueError):
    """The body does not follow the chunked framing."""


def dechunk(body: bytes) -> tuple[bytes, bool]:
    """Remove chunked framing from ``body``.

    Returns:
        ``(payload, ok)``: ``ok`` is False when ``body`` is not chunked at all (then the
        body is returned unchanged) — the caller records that it was forgiven. A body whose
        chunk stream is cut short returns the chunks that were complete plus the partial
        last chunk, with ``ok`` True (truncated captures keep what they have).
    """
    try:
        return b"".join(iter_chunks(body)), True
    except ChunkError:
        return body, False


def iter_chunks(body: bytes) -> Iterator[bytes]:
    """Yield chunk data from a chunked body (extensions and trailers ignored).

    Raises:
        ChunkError: the first chunk-size line is not hexadecimal.
    """
    pos = 0
    n = len(body)
    first = True
    while pos < n:
        eol = body.find(b"\n", pos)
        if eol < 0:
            if first:
                raise ChunkError("no chunk-size line")
            return
        line = body[pos:eol].split(b";", 1)[0].strip()
        try:
            size = int(line, 16)
        except ValueError:
            if first:
                raise ChunkError(f"bad chunk-size {line[:20]!r}") from None
            return
        first = False
        pos = eol + 1
        if size == 0:
            return
        yield body[pos : pos + size]
        pos += size
        # skip the CRLF after the chunk data (tolerate LF-only)
        if body[pos : pos + 2] == b"\r\n":
            pos += 2
        elif body[pos : pos + 1] == b"\n":
            pos += 1


class DecodedTooLarge(WebarkError, ValueError):
    """A content-coded body decodes to more bytes than the limit it was decoded under
    (a decompression bomb, or simply a very large body).

    Attributes:
        limit: the limit in bytes.
    """

    def __init__(self, limit: int):
        super().__init__(f"decodes to more than {limit:,} bytes")
        self.limit = limit


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


def _codings(coding: str | None) -> list[str]:
    """The known content codings of a ``Content-Encoding`` value, in the order they
    were applied (``identity`` and unknown codings left out)."""
    known = ("gzip", "x-gzip", "deflate", "br")
    return [c for c in (x.strip().lower() for x in (coding or "").split(",")) if c in known]


def decode_content(data: bytes, coding: str | None, *, limit: int | None = None) -> bytes:
    """Undo a Content-Encoding (``gzip``/``x-gzip``, ``deflate`` — zlib or raw —, ``br``;
    a list such as ``"gzip, br"`` is undone right to left; RFC 9110 §8.4). Unknown
    codings and ``identity`` return the data unchanged. Concatenated gzip members are
    all decoded (as ``gzip -d`` does).

    Args:
        limit: at most this many bytes of output (None: no limit; give one whenever
            the data comes from an archive or the network).

    Raises:
        DecodedTooLarge: the decoded body would pass ``limit`` (no more than about
            ``limit`` bytes were produced before stopping).
        ValueError: the data is not valid for the named coding.
    """
    codings = _codings(coding)
    if not codings:
        return data
    cap = limit if limit is not None else _UNLIMITED
    decoded = decode_bounded(data, coding, cap + 1)
    if decoded.coding_error:
        raise ValueError(f"bad {coding} content")
    if len(decoded.data) > cap or not decoded.complete:
        raise DecodedTooLarge(cap)
    return decoded.data


def decode_bounded(data: bytes, coding: str | None, limit: int) -> DecodedBody:
    """Undo the content codings ``coding`` (a ``Content-Encoding`` value, e.g. ``"gzip"``
    or ``"gzip, br"``; unknown codings and ``identity`` are left as they are) of
    ``data``, producing at most ``limit`` bytes (> 0; a longer result is cut). Every
    stage stops after ``limit`` bytes of output, so memory stays within a small
    multiple of ``limit`` whatever the input inflates to.

    Concatenated gzip members are all decoded (as ``gzip -d`` does). Never raises for
    bad input: see :attr:`DecodedBody.coding_error`.

    Raises:
        ValueError: ``limit`` is not positive.
    """
    if limit <= 0:
        raise ValueError("limit must be a positive number of bytes")
    complete = True
    for c in reversed(_codings(coding)):
        if c in ("gzip", "x-gzip"):
            out, whole, ok = _gunzip(data, limit)
        elif c == "deflate":
            out, whole, ok = _inflate(data, limit, zlib.MAX_WBITS)
            if not ok:
                out, whole, ok = _inflate(data, limit, -zlib.MAX_WBITS)
        else:
            out, whole, ok = _unbrotli(data, limit)
        if not ok:
            return DecodedBody(data[:limit], complete and len(data) <= limit, coding_error=True)
        data, complete = out, complete and whole
    return DecodedBody(data[:limit], complete and len(data) <= limit)


def _gunzip(data: bytes, limit: int) -> tuple[bytes, bool, bool]:
    """(output, whole, ok) of gzip members in ``data``, output capped at ``limit``."""
    out = bytearray()
    rest = data
    first = True
    while rest and len(out) < limit:
        d = zlib.decompressobj(zlib.MAX_WBITS | 32)  # gzip, or zlib labelled gzip
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
