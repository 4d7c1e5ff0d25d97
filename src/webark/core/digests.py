"""Digests as written in WARC headers (WARC 1.1 §5.8–5.9): ``algorithm:value``.

Writers produce ``sha1:`` + uppercase Base32 (the convention of Heritrix, warcio and
pywb) or ``sha256:`` + lowercase hex. Readers accept Base16 (hex), Base32 and Base64
values and compare digests by their raw bytes (warc.md: "readers accept Base16/32/64").
"""

from __future__ import annotations

import base64
import binascii
import hashlib
from dataclasses import dataclass

from webark.core.errors import DigestError

_SIZES = {"sha1": 20, "sha256": 32, "md5": 16, "sha512": 64, "sha384": 48, "sha224": 28}
_ALIASES = {"sha-1": "sha1", "sha-256": "sha256", "sha-512": "sha512", "md-5": "md5"}


def normalize_algorithm(name: str) -> str:
    """``"SHA-1"`` → ``"sha1"``. Raises DigestError for an unknown algorithm."""
    n = name.strip().lower()
    n = _ALIASES.get(n, n)
    if n not in _SIZES:
        raise DigestError(f"unknown digest algorithm {name!r}")
    return n


@dataclass(frozen=True, slots=True)
class Digest:
    """A parsed digest: algorithm (normalized, e.g. ``"sha1"``) and the raw hash bytes."""

    algorithm: str
    raw: bytes

    @classmethod
    def parse(cls, value: str, default_algorithm: str = "sha1") -> Digest:
        """Parse ``"sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ"``, hex or Base64 forms, or an
        unprefixed value (old Heritrix crawl.logs) taken as ``default_algorithm``.

        Raises:
            DigestError: empty parts, unknown algorithm, or a value that decodes to the
                wrong number of bytes in every encoding.
        """
        value = value.strip()
        if ":" in value:
            algo, _, enc = value.partition(":")
            if not algo.strip():
                raise DigestError(f"digest without algorithm: {value!r}")
        else:
            algo, enc = default_algorithm, value
        algorithm = normalize_algorithm(algo)
        enc = enc.strip()
        if not enc:
            raise DigestError(f"digest without value: {value!r}")
        size = _SIZES[algorithm]
        for decode in (_b32, _hex, _b64):
            raw = decode(enc)
            if raw is not None and len(raw) == size:
                return cls(algorithm, raw)
        raise DigestError(f"cannot decode {algorithm} digest value {enc!r}")

    def base32(self) -> str:
        """Uppercase Base32 without padding stripping (sha1 gives 32 chars)."""
        return base64.b32encode(self.raw).decode("ascii")

    def hex(self) -> str:
        return self.raw.hex()

    def label(self) -> str:
        """The canonical WARC label: ``sha1:BASE32`` for sha1, ``algo:hex`` otherwise."""
        if self.algorithm == "sha1":
            return f"sha1:{self.base32()}"
        return f"{self.algorithm}:{self.hex()}"


def _b32(s: str) -> bytes | None:
    try:
        return base64.b32decode(s.upper() + "=" * (-len(s) % 8))
    except (binascii.Error, ValueError):
        return None


def _hex(s: str) -> bytes | None:
    try:
        return bytes.fromhex(s)
    except ValueError:
        return None


def _b64(s: str) -> bytes | None:
    try:
        return base64.b64decode(s + "=" * (-len(s) % 4), validate=True)
    except (binascii.Error, ValueError):
        try:
            return base64.urlsafe_b64decode(s + "=" * (-len(s) % 4))
        except (binascii.Error, ValueError):
            return None


class Hasher:
    """Incremental hash that yields a WARC digest label.

    >>> h = Hasher("sha1"); h.update(b""); h.label()
    'sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ'
    """

    __slots__ = ("_h", "algorithm")

    def __init__(self, algorithm: str = "sha1"):
        self.algorithm = normalize_algorithm(algorithm)
        self._h = hashlib.new(self.algorithm)

    def update(self, data: bytes | bytearray | memoryview) -> None:
        self._h.update(data)

    def digest(self) -> Digest:
        return Digest(self.algorithm, self._h.digest())

    def label(self) -> str:
        return self.digest().label()


def digest_label(data: bytes, algorithm: str = "sha1") -> str:
    """The WARC digest label of ``data``, e.g. ``sha1:…`` (Base32) or ``sha256:…`` (hex)."""
    h = Hasher(algorithm)
    h.update(data)
    return h.label()


def same_digest(a: str, b: str) -> bool:
    """True when two digest strings name the same algorithm and hash bytes, whatever
    their encodings. Unparseable strings compare unequal."""
    try:
        return Digest.parse(a) == Digest.parse(b)
    except DigestError:
        return False


EMPTY_SHA1 = "sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ"
"""sha1 of the empty payload; a revisit with this digest needs no original."""
