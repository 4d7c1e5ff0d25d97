"""A cache of robots.txt policies keyed by origin, with expiry: :class:`RobotsCache`.

RFC 9309 §2.4: a crawler SHOULD NOT use a cached robots.txt for more than 24 hours
(unless it is unreachable). Heritrix keeps one robots.txt per ``CrawlServer`` (host and
port) and refetches it as a prerequisite when it has expired (``robotsValidityDurationSeconds``,
default 24 h). This cache does the bookkeeping; fetching is the caller's job:

1. ``cache.get(url)`` → a :class:`~webark.robots.RobotsPolicy`, or ``None`` when the
   origin has no entry or it expired: fetch ``/robots.txt`` (hop type ``P``) first.
2. ``cache.record(url, http_status, body)`` with the fetch result (``None`` status for
   a network error) → the policy now in force.

Unreachable robots.txt (5xx, 429, network errors) follow RFC 9309 §2.3.1.4 and Google:

* the origin is disallowed, and the entry expires after ``unreachable_ttl`` seconds
  (default 10 minutes) so the crawler retries soon;
* after ``max_unreachable`` seconds (default 30 days) of failing in a row, the last
  good robots.txt is used again if one is known, else everything is allowed.

Entries are plain data (:class:`RobotsEntry`, :meth:`RobotsEntry.to_row`) so the crawler
can persist them, e.g. one SQLite row per origin; the clock is injectable.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from typing import Final
from urllib.parse import urlsplit

from webark.core.ids import Clock, utc_now
from webark.robots.policy import RobotsPolicy, RobotsStatus, status_for_http
from webark.robots.text import MAX_ROBOTS_BYTES

DEFAULT_TTL: Final = 24 * 3600.0
"""Seconds a fetched robots.txt is used (RFC 9309 §2.4: not more than 24 hours)."""
DEFAULT_UNREACHABLE_TTL: Final = 600.0
"""Seconds before an unreachable robots.txt is fetched again (10 minutes)."""
DEFAULT_MAX_UNREACHABLE: Final = 30 * 24 * 3600.0
"""Seconds of continuous unreachability after which the origin is no longer
disallowed (RFC 9309 §2.3.1.4, Google: 30 days)."""

_DEFAULT_PORTS: Final = {"http": 80, "https": 443, "ftp": 21, "ws": 80, "wss": 443}


def origin_key(url: str) -> str:
    """The cache key of ``url``: ``scheme://host:port`` with a lowercase scheme and host
    and an explicit port (``http://example.com:80``). IPv6 hosts keep their brackets.

    A robots.txt applies to exactly one scheme, host and port (RFC 9309 §2.3).

    Raises:
        ValueError: the URL has no scheme or host, or its port is not a number.

    >>> origin_key("HTTPS://Example.COM/a?b"), origin_key("http://[::1]:8080/")
    ('https://example.com:443', 'http://[::1]:8080')
    """
    parts = urlsplit(url.strip())
    scheme = parts.scheme.lower()
    host = parts.hostname
    if not scheme or not host:
        raise ValueError(f"not an absolute URL with a host: {url!r}")
    port = parts.port  # raises ValueError for a bad port
    if port is None:
        port = _DEFAULT_PORTS.get(scheme, 0)
    host = host.rstrip(".") or host
    if ":" in host:
        host = f"[{host}]"
    return f"{scheme}://{host}:{port}"


def robots_url(url: str) -> str:
    """The robots.txt URL for the origin of ``url`` (default ports left out).

    >>> robots_url("https://example.com:443/a/b?c"), robots_url("http://h:8080/")
    ('https://example.com/robots.txt', 'http://h:8080/robots.txt')
    """
    key = origin_key(url)
    scheme, _, hostport = key.partition("://")
    host, _, port = hostport.rpartition(":")
    if _DEFAULT_PORTS.get(scheme) == int(port):
        return f"{scheme}://{host}/robots.txt"
    return f"{scheme}://{hostport}/robots.txt"


def _utc(dt: datetime) -> datetime:
    return dt.replace(tzinfo=UTC) if dt.tzinfo is None else dt.astimezone(UTC)


@dataclass(frozen=True, slots=True)
class RobotsEntry:
    """What the cache knows about one origin.

    Attributes:
        key: the origin, :func:`origin_key` form.
        status: the policy status in force.
        http_status: the HTTP status of the last fetch, ``None`` for a network error.
        body: the robots.txt in force (``PARSED``), or the last good one kept while
            the origin is unreachable; at most 500 KiB.
        fetched_at: when the last fetch finished (aware UTC).
        expires_at: when the entry must be refreshed (aware UTC).
        unreachable_since: start of the current run of unreachable fetches, else None.
    """

    key: str
    status: RobotsStatus
    http_status: int | None
    body: bytes
    fetched_at: datetime
    expires_at: datetime
    unreachable_since: datetime | None = None

    def policy(self) -> RobotsPolicy:
        """Build the :class:`RobotsPolicy` this entry stands for."""
        return RobotsPolicy(self.body, status=self.status)

    def to_row(self) -> dict[str, str | int | float | bytes | None]:
        """Plain data for storage: ``key`` (str), ``status`` (str), ``http_status``
        (int or None), ``body`` (bytes), ``fetched_at``, ``expires_at`` and
        ``unreachable_since`` (POSIX seconds as float, or None)."""
        return {
            "key": self.key,
            "status": self.status.value,
            "http_status": self.http_status,
            "body": self.body,
            "fetched_at": self.fetched_at.timestamp(),
            "expires_at": self.expires_at.timestamp(),
            "unreachable_since": (
                None if self.unreachable_since is None else self.unreachable_since.timestamp()
            ),
        }

    @classmethod
    def from_row(cls, row: dict[str, str | int | float | bytes | None]) -> RobotsEntry:
        """Inverse of :meth:`to_row`.

        Raises:
            KeyError, TypeError, ValueError: a field is missing or has the wrong type.
        """

        def when(value: object) -> datetime:
            if not isinstance(value, int | float):
                raise TypeError(f"expected POSIX seconds, got {value!r}")
            return datetime.fromtimestamp(float(value), UTC)

        http_status = row["http_status"]
        if http_status is not None and not isinstance(http_status, int):
            raise TypeError(f"http_status must be int or None, got {http_status!r}")
        body = row["body"]
        if not isinstance(body, bytes | bytearray | memoryview):
            raise TypeError("body must be bytes")
        since = row.get("unreachable_since")
        return cls(
            key=str(row["key"]),
            status=RobotsStatus(str(row["status"])),
            http_status=http_status,
            body=bytes(body),
            fetched_at=when(row["fetched_at"]),
            expires_at=when(row["expires_at"]),
            unreachable_since=None if since is None else when(since),
        )


class RobotsCache:
    """robots.txt policies by origin with expiry (see the module docstring).

    Args:
        ttl: seconds a fetched robots.txt (or a 4xx "allow all") is used; default 24 h.
        unreachable_ttl: seconds before an unreachable origin's robots.txt is retried.
        max_unreachable: seconds of failing in a row after which the origin is no
            longer disallowed (last good copy, else allow all).
        clock: returns the current aware UTC datetime (:data:`webark.core.ids.Clock`).

    Raises:
        ValueError: a duration is negative.

    Not thread-safe; the crawler uses it from its event loop.
    """

    def __init__(
        self,
        *,
        ttl: float = DEFAULT_TTL,
        unreachable_ttl: float = DEFAULT_UNREACHABLE_TTL,
        max_unreachable: float = DEFAULT_MAX_UNREACHABLE,
        clock: Clock = utc_now,
    ) -> None:
        if min(ttl, unreachable_ttl, max_unreachable) < 0:
            raise ValueError("cache durations must not be negative")
        self.ttl = timedelta(seconds=ttl)
        self.unreachable_ttl = timedelta(seconds=unreachable_ttl)
        self.max_unreachable = timedelta(seconds=max_unreachable)
        self._clock = clock
        self._entries: dict[str, RobotsEntry] = {}
        self._policies: dict[str, RobotsPolicy] = {}

    def _now(self) -> datetime:
        return _utc(self._clock())

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, url_or_key: object) -> bool:
        return isinstance(url_or_key, str) and self._key(url_or_key) in self._entries

    @staticmethod
    def _key(url_or_key: str) -> str:
        return origin_key(url_or_key)

    def entry(self, url: str) -> RobotsEntry | None:
        """The entry for the origin of ``url`` (expired or not), or None."""
        return self._entries.get(self._key(url))

    def needs_fetch(self, url: str) -> bool:
        """True when the origin's robots.txt must be fetched before ``url``: no entry, or
        the entry has expired."""
        e = self.entry(url)
        return e is None or self._now() >= e.expires_at

    def get(self, url: str, *, allow_stale: bool = False) -> RobotsPolicy | None:
        """The policy for the origin of ``url``.

        Args:
            url: any URL of the origin (or an :func:`origin_key`).
            allow_stale: also return an expired entry's policy (e.g. while the refetch
                is queued), instead of None.

        Returns:
            The policy, or None when there is no entry or it expired (and
            ``allow_stale`` is false): fetch robots.txt, then :meth:`record`.
        """
        key = self._key(url)
        e = self._entries.get(key)
        if e is None or (not allow_stale and self._now() >= e.expires_at):
            return None
        policy = self._policies.get(key)
        if policy is None:
            policy = self._policies[key] = e.policy()
        return policy

    def record(self, url: str, http_status: int | None, body: bytes = b"") -> RobotsPolicy:
        """Store the result of fetching the origin's robots.txt and return the policy in
        force.

        Args:
            url: any URL of the origin (usually the robots.txt URL).
            http_status: final HTTP status after redirects, ``None`` for a network error.
            body: the response body (used for 2xx; cut at 500 KiB).
        """
        key = self._key(url)
        now = self._now()
        status = status_for_http(http_status)
        previous = self._entries.get(key)
        if status is RobotsStatus.UNREACHABLE:
            entry = self._unreachable(key, http_status, now, previous)
        else:
            entry = RobotsEntry(
                key=key,
                status=status,
                http_status=http_status,
                # one byte more than is read, so the policy still sees it was cut
                body=bytes(body[: MAX_ROBOTS_BYTES + 1]) if status is RobotsStatus.PARSED else b"",
                fetched_at=now,
                expires_at=now + self.ttl,
            )
        return self._store(entry)

    def _unreachable(
        self, key: str, http_status: int | None, now: datetime, previous: RobotsEntry | None
    ) -> RobotsEntry:
        since = now
        last_good = b""
        had_good = False
        if previous is not None:
            if previous.unreachable_since is not None:
                since = previous.unreachable_since
            if previous.status is RobotsStatus.PARSED or previous.body:
                last_good, had_good = previous.body, True
        if now - since >= self.max_unreachable:
            # RFC 9309 §2.3.1.4: unreachable for a long time: use the cached copy, or
            # assume no crawl restrictions.
            return RobotsEntry(
                key=key,
                status=RobotsStatus.PARSED if had_good else RobotsStatus.UNAVAILABLE,
                http_status=http_status,
                body=last_good,
                fetched_at=now,
                expires_at=now + self.unreachable_ttl,
                unreachable_since=since,
            )
        return RobotsEntry(
            key=key,
            status=RobotsStatus.UNREACHABLE,
            http_status=http_status,
            body=last_good,
            fetched_at=now,
            expires_at=now + self.unreachable_ttl,
            unreachable_since=since,
        )

    def _store(self, entry: RobotsEntry) -> RobotsPolicy:
        self._entries[entry.key] = entry
        policy = entry.policy()
        self._policies[entry.key] = policy
        return policy

    def invalidate(self, url: str) -> None:
        """Forget the origin of ``url`` (its robots.txt will be fetched again)."""
        key = self._key(url)
        self._entries.pop(key, None)
        self._policies.pop(key, None)

    def expire(self, url: str) -> None:
        """Mark the origin's entry as expired now, keeping it for :meth:`get` with
        ``allow_stale`` and for the unreachable bookkeeping."""
        key = self._key(url)
        e = self._entries.get(key)
        if e is not None:
            self._entries[key] = replace(e, expires_at=self._now())

    def purge_expired(self) -> int:
        """Drop expired entries that hold nothing worth keeping (no body, not
        unreachable); return how many were dropped."""
        now = self._now()
        drop = [
            k
            for k, e in self._entries.items()
            if now >= e.expires_at and not e.body and e.unreachable_since is None
        ]
        for k in drop:
            del self._entries[k]
            self._policies.pop(k, None)
        return len(drop)

    def entries(self) -> Iterator[RobotsEntry]:
        """All entries (for persistence), in insertion order."""
        return iter(list(self._entries.values()))

    def load(self, entries: Iterable[RobotsEntry]) -> None:
        """Add persisted entries (e.g. on restart), replacing those of the same origin."""
        for e in entries:
            self._entries[e.key] = e
            self._policies.pop(e.key, None)

    def dump(self) -> list[dict[str, str | int | float | bytes | None]]:
        """All entries as :meth:`RobotsEntry.to_row` dicts."""
        return [e.to_row() for e in self._entries.values()]

    @classmethod
    def restore(
        cls,
        rows: Iterable[dict[str, str | int | float | bytes | None]],
        *,
        ttl: float = DEFAULT_TTL,
        unreachable_ttl: float = DEFAULT_UNREACHABLE_TTL,
        max_unreachable: float = DEFAULT_MAX_UNREACHABLE,
        clock: Clock = utc_now,
    ) -> RobotsCache:
        """A cache holding the rows of :meth:`dump`; the other arguments as for the
        constructor. Raises as :meth:`RobotsEntry.from_row` for a bad row."""
        cache = cls(
            ttl=ttl, unreachable_ttl=unreachable_ttl, max_unreachable=max_unreachable, clock=clock
        )
        cache.load(RobotsEntry.from_row(r) for r in rows)
        return cache
