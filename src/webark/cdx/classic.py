"""Classic space-separated CDX lines in the layouts archives really have.

A classic CDX file names its fields with a header line `` CDX N b a m s k r M S V g``
(one letter per field, the Internet Archive's CDX legend, reference/
resolution-and-replay.md); files without a header are told apart by their field count
and shape:

=========  ==========================  ============================================
fields     letters                     written by
=========  ==========================  ============================================
11         ``N b a m s k r M S V g``   pywb ``cdx-indexer``, OpenWayback, IA (CDX11)
9          ``N b a m s k r V g``       pywb ``-9``, cdxj-indexer ``--cdx09``, the
                                       WARC CDX of NetarchiveSuite (CDX9)
8          ``A e b m n g v c``         NetarchiveSuite's ``ExtractCDXJob`` (ARC era):
                                       URL, IP, date, MIME, length, ARC file, offset,
                                       MD5 of the record
7          ``A e b m n g v``           the same without the checksum
=========  ==========================  ============================================

Letters map to :class:`~webark.cdx.line.CdxLine` fields (``N`` urlkey, ``b``
timestamp, ``a`` URL, ``m`` MIME, ``s`` status, ``k`` payload digest, ``r`` redirect,
``M`` robot flags, ``S`` length, ``V`` offset, ``g`` file name); ``A`` (canonicalized
URL) is the key when there is no ``N`` and, holding a whole URL with its scheme as
NetarchiveSuite writes it, also the URL (the key is then computed from it); ``v``
(offset in the uncompressed file) and ``n`` (record length in the ARC) stand in for
``V`` and ``S`` when those are absent. Other letters (``e`` IP, ``c`` old-style
checksum …) are kept in ``extra`` under their letter: ``c`` is never a payload digest
(NetarchiveSuite's is the MD5 of the whole ARC record, HTTP head included).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from webark.cdx.line import CdxLine

CDX11_LETTERS = ("N", "b", "a", "m", "s", "k", "r", "M", "S", "V", "g")
CDX9_LETTERS = ("N", "b", "a", "m", "s", "k", "r", "V", "g")
NAS_LETTERS = ("A", "e", "b", "m", "n", "g", "v", "c")
"""NetarchiveSuite's ARC CDX (``ExtractCDXJob``: ``A e b m n g v c``), no header."""
NAS7_LETTERS = NAS_LETTERS[:7]
"""The same without its MD5 checksum (``ExtractCDXJob(false)``)."""

_FIELDS = {
    "N": "urlkey",
    "b": "timestamp",
    "a": "url",
    "m": "mime",
    "s": "status",
    "k": "digest",
    "r": "redirect",
    "M": "robotflags",
    "S": "length",
    "V": "offset",
    "g": "filename",
}
_STAND_INS = {"A": "N", "v": "V", "n": "S"}
"""Letters used for a field when the file has no letter of its own for it."""
_INT_FIELDS = ("length", "offset")
MAX_FILE_OFFSET = (1 << 63) - 1
"""Largest offset or length a CDX line may give (no file is larger; SQLite's INTEGER)."""

_DATE = re.compile(r"\d{8,17}\Z")
_INT = re.compile(r"(?:-|\d+)\Z")


def cdx_int(value: Any, name: str) -> int:
    """A CDX offset or length: a decimal number (text, or a JSON integer) up to
    :data:`MAX_FILE_OFFSET`; ``-``, empty or None give -1 (unknown).

    Raises:
        ValueError: anything else (a list, a fraction, a sign, 10^30 …).
    """
    if value is None or value == "-" or value == "":
        return -1
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise ValueError(f"{name} is not a number: {value!r}")
    if isinstance(value, str):
        if value[:1] == "-" and value[1:].isascii() and value[1:].isdigit():
            return -1  # some tools write -1 for "unknown"
        if not value.isascii() or not value.isdigit():
            raise ValueError(f"{name} is not a number: {value[:40]!r}")
        if len(value) > 19:
            raise ValueError(f"{name} {value[:40]} is beyond any file (over 2^63)")
        value = int(value)
    if value < 0:
        return -1
    if value > MAX_FILE_OFFSET:
        raise ValueError(f"{name} {value} is beyond any file (over 2^63)")
    return value


def guess_letters(parts: Sequence[str]) -> tuple[str, ...]:
    """The field letters of a headerless CDX line split on spaces (table above).

    Raises:
        ValueError: a field count and shape of no known layout.
    """
    n = len(parts)
    if n == 11:
        return CDX11_LETTERS
    if n == 9:
        return CDX9_LETTERS
    if n in (7, 8) and _DATE.match(parts[2]) and _INT.match(parts[4]) and _INT.match(parts[6]):
        return NAS_LETTERS[:n]
    raise ValueError(
        f"{n} CDX fields of no known layout (CDX11: 11, CDX9: 9, NetarchiveSuite: 7 or 8 "
        "with the date third); a ' CDX …' header line names the fields of other layouts"
    )


def parse_cdx(text: str, letters: Sequence[str] | None = None) -> CdxLine:
    """Parse a classic CDX line; ``letters`` are the field letters of the file's header
    (`` CDX N b a m s k r M S V g`` gives ``N b a m s k r M S V g``); without them the
    layout is guessed (:func:`guess_letters`). Unknown letters go to ``extra``.

    Raises:
        ValueError: wrong number of fields, or a bad length/offset (:func:`cdx_int`).
    """
    parts = text.rstrip("\r\n").split(" ")
    if letters is None:
        letters = guess_letters(parts)
    if len(parts) != len(letters):
        raise ValueError(f"expected {len(letters)} CDX fields, found {len(parts)}: {text!r}")
    values = dict(zip(letters, parts, strict=True))
    kw: dict[str, Any] = {}
    extra: dict[str, Any] = {}
    for letter, value in values.items():
        name = _FIELDS.get(letter)
        if name is None:
            own = _STAND_INS.get(letter)
            if own is None or own in values:
                extra[letter] = value
                continue
            name = _FIELDS[own]
        kw[name] = cdx_int(value, name) if name in _INT_FIELDS else value
    if "a" not in values and "A" in values and "://" in values["A"]:
        # NetarchiveSuite writes the URL as it was fetched under "A"
        from webark.url import cdx_key

        kw["url"] = values["A"]
        if "N" not in values:
            kw["urlkey"] = cdx_key(values["A"])
    return CdxLine(
        urlkey=kw.pop("urlkey", "-"),
        timestamp=kw.pop("timestamp", "-"),
        url=kw.pop("url", "-"),
        extra=extra,
        **kw,
    )


def has_digest(letters: Sequence[str]) -> bool:
    """Whether a layout has a payload digest field (``k``)."""
    return "k" in letters
