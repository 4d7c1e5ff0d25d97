"""A loopback HTTPS site whose certificate chain the test makes (root CA → intermediate
CA → leaf for 127.0.0.1, with trustme over ``cryptography``), and the reading back of
the certificate-chain records webark writes for it."""

from __future__ import annotations

import json
import ssl
import subprocess
import sys
from pathlib import Path

import trustme
from cryptography import x509
from cryptography.hazmat.primitives.serialization import Encoding

from http_wait import WEBARK
from webark.warc.reader import ArchiveReader
from webark.warc.record import WarcRecord

PEM_CHAIN = "application/pem-certificate-chain"


class ChainCA:
    """A root, an intermediate under it and a leaf for ``127.0.0.1`` under that.

    ``sent`` is what the server sends (leaf, intermediate: the root is not sent, as
    real servers do), DER."""

    def __init__(self) -> None:
        self.root = trustme.CA()
        self.intermediate = self.root.create_child_ca()
        self.leaf = self.intermediate.issue_cert("127.0.0.1")
        self.sent = [x509.load_pem_x509_certificate(b.bytes()).public_bytes(Encoding.DER)
                     for b in self.leaf.cert_chain_pems]  # fmt: skip
        assert len(self.sent) == 2

    def server_context(self) -> ssl.SSLContext:
        ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        self.leaf.configure_cert(ctx)  # leaf + intermediate
        return ctx

    def root_pem(self, folder: Path) -> Path:
        path = folder / "root-ca.pem"
        self.root.cert_pem.write_to_path(str(path))
        return path


def chain_records(warcs: Path) -> list[WarcRecord]:
    """The certificate-chain metadata records in the WARCs of a folder."""
    return [r for p in sorted(warcs.iterdir()) for r in ArchiveReader(str(p))
            if r.type == "metadata" and r.headers.get("content-type") == PEM_CHAIN]  # fmt: skip


def parsed_chain(rec: WarcRecord) -> list[bytes]:
    """The record's PEM block parsed back with ``cryptography``, as DER."""
    return [c.public_bytes(Encoding.DER)
            for c in x509.load_pem_x509_certificates(rec.block.read_all())]  # fmt: skip


def checked_and_listed(warc: Path) -> list[tuple[str, str, str]]:
    """``webark warc check WARC`` (without a warning on the chain records) and the peer's
    ``warcio check`` must pass; then the
    (type, target URI, record id) of the certificate-chain rows ``webark warc ls WARC``
    shows."""
    for argv in ([*WEBARK, "warc", "check"], [str(Path(sys.executable).parent / "warcio"),
                                               "check", "-v"]):  # fmt: skip
        check = subprocess.run([*argv, str(warc)], capture_output=True, text=True)
        assert check.returncode == 0, check.stdout + check.stderr
        # the chain's content type is no "recommended" warning of webark's own checker
        assert "content-type-recommended" not in check.stdout + check.stderr, check.stdout
    ls = subprocess.run([*WEBARK, "warc", "ls", str(warc)], capture_output=True, text=True,
                        check=True)  # fmt: skip
    rows = [json.loads(line) for line in ls.stdout.splitlines()]
    return [(r["type"], r["target_uri"], r["record_id"]) for r in rows
            if r["content_type"] == PEM_CHAIN]  # fmt: skip
