"""The ``application/warc-fields`` blocks webark writes (WARC 1.1 §8.3): the warcinfo
record's fields (§6.1, in Heritrix's order) and a crawl metadata record's (§6.6, as
Heritrix writes it after each response), and their serialization."""

from __future__ import annotations

import re
import socket
from collections.abc import Iterable
from dataclasses import dataclass

from webark import __version__
from webark.core.errors import InvalidRecordError

__all__ = ["WARC_FIELDS", "MetadataFields", "WarcinfoFields", "warc_fields_block"]

WARC_FIELDS = "application/warc-fields"
"""Content-Type of warcinfo and metadata blocks (WARC 1.1 §6.1, §6.6, §8.3)."""

_TOKEN_RE = re.compile(r"^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$")
_BAD_VALUE_RE = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")


def warc_fields_block(pairs: Iterable[tuple[str, str]]) -> bytes:
    """Serialize ``application/warc-fields`` (WARC 1.1 §8.3): ``name: value`` CRLF per pair,
    UTF-8.

    Raises:
        InvalidRecordError: a name that is not a token, or a value with CR, LF or another
            control character (it would end the field early).
    """
    lines = []
    for name, value in pairs:
        if not _TOKEN_RE.match(name) or _BAD_VALUE_RE.search(value):
            raise InvalidRecordError(f"cannot write warc-fields line {name!r}: {value!r}")
        lines.append(f"{name}: {value}\r\n")
    return "".join(lines).encode("utf-8")


@dataclass(frozen=True, slots=True)
class WarcinfoFields:
    """The block of the warcinfo record that starts every file (WARC 1.1 §6.1).

    ``None`` fields are left out; ``format`` and ``conforms_to`` default to the file's
    WARC version. Heritrix writes the same fields (``robots: obey`` rather than the
    spec's ``classic``, which names only the 1994 rules).

    Attributes:
        software: e.g. ``webark/0.1.0``.
        hostname: the machine that wrote the file.
        ip: its IP address.
        operator: who ran the crawl and how to reach them (recommended: name + email).
        http_header_user_agent: the User-Agent sent with requests.
        robots: the robots policy followed (``obey``, ``ignore``, ``classic``).
        format: e.g. ``WARC File Format 1.1``.
        conforms_to: URL of the specification.
        is_part_of: the collection or crawl job (DCMI isPartOf).
        extra: further ``(name, value)`` pairs (e.g. ``description``, ``http-header-from``).
    """

    software: str = f"webark/{__version__}"
    hostname: str | None = None
    ip: str | None = None
    operator: str | None = None
    http_header_user_agent: str | None = None
    robots: str | None = "obey"
    format: str | None = None
    conforms_to: str | None = None
    is_part_of: str | None = None
    extra: tuple[tuple[str, str], ...] = ()

    @classmethod
    def for_this_host(cls, **kwargs: object) -> WarcinfoFields:
        """Fields with ``hostname`` and ``ip`` of this machine (``ip`` left out when the
        hostname does not resolve); other fields from ``kwargs``."""
        hostname = socket.gethostname()
        try:
            ip: str | None = socket.gethostbyname(hostname)
        except OSError:
            ip = None
        values: dict[str, object] = {"hostname": hostname, "ip": ip}
        values.update(kwargs)
        return cls(**values)  # type: ignore[arg-type]

    def pairs(self, version: str = "WARC/1.1") -> list[tuple[str, str]]:
        """The fields in Heritrix order, for a file of WARC ``version``."""
        v = version.removeprefix("WARC/")
        fmt = self.format or f"WARC File Format {v}"
        conforms = self.conforms_to or (
            "https://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/"
            if v == "1.1"
            else "http://bibnum.bnf.fr/WARC/WARC_ISO_28500_version1_latestdraft.pdf"
        )
        named = [
            ("software", self.software),
            ("hostname", self.hostname),
            ("ip", self.ip),
            ("operator", self.operator),
            ("http-header-user-agent", self.http_header_user_agent),
            ("robots", self.robots),
            ("format", fmt),
            ("conformsTo", conforms),
            ("isPartOf", self.is_part_of),
        ]
        return [(n, val) for n, val in named if val is not None] + list(self.extra)


@dataclass(frozen=True, slots=True)
class MetadataFields:
    """The ``application/warc-fields`` block of a crawl metadata record (WARC 1.1 §6.6),
    as Heritrix writes it after each response.

    Attributes:
        via: the URI on which this one was discovered.
        hops_from_seed: the hop path, e.g. ``"LLE"`` (Heritrix ``hopsFromSeed``).
        source_tag: the seed this URI descends from (Heritrix ``sourceTag``).
        fetch_time_ms: fetch duration in milliseconds (``fetchTimeMs``).
        outlinks: Heritrix outlink lines ``"URI HOP CONTEXT"``, e.g.
            ``"http://example.com/a.css E link/@href"``; one ``outlink:`` field each.
        extra: further ``(name, value)`` pairs.
    """

    via: str | None = None
    hops_from_seed: str | None = None
    source_tag: str | None = None
    fetch_time_ms: int | None = None
    outlinks: tuple[str, ...] = ()
    extra: tuple[tuple[str, str], ...] = ()

    def pairs(self) -> list[tuple[str, str]]:
        named = [
            ("via", self.via),
            ("hopsFromSeed", self.hops_from_seed),
            ("sourceTag", self.source_tag),
            ("fetchTimeMs", None if self.fetch_time_ms is None else str(self.fetch_time_ms)),
        ]
        out = [(n, v) for n, v in named if v is not None]
        out += [("outlink", link) for link in self.outlinks]
        return out + list(self.extra)
