"""Text from archives made safe to print: bytes that were not UTF-8 are carried through
webark as surrogate escapes (so they can be written back unchanged); a message shows
them as ``\\xNN`` so that it can be printed on any terminal and encoded as UTF-8."""

from __future__ import annotations


def printable(text: str) -> str:
    """``text`` with bytes that were not UTF-8 (surrogate escapes) shown as ``\\xNN``."""
    if text.isascii():
        return text
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
