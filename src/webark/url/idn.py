"""Internationalized domain names: the ASCII (punycode, ``xn--``) and Unicode forms.

Hosts are stored and compared in their ASCII form (what goes on the wire and into
WARC-Target-URI). The Unicode form is needed where people write rules, e.g. a SURT
prefix ``http://(is,l`` that should cover ``landsbókasafn.is`` (ASCII form
``xn--landsbkasafn-5hb.is``). Mapping follows UTS #46 as used by the WHATWG URL
Standard (non-transitional), through ``ada_url``.
"""

from __future__ import annotations

import ada_url

__all__ = ["host_to_ascii", "host_to_unicode"]


def host_to_ascii(host: str) -> str:
    """ASCII (punycode) form of a host name, lowercased. An ASCII host is only
    lowercased. A name that UTS #46 rejects is returned lowercased and otherwise
    unchanged (the caller decides; the URL parser will reject it).

    >>> host_to_ascii("Bücher.CH"), host_to_ascii("landsbókasafn.is")
    ('xn--bcher-kva.ch', 'xn--landsbkasafn-5hb.is')

    Source: UTS #46 ToASCII, WHATWG URL "domain to ASCII".
    """
    if host.isascii():
        return host.lower()
    out = ada_url.idna_to_ascii(host.encode("utf-8"))
    return out.decode("ascii") if out else host.lower()


def host_to_unicode(host: str) -> str:
    """Unicode form of a host name. Labels that are not valid punycode stay as they
    are; hosts without ``xn--`` labels are returned lowercased and otherwise unchanged.

    >>> host_to_unicode("XN--LANDSBKASAFN-5HB.is"), host_to_unicode("xn--zz.example")
    ('landsbókasafn.is', 'xn--zz.example')

    Source: UTS #46 ToUnicode.
    """
    lowered = host.lower()
    if "xn--" not in lowered:
        return lowered
    out: str = ada_url.idna_to_unicode(lowered)
    return out or lowered
