"""Byte-preserving text views of archived documents.

The rewriters work on ``str`` but must give back every byte they did not rewrite
exactly as recorded, whatever the page's encoding and however broken its bytes. So a
document is decoded with ``errors="surrogateescape"`` (undecodable bytes become lone
surrogates U+DC80–U+DCFF and encode back to themselves) in the encoding a browser would
use, and re-encoded with the same codec. When a codec does not give the very same bytes
back (several byte sequences for one character, e.g. cp932's duplicate NEC/IBM
characters), the document is viewed as ISO-8859-1 instead, one character per byte,
which always round-trips. Markup is ASCII in every encoding the web uses for HTML
(UTF-16 aside), so the view is enough to find tags and attributes.

Encoding choice follows the WHATWG "encoding sniffing algorithm" in order: byte order
mark, the Content-Type ``charset`` parameter, a ``<meta charset>`` / ``http-equiv`` in
the first 1024 bytes (HTML) or ``@charset`` (CSS), else UTF-8 (whose
``surrogateescape`` view keeps undeclared windows-1252 bytes too).
"""

from __future__ import annotations

import codecs
import importlib
import re
from dataclasses import dataclass
from functools import lru_cache

__all__ = ["ChunkWriter", "TextView", "css_charset", "encodes_piecewise", "html_charset",
           "python_codec", "to_bytes", "to_text"]

_BOMS = ((codecs.BOM_UTF8, "utf-8"), (codecs.BOM_UTF16_LE, "utf-16"),
         (codecs.BOM_UTF16_BE, "utf-16"))
_META_CHARSET = re.compile(
    rb"""<meta\s[^>]*?charset\s*=\s*["']?\s*([A-Za-z0-9_.:\-]+)""", re.IGNORECASE)
_CSS_CHARSET = re.compile(rb'@charset "([A-Za-z0-9_.:\-]+)";')
# WHATWG Encoding Standard labels that Python spells differently or maps to a smaller
# table than browsers do.
_ALIASES = {
    "gb2312": "gbk", "gb_2312-80": "gbk", "x-gbk": "gbk", "csgb2312": "gbk",
    "iso-ir-58": "gbk", "chinese": "gbk",
    "x-sjis": "shift_jis", "ms_kanji": "shift_jis", "windows-31j": "cp932",
    "x-euc-jp": "euc_jp", "big5-hkscs": "big5hkscs", "x-x-big5": "big5",
    "ks_c_5601-1987": "euc_kr", "windows-949": "euc_kr",
    "iso-8859-8-i": "iso-8859-8", "x-mac-roman": "mac_roman", "x-mac-cyrillic": "mac_cyrillic",
    "unicode-1-1-utf-8": "utf-8", "utf8": "utf-8",
}
# Codecs whose surrogateescape decoding always encodes back to the same bytes.
_LOSSLESS = frozenset({"utf-8", "latin-1", "iso8859-1", "ascii"})
# Multibyte codecs without shift states or byte order marks (CPython's CJK codecs other
# than ISO-2022-* and HZ, which switch character sets with escape sequences).
_STATELESS_MULTIBYTE = frozenset({
    "shift_jis", "cp932", "euc_jp", "euc_jis_2004", "euc_jisx0213", "shift_jis_2004",
    "shift_jisx0213", "gbk", "gb2312", "gb18030", "big5", "big5hkscs", "cp950",
    "euc_kr", "cp949", "johab",
})


def python_codec(label: str | None) -> str | None:
    """The Python codec name for an encoding label (``"Shift_JIS"`` → ``"shift_jis"``,
    ``"gb2312"`` → ``"gbk"``), or None when unknown (``"Big5_Solaris"``) or empty."""
    if not label:
        return None
    key = label.strip().strip("\"'").lower()
    key = _ALIASES.get(key, key)
    try:
        return codecs.lookup(key).name
    except LookupError:
        return None


def _bom(body: bytes) -> str | None:
    for bom, name in _BOMS:
        if body.startswith(bom):
            return name
    return None


def html_charset(body: bytes, declared: str | None = None) -> str | None:
    """The codec for an HTML document: BOM, else the declared (Content-Type) charset,
    else ``<meta charset>`` / ``<meta http-equiv content="…; charset=…">`` in the first
    1024 bytes, else None (caller uses UTF-8 + surrogateescape). A meta declaring
    UTF-16 means UTF-8 (the page is evidently ASCII-compatible; HTML Standard)."""
    found = _bom(body) or python_codec(declared)
    if found:
        return found
    m = _META_CHARSET.search(body, 0, 1024)
    if m:
        codec = python_codec(m.group(1).decode("ascii"))
        if codec and codec.startswith("utf-16"):
            return "utf-8"
        return codec
    return None


def css_charset(body: bytes, declared: str | None = None) -> str | None:
    """The codec for a stylesheet (CSS Syntax §3.2): BOM, declared charset,
    ``@charset "…";`` at the very start, else None."""
    found = _bom(body) or python_codec(declared)
    if found:
        return found
    m = _CSS_CHARSET.match(body)
    return python_codec(m.group(1).decode("ascii")) if m else None


@dataclass(frozen=True, slots=True)
class TextView:
    """A document as text plus the codec that gives its bytes back.

    Attributes:
        text: the decoded document (undecodable bytes as lone surrogates).
        codec: Python codec name used both ways (``"utf-8"``, ``"shift_jis"``,
            ``"latin-1"`` for the one-byte-per-character fallback).
    """

    text: str
    codec: str


def to_text(body: bytes, codec: str | None) -> TextView:
    """Decode ``body`` so that :func:`to_bytes` of the unchanged text gives ``body``
    back byte for byte. ``codec`` None means UTF-8. Falls back to ISO-8859-1 when the
    codec cannot round-trip this document (or is stateful: UTF-16 text without a BOM
    cannot be told apart)."""
    codec = codec or "utf-8"
    try:
        text = body.decode(codec, "surrogateescape")
    except (LookupError, UnicodeError):
        return TextView(body.decode("latin-1"), "latin-1")
    if codec not in _LOSSLESS:
        try:
            same = text.encode(codec, "surrogateescape") == body
        except UnicodeError:
            same = False
        if not same:
            return TextView(body.decode("latin-1"), "latin-1")
    return TextView(text, codec)


def to_bytes(text: str, codec: str) -> bytes:
    """Encode a (possibly rewritten) text with the codec of its :class:`TextView`;
    characters the codec cannot express (only possible in inserted text) become
    numeric character references."""
    try:
        return text.encode(codec, "surrogateescape")
    except UnicodeEncodeError:
        out = []
        for ch in text:
            try:
                out.append(ch.encode(codec, "surrogateescape"))
            except UnicodeEncodeError:
                out.append(f"&#{ord(ch)};".encode("ascii"))
        return b"".join(out)


@lru_cache(maxsize=64)
def encodes_piecewise(codec: str) -> bool:
    """True when :func:`to_bytes` of consecutive pieces of a text, concatenated, is
    :func:`to_bytes` of the whole text, so a long document can be encoded a piece at a
    time: UTF-8, ASCII, the single-byte (charmap) codecs and the stateless multibyte
    CJK codecs. False for codecs with a state or a byte order mark per call (UTF-16,
    UTF-32, UTF-8-SIG, UTF-7, ISO-2022-*, HZ) and for unknown names."""
    try:
        name = codecs.lookup(codec).name
    except LookupError:
        return False
    if name in _LOSSLESS or name in _STATELESS_MULTIBYTE:
        return True
    try:
        module = importlib.import_module("encodings." + name.replace("-", "_"))
    except ImportError:
        return False
    return hasattr(module, "encoding_table") or hasattr(module, "encoding_map")


class ChunkWriter:
    """Text written in pieces, kept as encoded chunks of about ``chunk_chars``
    characters each (:func:`to_bytes` with ``codec``), so that a long rewritten document
    never exists as one ``str`` or one ``bytes``: ``b"".join(writer.chunks)`` is
    ``to_bytes(<all text written>, codec)`` when :func:`encodes_piecewise` holds for
    ``codec``.

    Attributes:
        chunks: the encoded chunks so far (call :meth:`close` for the last one).
    """

    def __init__(self, codec: str, chunk_chars: int = 1 << 18):
        if chunk_chars <= 0:
            raise ValueError("chunk_chars must be positive")
        self.codec = codec
        self.chunk_chars = chunk_chars
        self.chunks: list[bytes] = []
        self._buf: list[str] = []
        self._n = 0

    def write(self, piece: str) -> None:
        """Append ``piece`` (any length: long pieces are cut; see :meth:`write_span`)."""
        if len(piece) > self.chunk_chars:
            self.write_span(piece, 0, len(piece))
        elif piece:
            self._buf.append(piece)
            self._n += len(piece)
            if self._n >= self.chunk_chars:
                self._flush()

    def write_span(self, text: str, start: int, end: int) -> None:
        """Append ``text[start:end]`` without copying more than one chunk of it at a
        time."""
        step = self.chunk_chars
        while start < end:
            stop = min(end, start + step - self._n)
            self._buf.append(text[start:stop])
            self._n += stop - start
            start = stop
            if self._n >= step:
                self._flush()

    def close(self) -> list[bytes]:
        """Encode what is left; returns :attr:`chunks`."""
        if self._buf:
            self._flush()
        return self.chunks

    def _flush(self) -> None:
        self.chunks.append(to_bytes("".join(self._buf), self.codec))
        self._buf = []
        self._n = 0
