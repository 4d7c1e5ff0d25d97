"""SURT forms of URLs: the CDX URL key and the Heritrix scope SURT.

SURT (Sort-friendly URI Reordering Transform) writes the host labels in reverse order,
so that a domain and all its subdomains sort together:
``http://www.example.com/a`` → ``com,example,www)/a``.

Two flavours are needed, and they are not interchangeable:

* the **CDX URL key** (:func:`cdx_key`), used to sort and look up CDX/CDXJ indexes.
  It is the SURT of the IA-canonicalized URL (see :mod:`webark.url.canon`), without
  scheme and without the closing comma: ``com,example)/path?a=2&b=1``. It must be
  exactly what pywb (python ``surt``), OpenWayback and OutbackCDX compute, or lookups
  in indexes made by them miss.
* the **scope SURT** (:func:`to_scope_surt`), used by ``SurtPrefixedDecideRule``-style
  scoping: scheme kept, every host label followed by a comma, and none of the IA
  rules (``www``, query order and session ids are kept):
  ``http://(com,example,www,)/path``. The comma after the last label makes the prefix
  ``http://(com,example,`` match ``example.com`` and its subdomains but not
  ``examplecorp.com`` (``http://(com,examplecorp,)/``).
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import overload

from webark.url.canon import (
    _alpha_reorder_query,
    _google,
    _ia,
    _parse,
    _strip_query_session_id,
    _to_bytes,
)
from webark.url.normalize import normalize

__all__ = ["cdx_key", "host_to_surt", "surt_form", "to_scope_surt"]

_DOTTED_QUAD = re.compile(rb"(?:\d{1,3}\.){3}\d{1,3}")
_DOTTED_QUAD_STR = re.compile(r"(?:\d{1,3}\.){3}\d{1,3}")


def _host_to_surt(host: bytes, reverse_ipaddr: bool) -> bytes:
    if not reverse_ipaddr and _DOTTED_QUAD.fullmatch(host):
        return host
    labels = host.split(b".")
    labels.reverse()
    return b",".join(labels)


def host_to_surt(host: str, reverse_ipaddr: bool = True) -> str:
    """Reverse the dot-separated labels of a host, comma-separated
    (``URLRegexTransformer.hostToSURT``).

    Only a dotted quad counts as an IP address for ``reverse_ipaddr=False``.

    >>> host_to_surt("www.archive.org"), host_to_surt("123.45.167.89")
    ('org,archive,www', '89,167,45,123')
    >>> host_to_surt("123.45.167.89", reverse_ipaddr=False)
    '123.45.167.89'
    >>> host_to_surt("10.162.1024.3", reverse_ipaddr=False)
    '3,1024,162,10'
    """
    if not reverse_ipaddr and _DOTTED_QUAD_STR.fullmatch(host):
        return host
    return ",".join(reversed(host.split(".")))


def _cdx_key_bytes(
    url: bytes, with_scheme: bool, trailing_comma: bool, host_massage: bool, reverse_ipaddr: bool
) -> bytes:
    if url.startswith(b"filedesc"):
        return url
    parts = _parse(url)
    if parts is None:
        return b"-"
    scheme, host, port, path, query, _fragment, _last = _ia(_google(parts), host_massage)
    if host:
        out = _host_to_surt(host, reverse_ipaddr)
        if with_scheme:
            out = scheme + (b":(" if scheme == b"dns" else b"://(") + out
        if port is not None:
            out += b":%d" % port if isinstance(port, int) else b":" + port
        out += b",)" if trailing_comma else b")"
    else:
        # dns:, mailto:, urn:, warcinfo:… (no authority): "scheme:" + lowercased rest
        out = scheme + b":"
    if path:
        out += path
    elif query is not None:
        out += b"/"
    if query is not None:
        out += b"?" + query
    return out


# An http(s) URL on which every canonicalization step but lowercasing, ``www``
# removal, the trailing-slash cut and the query sort is a no-op: a name host (ASCII,
# no empty label, no port, no userinfo), a path and query of characters that are
# neither escaped nor unescaped (no ``%``, no space, ASCII only), no fragment.
_SIMPLE_URL = re.compile(
    r"(https?)://([A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*)"
    r"((?:/[A-Za-z0-9\-._~!$&'*+,;=:@/]*)?)(?:\?([A-Za-z0-9\-._~!$&'*+,;=:@/?]+))?"
)
_WWW_N_STR = re.compile(r"www\d*\.")


def _simple_cdx_key(url: str) -> str | None:
    """The default CDX key of a :data:`_SIMPLE_URL` URL without the general pipeline
    (about 5x faster), or None when the URL needs it. Same result as
    ``_cdx_key_bytes(url, False, False, True, True)`` (tested on every URL of the
    corpus in tests/url)."""
    m = _SIMPLE_URL.fullmatch(url)
    if m is None:
        return None
    _scheme, host, path, query = m.groups()
    if host[-1].isdigit() or "//" in path or "/." in path:
        return None  # maybe an IPv4 form; path with segments to resolve
    host = host.lower()
    if host[:3] == "www":
        www = _WWW_N_STR.match(host)
        if www is not None:
            host = host[www.end() :]
    labels = host.split(".")
    labels.reverse()
    if path:
        path = path.lower()
        if len(path) > 1 and path[-1] == "/":
            path = path[:-1]
    else:
        path = "/"
    key = ",".join(labels) + ")" + path
    if query:
        q = _alpha_reorder_query(_strip_query_session_id(query.encode("ascii")).lower())
        if q:
            key += "?" + q.decode("ascii")
    return key


@lru_cache(maxsize=1 << 16)
def _cdx_key_cached(
    url: str | bytes,
    with_scheme: bool,
    trailing_comma: bool,
    host_massage: bool,
    reverse_ipaddr: bool,
) -> str | bytes:
    if isinstance(url, bytes):
        return _cdx_key_bytes(url, with_scheme, trailing_comma, host_massage, reverse_ipaddr)
    if url.startswith("filedesc"):
        return url
    if host_massage and reverse_ipaddr and not (with_scheme or trailing_comma):
        simple = _simple_cdx_key(url)
        if simple is not None:
            return simple
    key = _cdx_key_bytes(_to_bytes(url), with_scheme, trailing_comma, host_massage, reverse_ipaddr)
    # the key is ASCII: every part of it has been percent-encoded
    return key.decode("utf-8", "surrogateescape")


@overload
def cdx_key(
    url: str | None,
    *,
    with_scheme: bool = ...,
    trailing_comma: bool = ...,
    host_massage: bool = ...,
    reverse_ipaddr: bool = ...,
) -> str: ...
@overload
def cdx_key(
    url: bytes,
    *,
    with_scheme: bool = ...,
    trailing_comma: bool = ...,
    host_massage: bool = ...,
    reverse_ipaddr: bool = ...,
) -> bytes: ...
def cdx_key(
    url: str | bytes | None,
    *,
    with_scheme: bool = False,
    trailing_comma: bool = False,
    host_massage: bool = True,
    reverse_ipaddr: bool = True,
) -> str | bytes:
    """The CDX URL key of a URL: SURT of its default-IA canonical form.

    Same result as ``surt.surt(url, **options)`` of the python ``surt`` library (used
    by pywb's indexer and CDX server), and as webarchive-commons'
    ``WaybackURLKeyMaker`` (OpenWayback, OutbackCDX) on the usual URLs.

    Examples:

    >>> cdx_key("http://www.Example.com/path?b=1&a=2")
    'com,example)/path?a=2&b=1'
    >>> cdx_key("https://www2.example.com:443/A/?PHPSESSID=0123456789abcdefghijklemopqrstuv")
    'com,example)/a'
    >>> cdx_key("http://192.168.1.254/info/")
    '254,1,168,192)/info'
    >>> cdx_key("dns:www.archive.org")
    'dns:www.archive.org'
    >>> cdx_key("filedesc://foo.arc.gz")  # unchanged
    'filedesc://foo.arc.gz'
    >>> cdx_key("")
    '-'
    >>> cdx_key("http://www.example.com/", with_scheme=True, trailing_comma=True)
    'http://(com,example,)/'

    Args:
        url: the URL (``str``; ``bytes`` give ``bytes``, for raw header values that are
            not UTF-8). ``None`` or empty gives ``"-"``.
        with_scheme: prefix ``scheme://(`` (surt's ``with_scheme``).
        trailing_comma: write a comma before the closing ``)`` (after the port, as surt
            does: ``com,example:8080,)``).
        host_massage: drop a leading ``www.``/``wwwN.`` label (default, as pywb).
        reverse_ipaddr: reverse dotted-quad IPv4 hosts like names (default, as
            surt/pywb/OpenWayback: ``254,1,168,192)``); ``False`` keeps
            ``192.168.1.254)``.

    Never raises for text input: malformed URLs get a key too (see
    ``docs/url-differences.md`` for the inputs on which surt raises instead).
    Results are memoized (LRU, 65 536 entries): the indexer asks for the same URL for
    the request, response and metadata records of one capture.
    """
    if not url:
        return b"-" if isinstance(url, bytes) else "-"
    return _cdx_key_cached(url, with_scheme, trailing_comma, host_massage, reverse_ipaddr)


_AUTHORITY_URL = re.compile(r"([a-zA-Z][a-zA-Z0-9+.\-]*)://([^/?#]*)(.*)", re.DOTALL)


def surt_form(
    url: str,
    *,
    with_scheme: bool = True,
    trailing_comma: bool = True,
    reverse_ipaddr: bool = False,
    preserve_case: bool = False,
) -> str:
    """SURT of a URL *as given* (no canonicalization), Heritrix ``SURT.fromURI`` style.

    ``scheme://userinfo@host:port/path?query#fragment`` →
    ``scheme://(rev,host,:port)/path?query#fragment``, lowercased unless
    ``preserve_case``.

    Examples:

    >>> surt_form("http://www.example.com/a/b.html")
    'http://(com,example,www,)/a/b.html'
    >>> surt_form("http://foo.example.org:81/p?q#f")
    'http://(org,example,foo,:81)/p?q#f'
    >>> surt_form("http://10.1.2.3:81/")  # IPs not reversed
    'http://(10.1.2.3:81)/'
    >>> surt_form("http://foo.example.org/", with_scheme=False, trailing_comma=False)
    'org,example,foo)/'
    >>> surt_form("mailto:a@example.com")  # no authority
    'mailto:a@example.com'

    URIs without an authority (``dns:``, ``mailto:``, ``urn:``, ``file:///x``) are
    returned unchanged, as Heritrix does. Userinfo is dropped (Heritrix keeps it as
    ``…:port@userinfo)``; urlcanon drops it, and so do we: credentials say nothing
    about scope). A dotted-quad IPv4 host or a bracketed IPv6 host is written as is,
    without comma, unless ``reverse_ipaddr``.
    """
    m = _AUTHORITY_URL.match(url)
    if m is None:
        return url
    scheme, authority, rest = m.groups()
    hostport = authority.rpartition("@")[2]
    if hostport[:1] == "[":
        end = hostport.find("]") + 1 or len(hostport)
        host, port = hostport[:end], hostport[end:]
    else:
        host, colon, port = hostport.rpartition(":")
        if colon:
            port = ":" + port
        else:
            host, port = port, ""
    if port and not (port[1:].isdigit() and port.isascii()):
        host, port = (hostport, "") if port != ":" else (host, "")
    if not host:
        return url
    if host[:1] == "[" or (not reverse_ipaddr and _DOTTED_QUAD_STR.fullmatch(host)):
        body = host
    else:
        body = ",".join(reversed(host.split(".")))
        if trailing_comma:
            body += ","
    out = f"{body}{port}){rest}"
    if with_scheme:
        out = f"{scheme}://({out}"
    return out if preserve_case else out.lower()


def to_scope_surt(url: str) -> str:
    """The scope SURT of a URL: Heritrix's SURT form of the normalized URL.

    The URL is first normalized like the crawler does (:func:`webark.url.normalize`:
    WHATWG parsing, punycode host, default port and fragment removed), then written in
    SURT form with scheme and closing comma, all lowercase, IPv4 hosts not reversed.

    Examples:

    >>> to_scope_surt("http://www.Example.com/Path")
    'http://(com,example,www,)/path'
    >>> to_scope_surt("https://example.com:8443")
    'https://(com,example,:8443)/'
    >>> to_scope_surt("http://landsbókasafn.is/")
    'http://(is,xn--landsbkasafn-5hb,)/'
    >>> to_scope_surt("http://127.0.0.1/x")
    'http://(127.0.0.1)/x'

    Raises:
        InvalidURLError: the URL cannot be parsed.

    Source: Heritrix 3 ``UURI.getSurtForm()`` / ``SURT.fromURI`` (lowercased SURT of the
    fixed-up URI); differences in ``docs/url-differences.md``.
    """
    return surt_form(normalize(url))
