"""Write ZipNum indexes (pywb's ``ZipNumIndexSource`` layout, read by
:mod:`webark.index.zipnum`) from sorted CDX lines.

A shard is cut into blocks of :data:`BLOCK_LINES` lines, each compressed as one gzip
member and the members concatenated (the shard is itself a valid ``.cdx.gz``); every
block gives one summary line ``urlkey timestamp<TAB>shard<TAB>offset<TAB>length<TAB>
block_no``. Shards written from consecutive key ranges (Spark's range partitions) make
one index: their summaries concatenated in range order are sorted, and the ``.loc`` file
maps each shard name to its file (relative to the ``.idx``).

Files are written as ``NAME.part`` and renamed when complete: an interrupted job leaves
no shard or summary under its final name.
"""

from __future__ import annotations

import itertools
import os
import zlib
from collections.abc import Iterable, Sequence

from webark.index.zipnum import ZipNumBlock

__all__ = ["BLOCK_LINES", "write_shard", "write_summary"]

BLOCK_LINES = 3000
"""Lines per gzip block (the Internet Archive's and pywb's usual value)."""


def _gzip_member(data: bytes) -> bytes:
    c = zlib.compressobj(6, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    return c.compress(data) + c.flush()


def _block_key(line: bytes) -> str:
    """``urlkey timestamp`` of a CDX(J) line (the first two space-separated fields)."""
    parts = line.split(b" ", 2)
    return b" ".join(parts[:2]).decode("utf-8", "surrogateescape")


def write_shard(
    lines: Iterable[bytes],
    path: str | os.PathLike[str],
    shard: str,
    *,
    block_lines: int = BLOCK_LINES,
    first_block: int = 0,
) -> list[ZipNumBlock]:
    """Write sorted CDX lines as one ZipNum shard.

    Args:
        lines: the lines, sorted byte-wise, without line ends (bytes).
        path: the shard file (``*.cdx.gz``) to write.
        shard: the shard's name in the summary and ``.loc`` file.
        block_lines: lines per gzip block.
        first_block: number of the shard's first block (blocks are numbered across the
            shards of one index).

    Returns:
        The summary lines (:class:`ZipNumBlock`) of the shard's blocks, in order; none
        when ``lines`` is empty (an empty shard file is still written).

    Raises:
        OSError: the file cannot be written (no partial shard is left).
        ValueError: ``block_lines`` < 1.
    """
    if block_lines < 1:
        raise ValueError("block_lines must be at least 1")
    final = os.fspath(path)
    part = final + ".part"
    blocks: list[ZipNumBlock] = []
    pending: list[bytes] = []
    offset = 0
    try:
        with open(part, "wb") as f:

            def flush() -> None:
                nonlocal offset
                member = _gzip_member(b"".join(s + b"\n" for s in pending))
                f.write(member)
                blocks.append(
                    ZipNumBlock(_block_key(pending[0]), shard, offset, len(member),
                                first_block + len(blocks))
                )
                offset += len(member)
                pending.clear()

            for line in lines:
                pending.append(line)
                if len(pending) >= block_lines:
                    flush()
            if pending:
                flush()
        os.replace(part, final)
    except BaseException:
        if os.path.exists(part):
            os.unlink(part)
        raise
    return blocks


def write_summary(
    blocks: Sequence[ZipNumBlock],
    idx_path: str | os.PathLike[str],
    locations: dict[str, str],
) -> None:
    """Write the summary ``.idx`` (``blocks`` in order: they must be sorted by key) and
    its ``.loc`` file beside it (``shard<TAB>location``, locations relative to the
    ``.idx`` folder when they are inside it).

    Raises:
        OSError: a file cannot be written.
        ValueError: the block keys are not sorted.
    """
    keys = [b.key.encode("utf-8", "surrogateescape") for b in blocks]
    if any(a > b for a, b in itertools.pairwise(keys)):
        raise ValueError("ZipNum blocks are not in key order")
    idx = os.fspath(idx_path)
    loc = os.path.splitext(idx)[0] + ".loc"
    base = os.path.dirname(os.path.abspath(idx))
    _atomic_write(idx, b"".join(b.to_line().encode("utf-8", "surrogateescape") + b"\n"
                                for b in blocks))
    rows = []
    for name, where in locations.items():
        p = os.path.abspath(where)
        rel = os.path.relpath(p, base)
        rows.append(f"{name}\t{rel if not rel.startswith('..') else p}\n")
    _atomic_write(loc, "".join(rows).encode("utf-8", "surrogateescape"))


def _atomic_write(path: str, data: bytes) -> None:
    part = path + ".part"
    with open(part, "wb") as f:
        f.write(data)
    os.replace(part, path)
