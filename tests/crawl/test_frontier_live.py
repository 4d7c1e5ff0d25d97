"""Frontier changes made by the operator while the crawl runs (webark.crawl.live):
purge, promote (seeds first), per-queue settings and re-judged quotas; and the job's
``hosts:`` validation."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_frontier import FakeClock, _drain, _open

from webark.crawl.curi import HIGHEST, CrawlURI
from webark.crawl.frontier import S_BLOCKED_BY_QUOTA, FrontierConfig
from webark.crawl.job import JobConfigError, job_from_mapping
from webark.crawllog.status import S_DELETED_BY_USER


def test_purge_finishes_matching_queued_uris_only(tmp_path: Path) -> None:
    clock = FakeClock()
    f = _open(tmp_path, clock, min_delay=0, max_delay=0, delay_factor=0)
    f.add_many(CrawlURI(f"http://a.test/{i}") for i in range(7))
    f.add(CrawlURI("http://b.test/x1"))
    flying = f.next_ready()
    assert flying is not None and flying.uri == "http://a.test/0"
    got = f.purge(lambda c: c.uri[-2:] in ("/0", "/1", "/3"), S_DELETED_BY_USER, batch=2)
    assert [c.uri for c in got] == ["http://a.test/1", "http://a.test/3"]  # not in flight
    assert f.status_of("http://a.test/3") == ("finished", S_DELETED_BY_USER)
    assert f.status_of("http://a.test/0") == ("in flight", None)
    assert not f.add(CrawlURI("http://a.test/1")), "a purged URI stays seen"
    s = f.stats()
    assert (s.queued, s.finished) == (6 - 2 + 1, 2)
    f.finished(flying, 200, 0.1)
    rest = [f"http://a.test/{i}" for i in (2, 4, 5, 6)]
    assert _drain(f, clock) == ["http://b.test/x1", *rest]  # round robin: a.test just fetched
    f.close()


def test_promote_puts_a_due_queue_first_but_keeps_a_politeness_wait(tmp_path: Path) -> None:
    clock = FakeClock()
    f = _open(tmp_path, clock, min_delay=5, max_delay=5)
    f.add_many(CrawlURI(f"http://{h}.test/") for h in "abc")
    f.add(CrawlURI("http://d.test/seed", priority=HIGHEST))
    assert f.promote("d.test")
    first = f.next_ready()
    assert first is not None and first.uri == "http://d.test/seed"
    f.finished(first, 200, 0.1)  # d.test now waits 5 s
    f.add(CrawlURI("http://d.test/second", priority=HIGHEST))
    assert not f.promote("d.test"), "a queue in its politeness delay is not moved"
    nxt = f.next_ready()
    assert nxt is not None and nxt.uri == "http://a.test/"
    f.close()


def test_queue_overrides_and_requota(tmp_path: Path) -> None:
    clock = FakeClock()
    cfg = FrontierConfig(min_delay=1, max_delay=1, queue_overrides={"a.test": {"min_delay": 0.5,
                         "max_delay": 0.5, "max_uris": 2}})  # fmt: skip
    assert cfg.for_queue("a.test").min_delay == 0.5 and cfg.for_queue("b.test") is cfg
    assert cfg.for_queue("a.test").max_uris_per_queue == 2 and cfg.max_uris_per_queue is None
    with pytest.raises(ValueError, match="unknown settings"):
        FrontierConfig(queue_overrides={"a.test": {"delay": 1}})
    with pytest.raises(ValueError, match="min_delay"):
        FrontierConfig(queue_overrides={"a.test": {"min_delay": 40}})
    f = _open(tmp_path, clock, min_delay=1, max_delay=1)
    f.add_many(CrawlURI(f"http://a.test/{i}") for i in range(5))
    c = f.next_ready()
    assert c is not None
    assert f.finished(c, 200, 0.1).delay_s == 1.0
    f.config = cfg
    clock.t += 1
    c = f.next_ready()
    assert c is not None
    d = f.finished(c, 200, 0.1)
    assert d.delay_s == 0.5  # the queue's own delay
    # 2 successes reach the queue's own quota of 2: the other 3 URIs are blocked
    assert [u.uri for u in d.blocked_uris] == [f"http://a.test/{i}" for i in (2, 3, 4)]
    assert f.stats().blocked_queues == 1
    # raising the quota unblocks the queue; lowering it again blocks the rest at once
    f.config = FrontierConfig(min_delay=1, max_delay=1, queue_overrides={"a.test": {"max_uris": 9}})
    assert f.requota("a.test") == ()
    assert f.add(CrawlURI("http://a.test/new"))
    f.config = FrontierConfig(min_delay=1, max_delay=1, queue_overrides={"a.test": {"max_uris": 1}})
    got = f.requota("a.test")
    assert [u.uri for u in got] == ["http://a.test/new"]
    assert f.status_of("http://a.test/new") == ("finished", S_BLOCKED_BY_QUOTA)
    f.close()


def test_job_hosts_validation(tmp_path: Path) -> None:
    base = {"seeds": ["http://a.test/"], "job_dir": str(tmp_path), "contact": "a@b.org"}
    job = job_from_mapping({**base, "hosts": {"A.test:8080": {"min_delay": 1, "max_uris": 3,
                                                             "max_bytes": None}}})  # fmt: skip
    assert job.hosts == {"a.test:8080": {"min_delay": 1.0, "max_uris": 3}}
    assert job_from_mapping(job.to_json()).hosts == job.hosts  # job.json reads back
    for hosts, where in (
        ({"a.test": {"min_dealy": 1}}, "hosts.a.test.min_dealy"),
        ({"a.test": {"max_uris": 0}}, "hosts.a.test.max_uris"),
        ({"a.test": {"max_uris": 1.5}}, "hosts.a.test.max_uris"),
        ({"a.test": {"min_delay": 99}}, "hosts"),
        ({"a.test": 3}, "hosts.a.test"),
    ):
        with pytest.raises(JobConfigError) as e:
            job_from_mapping({**base, "hosts": hosts})
        assert e.value.key == where, (hosts, e.value)
