"""Exception hierarchy of webark.

Every error that concerns a place in a file carries the file name and the byte offset
(as stored, i.e. the compressed offset for ``.warc.gz``) so that an archivist can find
and inspect the record with ``webark warc extract FILE OFFSET``.
"""

from __future__ import annotations


class WebarkError(Exception):
    """Base class of all webark errors."""


class FormatError(WebarkError):
    """Bytes that do not follow a format (WARC, ARC, gzip, HTTP, CDX …).

    Attributes:
        path: file name (or ``"<stream>"``) where the problem was found.
        offset: byte offset in that file, as stored (compressed), or ``None``.
        reason: a short human-readable explanation.
    """

    def __init__(self, reason: str, path: str | None = None, offset: int | None = None):
        self.reason = reason
        self.path = path
        self.offset = offset
        where = ""
        if path is not None:
            where = f"{path}"
            if offset is not None:
                where += f" @ {offset}"
            where += ": "
        super().__init__(f"{where}{reason}")


class InvalidRecordError(WebarkError, ValueError):
    """A record that the writer refuses to write because it would make an invalid WARC
    (WARC 1.1 §6, §7: a mandatory field missing, a field not allowed for the type…)."""


class DigestError(WebarkError, ValueError):
    """A digest string that cannot be parsed (unknown algorithm, bad encoding)."""
