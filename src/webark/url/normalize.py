"""URL normalization and reference resolution for the crawler.

Parsing follows the WHATWG URL Standard (what browsers do with the links the crawler
extracts), through ``ada_url`` (a maintained, WPT-conformant C++ parser): scheme and
host lowercased, hosts IDNA-encoded (UTS #46), IPv4 forms such as ``0x7f.1`` turned into
dotted quads, default ports removed, dot segments resolved, characters that need it
percent-encoded. On top of that :func:`normalize` applies the RFC 3986 §6.2.2
percent-encoding normalizations (escapes of unreserved characters decoded, hex digits
uppercased) and drops the fragment, so that equivalent URLs compare equal.

This is the crawler's notion of "the same URL". The CDX URL key
(:func:`webark.url.cdx_key`) is a different, much more aggressive canonicalization.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import ada_url

from webark.url.errors import InvalidURLError

__all__ = ["join", "join_normalized", "normalize", "normalize_percent_encoding"]

_PERCENT_ESCAPE = re.compile(r"%([0-9A-Fa-f]{2})")
_BARE_PERCENT = re.compile(r"%(?![0-9A-Fa-f]{2})")
_UNRESERVED = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
_UNRESERVED_NOT_HEX = _UNRESERVED - frozenset("0123456789ABCDEFabcdef")


def _fixer(decodable: frozenset[str]) -> Callable[[re.Match[str]], str]:
    def fix(m: re.Match[str]) -> str:
        hexdigits = m.group(1)
        char = chr(int(hexdigits, 16))
        return char if char in decodable else "%" + hexdigits.upper()

    return fix


_FIX_ALL = _fixer(_UNRESERVED)
_FIX_NOT_HEX = _fixer(_UNRESERVED_NOT_HEX)


def normalize_percent_encoding(text: str) -> str:
    """RFC 3986 §6.2.2.1 and §6.2.2.2: uppercase the hex digits of every ``%XX`` escape
    and decode the escapes of unreserved characters (``A–Z a–z 0–9 - . _ ~``).

    A ``%`` that is not followed by two hex digits is left alone; while the text has
    such a bare ``%``, escapes of hex digits are not decoded either, since that could
    turn ``%%36%31`` (``%``, ``6``, ``1``) into a new escape ``%61``. The function is
    idempotent.

    >>> normalize_percent_encoding("/%7euser/%2fa%2Fb%41")
    '/~user/%2Fa%2FbA'
    >>> normalize_percent_encoding("100%"), normalize_percent_encoding("%%36%31")
    ('100%', '%%36%31')
    """
    if "%" not in text:
        return text
    fix = _FIX_NOT_HEX if _BARE_PERCENT.search(text) else _FIX_ALL
    return _PERCENT_ESCAPE.sub(fix, text)


def normalize(url: str) -> str:
    """Normalize an absolute URL: WHATWG parsing + RFC 3986 percent-encoding
    normalization, without the fragment.

    Examples:

    >>> normalize("HTTP://www.Example.COM:80/a/./b/../c?q=%7e#top")
    'http://www.example.com/a/c?q=~'
    >>> normalize("http://Bücher.ch/x y")
    'http://xn--bcher-kva.ch/x%20y'
    >>> normalize("http://0x7f.1/")
    'http://127.0.0.1/'

    Raises:
        InvalidURLError: the input is not an absolute URL the WHATWG parser accepts
            (e.g. ``"http://[::1"``, ``"/relative"``, ``"http://a b/"``).

    Source: WHATWG URL Standard (basic URL parser, URL serializer); RFC 3986 §6.2.2.
    """
    try:
        parsed = ada_url.URL(url)
    except ValueError as exc:
        raise InvalidURLError(url) from exc
    parsed.hash = ""
    return normalize_percent_encoding(parsed.href)


def join(base: str, ref: str) -> str:
    """Resolve a reference (e.g. an extracted link) against a base URL, the way a
    browser does (WHATWG URL Standard; for ordinary http(s) URLs the same result as
    RFC 3986 §5.2).

    An absolute ``ref`` replaces the base. The fragment of ``ref`` is kept; pass the
    result to :func:`normalize` to drop it.

    >>> join("http://a/b/c/d;p?q", "../g")
    'http://a/b/g'
    >>> join("http://a/b", "//c/d"), join("http://a/b", "https://x.org")
    ('http://c/d', 'https://x.org/')
    >>> join("http://a/b/", "c#top")
    'http://a/b/c#top'

    Raises:
        InvalidURLError: the base is not a valid absolute URL or the result is not a
            valid URL (e.g. ``join("http://a/", "http://[::1")``).
    """
    try:
        joined: str = ada_url.join_url(base, ref)
    except ValueError as exc:
        raise InvalidURLError(ref, f"cannot resolve against {base!r}") from exc
    return joined


def join_normalized(base: str, ref: str) -> str:
    """``normalize(join(base, ref))`` with one parse instead of two (the crawler's link
    resolution, called for every extracted link).

    The WHATWG serializer writes ``#`` only as the fragment delimiter (a ``#`` anywhere
    else is percent-encoded), so cutting at the first ``#`` is what setting an empty
    fragment does; the percent-encoding normalization follows as in :func:`normalize`.

    >>> join_normalized("http://a/b/c", "../%7Ed?q=%41#top")
    'http://a/~d?q=A'

    Raises:
        InvalidURLError: as :func:`join`.
    """
    return normalize_percent_encoding(join(base, ref).partition("#")[0])
