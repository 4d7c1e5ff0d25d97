"""The crawl URI: one URI to fetch, with where it came from and how to schedule it.

:class:`CrawlURI` is a frozen value (DESIGN.md: records are frozen dataclasses); the
frontier stores it and hands it back. It carries what Heritrix 3's ``CrawlURI`` carries
into the crawl.log and the ``metadata`` record (hop path, via, seed flag, source tag)
plus the scheduling facts the frontier needs (politeness key, retries, priority).
Fetch results are not part of it: they go to :meth:`webark.crawl.frontier.Frontier.finished`.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from urllib.parse import urlsplit

__all__ = [
    "HIGH",
    "HIGHEST",
    "HOP_LETTERS",
    "MEDIUM",
    "NORMAL",
    "CrawlURI",
    "politeness_key",
]

HOP_LETTERS = frozenset("LEXRPIM")
"""Hop letters (Heritrix ``Hop``): ``L`` link, ``E`` embed, ``X`` speculative embed,
``R`` redirect, ``P`` prerequisite, ``I`` inferred, ``M`` manifest (sitemap)."""

# Heritrix SchedulingConstants: lower value = scheduled sooner within a queue.
HIGHEST = 0
HIGH = 1
MEDIUM = 2
NORMAL = 3

_DEFAULT_PORTS = {"http": 80, "https": 443, "ftp": 21}


def politeness_key(uri: str) -> str:
    """The default politeness (queue) key of ``uri``: its host, plus ``:port`` when the
    port is not the scheme's default.

    As Heritrix's ``HostnameQueueAssignmentPolicy`` (authority minus user info, default
    port dropped), ``http://example.com/`` and ``https://example.com/`` share one queue:
    both hit the same server, and etiquette is "no concurrent requests to one site".
    ``dns:example.com`` goes to the queue of ``example.com`` too. The host is
    lowercased; a URI without a host (``mailto:``…) gets the key ``"<scheme>:"``.

    >>> politeness_key("http://Example.com:80/a"), politeness_key("https://example.com/b")
    ('example.com', 'example.com')
    >>> politeness_key("http://example.com:8080/"), politeness_key("dns:example.com")
    ('example.com:8080', 'example.com')
    """
    if uri[:4].lower() == "dns:":
        return uri[4:].strip().lower().rstrip(".")
    try:
        parts = urlsplit(uri)
        host = parts.hostname
        port = parts.port
    except ValueError:
        return uri.split(":", 1)[0].lower() + ":"
    if not host:
        return parts.scheme.lower() + ":"
    if ":" in host:  # IPv6 literal
        host = f"[{host}]"
    if port is None or port == _DEFAULT_PORTS.get(parts.scheme.lower()):
        return host
    return f"{host}:{port}"


@dataclass(frozen=True, slots=True)
class CrawlURI:
    """A URI to crawl.

    Attributes:
        uri: the absolute URI (already normalized by the caller or not: the frontier's
            seen filter keys on :func:`webark.url.normalize` of it either way).
        hops: the hop path from the seed, one letter of :data:`HOP_LETTERS` per hop
            (``""`` for a seed); ``len(hops)`` is Heritrix's hopsFromSeed.
        via: the URI this one was discovered in (``None`` for a seed).
        seed: True for a seed.
        source: the source tag (Heritrix ``sourceTag``, usually the seed it descends
            from), or ``None``.
        key: the politeness key (queue name); derived with :func:`politeness_key` when
            left empty.
        retries: how many times the fetch was already retried (network error, 5xx/429).
        priority: scheduling priority within its queue, :data:`HIGHEST` (0) ..
            :data:`NORMAL` (3); lower is sooner (Heritrix ``schedulingDirective``).

    Raises:
        ValueError: empty ``uri``, a hop letter outside :data:`HOP_LETTERS`, negative
            ``retries`` or ``priority``.
    """

    uri: str
    hops: str = ""
    via: str | None = None
    seed: bool = False
    source: str | None = None
    key: str = ""
    retries: int = 0
    priority: int = NORMAL

    def __post_init__(self) -> None:
        if not self.uri:
            raise ValueError("CrawlURI needs a URI")
        bad = set(self.hops) - HOP_LETTERS
        if bad:
            raise ValueError(f"unknown hop letter(s) {''.join(sorted(bad))!r} in {self.hops!r}")
        if self.retries < 0 or self.priority < 0:
            raise ValueError("retries and priority must be >= 0")
        if not self.key:
            object.__setattr__(self, "key", politeness_key(self.uri))

    @property
    def hops_from_seed(self) -> int:
        """Number of hops from the seed (``len(hops)``)."""
        return len(self.hops)

    @property
    def last_hop(self) -> str:
        """The last hop letter, ``""`` for a seed."""
        return self.hops[-1:]

    def child(self, uri: str, hop: str, *, priority: int | None = None) -> CrawlURI:
        """A URI discovered from this one through ``hop`` (one letter).

        The child gets ``hops + hop``, ``via`` = this URI, the same source tag, no
        retries, and its own politeness key. Prerequisites (``P``: robots.txt, DNS) are
        scheduled :data:`HIGH` so they come before the URI that needs them, as in
        Heritrix; other hops :data:`NORMAL`, unless ``priority`` is given.

        Raises:
            ValueError: ``hop`` is not exactly one letter of :data:`HOP_LETTERS`.
        """
        if len(hop) != 1 or hop not in HOP_LETTERS:
            raise ValueError(f"hop must be one of {''.join(sorted(HOP_LETTERS))}, got {hop!r}")
        if priority is None:
            priority = HIGH if hop == "P" else NORMAL
        return CrawlURI(
            uri,
            hops=self.hops + hop,
            via=self.uri,
            seed=False,
            source=self.source,
            retries=0,
            priority=priority,
        )

    def replace(self, **changes: object) -> CrawlURI:
        """A copy with some fields changed (``dataclasses.replace``)."""
        return dataclasses.replace(self, **changes)  # type: ignore[arg-type]
