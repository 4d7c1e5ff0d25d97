"""IA and Google URL canonicalization: the rules behind the CDX URL key.

These are the canonicalizers of the Internet Archive's ``webarchive-commons``
(``org.archive.url``: ``GoogleURLCanonicalizer``, ``IAURLCanonicalizer``,
``DefaultIAURLCanonicalizer``, ``URLRegexTransformer``), which OpenWayback and
OutbackCDX use, and which the python ``surt`` library (used by pywb) ports. The
behaviour is reproduced byte for byte so that a URL key computed here finds captures
indexed by those tools (see ``docs/url-differences.md`` for the few deliberate
differences, e.g. no DNS lookups and no exceptions on malformed ports).

The work is done on bytes, like the reference implementations: percent-decoding can
produce byte sequences that are not UTF-8, and they must survive unchanged until they
are percent-encoded again. The ``str`` functions encode to UTF-8 first (lone
surrogates from ``surrogateescape`` decoding map back to their original bytes).

Pipeline (``DefaultIAURLCanonicalizer`` = Google then IA):

1. parse (``handyurl.parse``): strip surrounding whitespace, drop TAB/CR/LF, add
   ``http://`` when no scheme is present, collapse ``http://https://`` to the last
   scheme, split with the RFC 2396 appendix B regex; userinfo is dropped.
2. Google (Safe Browsing canonicalization): drop the fragment; unescape the host
   repeatedly, IDNA-encode it (IDNA 2003), collapse ``..`` to ``.``, strip dots,
   normalise numeric IPv4 forms (``3279880203`` → ``195.127.0.11``), lowercase;
   unescape the path repeatedly, resolve ``.``/``..`` and ``//``, then escape once
   everything outside printable ASCII (plus ``%`` and ``#``).
3. IA: lowercase host, drop ``www.``/``wwwN.`` (host massage), drop the default
   port, lowercase path and query, drop session ids (``jsessionid``, ``phpsessid``,
   ``sid``, ``aspsessionid``, ``cfid``/``cftoken``, ASP.NET cookieless ``(S(…))``
   path segments), strip a trailing ``/``, sort the query arguments, drop an empty
   query.
"""

from __future__ import annotations

import contextlib
import re
from typing import NamedTuple, overload
from urllib.parse import unquote_to_bytes

__all__ = [
    "IaUrl",
    "alpha_reorder_query",
    "attempt_ip_formats",
    "canonicalize",
    "default_port",
    "google_canonicalize",
    "ia_canonicalize",
    "massage_host",
    "parse_ia_url",
    "strip_path_session_id",
    "strip_query_session_id",
    "unescape_repeatedly",
]

# Internal representation: a plain tuple, for speed.
# (scheme, host, port, path, query, fragment, last_delimiter)
# port: an int, or the digits of a port number above 65535
_Parts = tuple[
    bytes, bytes | None, int | bytes | None, bytes | None, bytes | None, bytes | None, bool
]


class IaUrl(NamedTuple):
    """A URL split the way ``handyurl.parse`` of webarchive-commons / python surt does.

    All text fields are ``bytes`` (the URL as UTF-8), ``None`` when absent; ``port`` is an
    ``int``, or the digits of a port number above 65535. There is no
    userinfo field: the IA parser drops it. ``last_delimiter`` is true when the URL ended
    in a ``?`` with nothing after it (kept so that ``http://host/q?`` round-trips).
    """

    scheme: bytes
    host: bytes | None
    port: int | bytes | None
    path: bytes | None
    query: bytes | None
    fragment: bytes | None
    last_delimiter: bool

    def geturl(self) -> str:
        """Render the URL again (``handyurl.geturl()``).

        >>> parse_ia_url("http://www.archive.org:8080?#foo").geturl()
        'http://www.archive.org:8080/#foo'
        """
        return _to_str(_render_url(self))


# --------------------------------------------------------------------------- parsing

_MULTIPLE_HTTP = re.compile(rb"(?:https?://)*(https?://)")
# RFC 2396 appendix B, with the scheme restricted to legal scheme characters.
_RFC2396 = re.compile(
    rb"(?:([a-zA-Z][a-zA-Z0-9+.\-]*):)?(?://([^/?#]*))?([^?#]*)(?:\?([^#]*))?(?:#(.*))?",
    re.DOTALL,
)
_TAB_CR_LF = b"\t\r\n"
_TAB_CR_LF_RE = re.compile(rb"[\t\r\n]")


def _parse(url: bytes) -> _Parts | None:
    """``handyurl.parse``; None for a URL that is empty after stripping."""
    url = url.strip()
    if _TAB_CR_LF_RE.search(url) is not None:
        url = url.translate(None, _TAB_CR_LF)
    if not url:
        return None
    m = _RFC2396.fullmatch(url)
    assert m is not None  # every string matches: all parts are optional
    if m.group(1) is None:  # no scheme
        url = b"http://" + url
        m = _RFC2396.fullmatch(url)
        assert m is not None
    if url[:4] == b"http" and (url.startswith(b"http", 7) or url.startswith(b"http", 8)):
        multiple = _MULTIPLE_HTTP.match(url)
        if multiple is not None and multiple.start(1) > 0:
            url = url[multiple.start(1) :]
            m = _RFC2396.fullmatch(url)
            assert m is not None
    scheme, netloc, path, query, fragment = m.groups()
    netloc = netloc or b""
    if netloc[-1:] == b":":  # "http://host:/path": a colon without a port
        netloc = netloc.rstrip(b":")

    host: bytes | None
    port: int | bytes | None = None
    hostinfo = netloc.rpartition(b"@")[2]
    if b"[" in hostinfo:
        bracketed = hostinfo.partition(b"[")[2]
        host, _, rest = bracketed.partition(b"]")
        port_text = rest.partition(b":")[2]
    else:
        host, _, port_text = hostinfo.partition(b":")
    if port_text:
        if not port_text.isdigit():
            # not a port: the colon belongs to the name (an IPv6 address without
            # brackets, "x:3000.cu"); python surt raises ValueError here
            host = hostinfo
        elif int(port_text) <= 65535:
            port = int(port_text) or None
        else:
            # out of range (surt raises ValueError): keep the digits so that the URL
            # still gets a key, distinct from the one without the port
            port = port_text
    if host:
        if b"%" in host:
            name, pct, zone = host.partition(b"%")
            host = name.lower() + pct + zone
        else:
            host = host.lower()
    else:
        host = None

    if not path:
        path = None
    if scheme[:4] == b"http" and host is None and path is not None:
        # "http:////////////////www.vikings.com": the host hides in the path.
        host, _, rest_path = path.lstrip(b"/").partition(b"/")
        path = b"/" + rest_path
    last_delimiter = url[-1:] == b"?" and not query
    return (scheme, host, port, path, query or None, fragment or None, last_delimiter)


def parse_ia_url(url: str | bytes) -> IaUrl:
    """Split a URL like ``handyurl.parse`` (webarchive-commons ``URLParser``), without
    canonicalizing it.

    >>> parse_ia_url("http://user@Example.com:8080/a?b#c")
    IaUrl(scheme=b'http', host=b'example.com', port=8080, path=b'/a', query=b'b', \
fragment=b'c', last_delimiter=False)
    >>> parse_ia_url("http://https://order.1and1.com").geturl()
    'https://order.1and1.com'
    >>> parse_ia_url("http:////////////////www.vikings.com").geturl()
    'http://www.vikings.com/'

    Raises:
        ValueError: for an empty (or all-whitespace) URL.
    """
    parts = _parse(_to_bytes(url))
    if parts is None:
        raise ValueError("empty URL")
    return IaUrl._make(parts)


# --------------------------------------------------------------- escaping helpers

# GoogleURLCanonicalizer.escapeOnce: escape everything but printable ASCII, and '%' and
# '#' (what ``quote_from_bytes(data, safe=_ESCAPE_SAFE)`` does, faster).
_ESCAPE_SAFE = b"!\"$&'()*+,-./:;<=>?@[\\]^_`{|}~"
_ALL_SAFE = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-~" + _ESCAPE_SAFE
_UNSAFE_BYTE = re.compile(b"[^" + re.escape(_ALL_SAFE) + b"]")
_ESCAPES = [b"%%%02X" % i for i in range(256)]


def _escape_byte(m: re.Match[bytes]) -> bytes:
    return _ESCAPES[m[0][0]]


def _escape_once(data: bytes) -> bytes:
    if not data or not data.rstrip(_ALL_SAFE):
        return data
    return _UNSAFE_BYTE.sub(_escape_byte, data)


def _unescape_repeatedly(data: bytes) -> bytes:
    while b"%" in data:
        decoded = unquote_to_bytes(data)
        if decoded == data:
            break
        data = decoded
    return data


@overload
def unescape_repeatedly(text: str) -> str: ...
@overload
def unescape_repeatedly(text: bytes) -> bytes: ...
def unescape_repeatedly(text: str | bytes) -> str | bytes:
    """Percent-decode until nothing changes (``GoogleURLCanonicalizer.unescapeRepeatedly``).

    Malformed escapes stay. Returns the type it was given (``str`` is handled as UTF-8).

    >>> unescape_repeatedly("%25%32%35")
    '%'
    >>> unescape_repeatedly("%!A%21%21%25")
    '%!A!!%'
    >>> unescape_repeatedly(b"%2")
    b'%2'
    """
    out = _unescape_repeatedly(_to_bytes(text))
    return out if isinstance(text, bytes) else _to_str(out)


def _normalize_path(path: bytes | None) -> bytes:
    """GoogleURLCanonicalizer.normalizePath: resolve '.' and '..', drop empty segments."""
    if not path:
        return b"/"
    if path[:1] == b"/" and b"//" not in path and b"/." not in path:
        return path
    kept: list[bytes] = []
    for segment in path.split(b"/")[1:]:
        if segment == b".":
            continue
        if segment == b"..":
            if kept:
                kept.pop()
            else:
                kept.append(segment)
        else:
            kept.append(segment)
    if not kept:
        return b"/"
    return b"/" + b"".join(s + b"/" for s in kept[:-1] if s) + kept[-1]


# ----------------------------------------------------------------------- IPv4 forms

_DECIMAL_IP = re.compile(rb"[1-9][0-9]*(?:\.[0-9]+){0,3}")
_OCTAL_IP = re.compile(rb"0[0-7]*(?:\.[0-7]+){0,3}")
_PART_LIMITS = (0xFFFFFFFF, 0xFFFFFF, 0xFFFF, 0xFF)


def _inet_aton(text: bytes) -> bytes | None:
    """BSD/glibc ``inet_aton``: 1–4 parts, each decimal, ``0``-octal or ``0x``-hex; the
    last part fills the remaining bytes. Dotted-quad text, or None if invalid."""
    parts = text.split(b".")
    if not 1 <= len(parts) <= 4:
        return None
    values = []
    for part in parts:
        if part[:2] in (b"0x", b"0X"):
            digits = part[2:]
            if not digits or digits.strip(b"0123456789abcdefABCDEF"):
                return None
            values.append(int(digits, 16))
        elif part.isdigit():
            try:
                values.append(int(part, 8) if part[:1] == b"0" else int(part, 10))
            except ValueError:  # 8 or 9 in an octal part
                return None
        else:
            return None
    last = values.pop()
    if any(v > 0xFF for v in values) or last > _PART_LIMITS[len(values)]:
        return None
    number = last
    for i, v in enumerate(values):
        number |= v << (24 - 8 * i)
    return b"%d.%d.%d.%d" % (number >> 24, (number >> 16) & 255, (number >> 8) & 255, number & 255)


def _attempt_ip_formats(host: bytes) -> bytes | None:
    if not host[-1:].isdigit():  # names end in a letter: skip the regexes
        return None
    if host.isdigit():
        # the whole host is a number: mask to 32 bits, as the IA canonicalizer does
        number = int(host) & 0xFFFFFFFF
        return b"%d.%d.%d.%d" % (
            number >> 24,
            (number >> 16) & 255,
            (number >> 8) & 255,
            number & 255,
        )
    if _DECIMAL_IP.fullmatch(host) or _OCTAL_IP.fullmatch(host):
        return _inet_aton(host)
    return None


@overload
def attempt_ip_formats(host: str) -> str | None: ...
@overload
def attempt_ip_formats(host: bytes) -> bytes | None: ...
@overload
def attempt_ip_formats(host: None) -> None: ...
def attempt_ip_formats(host: str | bytes | None) -> str | bytes | None:
    """Dotted-quad form of a numeric IPv4 host, or None
    (``GoogleURLCanonicalizer.attemptIPFormats``).

    A host made only of digits is a 32-bit number (masked to 32 bits, as IA does for
    broken live-web ARCs); dotted decimal/octal forms are read the way ``inet_aton``
    reads them; invalid forms and names give None. Returns the type it was given.

    >>> attempt_ip_formats("3279880203")
    '195.127.0.11'
    >>> attempt_ip_formats("017.0.0.1"), attempt_ip_formats("10.0.258")
    ('15.0.0.1', '10.0.1.2')
    >>> attempt_ip_formats("1.2.3.256") is None, attempt_ip_formats("www.foo.com") is None
    (True, True)

    Unlike the reference implementations this never calls the system resolver (they
    pass dotted forms to ``gethostbyname``); the results are those of glibc's
    ``inet_aton``, which is what ``gethostbyname`` returns for numeric names.
    """
    if host is None:
        return None
    out = _attempt_ip_formats(_to_bytes(host))
    if out is None or isinstance(host, bytes):
        return out
    return out.decode("ascii")


# ------------------------------------------------------------------ Google + IA


def _google(parts: _Parts) -> _Parts:
    scheme, host, port, path, query, _fragment, last_delimiter = parts
    if query:
        query = _escape_once(_unescape_repeatedly(query))
    if host:
        host = _unescape_repeatedly(host)
        if not host.isascii():
            # undecodable bytes are dropped; on UnicodeError (empty or too long label,
            # prohibited code point) the host stays as it is and gets escaped below
            with contextlib.suppress(ValueError):
                host = host.decode("utf-8", "ignore").encode("idna")
        if b".." in host:
            host = host.replace(b"..", b".")
        host = host.strip(b".")
        ip = _attempt_ip_formats(host)
        host = ip if ip else _escape_once(host.lower())
    if path is not None:
        path = _unescape_repeatedly(path)
    if host:
        path = _normalize_path(path)
    if path:
        path = _escape_once(path)
    return (scheme, host, port, path, query, None, last_delimiter)


_WWW_N = re.compile(rb"www\d*\.")


def massage_host(host: str) -> str:
    """Drop one leading ``www.`` or ``wwwN.`` label (``IAURLCanonicalizer.massageHost``).

    >>> massage_host("www12.foo.com"), massage_host("www2foo.com")
    ('foo.com', 'www2foo.com')
    >>> massage_host("www2.www2foo.com")
    'www2foo.com'
    """
    m = _WWW_N.match(host.encode("utf-8", "surrogateescape"))
    return host[m.end() :] if m else host


def default_port(scheme: str) -> int:
    """Default port of a scheme as the IA canonicalizer knows it: 80 for http, 443 for
    https, 0 (unknown) for anything else (``IAURLCanonicalizer.getDefaultPort``).

    >>> default_port("HTTPS"), default_port("ftp")
    (443, 0)
    """
    s = scheme.lower()
    return 80 if s == "http" else 443 if s == "https" else 0


def _default_port(scheme: bytes) -> int:
    s = scheme.lower()
    return 80 if s == b"http" else 443 if s == b"https" else 0


# URLRegexTransformer (Apache-2.0, webarchive-commons): session ids in paths/queries.
_PATH_SESSION_IDS = (
    re.compile(rb"(.*/)(\((?:[a-z]\([0-9a-z]{24}\))+\)/)([^?]+\.aspx.*)", re.I | re.S),
    re.compile(rb"(.*/)(\([0-9a-z]{24}\)/)([^?]+\.aspx.*)", re.I | re.S),
)
_QUERY_SESSION_IDS = (
    re.compile(rb"(.*)(?:jsessionid=[0-9a-zA-Z]{32})(?:&(.*))?", re.I | re.S),
    re.compile(rb"(.*)(?:phpsessid=[0-9a-zA-Z]{32})(?:&(.*))?", re.I | re.S),
    re.compile(rb"(.*)(?:sid=[0-9a-zA-Z]{32})(?:&(.*))?", re.I | re.S),
    re.compile(rb"(.*)(?:aspsessionid[a-zA-Z]{8}=[a-zA-Z]{24})(?:&(.*))?", re.I | re.S),
    re.compile(rb"(.*)(?:cfid=[^&]+&cftoken=[^&]+)(?:&(.*))?", re.I | re.S),
)


def _strip_path_session_id(path: bytes) -> bytes:
    if b"(" not in path:
        return path
    for pattern in _PATH_SESSION_IDS:
        m = pattern.fullmatch(path)
        if m:
            path = m.group(1) + m.group(3)
    return path


def _strip_query_session_id(query: bytes) -> bytes:
    lowered = query.lower()
    if b"sid" not in lowered and b"sessionid" not in lowered and b"cfid" not in lowered:
        return query
    for pattern in _QUERY_SESSION_IDS:
        m = pattern.fullmatch(query)
        if m:
            query = m.group(1) + m.group(2) if m.group(2) else m.group(1)
    return query


def strip_path_session_id(path: str) -> str:
    """Remove an ASP.NET cookieless session segment from a path
    (``URLRegexTransformer.stripPathSessionID``).

    >>> strip_path_session_id("/(S(4hqa0555fwsecu455xqckv45))/mileg.aspx")
    '/mileg.aspx'
    """
    return _to_str(_strip_path_session_id(_to_bytes(path)))


def strip_query_session_id(query: str) -> str:
    """Remove ``jsessionid=``/``phpsessid=``/``sid=`` (32 alphanumerics),
    ``ASPSESSIONIDxxxxxxxx=`` (24 letters) and ``CFID=…&CFTOKEN=…`` from a query
    (``URLRegexTransformer.stripQuerySessionID``; each pattern removes its last match).

    >>> strip_query_session_id("?one=two&phpsessid=0123456789abcdefghijklemopqrstuv&x=y")
    '?one=two&x=y'
    >>> strip_query_session_id("?CFID=1169580&CFTOKEN=48630702&dtstamp=22")
    '?dtstamp=22'
    """
    return _to_str(_strip_query_session_id(_to_bytes(query)))


def _alpha_reorder_query(query: bytes) -> bytes:
    if len(query) <= 1 or (b"&" not in query):
        return query
    pairs = sorted(tuple(arg.split(b"=", 1)) for arg in query.split(b"&"))
    return b"&".join(b"=".join(p) for p in pairs)


@overload
def alpha_reorder_query(query: str) -> str: ...
@overload
def alpha_reorder_query(query: None) -> None: ...
def alpha_reorder_query(query: str | None) -> str | None:
    """Sort query arguments by name, then value (``IAURLCanonicalizer.alphaReorderQuery``).

    An argument without ``=`` sorts before the same name with one; empty arguments are
    kept; ``None`` (no query) gives ``None``.

    >>> alpha_reorder_query("b=b&a=b&b=a&a=a")
    'a=a&a=b&b=a&b=b'
    >>> alpha_reorder_query("a=1&"), alpha_reorder_query("b&a=1&a")
    ('&a=1', 'a&a=1&b')
    """
    if query is None:
        return None
    return _to_str(_alpha_reorder_query(_to_bytes(query)))


def _ia(
    parts: _Parts,
    host_massage: bool = True,
    path_lowercase: bool = True,
    query_lowercase: bool = True,
    strip_session_ids: bool = True,
) -> _Parts:
    scheme, host, port, path, query, _fragment, last_delimiter = parts
    if host:
        host = host.lower()
        if host_massage and scheme != b"dns" and host[:3] == b"www":
            m = _WWW_N.match(host)
            if m:
                host = host[m.end() :]
    if port is not None and port == _default_port(scheme):
        port = None
    if path:
        if path_lowercase:
            path = path.lower()
        if strip_session_ids:
            path = _strip_path_session_id(path)
        if len(path) > 1 and path[-1:] == b"/":
            path = path[:-1]
    if query:
        if strip_session_ids:
            query = _strip_query_session_id(query)
        if query_lowercase:
            query = query.lower()
        query = _alpha_reorder_query(query) or None
    else:
        last_delimiter = False
    return (scheme, host, port, path, query, None, last_delimiter)


# ---------------------------------------------------------------------- rendering


def _render_url(parts: _Parts) -> bytes:
    scheme, host, port, path, query, fragment, last_delimiter = parts
    out = scheme + b":"
    if host:
        if scheme != b"dns":
            out += b"//"
        out += host
        if port is not None:
            out += b":%d" % port if isinstance(port, int) else b":" + port
    if path:
        out += path
    elif query is not None or fragment is not None:
        out += b"/"
    if query is not None:
        out += b"?" + query
    if fragment is not None:
        out += b"#" + fragment
    if last_delimiter:
        out += b"?"
    return out


def _to_bytes(url: str | bytes) -> bytes:
    if isinstance(url, bytes):
        return url
    try:
        return url.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return url.encode("utf-8", "surrogatepass")


def _to_str(data: bytes) -> str:
    return data.decode("utf-8", "surrogateescape")


# ----------------------------------------------------------------- public entries


def google_canonicalize(url: str | bytes) -> str:
    """Google Safe Browsing canonicalization as implemented by ``GoogleURLCanonicalizer``.

    Returns ``""`` for an empty URL; never raises.

    >>> google_canonicalize("http://host/%25%32%35")
    'http://host/%25'
    >>> google_canonicalize("http://3279880203/blah")
    'http://195.127.0.11/blah'
    >>> google_canonicalize("www.google.com"), google_canonicalize("☃.com")
    ('http://www.google.com/', 'http://xn--n3h.com/')
    >>> google_canonicalize("http://www.GOOgle.com.../a/../b#frag")
    'http://www.google.com/b'
    """
    parts = _parse(_to_bytes(url))
    return "" if parts is None else _to_str(_render_url(_google(parts)))


def ia_canonicalize(
    url: str | bytes,
    *,
    host_massage: bool = True,
    path_lowercase: bool = True,
    query_lowercase: bool = True,
    strip_session_ids: bool = True,
) -> str:
    """IA canonicalization alone (``IAURLCanonicalizer``), without the Google step.

    The options switch off single rules (all on by default, as in IA and pywb). The
    fragment is dropped (the Java ``hashStrip`` rule). Returns ``""`` for an empty URL;
    never raises.

    >>> ia_canonicalize("http://www.archive.org:80/")
    'http://archive.org/'
    >>> ia_canonicalize("https://www.archive.org:80/")
    'https://archive.org:80/'
    >>> ia_canonicalize("http://example.com/foo?X=Y")
    'http://example.com/foo?x=y'
    >>> ia_canonicalize("http://example.com/foo?X=Y", query_lowercase=False)
    'http://example.com/foo?X=Y'
    """
    parts = _parse(_to_bytes(url))
    if parts is None:
        return ""
    return _to_str(
        _render_url(_ia(parts, host_massage, path_lowercase, query_lowercase, strip_session_ids))
    )


def canonicalize(
    url: str | bytes,
    *,
    host_massage: bool = True,
    path_lowercase: bool = True,
    query_lowercase: bool = True,
    strip_session_ids: bool = True,
) -> str:
    """Default IA canonicalization (Google, then IA) — the URL behind the CDX URL key.

    Returns ``""`` for an empty URL; never raises. Options as for
    :func:`ia_canonicalize`. The scheme keeps its case, as in the references.

    >>> canonicalize("http://www34.archive.org/index.html?b=a&b=b&a=b")
    'http://archive.org/index.html?a=b&b=a&b=b'
    >>> session = "jsessionid=" + "0123456789" * 3 + "ab"
    >>> canonicalize("https://www.Example.com:443/A/./B/../c/?" + session + "#x")
    'https://example.com/a/c'
    >>> canonicalize("dns:www.archive.org")
    'dns:www.archive.org'

    Source: ``DefaultIAURLCanonicalizer`` (webarchive-commons), python ``surt``.
    """
    parts = _parse(_to_bytes(url))
    if parts is None:
        return ""
    parts = _ia(_google(parts), host_massage, path_lowercase, query_lowercase, strip_session_ids)
    return _to_str(_render_url(parts))
