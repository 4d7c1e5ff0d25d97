"""The server's TLS certificate of a capture, found for the replay banner.

The records (:mod:`webark.fetch.certificates`, written by the crawler and the proxy):
one WARC ``metadata`` record per TLS connection, ``Content-Type:
application/pem-certificate-chain`` (RFC 8555 §9.1; PEM, leaf first, as the server
sent it), ``WARC-Concurrent-To`` the first capture made over that connection and
``WARC-Target-URI`` its URL. Both indexers list it under that URL's key with status
``-`` and that mime; it is not replayable (:func:`webark.index.capture_select.capture_type`
calls it ``metadata``), so the lookups here ask for all records.

Which chain belongs to a capture (:func:`certificate_of`, an ``https`` capture):

1. the chain record under the capture's own key, within
   :data:`~webark.apps.replay.screenshots.WINDOW` seconds, whose ``WARC-Concurrent-To``
   names the capture's record (the first capture of its connection): the machinery of
   the screenshots, :func:`~webark.apps.replay.screenshots.linked_line`;
2. else the chain of its connection: captures after the first on a kept-alive
   connection carry none, and nothing in WARC names the connection. The writers put
   the chain record right after the first capture's records and a connection's
   captures go to one WARC file in order (one writer per connection), so the chain of
   the capture's connection is the one of the same host in the same WARC file with
   the greatest offset below the capture's record: no later chain of that host was
   written before it. A chain of another host cannot be it (one connection, one host);
   a connection closed and reopened wrote its own chain, nearer. This scans the host's
   index lines (at most :data:`HOST_SCAN` of them; beyond that, no certificate is
   shown rather than a slow banner).

The certificate shown is the leaf (the first PEM block), parsed with ``cryptography``:
subject and issuer as RFC 4514 strings, validity (RFC 5280 §4.1.2.5, UTC) and the
SHA-256 fingerprint of its DER form; the whole chain's PEM goes with it.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import timedelta

from cryptography import x509
from cryptography.hazmat.primitives import hashes

from webark.apps.replay.screenshots import WINDOW, linked_line
from webark.apps.replay.sources import ReplayContext
from webark.cdx.line import CdxLine
from webark.core.errors import FormatError
from webark.core.timestamps import from_timestamp14, to_timestamp14
from webark.index.capture_select import captures
from webark.index.locations import WarcNotFound
from webark.index.resolved import ResolvedCapture
from webark.warc.builders import PEM_CHAIN

__all__ = ["HOST_SCAN", "Certificate", "certificate_of", "describe"]

log = logging.getLogger(__name__)

#: Index lines of a host read at most to find the chain of a capture's connection.
HOST_SCAN = 20_000


@dataclass(frozen=True, slots=True)
class Certificate:
    """The leaf certificate of a capture's server: ``subject``, ``issuer`` (RFC 4514
    strings), ``not_before``/``not_after`` (``YYYY-MM-DD HH:MM:SS UTC``), ``sha256``
    (the DER's SHA-256, upper-case hex pairs joined by ``:``, as browsers show it),
    ``chain`` (the record's PEM text, leaf first), ``count`` (certificates in it),
    ``linked`` (True: the record is concurrent to this capture; False: found as the
    chain of its connection)."""

    subject: str
    issuer: str
    not_before: str
    not_after: str
    sha256: str
    chain: str
    count: int
    linked: bool

    def data(self) -> dict[str, object]:
        """The banner's JSON form (the fields by name)."""
        return {"subject": self.subject, "issuer": self.issuer,
                "not_before": self.not_before, "not_after": self.not_after,
                "sha256": self.sha256, "chain": self.chain, "count": self.count,
                "linked": self.linked}  # fmt: skip


def describe(pem: bytes, *, linked: bool) -> Certificate:
    """The :class:`Certificate` of a PEM chain (leaf first).

    Raises:
        ValueError: no PEM certificate in ``pem``, or one ``cryptography`` cannot parse.
    """
    chain = x509.load_pem_x509_certificates(pem)
    leaf = chain[0]
    fmt = "%Y-%m-%d %H:%M:%S UTC"
    return Certificate(
        subject=leaf.subject.rfc4514_string(), issuer=leaf.issuer.rfc4514_string(),
        not_before=leaf.not_valid_before_utc.strftime(fmt),
        not_after=leaf.not_valid_after_utc.strftime(fmt),
        sha256=leaf.fingerprint(hashes.SHA256()).hex(":").upper(),
        chain=pem.decode("ascii", "replace"), count=len(chain), linked=linked,
    )  # fmt: skip


def _is_chain(line: CdxLine) -> bool:
    return line.mime == PEM_CHAIN and line.status == "-"


def _own_chain(ctx: ReplayContext, rc: ResolvedCapture) -> CdxLine | None:
    """Rule 1 of the module docstring."""
    ts = rc.line.timestamp
    try:
        mid = from_timestamp14(ts)
    except ValueError:
        return None
    span = timedelta(seconds=WINDOW)
    near = [line for line in captures(ctx.source, rc.line.url, "exact",
                                      to_timestamp14(mid - span), to_timestamp14(mid + span),
                                      all_records=True) if _is_chain(line)]  # fmt: skip
    near.sort(key=lambda line: abs((from_timestamp14(line.timestamp) - mid).total_seconds()))
    found = linked_line(ctx, rc, near, what="certificate chain", unlinked_ok=False)
    return found[0] if found is not None else None


def _connection_chain(ctx: ReplayContext, rc: ResolvedCapture) -> CdxLine | None:
    """Rule 2 of the module docstring."""
    best: CdxLine | None = None
    for n, line in enumerate(captures(ctx.source, rc.line.url, "host", all_records=True)):
        if n >= HOST_SCAN:
            log.info("collection %r: no certificate for %s: host has over %d lines",
                     ctx.name, rc.line.url, HOST_SCAN)  # fmt: skip
            return None
        if (_is_chain(line) and line.filename == rc.line.filename
                and line.offset < rc.line.offset
                and (best is None or line.offset > best.offset)):  # fmt: skip
            best = line
    return best


def certificate_of(ctx: ReplayContext, rc: ResolvedCapture) -> Certificate | None:
    """The server certificate of the ``https`` capture ``rc`` (the rules of the module
    docstring), None for other schemes, when there is no chain record, or when it
    cannot be read or parsed (logged). Blocking (index scans, a record read or two):
    run it in a worker thread.

    Raises:
        IndexUnavailable: the index cannot be read.
    """
    if not rc.line.url.lower().startswith("https://"):
        return None
    line = _own_chain(ctx, rc)
    linked = line is not None
    if line is None:
        line = _connection_chain(ctx, rc)
    if line is None:
        return None
    try:
        record = ctx.loader.load(line)
        if not (record.target_uri or "").lower().startswith("https://"):
            return None
        return describe(record.block.read_all(), linked=linked)
    except (FormatError, WarcNotFound, OSError, ValueError) as exc:
        log.warning("collection %r: certificate chain %s @ %s unreadable: %s", ctx.name,
                    line.url, line.timestamp, exc)  # fmt: skip
        return None
