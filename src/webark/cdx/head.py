"""The HTTP head of a record block, as the CDX indexer reads it (warcio's view).

:func:`read_head` looks at the first :data:`HEAD_PEEK` bytes of a spooled block (the
whole block when the head is longer) and returns a :class:`~webark.warc.http.RawHttpHead`.
"""

from __future__ import annotations

from webark.warc.http import RawHttpHead, warcio_head_end
from webark.warc.record import WarcRecord

__all__ = ["HEAD_PEEK", "read_head"]

HEAD_PEEK = 4096
"""Bytes of a block looked at first for the HTTP head (grown when the head is longer)."""


def read_head(rec: WarcRecord) -> RawHttpHead | None:
    """The HTTP head at the start of ``rec``'s block, None for an empty block.

    In-memory blocks are read without a copy, spooled ones by their first bytes. A
    block without a blank line is all head (warcio reads it so)."""
    block = rec.block
    if block.size == 0:
        return None
    data = block.read_all() if block.in_memory else block.head(HEAD_PEEK)
    end = warcio_head_end(data)
    if end < 0 and block.size > len(data):
        data = block.read_all()
        end = warcio_head_end(data)
    return RawHttpHead.of_block(data, end)
