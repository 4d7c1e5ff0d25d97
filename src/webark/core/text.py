"""Text from archives made safe to print: bytes that were not UTF-8 are carried through
webark as surrogate escapes (so they can be written back unchanged); a message shows
them as ``\\xNN`` so that it can be printed on any terminal and encoded as UTF-8."""

from __future__ import annotations

import re


def printable(text: str) -> str:
    """``text`` with bytes that were not UTF-8 (surrogate escapes) shown as ``\\xNN``."""
    if text.isascii():
        return text
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


_ABS_PATH = re.compile(r"(?<![\w.:/~-])/(?:[^\s'\"/]+/)+(?=[^\s'\"/]+)")


def without_paths(text: str) -> str:
    """``text`` with each absolute file path reduced to its last part (``/srv/a/b.warc``
    → ``…/b.warc``), for messages a server shows to clients: error pages must not reveal
    where the server keeps its files (issue 20 item 4). URLs (``scheme://…``) are kept."""
    return _ABS_PATH.sub("…/", text)
