"""Parameters of ``/{collection}/cdx``: parsing and validation into a :class:`CdxQuery`.

Every problem raises :class:`ParamError` naming the parameter; the app answers it with
``400 Bad Request``. Parameters not listed here are ignored (pywb and the IA CDX server
ignore unknown parameters too). A single-valued parameter given twice is an error;
``filter`` and ``collapse`` repeat.

Sources of the semantics (see ``docs/cdx-api.md`` for the table):

* pywb 2.10 ``CDXQuery`` (``pywb/warcserver/index/query.py``): ``*.host`` / ``path*``
  wildcards apply only without ``matchType``; ``closest`` alone implies the closest
  sort; a 1–13 digit ``closest`` names the *latest* second of its period (warcio's
  ``timestamp_to_sec``: ``2014`` → ``20141231235959``), ``from`` the earliest and ``to``
  the latest (``PAD_14_DOWN`` / ``PAD_14_UP``).
* IA wayback-cdx-server: ``collapse=field:N``, ``showResumeKey``/``resumeKey``,
  ``showNumPages``/``page``/``pageSize``; ``limit`` is a positive count.
* OutbackCDX: ``matchType=range`` with an empty ``url`` scans the whole index.
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Literal, cast
from urllib.parse import quote_plus

from webark.core.errors import RequestError
from webark.index.filters import FIELDS, CdxFilter, Collapse, canonical_field
from webark.index.source import KeyRange, MatchType, key_range, pad_from, pad_to, resolve_match

Output = Literal["cdxj", "json", "cdx", "link"]
Sort = Literal["asc", "reverse", "closest"]

MATCH_TYPES: tuple[str, ...] = ("exact", "prefix", "host", "domain", "range")
OUTPUTS: tuple[str, ...] = ("cdxj", "json", "cdx", "link")
#: ``output`` spellings of other servers → ours (pywb's default ``text`` is the index's
#: own line format, CDXJ for CDXJ indexes).
OUTPUT_ALIASES: dict[str, str] = {"text": "cdxj"}

#: Lines per page when ``pageSize`` is not given.
DEFAULT_PAGE_SIZE = 5000
#: Largest accepted ``pageSize`` (lines).
MAX_PAGE_SIZE = 1_000_000
#: Largest accepted ``limit`` / ``page`` (beyond any real index; keeps ints bounded).
MAX_COUNT = 10**12

_SINGLE = (
    "url", "matchType", "from", "to", "closest", "sort", "limit", "fl", "output",
    "collapseTime", "page", "pageSize", "showNumPages", "resumeKey", "showResumeKey",
    "digest",
)  # fmt: skip
_TRUE = ("true", "1")
_FALSE = ("false", "0")


class ParamError(RequestError):
    """A bad query parameter (answered with 400).

    Attributes:
        param: the parameter's name as the client spelled it.
        message: what is wrong, for people.
    """

    def __init__(self, param: str, message: str):
        self.param = param
        self.message = message
        super().__init__(f"{param}: {message}")


@dataclass(frozen=True, slots=True)
class ResumeKey:
    """Where a resumed query goes on: after the ``n``-th line (1-based, in scan order)
    whose ``"urlkey timestamp"`` is ``key_ts``.

    Text form: ``"{urlkey} {timestamp} {n}"``, printed URL-encoded (``quote_plus``) so it
    can be pasted into the next query as ``resumeKey=…`` (as the IA CDX server prints
    ``org%2Carchive%29%2F+19980109140106%21``)."""

    key_ts: str
    n: int

    def encode(self) -> str:
        """The URL-encoded token."""
        return quote_plus(f"{self.key_ts} {self.n}")

    @classmethod
    def parse(cls, text: str) -> ResumeKey:
        """Parse the (already URL-decoded) token.

        Raises:
            ValueError: not ``urlkey timestamp n``.
        """
        parts = text.split(" ")
        if len(parts) != 3 or not parts[0] or not parts[1]:
            raise ValueError("expected 'urlkey timestamp n'")
        if not (parts[2].isascii() and parts[2].isdigit()) or not 1 <= int(parts[2]) < MAX_COUNT:
            raise ValueError("bad line count")
        return cls(f"{parts[0]} {parts[1]}", int(parts[2]))


@dataclass(frozen=True, slots=True)
class CdxQuery:
    """A validated query.

    Attributes:
        url: the ``url`` parameter, wildcard removed (None for a digest-only lookup).
        match_type: resolved match type.
        rng: the key range to scan (``from``/``to`` narrowed into it for exact queries,
            carried in it for the others).
        key: the canonical URL key (exact queries; else the range start).
        from14, to14: padded ``from``/``to`` (inclusive) or None.
        closest14: padded ``closest`` or None; ``closest_sec`` the same in Unix seconds.
        sort: ``asc`` (index order), ``reverse`` or ``closest``.
        limit: maximum lines, None = unlimited.
        filters: all must match.
        fields: ``fl`` (canonical names) or None for all fields.
        output: ``cdxj``, ``json`` (one JSON object per line), ``cdx`` or ``link``.
        collapse: collapse rules, applied in order.
        page, page_size, show_num_pages: line-based paging.
        resume: where a resumed query goes on; show_resume_key: print the next one.
        digest: only captures with this payload digest (any encoding of the hash).
    """

    url: str | None
    match_type: MatchType
    rng: KeyRange
    key: str
    from14: str | None = None
    to14: str | None = None
    closest14: str | None = None
    closest_sec: int = 0
    sort: Sort = "asc"
    limit: int | None = None
    filters: tuple[CdxFilter, ...] = ()
    fields: tuple[str, ...] | None = None
    output: Output = "cdxj"
    collapse: tuple[Collapse, ...] = ()
    page: int | None = None
    page_size: int = DEFAULT_PAGE_SIZE
    show_num_pages: bool = False
    resume: ResumeKey | None = None
    show_resume_key: bool = False
    digest: str | None = None

    @property
    def simple(self) -> bool:
        """True when the lines need no parsing beyond ``urlkey timestamp`` (the raw
        fast path applies): no filter, ``fl`` or digest; collapse on key/time only;
        CDXJ or JSON output."""
        return (
            not self.filters
            and self.fields is None
            and self.digest is None
            and all(c.raw_ok for c in self.collapse)
            and self.output in ("cdxj", "json")
        )


def ts_seconds(ts: str) -> int:
    """Unix seconds of a 14-digit timestamp (shorter ones padded with the earliest
    value, longer ones cut); lenient: out-of-range parts are normalized by
    ``calendar.timegm`` instead of failing. Used for |Δt| of the closest sort.

    Raises:
        ValueError: not digits.
    """
    t = ts[:14]
    if len(t) < 14:
        t += "10000101000000"[len(t) :]
    return calendar.timegm(
        (int(t[0:4]), int(t[4:6]), int(t[6:8]), int(t[8:10]), int(t[10:12]), int(t[12:14]), 0, 0, 0)
    )


def _bool(name: str, value: str) -> bool:
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ParamError(name, f"expected true, false, 1 or 0, got {value!r}")


def _int(name: str, value: str, lo: int, hi: int = MAX_COUNT) -> int:
    v = value
    if not (v.isascii() and v.lstrip("-").isdigit()) or len(v) > 15:
        raise ParamError(name, f"expected an integer, got {value!r}")
    n = int(v)
    if not lo <= n <= hi:
        raise ParamError(name, f"must be between {lo} and {hi}, got {n}")
    return n


def _ts(name: str, value: str, pad: str) -> str:
    try:
        return pad_from(value) if pad == "from" else pad_to(value)
    except ValueError:
        raise ParamError(name, f"expected 1 to 14 digits, got {value!r}") from None


def _valid_date(name: str, ts14: str) -> None:
    t = ts14
    try:
        datetime(int(t[:4]), int(t[4:6]), int(t[6:8]), int(t[8:10]), int(t[10:12]), int(t[12:14]))
    except ValueError:
        raise ParamError(name, f"{ts14} is not a valid date and time") from None


_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_DIGEST_RE = re.compile(r"^[A-Za-z0-9+/=:_\-]{8,200}$")


def parse_params(items: Iterable[tuple[str, str]]) -> CdxQuery:
    """Validate the query parameters (``(name, value)`` pairs, URL-decoded, in order;
    ``filter`` and ``collapse`` may repeat) into a :class:`CdxQuery`.

    Raises:
        ParamError: the first problem found, naming the parameter.
    """
    single: dict[str, str] = {}
    filters: list[str] = []
    collapses: list[str] = []
    for name, value in items:
        if name == "filter":
            filters.append(value)
        elif name == "collapse":
            collapses.append(value)
        elif name in _SINGLE:
            if name in single:
                raise ParamError(name, "given more than once")
            single[name] = value

    digest = single.get("digest")
    if digest is not None and not _DIGEST_RE.match(digest):
        raise ParamError("digest", f"not a payload digest: {digest!r}")

    # url + matchType (pywb CDXQuery: wildcards only without matchType)
    url = single.get("url")
    mt_param = single.get("matchType")
    if mt_param is not None and mt_param not in MATCH_TYPES:
        raise ParamError("matchType", f"one of {', '.join(MATCH_TYPES)}, got {mt_param!r}")
    mt: MatchType = cast(MatchType, mt_param) if mt_param is not None else "exact"
    if url is not None:
        url, mt = resolve_match(url, cast(MatchType | None, mt_param))
    if not url and not (mt == "range" and url is not None) and digest is None:
        raise ParamError("url", "required (a URL, a SURT key, *.host or prefix*)")
    if url is not None and len(url) > 8192:
        raise ParamError("url", "longer than 8192 characters")
    if url is not None and _CONTROL.search(url):
        raise ParamError("url", "contains control characters")

    from14 = _ts("from", single["from"], "from") if "from" in single else None
    to14 = _ts("to", single["to"], "to") if "to" in single else None
    if from14 and to14 and from14 > to14:
        raise ParamError("from", f"from={single['from']} is after to={single['to']}")

    if url:
        try:
            rng = key_range(url, mt, single.get("from"), single.get("to"))
            key = key_range(url, "exact").start if mt == "exact" else rng.start
        except ValueError as exc:
            raise ParamError("url", f"cannot be used as a URL: {exc}") from None
        if not rng.start or (rng.end is not None and rng.end <= rng.start):
            raise ParamError("url", f"{url!r} has no URL key")
    elif mt == "range" and url is not None:
        rng, key = KeyRange("", None, from14, to14), ""
    else:  # digest lookup without url
        rng, key = KeyRange("", None, from14, to14), ""
        url = None

    # sort / closest (pywb: closest alone implies the closest sort)
    sort_p = single.get("sort")
    closest_p = single.get("closest")
    sort: Sort
    if sort_p is None:
        sort = "closest" if closest_p is not None else "asc"
    elif sort_p in ("reverse", "closest"):
        sort = cast(Sort, sort_p)
    else:
        raise ParamError("sort", f"one of closest, reverse; got {sort_p!r}")
    closest14 = None
    closest_sec = 0
    if sort == "closest":
        if closest_p is None:
            raise ParamError("closest", "sort=closest needs closest=<1-14 digits>")
        closest14 = _ts("closest", closest_p, "to")
        _valid_date("closest", closest14)
        closest_sec = ts_seconds(closest14)
        if mt != "exact" or not url:
            raise ParamError("closest", "the closest sort needs one URL (matchType=exact)")
    elif closest_p is not None:
        raise ParamError("closest", f"cannot be combined with sort={sort_p}")

    limit = _int("limit", single["limit"], 1) if "limit" in single else None

    try:
        flt = tuple(CdxFilter.parse(f) for f in filters)
    except ValueError as exc:
        raise ParamError("filter", str(exc)) from None

    fields: tuple[str, ...] | None = None
    if "fl" in single:
        names = [n.strip() for n in single["fl"].split(",")]
        try:
            fields = tuple(canonical_field(n) for n in names)
        except ValueError as exc:
            raise ParamError("fl", str(exc)) from None

    out_p = single.get("output", "cdxj")
    out_p = OUTPUT_ALIASES.get(out_p, out_p)
    if out_p not in OUTPUTS:
        raise ParamError("output", f"one of {', '.join(OUTPUTS)}, got {out_p!r}")
    output = cast(Output, out_p)
    if output == "link" and fields is not None:
        raise ParamError("fl", "does not apply to output=link")

    try:
        coll = [Collapse.parse(c) for c in collapses]
    except ValueError as exc:
        raise ParamError("collapse", str(exc)) from None
    if "collapseTime" in single:
        n = _int("collapseTime", single["collapseTime"], 1, 14)
        coll.append(Collapse("timestamp", n, with_status=True))

    show_num_pages = _bool("showNumPages", single.get("showNumPages", "false"))
    page = _int("page", single["page"], 0) if "page" in single else None
    page_size = DEFAULT_PAGE_SIZE
    if "pageSize" in single:
        page_size = _int("pageSize", single["pageSize"], 1, MAX_PAGE_SIZE)
    show_resume_key = _bool("showResumeKey", single.get("showResumeKey", "false"))
    resume = None
    if "resumeKey" in single:
        try:
            resume = ResumeKey.parse(single["resumeKey"])
        except ValueError as exc:
            msg = f"{exc} (use the key a showResumeKey query printed)"
            raise ParamError("resumeKey", msg) from None

    if sort == "closest":
        for name, on in (("page", page is not None or show_num_pages), ("resumeKey", resume),
                         ("showResumeKey", show_resume_key)):  # fmt: skip
            if on:
                raise ParamError(name, "cannot be combined with the closest sort")
    if (page is not None or show_num_pages) and (resume is not None or show_resume_key):
        raise ParamError("page", "use either page/showNumPages or resumeKey/showResumeKey")
    if output == "link" and show_resume_key:
        raise ParamError("showResumeKey", "not available with output=link")
    if url is None and sort != "asc":
        raise ParamError("sort", "a lookup by digest alone is in index order")

    return CdxQuery(
        url=url,
        match_type=mt,
        rng=rng,
        key=key,
        from14=from14,
        to14=to14,
        closest14=closest14,
        closest_sec=closest_sec,
        sort=sort,
        limit=limit,
        filters=flt,
        fields=fields,
        output=output,
        collapse=tuple(coll),
        page=page,
        page_size=page_size,
        show_num_pages=show_num_pages,
        resume=resume,
        show_resume_key=show_resume_key,
        digest=digest,
    )


__all__ = [
    "DEFAULT_PAGE_SIZE",
    "FIELDS",
    "MATCH_TYPES",
    "OUTPUTS",
    "CdxQuery",
    "Output",
    "ParamError",
    "ResumeKey",
    "Sort",
    "parse_params",
    "ts_seconds",
]
