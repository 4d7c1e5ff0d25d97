"""Public suffixes and registered domains (Public Suffix List), offline.

Uses ``tldextract`` with its **bundled** snapshot of the Public Suffix List only:
``TLDExtract(cache_dir=None, suffix_list_urls=())`` never fetches the list over the
network and never writes a cache file. The snapshot is as recent as the installed
``tldextract`` release; upgrading the package updates it.

By default only the ICANN section of the list counts (as in IA's ``handyurl``
``getPublicSuffix``, which the python ``surt`` library implements with tldextract's
defaults): ``foo.blogspot.com`` → registered domain ``blogspot.com``. Pass
``include_private=True`` to also use the private section (``blogspot.com`` is then a
public suffix, and the registered domain is ``foo.blogspot.com``).
"""

from __future__ import annotations

import ipaddress
from functools import cache, lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import tldextract

__all__ = ["public_prefix", "public_suffix", "registered_domain"]


@cache
def _extractor() -> tldextract.TLDExtract:
    # Imported and created on first use (tldextract pulls in requests); bundled
    # snapshot, no network, no disk cache.
    import tldextract

    return tldextract.TLDExtract(cache_dir=None, suffix_list_urls=(), fallback_to_snapshot=True)


def _clean(host: str) -> str:
    host = host.strip().lower().rstrip(".")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    return host


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


@lru_cache(maxsize=1 << 14)
def _split(host: str, include_private: bool) -> tuple[str, str, str]:
    """(subdomain, domain, suffix) of a cleaned host name."""
    r = _extractor()(host, include_psl_private_domains=include_private)
    return r.subdomain, r.domain, r.suffix


def registered_domain(host: str, *, include_private: bool = False) -> str:
    """The registered domain of a host: the public suffix plus one label.

    Examples:

    >>> registered_domain("www.images.amazon.co.uk")
    'amazon.co.uk'
    >>> registered_domain("funky-images.fancy.co.jp")
    'fancy.co.jp'
    >>> registered_domain("WWW.Example.COM.")
    'example.com'
    >>> registered_domain("xn--landsbkasafn-5hb.is")
    'xn--landsbkasafn-5hb.is'
    >>> registered_domain("co.uk")  # a public suffix has none
    ''
    >>> registered_domain("localhost")  # no known suffix
    ''
    >>> registered_domain("192.0.2.1")  # an IP address is its own
    '192.0.2.1'

    The host is lowercased and a trailing dot removed; an IP address is its own
    registered domain (an IPv6 address is returned without brackets), so a non-empty
    result can always serve as a grouping key. Unicode and punycode host names are
    both understood; the result keeps the form of the input. Never raises.

    Source: Public Suffix List algorithm (publicsuffix.org), through tldextract's
    bundled snapshot (never the network); IA ``handyurl.getPublicSuffix``.
    """
    h = _clean(host)
    if not h:
        return ""
    if _is_ip(h):
        return h
    _sub, domain, suffix = _split(h, include_private)
    return f"{domain}.{suffix}" if domain and suffix else ""


def public_suffix(host: str, *, include_private: bool = False) -> str:
    """The public suffix of a host; ``""`` for an IP address or a host under no known
    suffix. Source: Public Suffix List (bundled tldextract snapshot).

    >>> public_suffix("www.amazon.co.uk"), public_suffix("localhost")
    ('co.uk', '')
    >>> public_suffix("a.b.blogspot.com"), public_suffix("a.b.blogspot.com", include_private=True)
    ('com', 'blogspot.com')
    """
    h = _clean(host)
    if not h or _is_ip(h):
        return ""
    return _split(h, include_private)[2]


def public_prefix(host: str, *, include_private: bool = False) -> str:
    """What comes before the registered domain (IA ``handyurl.getPublicPrefix``);
    ``""`` when there is nothing before it, for an IP address, or when the host has no
    registered domain.

    >>> public_prefix("www.images.amazon.co.uk"), public_prefix("example.com")
    ('www.images', '')
    """
    h = _clean(host)
    if not h or _is_ip(h):
        return ""
    sub, domain, suffix = _split(h, include_private)
    return sub if domain and suffix else ""
