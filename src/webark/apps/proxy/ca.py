"""The proxy's certificate authority for HTTPS man-in-the-middle (warcprox's
``certauth``, mitmproxy's CA), made with the ``cryptography`` package.

- The CA (RSA 2048, SHA-256, valid three years, ``CA:TRUE, pathlen:0``, key usage
  ``keyCertSign, cRLSign``) is generated on first use and stored as one PEM file
  (private key, then certificate) with mode 0600. Clients trust its certificate:
  ``webark proxy ca`` prints it (curl ``--cacert``, a browser's authorities list).
- Per host, a leaf certificate (subjectAltName: the DNS name or IP address, extended key
  usage serverAuth, valid 397 days, within browsers' 398-day limit) is signed with it,
  all leaves sharing one EC P-256 key made once per CA. Leaves are cached in memory
  and on disk (``CA.pem`` → ``CA-certs/HOST.pem``, 0600), so a restarted proxy presents
  the same certificate.
"""

from __future__ import annotations

import datetime as dt
import ipaddress
import os
import re
import ssl
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

__all__ = ["CertAuthority"]

CA_DAYS = 3 * 365
LEAF_DAYS = 397
_SAFE = re.compile(r"[^A-Za-z0-9._-]")


def _write_private(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` created with mode 0600 (a new name, then renamed: a
    file is complete or absent)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + f".tmp{os.getpid()}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    os.replace(tmp, path)


def _pem_key(key: rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())  # fmt: skip


class CertAuthority:
    """The CA in ``path`` (created when missing; module docstring).

    Args:
        path: the PEM file of the CA's key and certificate.
        name: the CA's common name when it is created.

    Nothing is read or made until the CA is first needed (a ``CONNECT``, ``webark proxy
    ca``); then ``ValueError`` when ``path`` holds no usable RSA key and certificate.
    """

    def __init__(self, path: str | os.PathLike[str], name: str = "webark proxy CA") -> None:
        self.path = Path(path)
        self.name = name
        self.certs_dir = self.path.with_name(self.path.stem + "-certs")
        self._contexts: dict[str, ssl.SSLContext] = {}
        self._loaded: tuple[rsa.RSAPrivateKey, x509.Certificate,
                            ec.EllipticCurvePrivateKey] | None = None  # fmt: skip

    def _load(self) -> tuple[rsa.RSAPrivateKey, x509.Certificate, ec.EllipticCurvePrivateKey]:
        """The CA key, its certificate and the leaf key: read, or made on first use
        (a proxy that never sees a CONNECT writes no CA)."""
        if self._loaded is None:
            if not self.path.exists():
                self._create(self.name)
            data = self.path.read_bytes()
            key = serialization.load_pem_private_key(data, password=None)
            if not isinstance(key, rsa.RSAPrivateKey):
                raise ValueError(f"{self.path}: not an RSA CA key")
            self._loaded = (key, x509.load_pem_x509_certificate(data), self._load_leaf_key())
        return self._loaded

    @property
    def key(self) -> rsa.RSAPrivateKey:
        """The CA's private key."""
        return self._load()[0]

    @property
    def cert(self) -> x509.Certificate:
        """The CA's certificate."""
        return self._load()[1]

    def _create(self, name: str) -> None:
        key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name),
                             x509.NameAttribute(NameOID.ORGANIZATION_NAME, "webark")])  # fmt: skip
        now = dt.datetime.now(dt.UTC)
        cert = (
            x509.CertificateBuilder()
            .subject_name(subject).issuer_name(subject).public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - dt.timedelta(days=1))
            .not_valid_after(now + dt.timedelta(days=CA_DAYS))
            .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
            .add_extension(x509.KeyUsage(
                digital_signature=True, key_cert_sign=True, crl_sign=True,
                content_commitment=False, key_encipherment=False, data_encipherment=False,
                key_agreement=False, encipher_only=False, decipher_only=False),
                critical=True)
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()),
                           critical=False)
            .sign(key, hashes.SHA256())
        )  # fmt: skip
        _write_private(self.path, _pem_key(key) + cert.public_bytes(serialization.Encoding.PEM))

    def _load_leaf_key(self) -> ec.EllipticCurvePrivateKey:
        path = self.certs_dir / "leaf-key.pem"
        if path.exists():
            key = serialization.load_pem_private_key(path.read_bytes(), password=None)
            if isinstance(key, ec.EllipticCurvePrivateKey):
                return key
        key = ec.generate_private_key(ec.SECP256R1())
        _write_private(path, _pem_key(key))
        return key

    def cert_pem(self) -> bytes:
        """The CA certificate, PEM (what clients are told to trust)."""
        return self.cert.public_bytes(serialization.Encoding.PEM)

    def leaf_path(self, host: str) -> Path:
        """The PEM file (leaf certificate, then the shared leaf key) of ``host``,
        made and signed when missing."""
        path = self.certs_dir / (_SAFE.sub("_", host.lower()) + ".pem")
        if not path.exists():
            _write_private(path, self._leaf_pem(host))
        return path

    def _leaf_pem(self, host: str) -> bytes:
        try:
            alt: x509.GeneralName = x509.IPAddress(ipaddress.ip_address(host))
        except ValueError:
            alt = x509.DNSName(host)
        now = dt.datetime.now(dt.UTC)
        cert = (
            x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, host[:64])]))
            .issuer_name(self.cert.subject).public_key(self._load()[2].public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - dt.timedelta(days=1))
            .not_valid_after(now + dt.timedelta(days=LEAF_DAYS))
            .add_extension(x509.SubjectAlternativeName([alt]), critical=False)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]),
                           critical=False)
            .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(
                self.key.public_key()), critical=False)
            .sign(self.key, hashes.SHA256())
        )  # fmt: skip
        return cert.public_bytes(serialization.Encoding.PEM) + _pem_key(self._load()[2])

    def server_context(self, host: str) -> ssl.SSLContext:
        """A server TLS context presenting ``host``'s leaf certificate (cached), with
        ALPN ``http/1.1`` (the proxy speaks HTTP/1.1 only)."""
        key = host.lower()
        ctx = self._contexts.get(key)
        if ctx is None:
            ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
            ctx.load_cert_chain(self.leaf_path(host))
            ctx.set_alpn_protocols(["http/1.1"])
            self._contexts[key] = ctx
        return ctx
