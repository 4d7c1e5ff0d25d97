"""Replay URLs: parse a request target into what it asks for, and build archival URLs.

The URL space (pywb's, so links and bookmarks made for pywb keep working)::

    /                                     home: collections and a URL search box
    /_webark/...                          the app's own files (static, client script, search)
    /{coll}/                              a collection page with search boxes
    /{coll}/search?q=…                    full-text search (``search`` without a scheme
                                          is never a TimeGate, as ``/{coll}/cdx``)
    /{coll}/*/{url}                       captures of {url} (calendar); {url}* or *.host: URLs
    /{coll}/diff/{ts1}/{ts2}/{url}        text diff of two captures of an HTML page
    /{coll}/record/{url}                  record mode (``webark serve --record``): the
    /{coll}/record/{modifier}/{url}       live URL fetched, archived, served rewritten
                                          (pywb's record route)
    /{coll}/patch/{url}                   patch mode (with ``--record``): the archived
    /{coll}/patch/{modifier}/{url}        capture if there is one, else recorded
    /{coll}/{url}                         Memento TimeGate (RFC 7089 §4.1): 302 to a memento
    /{coll}/{modifier}/{url}              TimeGate keeping the modifier (``id_/``)
    /{coll}/{timestamp}{modifier}/{url}   a memento: timestamp 1–14 digits (UTC; more
                                          digits or impossible dates are brought to
                                          the nearest real one, :func:`clamp_timestamp`),
                                          modifier ``id_ im_ js_ cs_ if_ oe_ mp_`` or none

(``/{coll}/cdx`` and ``/{coll}/timemap/...`` belong to the resolution API,
:mod:`webark.apps.cdx.api`, and never reach this parser.)

The ``{url}`` part is taken from the *raw* request target (ASGI ``raw_path``, percent
escapes as the client sent them) plus the raw query string, not from the decoded path:
``/c/2014/http://a.org/x%2Fy?b=1&a=2`` asks for ``http://a.org/x%2Fy?b=1&a=2``. A scheme
whose slashes a proxy merged (``http:/a.org``) is repaired, a URL without scheme gets
``http://``, and a URL sent fully percent-encoded (``http%3A%2F%2Fa.org%2F``, what an HTML
form produces) is decoded once.
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from typing import Literal
from urllib.parse import quote, unquote

#: Modifiers of archival URLs (pywb convention): ``id_`` the original bytes, ``im_``
#: image, ``js_`` script, ``cs_`` stylesheet, ``if_``/``fr_`` iframe/frame (no banner),
#: ``oe_`` object/embed, ``mp_`` main page. ``""`` is the rewritten page with the banner.
MODIFIERS = frozenset({"id_", "im_", "js_", "cs_", "if_", "fr_", "oe_", "mp_"})

#: Prefix of the app's own paths; collection names cannot start with ``_``
#: (:data:`webark.apps.cdx.sources._NAME_RE`), so it never hides a collection.
APP_PREFIX = "/_webark/"

_SCHEME = re.compile(r"^([a-zA-Z][a-zA-Z0-9+.-]*):([^/]*)")
_TS_MOD = re.compile(r"^([0-9]+)?([a-z]{2}_)?$")
_LIST = re.compile(r"^([0-9]{0,14})\*$")
_DIFF = re.compile(r"^diff/([0-9]+)/([0-9]+)/(.+)$", re.S)

Kind = Literal["home", "app", "collection", "search", "captures", "diff", "timegate", "memento",
               "record", "patch"]

#: ``WARC-Target-URI`` prefix of a page's viewport screenshot (Browsertrix's name, a
#: PNG resource record; :mod:`webark.apps.replay.screenshots`).
VIEW = "urn:view:"
#: ``WARC-Target-URI`` prefix of a page's thumbnail (Browsertrix's name, a small JPEG).
THUMBNAIL = "urn:thumbnail:"


def screenshot_page(uri: str) -> str | None:
    """The page URL a ``urn:view:`` / ``urn:thumbnail:`` URI is a screenshot of
    (``urn:view:http://a.org/`` → ``http://a.org/``), None for any other URI."""
    for prefix in (VIEW, THUMBNAIL):
        if uri.startswith(prefix):
            return uri[len(prefix) :]
    return None


#: The path segment of record mode: ``/{coll}/record/…`` (pywb's).
RECORD = "record"
#: The path segment of patch mode: ``/{coll}/patch/…`` (record only what is missing).
PATCH = "patch"


@dataclass(frozen=True, slots=True)
class Target:
    """What a request path asks for.

    Attributes:
        kind: ``home``, ``app`` (a ``/_webark/`` path), ``collection``, ``search``
            (full text), ``captures``, ``diff``, ``timegate``, ``memento``,
            ``record`` or ``patch``.
        coll: collection name ('' for ``home``/``app``).
        url: the original URL asked for (see the module docstring), or for ``app`` the
            path below ``/_webark/``.
        timestamp: the digits as requested (``memento``, ``diff``: any number, see
            :func:`clamp_timestamp`; ``captures``: a prefix of at most 14 such as
            ``2014``), None when absent.
        modifier: ``""`` or one of :data:`MODIFIERS` (an unknown ``xx_`` is ``""``).
        timestamp2: the second timestamp of a ``diff``.
    """

    kind: Kind
    coll: str = ""
    url: str = ""
    timestamp: str | None = None
    modifier: str = ""
    timestamp2: str | None = None


def fix_url(url: str) -> str:
    """The original URL from the ``{url}`` part of a replay path (see the module
    docstring): ``http:/a.org/`` → ``http://a.org/``, ``a.org/`` → ``http://a.org/``,
    ``http%3A%2F%2Fa.org%2F`` → ``http://a.org/``. Empty stays empty."""
    url = url.strip()
    if not url:
        return url
    low = url[:12].lower()
    if low.startswith(("http%3a", "https%3a")):
        url = unquote(url)
        low = url[:12].lower()
    for scheme in ("http:", "https:"):
        if low.startswith(scheme):
            rest = url[len(scheme) :]
            if not rest.startswith("//"):
                url = scheme + "//" + rest.lstrip("/")
            return url
    if url.startswith("//"):
        return "http:" + url
    m = _SCHEME.match(url)
    if m and not m.group(2).isdigit():  # dns:, urn:, ftp://… (not host:port)
        return url
    return "http://" + url


def clamp_timestamp(ts: str) -> str:
    """The 14-digit UTC timestamp a requested one stands for, whatever its digits
    (pywb's leniency: a timestamp in a replay URL is a wish, the archive answers with
    the closest capture and redirects to its real timestamp).

    Digits after the 14th are dropped; missing ones are the earliest value (``2014`` →
    ``20140101000000``); each field is brought into its range: year at least ``0001``,
    month 01–12, day 01 to the month's last, hour ≤ 23, minute and second ≤ 59
    (``0`` → ``00010101000000``, ``20141399`` → ``20141231000000``,
    ``99999999999999`` → ``99991231235959``).

    Raises:
        ValueError: ``ts`` is empty or not ASCII digits.
    """
    if not ts or not ts.isascii() or not ts.isdigit():
        raise ValueError(f"timestamp {ts!r}: not digits")
    ts = ts[:14]
    full = ts + "00000101000000"[len(ts) :]
    year = max(1, int(full[0:4]))
    month = min(max(1, int(full[4:6])), 12)
    day = min(max(1, int(full[6:8])), calendar.monthrange(year, month)[1])
    hour, minute, second = min(int(full[8:10]), 23), min(int(full[10:12]), 59), min(
        int(full[12:14]), 59
    )
    return f"{year:04d}{month:02d}{day:02d}{hour:02d}{minute:02d}{second:02d}"


def parse_target(raw_path: str, query: str = "") -> Target | None:
    """Parse the raw request path (percent escapes as sent) and raw query string.

    Returns:
        The :class:`Target`, or None when the path is not a replay path (e.g. ``//``).
    """
    if raw_path == "/" or raw_path == "":
        return Target("home")
    if raw_path.startswith(APP_PREFIX):
        return Target("app", url=raw_path[len(APP_PREFIX) :])
    if not raw_path.startswith("/"):
        return None
    coll, sep, rest = raw_path[1:].partition("/")
    if not coll:
        return None
    coll = unquote(coll)
    if not sep or (not rest and not query):
        return Target("collection", coll)
    if not rest:
        return Target("collection", coll)
    if rest == "search":
        return Target("search", coll)
    qs = "?" + query if query else ""
    head, sep2, tail = rest.partition("/")
    if head in (RECORD, PATCH) and sep2:
        mod, sep3, url = tail.partition("/")
        if not (sep3 and mod in MODIFIERS):
            mod, url = "", tail
        return Target("record" if head == RECORD else "patch", coll, fix_url(url + qs), None,
                      mod)  # fmt: skip
    m = _LIST.match(head)
    if m and sep2:
        return Target("captures", coll, fix_url(tail + qs), m.group(1) or None)
    m = _DIFF.match(rest)
    if m:
        return Target("diff", coll, fix_url(m.group(3) + qs), m.group(1), "", m.group(2))
    m = _TS_MOD.match(head)
    if m and sep2 and head:
        ts, mod = m.group(1), m.group(2) or ""
        if mod not in MODIFIERS:
            mod = ""
        url = fix_url(tail + qs)
        if ts is None:
            return Target("timegate", coll, url, None, mod)
        return Target("memento", coll, url, ts, mod)
    return Target("timegate", coll, fix_url(rest + qs))


_SAFE = ":/?#[]@!$&'()*+,;=%~"


def url_for_path(url: str) -> str:
    """``url`` made safe to put in a path or header: percent escapes kept, characters
    that are not allowed in a URL (space, non-ASCII, ``"<>\\^`{|}``) percent-encoded
    (UTF-8)."""
    return quote(url, safe=_SAFE)


def archival_url(prefix: str, timestamp: str, url: str, modifier: str = "") -> str:
    """``{prefix}{timestamp}{modifier}/{url}``; ``prefix`` ends with ``/``
    (``/coll/`` or ``http://host:port/coll/``)."""
    return f"{prefix}{timestamp}{modifier}/{url_for_path(url)}"


def record_prefix(coll_prefix: str, mode: str = RECORD) -> str:
    """``{coll_prefix}{mode}/``: the prefix of record-mode (``mode`` :data:`RECORD`) or
    patch-mode (:data:`PATCH`) URLs, which have no timestamp
    (``/coll/record/im_/http://a.org/i.png``, as pywb's)."""
    return f"{coll_prefix}{mode}/"


def captures_url(prefix: str, url: str) -> str:
    """``{prefix}*/{url}``: the capture list of ``url``."""
    return f"{prefix}*/{url_for_path(url)}"


def coll_prefix(base: str, coll: str) -> str:
    """``{base}{coll}/`` with ``base`` ending in ``/`` (``/`` or ``http://h:p/``)."""
    if not base.endswith("/"):
        base += "/"
    return f"{base}{quote(coll, safe='')}/"
