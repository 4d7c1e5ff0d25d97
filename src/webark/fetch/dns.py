"""Name resolution for the fetcher: resolve overrides (host → address, like curl's
``--resolve``), the system resolver, the private-address guard, and the ``dns:`` record
Heritrix writes for each lookup.

Heritrix's ``dns:`` capture is a WARC ``response`` record (``WARC-Target-URI:
dns:www.archive.org``, ``Content-Type: text/dns``, ``WARC-IP-Address`` = the DNS server)
whose block is the lookup time (14 digits) and the answer's resource records in zone
file form, LF-terminated (corpus: jwat ``IAH-20080430204825-00000-blackbook.warc.gz``)::

    20080430204825
    www.archive.org.\t589\tIN\tA\t207.241.229.39

The system resolver (``getaddrinfo``) reports neither the TTL nor the DNS server, so its
answers carry the resolver's configured ``ttl`` and no server address; an override is an
answer we decided ourselves (a hosts file), with its own configured ``ttl``.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from webark.core.ids import utc_now
from webark.core.timestamps import to_timestamp14
from webark.fetch.codes import S_DNS_SUCCESS, S_DOMAIN_UNRESOLVABLE, FetchError
from webark.url import host_to_ascii
from webark.warc.builders import RecordBuilder
from webark.warc.record import WarcRecord

DNS_CONTENT_TYPE = "text/dns"
"""Content-Type of Heritrix's ``dns:`` response records."""

DEFAULT_TTL = 300
"""TTL (seconds) written for answers whose real TTL is unknown (overrides, getaddrinfo)."""

_NAT64 = ipaddress.ip_network("64:ff9b::/96")


@dataclass(frozen=True, slots=True)
class DnsAnswer:
    """The result of looking up one host name.

    Attributes:
        host: the name looked up, ASCII (IDNA) and lowercase, without a trailing dot.
        addresses: IPv4/IPv6 addresses in the resolver's order; empty when it failed.
        resolved_at: when the lookup was made (aware UTC datetime).
        ttl: time to live of the answer in seconds, as written in the ``dns:`` record.
        server: IP address of the DNS server that answered, when known
            (``WARC-IP-Address`` of the ``dns:`` record).
        source: ``"override"``, ``"system"``, ``"literal"`` (the host is an IP address)
            or the name of another resolver.
        error: why the lookup failed, None when it succeeded.
    """

    host: str
    addresses: tuple[str, ...]
    resolved_at: datetime
    ttl: int = DEFAULT_TTL
    server: str | None = None
    source: str = "system"
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None and bool(self.addresses)

    @property
    def status(self) -> int:
        """crawl.log status of the ``dns:`` URI: 1 (success) or -1 (lookup failed)."""
        return S_DNS_SUCCESS if self.ok else S_DOMAIN_UNRESOLVABLE

    @property
    def uri(self) -> str:
        """The ``dns:`` URI of this lookup, e.g. ``dns:www.example.com``."""
        return f"dns:{self.host}"

    def text(self) -> bytes:
        """The ``text/dns`` block Heritrix writes: the 14-digit lookup time, then one
        ``NAME.<TAB>TTL<TAB>IN<TAB>A|AAAA<TAB>ADDRESS`` line per address, LF-terminated.

        Raises:
            FetchError: the lookup failed (there is no answer to write).
        """
        if not self.ok:
            raise FetchError(f"no dns: record for {self.host}: {self.error or 'no address'}")
        lines = [to_timestamp14(self.resolved_at)]
        for addr in self.addresses:
            rtype = "AAAA" if ":" in addr else "A"
            lines.append(f"{self.host}.\t{self.ttl}\tIN\t{rtype}\t{addr}")
        return ("\n".join(lines) + "\n").encode("ascii")

    def to_record(self, builder: RecordBuilder) -> WarcRecord:
        """The ``dns:`` capture as Heritrix writes it: a ``response`` record with
        ``Content-Type: text/dns``, WARC-Date = the lookup time, WARC-IP-Address = the DNS
        server when known.

        Raises:
            FetchError: the lookup failed (Heritrix writes no record for it either).
        """
        return builder.response(
            self.uri,
            self.text(),
            date=self.resolved_at,
            ip_address=self.server,
            content_type=DNS_CONTENT_TYPE,
        )


class Resolver(Protocol):
    """Anything that turns a host name into addresses. Failures are answers with
    ``error`` set, not exceptions."""

    async def resolve(self, host: str) -> DnsAnswer: ...


def normalize_host(host: str) -> str:
    """``"WWW.Example.COM."`` → ``"www.example.com"``; IDNs to their ASCII form; IPv6
    literals without brackets.

    Raises:
        ValueError: a name that cannot be IDNA-encoded.
    """
    h = host.strip().rstrip(".").lower()
    if h.startswith("[") and h.endswith("]"):
        h = h[1:-1]
    if h.isascii():
        return h
    return host_to_ascii(h)


def ip_literal(host: str) -> str | None:
    """The address if ``host`` is an IP literal (``"127.0.0.1"``, ``"[::1]"``), else None."""
    h = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    try:
        return str(ipaddress.ip_address(h))
    except ValueError:
        return None


class SystemResolver:
    """Resolves with the operating system (``getaddrinfo`` in a worker thread).

    Args:
        ttl: TTL (seconds) written in ``dns:`` records of its answers (the real one is
            not reported by ``getaddrinfo``).
        timeout: seconds to wait for an answer.
        clock: source of ``resolved_at``.
    """

    def __init__(
        self, ttl: int = DEFAULT_TTL, timeout: float = 20.0, clock: Callable[[], datetime] = utc_now
    ):
        self.ttl = ttl
        self.timeout = timeout
        self.clock = clock

    async def resolve(self, host: str) -> DnsAnswer:
        when = self.clock()
        loop = asyncio.get_running_loop()
        try:
            async with asyncio.timeout(self.timeout):
                infos = await loop.getaddrinfo(host, None, type=socket.SOCK_STREAM)
        except TimeoutError:
            return DnsAnswer(
                host, (), when, self.ttl, error=f"lookup timed out after {self.timeout} s"
            )
        except (OSError, UnicodeError) as e:
            return DnsAnswer(host, (), when, self.ttl, error=f"lookup failed: {e}")
        addrs: list[str] = []
        for _family, _type, _proto, _canon, sockaddr in infos:
            addr = str(sockaddr[0])
            if addr not in addrs:
                addrs.append(addr)
        if not addrs:
            return DnsAnswer(host, (), when, self.ttl, error="no address")
        return DnsAnswer(host, tuple(addrs), when, self.ttl, source="system")


class OverrideResolver:
    """Fixed answers for some hosts (curl's ``--resolve``, a hosts file), another
    resolver for the rest.

    Args:
        overrides: host → address or addresses, e.g. ``{"example.com": "127.0.0.2"}``.
            Host names are matched case-insensitively, IDNs by their ASCII form.
        fallback: resolver for other hosts; None makes their lookups fail.
        ttl: TTL (seconds) written in ``dns:`` records of overridden answers.
        clock: source of ``resolved_at``.

    Raises:
        ValueError: an override address that is not an IP address.
    """

    def __init__(
        self,
        overrides: Mapping[str, str | Sequence[str]],
        fallback: Resolver | None = None,
        *,
        ttl: int = DEFAULT_TTL,
        clock: Callable[[], datetime] = utc_now,
    ):
        self.overrides: dict[str, tuple[str, ...]] = {}
        for host, addrs in overrides.items():
            values = (addrs,) if isinstance(addrs, str) else tuple(addrs)
            checked = []
            for a in values:
                lit = ip_literal(a)
                if lit is None:
                    raise ValueError(f"resolve override {host} → {a!r}: not an IP address")
                checked.append(lit)
            self.overrides[normalize_host(host)] = tuple(checked)
        self.fallback = fallback
        self.ttl = ttl
        self.clock = clock

    async def resolve(self, host: str) -> DnsAnswer:
        name = normalize_host(host)
        addrs = self.overrides.get(name)
        if addrs is not None:
            return DnsAnswer(name, addrs, self.clock(), self.ttl, source="override")
        if self.fallback is None:
            error = "no resolve entry for this host"
            return DnsAnswer(name, (), self.clock(), self.ttl, error=error)
        return await self.fallback.resolve(name)


def address_class(address: str) -> str | None:
    """Why ``address`` is not a public unicast address — ``"loopback"``, ``"private"``,
    ``"link-local"``, ``"unspecified"``, ``"multicast"``, ``"reserved"`` or ``"non-global"``
    (e.g. shared 100.64.0.0/10, documentation ranges) — or None for a public one.
    IPv4-mapped and NAT64 (64:ff9b::/96) IPv6 addresses are judged by their IPv4 part.

    Raises:
        ValueError: not an IP address.
    """
    ip = ipaddress.ip_address(address)
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            ip = ip.ipv4_mapped
        elif ip in _NAT64:
            ip = ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    if ip.is_unspecified:
        return "unspecified"
    if ip.is_loopback:
        return "loopback"
    if ip.is_link_local:
        return "link-local"
    if ip.is_multicast:
        return "multicast"
    if ip.is_private:
        return "private"
    if ip.is_reserved:
        return "reserved"
    if not ip.is_global:
        return "non-global"
    return None


def refusal(address: str, allow_private: bool) -> str | None:
    """The message refusing a connection to ``address``, or None when it is allowed
    (a public address, or any address with ``allow_private``)."""
    if allow_private:
        return None
    kind = address_class(address)
    if kind is None:
        return None
    return (
        f"refusing to connect to {address} ({kind} address); "
        "set allow_private=True to fetch from private, loopback and link-local addresses"
    )
