"""RobotsCache: origin keys, 24 h expiry, unreachable handling, persistence."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime, timedelta

import pytest

from webark.robots import (
    DEFAULT_TTL,
    RobotsCache,
    RobotsEntry,
    RobotsStatus,
    origin_key,
    robots_url,
)

UA = "webark"
BLOCK_PRIVATE = b"User-agent: *\nDisallow: /private/\n"


class FakeClock:
    def __init__(self) -> None:
        self.now = datetime(2024, 1, 1, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.mark.parametrize(
    ("url", "key"),
    [
        ("http://Example.COM/a", "http://example.com:80"),
        ("http://example.com:80/", "http://example.com:80"),
        ("https://example.com/", "https://example.com:443"),
        ("https://example.com:8443/x", "https://example.com:8443"),
        ("http://example.com./", "http://example.com:80"),
        ("ftp://example.com/f", "ftp://example.com:21"),
        ("http://[2001:DB8::1]/", "http://[2001:db8::1]:80"),
        ("http://user:pw@example.com/", "http://example.com:80"),
    ],
)
def test_origin_key(url: str, key: str) -> None:
    assert origin_key(url) == key


@pytest.mark.parametrize("url", ["/relative", "mailto:x@y", "http://h:port/"])
def test_origin_key_errors(url: str) -> None:
    with pytest.raises(ValueError):
        origin_key(url)


def test_robots_url() -> None:
    assert robots_url("http://example.com:80/a") == "http://example.com/robots.txt"
    assert robots_url("https://h:8443/a") == "https://h:8443/robots.txt"


def test_fetch_cycle_and_24h_expiry(clock: FakeClock) -> None:
    cache = RobotsCache(clock=clock)
    url = "http://example.com/private/page"
    assert cache.needs_fetch(url) and cache.get(url) is None
    policy = cache.record("http://example.com/robots.txt", 200, BLOCK_PRIVATE)
    assert not policy.allowed(url, UA)
    assert cache.get("http://EXAMPLE.com:80/other") is policy  # same origin, memoized
    assert cache.get("https://example.com/") is None  # another origin
    assert "http://example.com/" in cache and len(cache) == 1
    clock.advance(DEFAULT_TTL - 1)
    assert not cache.needs_fetch(url)
    clock.advance(1)
    assert cache.needs_fetch(url) and cache.get(url) is None
    stale = cache.get(url, allow_stale=True)
    assert stale is not None and not stale.allowed(url, UA)


def test_404_allows_all(clock: FakeClock) -> None:
    cache = RobotsCache(clock=clock)
    policy = cache.record("http://h/robots.txt", 404, b"<html>not found</html>")
    assert policy.status is RobotsStatus.UNAVAILABLE and policy.allowed("http://h/x", UA)
    entry = cache.entry("http://h/")
    assert entry is not None and entry.body == b"" and entry.http_status == 404


def test_unreachable_disallows_then_retries_soon(clock: FakeClock) -> None:
    cache = RobotsCache(clock=clock, unreachable_ttl=600)
    policy = cache.record("http://h/robots.txt", 503)
    assert policy.status is RobotsStatus.UNREACHABLE
    assert not policy.allowed("http://h/x", UA)
    assert policy.allowed("http://h/robots.txt", UA)
    clock.advance(600)
    assert cache.needs_fetch("http://h/x")
    cache.record("http://h/robots.txt", 200, BLOCK_PRIVATE)
    entry = cache.entry("http://h/")
    assert entry is not None and entry.unreachable_since is None
    assert cache.get("http://h/") is not None


def test_unreachable_keeps_last_good_copy_and_uses_it_after_30_days(clock: FakeClock) -> None:
    cache = RobotsCache(clock=clock, unreachable_ttl=3600, max_unreachable=30 * 86400)
    cache.record("http://h/robots.txt", 200, BLOCK_PRIVATE)
    clock.advance(DEFAULT_TTL)
    started = clock.now
    policy = cache.record("http://h/robots.txt", None)  # network error
    assert not policy.allowed("http://h/public", UA)
    for _ in range(29):
        clock.advance(86400)
        policy = cache.record("http://h/robots.txt", 500)
        assert policy.status is RobotsStatus.UNREACHABLE
    entry = cache.entry("http://h/")
    assert entry is not None and entry.unreachable_since == started
    assert entry.body == BLOCK_PRIVATE
    clock.advance(86400)
    policy = cache.record("http://h/robots.txt", 500)
    assert policy.status is RobotsStatus.PARSED  # the cached copy again
    assert policy.allowed("http://h/public", UA)
    assert not policy.allowed("http://h/private/x", UA)


def test_unreachable_without_copy_allows_all_after_30_days(clock: FakeClock) -> None:
    cache = RobotsCache(clock=clock, max_unreachable=10)
    assert not cache.record("http://h/robots.txt", 429).allowed("http://h/x", UA)
    clock.advance(10)
    policy = cache.record("http://h/robots.txt", 429)
    assert policy.status is RobotsStatus.UNAVAILABLE and policy.allowed("http://h/x", UA)


def test_body_is_capped(clock: FakeClock) -> None:
    cache = RobotsCache(clock=clock)
    cache.record("http://h/", 200, b"#" * 600_000)
    entry = cache.entry("http://h/")
    assert entry is not None and len(entry.body) == 500 * 1024 + 1


def test_invalidate_expire_purge(clock: FakeClock) -> None:
    cache = RobotsCache(clock=clock)
    cache.record("http://a/", 200, BLOCK_PRIVATE)
    cache.record("http://b/", 404)
    cache.expire("http://a/")
    assert cache.needs_fetch("http://a/") and not cache.needs_fetch("http://b/")
    clock.advance(DEFAULT_TTL)
    assert cache.purge_expired() == 1  # b (nothing to keep); a keeps its body
    assert "http://a/" in cache and "http://b/" not in cache
    cache.invalidate("http://a/x")
    assert len(cache) == 0


def test_persistence_round_trip_through_sqlite(clock: FakeClock) -> None:
    cache = RobotsCache(clock=clock)
    cache.record("http://a/", 200, BLOCK_PRIVATE)
    cache.record("https://b:8443/", 404)
    cache.record("http://c/", None)
    rows = cache.dump()
    db = sqlite3.connect(":memory:")
    db.execute(
        "CREATE TABLE robots (key TEXT PRIMARY KEY, status TEXT, http_status INTEGER, "
        "body BLOB, fetched_at REAL, expires_at REAL, unreachable_since REAL)"
    )
    db.executemany(
        "INSERT INTO robots VALUES (:key, :status, :http_status, :body, :fetched_at, "
        ":expires_at, :unreachable_since)",
        rows,
    )
    db.row_factory = sqlite3.Row
    loaded = [dict(r) for r in db.execute("SELECT * FROM robots ORDER BY key")]
    restored = RobotsCache.restore(loaded, clock=clock)
    assert sorted(restored.entries(), key=lambda e: e.key) == sorted(
        cache.entries(), key=lambda e: e.key
    )
    policy = restored.get("http://a/private/x")
    assert policy is not None and not policy.allowed("http://a/private/x", UA)
    c = restored.entry("http://c/")
    assert c is not None and c.status is RobotsStatus.UNREACHABLE and c.http_status is None


def test_from_row_rejects_bad_rows() -> None:
    good = RobotsEntry(
        key="http://h:80",
        status=RobotsStatus.PARSED,
        http_status=200,
        body=b"",
        fetched_at=datetime(2024, 1, 1, tzinfo=UTC),
        expires_at=datetime(2024, 1, 2, tzinfo=UTC),
    ).to_row()
    assert RobotsEntry.from_row(good).key == "http://h:80"
    with pytest.raises(ValueError):
        RobotsEntry.from_row({**good, "status": "maybe"})
    with pytest.raises(TypeError):
        RobotsEntry.from_row({**good, "body": "text"})
    with pytest.raises(TypeError):
        RobotsEntry.from_row({**good, "fetched_at": "yesterday"})
    with pytest.raises(KeyError):
        RobotsEntry.from_row({k: v for k, v in good.items() if k != "key"})


def test_negative_durations_rejected() -> None:
    with pytest.raises(ValueError):
        RobotsCache(ttl=-1)


def test_naive_clock_is_taken_as_utc() -> None:
    cache = RobotsCache(clock=lambda: datetime(2024, 1, 1))
    cache.record("http://h/", 200, b"")
    entry = cache.entry("http://h/")
    assert entry is not None and entry.fetched_at.tzinfo is UTC
