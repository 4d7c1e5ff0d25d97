"""Frontier.release: a queue serves its next URI while the fetched one is still being
processed; the fetched one stays in flight (and comes back after a crash) until
finished."""

from __future__ import annotations

from pathlib import Path

from webark.crawl.curi import CrawlURI
from webark.crawl.frontier import Frontier, FrontierConfig

T0 = 1_800_000_000.0


class Clock:
    def __init__(self) -> None:
        self.t = T0

    def __call__(self) -> float:
        return self.t


def _open(path: Path, clock: Clock, **cfg: object) -> Frontier:
    base: dict[str, object] = {"min_delay": 0.0, "max_delay": 0.0, "delay_factor": 0.0}
    base.update(cfg)
    return Frontier.open(path, FrontierConfig(**base), clock=clock)  # type: ignore[arg-type]


def _seed(f: Frontier, n: int) -> list[str]:
    uris = [f"http://a.test/{i}" for i in range(n)]
    f.add_many(CrawlURI(u) for u in uris)
    return uris


def test_release_frees_the_queue_and_keeps_the_uri_in_flight(tmp_path: Path) -> None:
    clock = Clock()
    with _open(tmp_path / "f.db", clock) as f:
        uris = _seed(f, 3)
        a = f.next_ready()
        assert a is not None and a.uri == uris[0]
        assert f.next_ready() is None  # one fetch per queue
        assert f.release(a, 200, 0.01, size=10)
        b = f.next_ready()
        assert b is not None and b.uri == uris[1]
        assert f.next_ready() is None  # b is being fetched: the queue is busy again
        assert f.in_flight == 2 and f.stats().in_flight == 2
        assert f.status_of(a.uri) == ("in flight", None)
        f.add_many([CrawlURI(uris[0]), CrawlURI("http://a.test/new")])  # a stays seen
        assert f.stats().queued == 2
        f.finished(a, 200, 0.01, size=10)
        assert f.status_of(a.uri) == ("finished", 200)
        f.finished(b, 404, 0.01, size=5)
        st = f.stats()
        assert (st.finished, st.succeeded, st.bytes, st.in_flight) == (2, 2, 15, 0)
        assert f.in_flight == 0


def test_released_uris_come_back_after_a_crash(tmp_path: Path) -> None:
    clock = Clock()
    db = tmp_path / "f.db"
    f = _open(db, clock)
    uris = _seed(f, 4)
    a = f.next_ready()
    assert a is not None and f.release(a, 200, 0.0)
    b = f.next_ready()
    assert b is not None and f.release(b, 200, 0.0)
    c = f.next_ready()
    assert c is not None
    f.finished(b, 200, 0.0)  # b done; a (released) and c (fetching) in flight
    f._db.close()  # a kill -9: no finished() for a and c, no close()
    with _open(db, clock) as g:
        assert g.recovered == 2 and set(g.recovered_uris) == {uris[0], uris[2]}
        assert g.stats().queued == 3 and g.status_of(uris[1]) == ("finished", 200)
        got = []
        while (n := g.next_ready()) is not None:
            got.append(n.uri)
            g.finished(n, 200, 0.0)
        assert got == [uris[0], uris[2], uris[3]]  # back at the head, in queue order


def test_release_refused_when_the_queue_must_wait_or_retry(tmp_path: Path) -> None:
    clock = Clock()
    with _open(tmp_path / "f.db", clock, max_http_retries=1, max_retries=1) as f:
        _seed(f, 2)
        a = f.next_ready()
        assert a is not None
        assert not f.release(a, 503, 0.0)  # retried: the frontier's back-off decides
        assert not f.release(a, -2, 0.0)  # a network failure, retried
        assert f.next_ready() is None
        f.finished(a, 200, 0.0)
    with _open(tmp_path / "g.db", clock, min_delay=0.5, max_delay=1.0) as f:
        _seed(f, 2)
        a = f.next_ready()
        assert a is not None and not f.release(a, 200, 0.0)  # a polite queue waits
        f.finished(a, 200, 0.0)
        assert f.next_ready() is None  # its delay counts from finished()
        clock.t += 0.5
        assert f.next_ready() is not None
    with _open(tmp_path / "h.db", clock) as f:
        _seed(f, 2)
        a = f.next_ready()
        assert a is not None and not f.release(a, 200, 0.0, crawl_delay=2.0)  # Crawl-delay
        f.finished(a, 200, 0.0)
    with _open(tmp_path / "q.db", clock, max_uris_per_queue=5) as f:
        _seed(f, 2)
        a = f.next_ready()
        assert a is not None and not f.release(a, 200, 0.0)  # judged at finished()


def test_crawl_quota_counts_released_uris(tmp_path: Path) -> None:
    clock = Clock()
    with _open(tmp_path / "f.db", clock, max_uris=2) as f:
        _seed(f, 5)
        a = f.next_ready()
        assert a is not None and f.release(a, 200, 0.0)
        b = f.next_ready()
        assert b is not None and f.release(b, 200, 0.0)
        assert f.quota_reached and f.next_ready() is None  # 2 successes pending
        f.finished(a, 200, 0.0)
        f.finished(b, 200, 0.0)
        assert f.quota_reached and f.stats().succeeded == 2
