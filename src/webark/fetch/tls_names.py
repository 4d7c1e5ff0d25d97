"""The WARC fields of a capture made over TLS: ``WARC-Protocol`` (repeatable, higher
layer first: ``http/1.1`` then ``tls/1.3``) and ``WARC-Cipher-Suite`` (the IANA name of
the suite), the extensions proposed to the IIPC WARC specifications for the protocol
stack of a capture and adopted by Browsertrix and wget-lua.

Python's ``ssl`` names a suite as OpenSSL does: TLS 1.3 suites already by their IANA
names (``TLS_AES_128_GCM_SHA256``); TLS 1.2 ones by OpenSSL's short names
(``ECDHE-RSA-AES128-GCM-SHA256``), which :func:`iana_cipher_name` maps for the suites
OpenSSL 3 offers by default (RFC 5289, RFC 7905, RFC 5288). An unknown name gives no
``WARC-Cipher-Suite`` rather than a wrong one.
"""

from __future__ import annotations

from webark.fetch.exchange import Exchange

__all__ = ["iana_cipher_name", "protocol_fields"]

_OPENSSL_TO_IANA = {
    "ECDHE-ECDSA-AES128-GCM-SHA256": "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",
    "ECDHE-ECDSA-AES256-GCM-SHA384": "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384",
    "ECDHE-RSA-AES128-GCM-SHA256": "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
    "ECDHE-RSA-AES256-GCM-SHA384": "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384",
    "ECDHE-ECDSA-CHACHA20-POLY1305": "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256",
    "ECDHE-RSA-CHACHA20-POLY1305": "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256",
    "DHE-RSA-AES128-GCM-SHA256": "TLS_DHE_RSA_WITH_AES_128_GCM_SHA256",
    "DHE-RSA-AES256-GCM-SHA384": "TLS_DHE_RSA_WITH_AES_256_GCM_SHA384",
    "DHE-RSA-CHACHA20-POLY1305": "TLS_DHE_RSA_WITH_CHACHA20_POLY1305_SHA256",
    "ECDHE-ECDSA-AES128-SHA256": "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256",
    "ECDHE-ECDSA-AES256-SHA384": "TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA384",
    "ECDHE-RSA-AES128-SHA256": "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256",
    "ECDHE-RSA-AES256-SHA384": "TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA384",
    "ECDHE-ECDSA-AES128-SHA": "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA",
    "ECDHE-ECDSA-AES256-SHA": "TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA",
    "ECDHE-RSA-AES128-SHA": "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA",
    "ECDHE-RSA-AES256-SHA": "TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA",
    "AES128-GCM-SHA256": "TLS_RSA_WITH_AES_128_GCM_SHA256",
    "AES256-GCM-SHA384": "TLS_RSA_WITH_AES_256_GCM_SHA384",
    "AES128-SHA256": "TLS_RSA_WITH_AES_128_CBC_SHA256",
    "AES256-SHA256": "TLS_RSA_WITH_AES_256_CBC_SHA256",
    "AES128-SHA": "TLS_RSA_WITH_AES_128_CBC_SHA",
    "AES256-SHA": "TLS_RSA_WITH_AES_256_CBC_SHA",
}


def iana_cipher_name(openssl_name: str) -> str | None:
    """The IANA TLS cipher suite name of an OpenSSL suite name (TLS 1.3 names pass
    unchanged), or None when unknown."""
    if openssl_name.startswith("TLS_"):
        return openssl_name
    return _OPENSSL_TO_IANA.get(openssl_name)


def protocol_fields(exchange: Exchange) -> tuple[tuple[str, str], ...]:
    """``WARC-Protocol`` fields (``http/1.1``, then ``tls/1.x``) and
    ``WARC-Cipher-Suite`` of an exchange made over TLS; ``()`` over plain TCP."""
    if exchange.tls_version is None:
        return ()
    version = exchange.http_version or "1.1"
    out = [("WARC-Protocol", f"http/{version}"),
           ("WARC-Protocol", exchange.tls_version.lower().replace("tlsv", "tls/"))]  # fmt: skip
    suite = iana_cipher_name(exchange.cipher or "")
    if suite is not None:
        out.append(("WARC-Cipher-Suite", suite))
    return tuple(out)
