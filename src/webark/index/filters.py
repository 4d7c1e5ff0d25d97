"""Field access, ``filter`` and ``collapse`` of the resolution API (the CDX server).

Field names (``fl``, ``filter``, ``collapse``) are pywb's CDXJ names; the Internet
Archive's CDX-server names are accepted as aliases:

========== ============================== =============================================
name       alias (IA CDX server)          value (always text)
========== ============================== =============================================
urlkey                                    SURT-form URL key ``com,example)/path``
timestamp                                 14-digit UTC ``YYYYMMDDhhmmss``
url        ``original``                   original URL
mime       ``mimetype``                   MIME type (``warc/revisit`` for revisits)
status     ``statuscode``                 HTTP status, e.g. ``200``
digest                                    payload digest as indexed (``sha1:…`` or bare)
redirect                                  Location of a 3xx (CDX 11 only)
robotflags                                CDX ``M`` field
length                                    record length as stored (bytes)
offset                                    record offset in the WARC (bytes)
filename                                  WARC file name
(any other)                               an extra CDXJ key (``method``, ``requestBody`` …)
========== ============================== =============================================

A field a line does not have is absent: ``""`` to filters (as pywb), ``-`` in text
output, left out of JSON output.

**Filter syntax** ``filter=[!][=|~]field:expr`` (repeatable; all must match), exactly as
pywb 2.x (``pywb/warcserver/index/cdxops.py``, ``CDXFilter``):

* ``field:expr`` — *contains*: the field value contains ``expr``;
* ``=field:expr`` — *exact*: the value equals ``expr``;
* ``~field:expr`` — *regex*: Python ``re.match`` (anchored at the start, not the end);
* a leading ``!`` inverts any of them; without ``field:`` the expression is applied to
  the whole line (its CDXJ text).

The Internet Archive's and OutbackCDX's ``filter=[!]field:regex`` reads *the same text*
differently (a full regex match), and OutbackCDX's ``~`` means *contains*; those
spellings cannot be told apart from pywb's, so pywb's meaning wins and is documented in
``docs/cdx-api.md``. IA field names are accepted (``statuscode:200``).

**Collapse** ``collapse=field`` or ``collapse=field:N`` (IA/pywb): of adjacent lines
whose value (or its first ``N`` characters) is equal, only the first is kept.
``collapseTime=N`` (pywb) collapses on the first ``N`` timestamp digits *and* the status.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from webark.cdx.line import CdxLine

#: Field names of the API (pywb's CDXJ names), in CDX 11 order.
FIELDS: tuple[str, ...] = (
    "urlkey",
    "timestamp",
    "url",
    "mime",
    "status",
    "digest",
    "redirect",
    "robotflags",
    "length",
    "offset",
    "filename",
)

#: IA CDX-server (and OpenWayback) names → our names.
ALIASES: dict[str, str] = {
    "original": "url",
    "mimetype": "mime",
    "statuscode": "status",
}

_NAME_RE = re.compile(r"^[A-Za-z0-9_.\-]{1,64}$")


def canonical_field(name: str) -> str:
    """``name`` or its alias target (``statuscode`` → ``status``).

    Raises:
        ValueError: not a plausible field name (1–64 of ``A-Za-z0-9_.-``).
    """
    if not _NAME_RE.match(name):
        raise ValueError(f"bad field name {name!r}")
    return ALIASES.get(name, name)


def field_value(line: CdxLine, name: str) -> str | None:
    """The text value of field ``name`` (canonical) of ``line``; None when absent
    (``-``, empty, a negative length/offset, a missing extra key). See
    :meth:`CdxLine.value`."""
    v = line.value(name)
    if v is None or v == "":
        return None
    return v if isinstance(v, str) else str(v)


Mode = Literal["contains", "exact", "regex"]


@dataclass(frozen=True, slots=True)
class CdxFilter:
    """One parsed ``filter=`` value.

    Attributes:
        field: canonical field name, or ``""`` for the whole line.
        mode: ``contains`` (no prefix), ``exact`` (``=``) or ``regex`` (``~``).
        expr: the text after ``field:``.
        invert: a leading ``!``.
        source: the parameter value as given (for messages).
    """

    field: str
    mode: Mode
    expr: str
    invert: bool
    source: str
    regex: re.Pattern[str] | None = None

    @classmethod
    def parse(cls, text: str) -> CdxFilter:
        """Parse ``[!][=|~]field:expr`` (or ``[!][=|~]expr`` for the whole line).

        Raises:
            ValueError: empty filter, empty or bad field name, bad regular expression.
        """
        s = text
        invert = s.startswith("!")
        if invert:
            s = s[1:]
        mode: Mode = "contains"
        if s.startswith("="):
            mode, s = "exact", s[1:]
        elif s.startswith("~"):
            mode, s = "regex", s[1:]
        field = ""
        if ":" in s:
            name, s = s.split(":", 1)
            field = canonical_field(name)
        if not s and mode != "exact":
            raise ValueError(f"empty expression in filter {text!r}")
        rx = None
        if mode == "regex":
            try:
                rx = re.compile(s)
            except re.error as exc:
                raise ValueError(f"bad regular expression in filter {text!r}: {exc}") from None
        return cls(field, mode, s, invert, text, rx)

    def matches(self, line: CdxLine, text: Callable[[], str]) -> bool:
        """True when ``line`` passes this filter; ``text()`` gives the whole line for
        field-less filters (called only then)."""
        val = (field_value(line, self.field) or "") if self.field else text()
        if self.mode == "contains":
            ok = self.expr in val
        elif self.mode == "exact":
            ok = val == self.expr
        else:
            assert self.regex is not None
            ok = self.regex.match(val) is not None
        return ok != self.invert


@dataclass(frozen=True, slots=True)
class Collapse:
    """One ``collapse=field[:N]`` (``n=None``: the whole value), or pywb's
    ``collapseTime=N`` (``with_status=True``: timestamp prefix *and* status)."""

    field: str
    n: int | None = None
    with_status: bool = False

    @classmethod
    def parse(cls, text: str) -> Collapse:
        """Parse ``field`` or ``field:N`` (N ≥ 1).

        Raises:
            ValueError: bad field name or N.
        """
        name, sep, num = text.partition(":")
        field = canonical_field(name)
        if not sep:
            return cls(field)
        if not (num.isascii() and num.isdigit()) or num[0] == "0" or len(num) > 6:
            raise ValueError(f"collapse={text!r}: N must be a positive integer")
        return cls(field, int(num))

    @property
    def raw_ok(self) -> bool:
        """True when the value comes from the ``urlkey timestamp`` prefix of a raw line
        (so the raw fast path can collapse without parsing)."""
        return self.field in ("urlkey", "timestamp") and not self.with_status

    def token(self, line: CdxLine) -> tuple[str, ...]:
        v = field_value(line, self.field) or ""
        if self.n is not None:
            v = v[: self.n]
        if self.with_status:
            return (v, line.status)
        return (v,)
