"""Decode the PNG screenshots Chromium takes into pixel statistics, with the standard
library only (zlib): the browser tests need "is this screenshot blank?", not an imaging
library.

Supports what Chromium's screenshots use (PNG spec, W3C 2003, §4-§9): 8-bit
greyscale, RGB or RGBA, non-interlaced, all five row filters. Anything else raises
``ValueError`` naming the field.
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass
from itertools import accumulate

_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_CHANNELS = {0: 1, 2: 3, 6: 4}  # colour type -> samples per pixel (8-bit depth only)


@dataclass(frozen=True)
class PixelStats:
    """Statistics of a decoded image.

    Attributes:
        width, height: in pixels.
        luma_stddev: standard deviation of the luma (0.299 R + 0.587 G + 0.114 B, 0-255)
            over every pixel; 0.0 for a single-colour image.
        colours: number of distinct RGB values.
        dominant_share: share (0-1) of the pixels that have the most frequent colour.
    """

    width: int
    height: int
    luma_stddev: float
    colours: int
    dominant_share: float


def _chunks(data: bytes) -> list[tuple[bytes, bytes]]:
    if not data.startswith(_SIGNATURE):
        raise ValueError("not a PNG: bad signature at offset 0")
    pos = len(_SIGNATURE)
    out = []
    while pos + 8 <= len(data):
        length, kind = struct.unpack(">I4s", data[pos : pos + 8])
        out.append((kind, data[pos + 8 : pos + 8 + length]))
        pos += 12 + length
        if kind == b"IEND":
            break
    return out


def _unfilter(raw: bytes, width: int, height: int, bpp: int) -> list[bytes]:
    stride = width * bpp
    rows: list[bytes] = []
    prev = bytes(stride)
    pos = 0
    for y in range(height):
        ftype = raw[pos]
        line = raw[pos + 1 : pos + 1 + stride]
        pos += 1 + stride
        if ftype == 0:
            cur = line
        elif ftype == 1:  # Sub: running sum per channel
            out = bytearray(stride)
            for c in range(bpp):
                out[c::bpp] = bytes(v & 0xFF for v in accumulate(line[c::bpp]))
            cur = bytes(out)
        elif ftype == 2:  # Up
            cur = bytes((a + b) & 0xFF for a, b in zip(line, prev, strict=True))
        elif ftype in (3, 4):  # Average, Paeth: depend on the byte to the left
            out = bytearray(line)
            for i in range(stride):
                a = out[i - bpp] if i >= bpp else 0
                b = prev[i]
                if ftype == 3:
                    out[i] = (out[i] + ((a + b) >> 1)) & 0xFF
                    continue
                c = prev[i - bpp] if i >= bpp else 0
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pred = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                out[i] = (out[i] + pred) & 0xFF
            cur = bytes(out)
        else:
            raise ValueError(f"PNG row {y}: unknown filter type {ftype}")
        rows.append(cur)
        prev = cur
    return rows


def pixel_stats(png: bytes) -> PixelStats:
    """Decode ``png`` (bytes of a PNG file) and compute :class:`PixelStats`.

    Raises:
        ValueError: not a PNG, or a layout this decoder does not read (bit depth other
            than 8, palette images, interlacing).
    """
    chunks = _chunks(png)
    if not chunks or chunks[0][0] != b"IHDR":
        raise ValueError("PNG without IHDR as first chunk")
    width, height, depth, ctype, _comp, _filt, interlace = struct.unpack(">IIBBBBB", chunks[0][1])
    if depth != 8 or ctype not in _CHANNELS or interlace:
        raise ValueError(f"PNG layout not supported: depth {depth}, colour type {ctype}, "
                         f"interlace {interlace}")  # fmt: skip
    bpp = _CHANNELS[ctype]
    raw = zlib.decompress(b"".join(body for kind, body in chunks if kind == b"IDAT"))
    rows = _unfilter(raw, width, height, bpp)
    counts: dict[bytes, int] = {}
    total = 0.0
    total_sq = 0.0
    for row in rows:
        for x in range(0, len(row), bpp):
            px = row[x : x + 3] if bpp >= 3 else row[x : x + 1] * 3
            counts[px] = counts.get(px, 0) + 1
    for px, n in counts.items():
        luma = 0.299 * px[0] + 0.587 * px[1] + 0.114 * px[2]
        total += luma * n
        total_sq += luma * luma * n
    pixels = width * height
    mean = total / pixels
    var = max(0.0, total_sq / pixels - mean * mean)
    return PixelStats(width, height, var**0.5, len(counts), max(counts.values()) / pixels)
