"""Frontier: delay math, scheduling, back-off, retries, quotas, seen filter, persistence."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from webark.crawl.curi import HIGH, NORMAL, CrawlURI, politeness_key
from webark.crawl.frontier import (
    S_BLOCKED_BY_QUOTA,
    Frontier,
    FrontierConfig,
    FrontierError,
    Outcome,
    anchored_clock,
    backoff_delay,
    fingerprint,
    parse_retry_after,
    politeness_delay,
)

T0 = 1_800_000_000.0  # a wall-clock time (2027-01-15)


class FakeClock:
    def __init__(self, t: float = T0) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


def _open(tmp_path: Path, clock: FakeClock, **cfg: object) -> Frontier:
    return Frontier.open(tmp_path / "f.db", FrontierConfig(**cfg), clock=clock)  # type: ignore[arg-type]


def _drain(f: Frontier, clock: FakeClock, status: int = 200, step: float = 0.0) -> list[str]:
    """Fetch everything, advancing the clock to each wake time; return URIs in order."""
    out = []
    while True:
        c = f.next_ready()
        if c is None:
            wake = f.next_wake()
            if wake is None:
                return out
            clock.t = max(clock.t, wake)
            continue
        out.append(c.uri)
        clock.t += step
        f.finished(c, status, 0.1)


# --- CrawlURI -------------------------------------------------------------------------


def test_crawluri_child_and_key() -> None:
    seed = CrawlURI("http://Example.com/", seed=True, source="s1")
    assert seed.key == "example.com"
    c = seed.child("https://example.com:8443/a.css", "E")
    assert (c.hops, c.via, c.seed, c.source, c.key) == (
        "E",
        seed.uri,
        False,
        "s1",
        "example.com:8443",
    )
    r = c.child("http://example.com/robots.txt", "P")
    assert r.hops == "EP" and r.priority == HIGH and r.hops_from_seed == 2 and r.last_hop == "P"
    assert c.priority == NORMAL
    with pytest.raises(ValueError):
        seed.child("http://x/", "Q")
    with pytest.raises(ValueError):
        CrawlURI("http://x/", hops="LZ")
    assert politeness_key("http://[::1]:8080/") == "[::1]:8080"
    assert politeness_key("https://a.example:443/") == "a.example"


# --- pure delay math --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("duration", "crawl_delay", "expected"),
    [
        (0.0, None, 3.0),  # min_delay
        (0.5, None, 3.0),  # 2.5 -> raised to min 3
        (1.0, None, 5.0),  # 5 x 1 s
        (4.0, None, 20.0),
        (6.0, None, 30.0),  # max_delay
        (120.0, None, 30.0),
        (-1.0, None, 3.0),  # clock went back: counts as 0
        (float("nan"), None, 3.0),
        (1.0, 2.0, 5.0),  # Crawl-delay below the computed delay: no effect
        (1.0, 10.0, 10.0),  # raises it
        (1.0, 45.0, 30.0),  # capped at crawl_delay_cap (30 s default)
        (1.0, 0.0, 5.0),
    ],
)
def test_politeness_delay_defaults(
    duration: float, crawl_delay: float | None, expected: float
) -> None:
    assert politeness_delay(duration, FrontierConfig(), crawl_delay) == expected


def test_politeness_delay_crawl_delay_beyond_max_delay() -> None:
    cfg = FrontierConfig(max_delay=10, crawl_delay_cap=300)
    assert politeness_delay(1.0, cfg, 120) == 120.0  # Heritrix: Crawl-delay may pass maxDelay
    assert politeness_delay(1.0, cfg, 900) == 300.0
    assert politeness_delay(1.0, FrontierConfig(crawl_delay_cap=0), 20) == 5.0  # ignored


def test_backoff_and_retry_after() -> None:
    cfg = FrontierConfig(backoff_base=120, backoff_max=3600)
    assert [backoff_delay(n, cfg) for n in (0, 1, 2, 3, 5, 6, 1000)] == [
        0.0, 120.0, 240.0, 480.0, 1920.0, 3600.0, 3600.0,
    ]  # fmt: skip
    assert parse_retry_after("  90 ", T0) == 90.0
    assert parse_retry_after(2.5, T0) == 2.5
    assert parse_retry_after(-3, T0) == 0.0
    # 1800000000 = Fri, 15 Jan 2027 08:00:00 GMT
    assert parse_retry_after("Fri, 15 Jan 2027 08:05:00 GMT", T0) == 300.0
    assert parse_retry_after("Fri, 15 Jan 2027 07:00:00 GMT", T0) == 0.0
    assert parse_retry_after("tomorrow", T0) is None
    assert parse_retry_after(None, T0) is None


def test_anchored_clock_is_wall_time_that_never_steps_back() -> None:
    clock = anchored_clock()
    a = clock()
    assert abs(a - time.time()) < 1.0
    assert clock() >= a


def test_config_validation() -> None:
    with pytest.raises(ValueError):
        FrontierConfig(min_delay=10, max_delay=5)
    with pytest.raises(ValueError):
        FrontierConfig(retry_delay=-1)
    with pytest.raises(ValueError):
        FrontierConfig(synchronous="OFF")


# --- scheduling -------------------------------------------------------------------------


def test_one_in_flight_per_queue_and_politeness(tmp_path: Path, clock: FakeClock) -> None:
    with _open(tmp_path, clock) as f:
        assert f.add_many(CrawlURI(f"http://a.example/{i}") for i in range(3)) == 3
        c1 = f.next_ready()
        assert c1 is not None and c1.uri == "http://a.example/0"
        assert f.next_ready() is None  # one in flight per queue
        assert f.next_wake() is None and f.in_flight == 1
        d = f.finished(c1, 200, 1.0)  # 5 x 1 s
        assert d.outcome is Outcome.FINISHED and d.delay_s == 5.0 and d.due == T0 + 5.0
        assert f.next_ready() is None
        assert f.next_wake() == T0 + 5.0
        clock.t = T0 + 4.999
        assert f.next_ready() is None
        clock.t = T0 + 5.0
        c2 = f.next_ready()
        assert c2 is not None and c2.uri == "http://a.example/1"
        d = f.finished(c2, 200, 0.1, crawl_delay=12)
        assert d.delay_s == 12.0
        clock.t = d.due
        c3 = f.next_ready()
        assert c3 is not None
        assert f.finished(c3, 200, 0.1).delay_s == 12.0  # Crawl-delay remembered per queue
        st = f.stats()
        assert (st.queued, st.in_flight, st.finished, st.succeeded, st.queues) == (0, 0, 3, 3, 1)


def test_round_robin_across_queues(tmp_path: Path, clock: FakeClock) -> None:
    hosts = ["a", "b", "c", "d"]
    with _open(tmp_path, clock, min_delay=0, delay_factor=0) as f:
        f.add_many(CrawlURI(f"http://{h}.example/{i}") for h in hosts for i in range(3))
        order = _drain(f, clock, step=0.001)
    assert order == [f"http://{h}.example/{i}" for i in range(3) for h in hosts]


def test_round_robin_with_politeness_and_many_in_flight(tmp_path: Path, clock: FakeClock) -> None:
    with _open(tmp_path, clock) as f:
        f.add_many(CrawlURI(f"http://h{h}.example/{i}") for h in range(5) for i in range(2))
        first = [f.next_ready() for _ in range(6)]
        assert [c.key for c in first if c] == [f"h{h}.example" for h in range(5)]
        assert first[5] is None  # all five queues busy
        for c in first[:5]:
            assert c is not None
            f.finished(c, 200, 0.1)  # 3 s min delay
        assert f.next_ready() is None
        clock.t += 3.0
        again = [f.next_ready() for _ in range(5)]
        assert [c.uri for c in again if c] == [f"http://h{h}.example/1" for h in range(5)]


def test_priority_within_queue(tmp_path: Path, clock: FakeClock) -> None:
    with _open(tmp_path, clock, min_delay=0, delay_factor=0) as f:
        seed = CrawlURI("http://a.example/", seed=True)
        f.add(seed)
        f.add(seed.child("http://a.example/page", "L"))
        f.add(seed.child("http://a.example/robots.txt", "P"))
        assert _drain(f, clock) == [
            "http://a.example/robots.txt",
            "http://a.example/",
            "http://a.example/page",
        ]


def test_seen_filter(tmp_path: Path, clock: FakeClock) -> None:
    with _open(tmp_path, clock, min_delay=0, delay_factor=0) as f:
        assert f.add(CrawlURI("http://a.example/x?q=%7e"))
        assert not f.add(CrawlURI("HTTP://A.EXAMPLE:80/x?q=~#frag"))  # same canonical URL
        assert not f.add(CrawlURI("http://a.example/./x?q=~", hops="L"))
        assert f.add(CrawlURI("http://a.example/x?q=~~"))
        assert f.add_many([CrawlURI("http://b.example/"), CrawlURI("http://b.example/")]) == 1
        c = f.next_ready()
        assert c is not None
        assert not f.add(CrawlURI(c.uri))  # in flight
        f.finished(c, 200, 0.1)
        assert not f.add(CrawlURI(c.uri))  # finished
        assert f.status_of(c.uri) == ("finished", 200)
        assert f.add(CrawlURI(c.uri), force=True)  # recrawl on request
        assert f.status_of(c.uri) == ("queued", None)
        assert not f.add(CrawlURI("http://b.example/"), force=True)  # queued: never doubled
        assert len(_drain(f, clock)) == 3
        assert f.stats().finished == 3
    assert fingerprint("http://a.example/x?q=%7e") == fingerprint("http://a.example/x?q=~")


# --- back-off and retries ---------------------------------------------------------------


def test_backoff_on_503_with_retry_after(tmp_path: Path, clock: FakeClock) -> None:
    with _open(tmp_path, clock, backoff_base=60, backoff_max=600, max_http_retries=3) as f:
        f.add_many([CrawlURI("http://a.example/1"), CrawlURI("http://b.example/1")])
        a = f.next_ready()
        b = f.next_ready()
        assert a is not None and b is not None
        d = f.finished(a, 503, 0.1, retry_after="120")
        assert (d.outcome, d.delay_s, d.snoozed) == (Outcome.RETRY, 120.0, True)
        f.finished(b, 200, 0.1)
        st = f.stats()
        assert st.snoozed_queues == 1 and st.queued == 1  # b is empty: not snoozed
        assert st.top_queues[0].key == "a.example" and st.top_queues[0].errors == 1
        clock.t = T0 + 3.0
        assert f.next_ready() is None  # b is empty, a is snoozed
        clock.t = T0 + 120.0
        a = f.next_ready()
        assert a is not None and a.uri == "http://a.example/1" and a.retries == 1
        # second consecutive 5xx: 60 x 2 = 120 s; without Retry-After
        d = f.finished(a, 500, 0.1)
        assert (d.outcome, d.delay_s) == (Outcome.RETRY, 120.0)
        clock.t = d.due
        a = f.next_ready()
        assert a is not None
        # 429 with an HTTP-date Retry-After shorter than the back-off: the back-off wins
        date = "Fri, 15 Jan 2027 08:05:00 GMT"  # T0 + 300 s
        d = f.finished(a, 429, 0.1, retry_after=date)
        assert d.delay_s == 240.0
        clock.t = d.due
        a = f.next_ready()
        assert a is not None and a.retries == 3
        d = f.finished(a, 503, 0.1, retry_after=10_000)  # capped at retry_after_cap 3600
        assert (d.outcome, d.delay_s) == (Outcome.FINISHED, 3600.0)  # retries exhausted
        assert f.status_of(a.uri) == ("finished", 503)
        st = f.stats()
        assert (st.finished, st.succeeded, st.queued) == (2, 2, 0)


def test_success_resets_backoff_and_non_retry_5xx(tmp_path: Path, clock: FakeClock) -> None:
    with _open(tmp_path, clock, backoff_base=60) as f:
        f.add_many(CrawlURI(f"http://a.example/{i}") for i in range(3))
        c = f.next_ready()
        assert c is not None
        d = f.finished(c, 501, 0.1)  # 5xx not in http_retry_statuses: finished, still snoozed
        assert (d.outcome, d.delay_s, d.snoozed) == (Outcome.FINISHED, 60.0, True)
        clock.t = d.due
        c = f.next_ready()
        assert c is not None
        d = f.finished(c, 404, 0.1)
        assert (d.delay_s, d.snoozed) == (3.0, False)
        clock.t = d.due
        c = f.next_ready()
        assert c is not None
        assert f.finished(c, 503, 0.1).delay_s == 60.0  # errors counter was reset


def test_network_retries_then_failure(tmp_path: Path, clock: FakeClock) -> None:
    with _open(tmp_path, clock, max_retries=2, retry_delay=900) as f:
        f.add_many([CrawlURI("http://down.example/a"), CrawlURI("http://down.example/b")])
        delays = []
        for _ in range(3):
            c = f.next_ready()
            assert c is not None and c.uri == "http://down.example/a"  # stays at the head
            d = f.finished(c, -2, 0.5)
            delays.append((d.outcome, d.delay_s))
            clock.t = d.due
        assert delays == [(Outcome.RETRY, 900.0), (Outcome.RETRY, 900.0), (Outcome.FINISHED, 3.0)]
        assert f.status_of("http://down.example/a") == ("finished", -2)
        c = f.next_ready()
        assert c is not None and c.uri == "http://down.example/b"
        d = f.finished(c, -7, 0.0)  # unfetchable: not retried
        assert d.outcome is Outcome.FINISHED
        st = f.stats()
        assert (st.finished, st.succeeded) == (2, 0)


def test_finished_misuse(tmp_path: Path, clock: FakeClock) -> None:
    with _open(tmp_path, clock) as f:
        f.add(CrawlURI("http://a.example/1"))
        with pytest.raises(FrontierError):
            f.finished(CrawlURI("http://a.example/1"), 200, 0.1)  # not in flight
        c = f.next_ready()
        assert c is not None
        with pytest.raises(FrontierError):
            f.finished(CrawlURI("http://a.example/2"), 200, 0.1)
        f.finished(c, 200, 0.1)
        with pytest.raises(FrontierError):
            f.finished(c, 200, 0.1)  # twice


# --- quotas -----------------------------------------------------------------------------


def test_queue_uri_quota(tmp_path: Path, clock: FakeClock) -> None:
    with _open(tmp_path, clock, min_delay=0, delay_factor=0, max_uris_per_queue=2) as f:
        f.add_many(CrawlURI(f"http://a.example/{i}") for i in range(5))
        f.add_many(CrawlURI(f"http://b.example/{i}") for i in range(2))
        got = _drain(f, clock)
        assert sorted(got) == sorted(
            ["http://a.example/0", "http://a.example/1", "http://b.example/0", "http://b.example/1"]
        )
        assert f.status_of("http://a.example/4") == ("finished", S_BLOCKED_BY_QUOTA)
        assert not f.add(CrawlURI("http://a.example/new"))  # queue blocked
        st = f.stats()
        assert (st.finished, st.succeeded, st.blocked_by_quota, st.blocked_queues) == (7, 4, 3, 2)


def test_queue_bytes_quota_counts_successes_only(tmp_path: Path, clock: FakeClock) -> None:
    with _open(tmp_path, clock, min_delay=0, delay_factor=0, max_bytes_per_queue=1000) as f:
        f.add_many(CrawlURI(f"http://a.example/{i}") for i in range(4))
        c = f.next_ready()
        assert c is not None
        assert f.finished(c, 200, 0.1, size=600).blocked == 0
        c = f.next_ready()
        assert c is not None
        d = f.finished(c, 200, 0.1, size=600)
        assert d.blocked == 2 and f.next_ready() is None and f.next_wake() is None
        assert f.stats().bytes == 1200


def test_crawl_quota(tmp_path: Path, clock: FakeClock) -> None:
    with _open(tmp_path, clock, min_delay=0, delay_factor=0, max_uris=3) as f:
        f.add_many(CrawlURI(f"http://h{i}.example/") for i in range(10))
        c = f.next_ready()
        assert c is not None
        f.finished(c, 404, 0.1)  # any status > 0 counts as a fetched URI
        got = _drain(f, clock)
        assert len(got) == 2
        st = f.stats()
        assert st.quota_reached and st.succeeded == 3 and st.queued == 7
    # the quota is a property of the persisted totals: still reached after reopening
    with _open(tmp_path, clock, min_delay=0, delay_factor=0, max_uris=3) as f:
        assert f.next_ready() is None and f.quota_reached
    with _open(tmp_path, clock, min_delay=0, delay_factor=0, max_uris=5) as f:
        assert len(_drain(f, clock)) == 2


# --- persistence ------------------------------------------------------------------------


def test_persistence_across_close_and_open(tmp_path: Path, clock: FakeClock) -> None:
    with _open(tmp_path, clock) as f:
        seed = CrawlURI("http://a.example/", seed=True, source="seeds.txt")
        f.add_many([seed, seed.child("http://a.example/x", "L"), CrawlURI("http://b.example/")])
        c = f.next_ready()
        assert c is not None
        f.finished(c, 503, 0.1, retry_after=600)
        b = f.next_ready()  # left in flight at close: given back on open
        assert b is not None and b.uri == "http://b.example/"
    clock.t = T0 + 10
    with _open(tmp_path, clock) as f:
        assert f.recovered == 1
        st = f.stats()
        assert (st.queued, st.in_flight, st.finished) == (3, 0, 0)
        b = f.next_ready()
        assert b is not None and b.uri == "http://b.example/"
        assert f.next_ready() is None  # a.example still snoozed: due T0 + 600 persisted
        assert f.next_wake() == T0 + 600
        f.finished(b, 200, 0.1)
        clock.t = T0 + 600
        a = f.next_ready()
        assert a is not None and a == CrawlURI(
            "http://a.example/", seed=True, source="seeds.txt", retries=1
        )
        f.finished(a, 200, 0.1)
    clock.t = T0 + 7200  # restart hours later: everything due is ready at once
    with _open(tmp_path, clock) as f:
        assert f.recovered == 0 and not f.add(CrawlURI("http://b.example/"))
        x = f.next_ready()
        assert x is not None and (x.uri, x.hops, x.via) == ("http://a.example/x", "L", a.uri)
        f.finished(x, 200, 0.1)
        st = f.stats()
        assert (st.queued, st.finished, st.succeeded) == (0, 3, 3)


def test_due_times_capped_when_clock_steps_back(tmp_path: Path, clock: FakeClock) -> None:
    with _open(tmp_path, clock, retry_delay=900, retry_after_cap=600, backoff_max=600) as f:
        f.add(CrawlURI("http://a.example/"))
        c = f.next_ready()
        assert c is not None
        assert f.finished(c, -4, 1.0).due == T0 + 900
    clock.t = T0 - 86_400  # wall clock one day back
    with _open(tmp_path, clock, retry_delay=900, retry_after_cap=600, backoff_max=600) as f:
        assert f.next_wake() == T0 - 86_400 + 900  # not a day + 15 min


def test_schema_is_sqlite_wal(tmp_path: Path, clock: FakeClock) -> None:
    f = _open(tmp_path, clock)
    try:
        assert f._db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert f._db.execute("PRAGMA synchronous").fetchone()[0] == 1  # NORMAL
    finally:
        f.close()
    f.close()  # idempotent
    con = sqlite3.connect(tmp_path / "f.db")
    con.execute("UPDATE meta SET v = 99 WHERE k = 'schema'")
    con.commit()
    con.close()
    with pytest.raises(FrontierError):
        _open(tmp_path, clock)


def test_add_many_is_one_transaction(tmp_path: Path, clock: FakeClock) -> None:
    def gen() -> Iterator[CrawlURI]:
        yield CrawlURI("http://a.example/1")
        yield CrawlURI("http://b.example/1")
        raise RuntimeError("extractor bug")

    with _open(tmp_path, clock, synchronous="FULL") as f:
        assert f._db.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL
        with pytest.raises(RuntimeError):
            f.add_many(gen())
        assert f.stats().queued == 0 and f.stats().queues == 0
        assert f.add(CrawlURI("http://a.example/1"))  # not marked seen by the failed batch
        assert f.stats().queued == 1


def test_new_queue_joins_behind_queues_already_due(tmp_path: Path, clock: FakeClock) -> None:
    with _open(tmp_path, clock) as f:
        f.add_many([CrawlURI("http://a.example/1"), CrawlURI("http://a.example/2")])
        a = f.next_ready()
        assert a is not None
        f.finished(a, 200, 0.1)  # a.example due at T0 + 3
        clock.t = T0 + 10
        f.add(CrawlURI("http://b.example/1"))  # b.example due now, T0 + 10
        order = [f.next_ready(), f.next_ready()]
        assert [c.uri for c in order if c] == ["http://a.example/2", "http://b.example/1"]


def test_requeue_puts_the_uri_back_at_the_head_after_the_delay(
    tmp_path: Path, clock: FakeClock
) -> None:
    """The URI whose robots.txt was just fetched waits in its queue (issue 19): same URI
    next, retries unchanged, no finish counted; other queues are not held up."""
    with _open(tmp_path, clock, min_delay=0, max_delay=0, delay_factor=0) as f:
        f.add_many([CrawlURI("http://a.test/", seed=True), CrawlURI("http://a.test/x"),
                    CrawlURI("http://b.test/", seed=True)])  # fmt: skip
        first = f.next_ready()
        assert first is not None and first.uri == "http://a.test/"
        due = f.requeue(first, 2.0, crawl_delay=1.5)
        assert due == T0 + 2.0 and f.in_flight == 0
        other = f.next_ready()
        assert other is not None and other.uri == "http://b.test/"
        f.finished(other, 200, 0.1)
        assert f.next_ready() is None and f.next_wake() == T0 + 2.0
        clock.t = T0 + 2.0
        again = f.next_ready()
        assert again is not None and (again.uri, again.retries) == ("http://a.test/", 0)
        d = f.finished(again, 200, 0.1)
        assert d.due == T0 + 2.0 + 1.5  # the Crawl-delay given to requeue is kept
        with pytest.raises(FrontierError):
            f.requeue(again, 1.0)
        assert f.stats().succeeded == 2
