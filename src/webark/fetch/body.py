"""The entity body of a fetched response, decoded for reading (link extraction, robots.txt)
within a byte limit, so a decompression bomb cannot exhaust memory.

The WARC keeps the bytes on the wire; this module only makes the *reading view*: the
body after the head, with the chunked transfer-coding (RFC 9112 §7.1) and the content
codings removed by :func:`webark.warc.payload.decode_bounded` (every stage stops after
``limit`` bytes of output: a 1 MB gzip body that inflates to 1 GB yields its first
``limit`` bytes and ``complete=False``). Heritrix 3 decodes into a file-backed buffer
without such a cap; browsers stream.
"""

from __future__ import annotations

from webark.fetch.exchange import Exchange
from webark.warc.payload import MAX_DECODED_BYTES, DecodedBody, dechunk, decode_bounded

__all__ = ["MAX_DECODED_BYTES", "DecodedBody", "decode_bounded", "decoded_body"]


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
