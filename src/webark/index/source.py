"""The query interface every index store implements, and the key-range helpers of the
resolution API (reference/resolution-and-replay.md, "Key ranges per matchType").

An index is a sequence of :class:`~webark.cdx.line.CdxLine` sorted by
``(urlkey, timestamp)`` byte-wise. Every query is a half-open byte range of
``"urlkey timestamp"`` strings, so that ``from``/``to`` of an exact-URL query narrow the
range itself (no post-filtering), and prefix/host/domain queries are one contiguous scan.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal, Protocol, runtime_checkable

from webark.cdx.line import CdxLine
from webark.core.errors import StorageError

MatchType = Literal["exact", "prefix", "host", "domain", "range"]


@dataclass(frozen=True, slots=True)
class KeyRange:
    """Half-open range ``[start, end)`` over ``"urlkey timestamp"`` strings (byte-wise,
    the CDX sort order). ``end=None`` means unbounded.

    ``from_ts``/``to_ts`` (14 digits, inclusive) are kept for sources that can only
    filter (prefix queries span many URL keys, so timestamps cannot narrow them)."""

    start: str
    end: str | None
    from_ts: str | None = None
    to_ts: str | None = None


class IndexUnavailable(StorageError):
    """The index backend cannot answer (file missing, database locked or corrupt): the
    resolution API answers 503, never an empty 200."""


@runtime_checkable
class IndexSource(Protocol):
    """A sorted index that can be scanned by key range and looked up by payload digest."""

    def scan(self, rng: KeyRange, reverse: bool = False) -> Iterator[CdxLine]:
        """Lines with ``start <= "urlkey timestamp" < end`` in CDX order (or reversed),
        with ``from_ts <= timestamp <= to_ts`` when those are set. Streaming: memory
        must not grow with the size of the result.

        Raises:
            IndexUnavailable: the backend cannot be read.
        """
        ...

    def by_digest(self, digest: str) -> Iterator[CdxLine]:
        """Captures whose payload digest equals ``digest`` (any encoding of the same hash;
        with or without ``sha1:``), in CDX order.

        Raises:
            IndexUnavailable: the backend cannot be read.
        """
        ...


# --- key ranges (resolution API → KeyRange) ------------------------------------------

#: Padding of a 1–14 digit ``from`` (earliest instant it names) and ``to`` (latest second
#: it names), as pywb pads them (``PAD_14_DOWN`` / ``PAD_14_UP``): ``from=2014`` →
#: ``20140101000000``, ``to=2014`` → ``20141231235959``. ``to=201402`` becomes
#: ``20140231235959``: not a real date, but the right string bound.
_PAD_FROM = "10000101000000"
_PAD_TO = "29991231235959"

_KEY_FORM = re.compile(r"^[^\s/?#]+\)/")


def pad_from(ts: str) -> str:
    """``from`` (1–14 digits) → the 14-digit timestamp of the earliest second it names.

    Raises:
        ValueError: not 1–14 ASCII digits.
    """
    _check_ts(ts, "from")
    return ts + _PAD_FROM[len(ts) :]


def pad_to(ts: str) -> str:
    """``to`` (1–14 digits) → the 14-digit timestamp of the latest second it names.

    Raises:
        ValueError: not 1–14 ASCII digits.
    """
    _check_ts(ts, "to")
    return ts + _PAD_TO[len(ts) :]


def _check_ts(ts: str, name: str) -> None:
    if not (1 <= len(ts) <= 14 and ts.isascii() and ts.isdigit()):
        raise ValueError(f"{name}={ts!r}: expected 1 to 14 digits")


def is_cdx_key(value: str) -> bool:
    """True if ``value`` already is a SURT-form URL key (``com,example)/path``), which
    :func:`key_range` then uses as is instead of canonicalizing it again."""
    return "://" not in value and _KEY_FORM.match(value) is not None


def _inc_last_char(s: str) -> str:
    return s[:-1] + chr(ord(s[-1]) + 1)


def resolve_match(url: str, match_type: MatchType | None = None) -> tuple[str, MatchType]:
    """The URL (stripped, wildcard removed) and match type a query means: with
    ``match_type=None``, ``*.example.com`` → ``("example.com", "domain")``,
    ``example.com/path*`` → ``("example.com/path", "prefix")``, anything else exact;
    a given ``match_type`` is kept and the URL taken literally (pywb's ``CDXQuery``
    applies the wildcards only when no matchType is given). :func:`key_range` resolves
    its arguments with this; callers that need the resolved match type (the
    resolution API) call it themselves."""
    url = url.strip()
    if match_type is not None:
        return url, match_type
    if url.startswith("*."):
        return url[2:], "domain"
    if url.endswith("*"):
        return url[:-1], "prefix"
    return url, "exact"


def key_range(
    url_or_key: str,
    match_type: MatchType | None = None,
    from_ts: str | None = None,
    to_ts: str | None = None,
    *,
    end: str | None = None,
) -> KeyRange:
    """The key range of a resolution query (pywb's ``calc_search_range`` + ``CDXQuery``).

    Args:
        url_or_key: a URL (``http://www.example.com/a?b=1``, scheme optional) or an
            already canonical key (``com,example)/a?b=1``). With ``match_type=None``,
            ``*.example.com`` means domain and ``example.com/path*`` means prefix (pywb
            applies these wildcards only when no matchType is given; so do we; see
            :func:`resolve_match`).
        match_type: ``exact`` → ``key``..``key!``; ``prefix`` → ``key``..(``key`` with its
            last character + 1), keeping a trailing ``/`` or ``?`` of the URL;
            ``host`` → ``host)/``..``host*``; ``domain`` → ``host)/``..``host-`` (a bare
            TLD ``com`` gives ``com,``..``com-``); ``range`` → ``key``..``end`` (``end``
            canonicalized the same way; None = to the end of the index).
        from_ts, to_ts: 1–14 digits, inclusive. For ``exact`` they narrow the range
            itself (``key from14``..``key to14!``); for the other match types they are
            only carried in the :class:`KeyRange` for sources to filter.
        end: end URL or key of a ``range`` query (exclusive).

    Returns:
        A :class:`KeyRange` over ``"urlkey timestamp"`` strings.

    Raises:
        ValueError: bad ``from``/``to``, unknown match type, or an empty URL.
    """
    url, match_type = resolve_match(url_or_key, match_type)
    if not url:
        raise ValueError("empty url")
    f14 = pad_from(from_ts) if from_ts else None
    t14 = pad_to(to_ts) if to_ts else None
    key = _canon(url)
    start: str
    stop: str | None
    if match_type == "exact":
        start = f"{key} {f14}" if f14 else key
        stop = f"{key} {t14}!" if t14 else key + "!"
    elif match_type == "prefix":
        if url.endswith("/") and not key.endswith("/"):
            key += "/"
        elif url.endswith("?") and not key.endswith("?"):
            key += "?"
        start, stop = key, _inc_last_char(key)
    elif match_type in ("host", "domain"):
        host = key.split(")/")[0]
        if match_type == "host":
            start, stop = host + ")/", host + "*"
        else:
            start = host + ("," if "," not in host else ")/")
            stop = host + "-"
    elif match_type == "range":
        start, stop = key, (_canon(end) if end else None)
    else:
        raise ValueError(f"unknown matchType {match_type!r}")
    return KeyRange(start, stop, f14, t14)


def _canon(url: str) -> str:
    if is_cdx_key(url):
        return url
    from webark.url import cdx_key

    return cdx_key(url)


def digest_key(digest: str) -> str:
    """A digest in one comparable form: ``sha1:BASE32`` for any encoding (Base32, hex,
    Base64, with or without ``sha1:``) of the same hash; the stripped input when it
    cannot be parsed (odd CDX values such as ``-`` stay comparable to themselves)."""
    from webark.core.digests import Digest
    from webark.core.errors import DigestError

    try:
        return Digest.parse(digest).label()
    except DigestError:
        return digest.strip()


def in_time(rng: KeyRange, timestamp: str) -> bool:
    """True if ``timestamp`` (14 digits; longer ones are cut to 14) lies within the
    range's inclusive ``from_ts``/``to_ts`` (None = unbounded)."""
    ts = timestamp[:14]
    if rng.from_ts is not None and ts < rng.from_ts:
        return False
    return rng.to_ts is None or ts <= rng.to_ts
