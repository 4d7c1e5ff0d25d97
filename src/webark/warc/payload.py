"""Payload decoding: HTTP chunked transfer-coding (RFC 9112 §7.1) and content codings
(gzip, deflate, br; RFC 9110 §8.4).

WARC 1.1 keeps the exact bytes in the block; the *payload* is the entity body with the
transfer-coding removed and the content-coding kept (warc-specifications issue 22). Some
writers stored a de-chunked body under a ``Transfer-Encoding: chunked`` header (warc.md,
interop bug 3): :func:`dechunk` then returns the body unchanged and says so.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator

import brotli


class ChunkError(ValueError):
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


def decode_content(data: bytes, coding: str | None) -> bytes:
    """Undo a Content-Encoding (``gzip``/``x-gzip``, ``deflate`` — zlib or raw —, ``br``;
    a list such as ``"gzip, br"`` is undone right to left). Unknown codings and
    ``identity`` return the data unchanged.

    Raises:
        ValueError: the data is not valid for the named coding.
    """
    if not coding:
        return data
    for c in reversed([c.strip().lower() for c in coding.split(",") if c.strip()]):
        if c in ("gzip", "x-gzip"):
            d = zlib.decompressobj(zlib.MAX_WBITS | 32)
            try:
                data = d.decompress(data) + d.flush()
            except zlib.error as e:
                raise ValueError(f"bad gzip content: {e}") from e
        elif c == "deflate":
            try:
                data = zlib.decompress(data)
            except zlib.error:
                try:
                    data = zlib.decompress(data, -zlib.MAX_WBITS)
                except zlib.error as e:
                    raise ValueError(f"bad deflate content: {e}") from e
        elif c == "br":
            try:
                data = brotli.decompress(data)
            except brotli.error as e:
                raise ValueError(f"bad brotli content: {e}") from e
    return data
