"""Exception hierarchy of webark: every error webark raises on purpose is a
:class:`WebarkError`, so a caller can catch them all, or one branch::

    WebarkError
    ├── FormatError          bytes that do not follow a format (WARC, ARC, gzip, HTTP,
    │                        CDX, crawl.log …), with file and offset
    ├── InvalidRecordError   a record the writer refuses (it would make an invalid WARC)
    ├── DigestError          a digest string that cannot be parsed
    ├── ConfigError          a configuration that cannot be used: a job file, a scope,
    │                        a dedup policy, access rules; a crawl that cannot start
    │   └── BrowserUnavailableError  Playwright, Chromium or browsertrix-behaviors
    │                        missing (the browser workers cannot start)
    ├── StorageError         an archive that cannot be read as its index says: an index
    │                        down, a WARC missing, a revisit without its original, a
    │                        collection or crawl state that cannot be used
    ├── RequestError         a request a client made that cannot be answered: a bad
    │                        CDX-API parameter, Accept-Datetime, Range, an unknown
    │                        collection, a control-API call in the wrong state
    └── (by package)         InvalidURLError (url), FetchError (fetch), CaptureError
                             (capture), FrontierError (crawl) …

Every error that concerns a place in a file carries the file name and the byte offset
(as stored, i.e. the compressed offset for ``.warc.gz``) so that an archivist can find
and inspect the record with ``webark warc extract FILE OFFSET``. Errors that were plain
``ValueError`` / ``KeyError`` / ``LookupError`` before keep that base too.
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


class ConfigError(WebarkError, ValueError):
    """A configuration that cannot be used; the message says what to change."""


class BrowserUnavailableError(ConfigError):
    """The browser workers (``webark.crawl.browser``) cannot start: Playwright (Python
    package), Chromium (Debian's ``/usr/bin/chromium``) or the ``browsertrix-behaviors``
    script is missing. The message names what is missing and the command that installs
    it (``WEBARK_BROWSER=1 bash scripts/setup.sh``)."""


class KeyedConfigError(ConfigError):
    """A configuration mapping with mistakes, each tied to one key.

    Attributes:
        key: the (first) offending key (``"min_delay"``, ``"seeds[2]"``).
        reason: what is wrong with it and how to fix it.
        problems: every problem found, ``(key, reason)``; the message has one line per
            problem, ``{label}: {key}: {reason}``.
    """

    label = "config"
    """What the mapping is (the first words of each message line)."""

    def __init__(self, key: str, reason: str,
                 problems: tuple[tuple[str, str], ...] = ()) -> None:  # fmt: skip
        self.key = key
        self.reason = reason
        self.problems = problems or ((key, reason),)
        super().__init__("\n".join(f"{self.label}: {k}: {r}" for k, r in self.problems))


class StorageError(WebarkError):
    """Archived data that cannot be read as the index says (an index that cannot be
    read, a WARC not found, a revisit whose original is missing, crawl state that cannot
    be used)."""


class RequestError(WebarkError, ValueError):
    """A client's request that cannot be answered as asked (a bad parameter or header,
    an operation the current state does not allow)."""
