"""The server's TLS certificate chain of a capture, as a WARC ``metadata`` record.

No WARC tool stores certificates yet (WARC 1.1 §6.3.2 leaves "certificates exchanged"
out of scope; warcprox #13, wget-lua #17 are open). webark follows the proposal made in
warcprox #13: one ``metadata`` record per TLS connection, written with the first capture
made over that connection, ``WARC-Concurrent-To`` its response (or revisit) record and
``WARC-Target-URI`` its URL; the block is the chain *as the server sent it* (leaf
first, then the intermediates, in wire order; a root is there only if the server sent
it), PEM, media type ``application/pem-certificate-chain`` (RFC 8555 §9.1). Later
captures on the same kept-alive connection carry no chain: they were made under the
same handshake.

The chain comes from OpenSSL's ``SSL_get_peer_cert_chain``: public on Python 3.13
(``SSLObject.get_unverified_chain()``), and on 3.10–3.12 the same call on the C object
behind ``SSLObject`` (``_sslobj.get_unverified_chain()``, returning ``_ssl.Certificate``
objects). Where neither exists (or a resumed session has no chain), the leaf from
``getpeercert(binary_form=True)`` alone. It is read whether or not the certificate was
verified (the fetcher's default is not to verify, as Heritrix's ``open`` trust level).
"""

from __future__ import annotations

import ssl
from collections.abc import Sequence
from datetime import datetime

from webark.warc.builders import PEM_CHAIN, RecordBuilder
from webark.warc.record import WarcRecord

__all__ = ["PEM_CHAIN", "certificate_record", "chain_pem", "peer_chain"]

_ENCODING_DER = 2  # _ssl.ENCODING_DER: Certificate.public_bytes(format)


def peer_chain(tls: ssl.SSLObject | ssl.SSLSocket | None) -> tuple[bytes, ...]:
    """The certificates the server sent in the handshake of ``tls``, DER, leaf first
    (module docstring); ``()`` for ``None`` (plain TCP) or a peer that sent none."""
    if tls is None:
        return ()
    public = getattr(tls, "get_unverified_chain", None)  # Python 3.13+: list of DER
    if public is not None:
        return tuple(bytes(c) for c in public() or ())
    inner = getattr(getattr(tls, "_sslobj", None), "get_unverified_chain", None)
    if inner is not None:
        chain = inner()
        if chain:
            return tuple(c.public_bytes(_ENCODING_DER) for c in chain)
    leaf = tls.getpeercert(binary_form=True)
    return (leaf,) if leaf else ()


def chain_pem(chain: Sequence[bytes]) -> bytes:
    """DER certificates as one PEM text (RFC 7468 ``CERTIFICATE`` blocks, in order)."""
    return "".join(ssl.DER_cert_to_PEM_cert(der) for der in chain).encode("ascii")


def certificate_record(
    builder: RecordBuilder,
    target_uri: str,
    chain: Sequence[bytes],
    *,
    concurrent_to: str,
    date: datetime | None = None,
) -> WarcRecord:
    """The ``metadata`` record of a server's certificate chain (module docstring).

    Args:
        builder: the writer's record builder.
        target_uri: the URL of the capture made over the connection.
        chain: DER certificates, leaf first (:func:`peer_chain`); not empty.
        concurrent_to: the record id of that capture's response or revisit record.
        date: the capture's WARC-Date.

    Raises:
        ValueError: an empty chain.
    """
    if not chain:
        raise ValueError(f"no certificate to record for {target_uri}")
    return builder.metadata_block(target_uri, chain_pem(chain), PEM_CHAIN, date=date,
                                  concurrent_to=[concurrent_to])  # fmt: skip
