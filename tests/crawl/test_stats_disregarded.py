"""URIs dropped on purpose (scope on recheck -5000, operator -5001/-6000, hops -4001/-4002,
processor -5002) are Heritrix's "disregarded": neither succeeded nor failed, so they are
not ``dl-failures`` in progress-statistics.log nor "failed" in the summary (a new user's
trial found a purged trap URI counted as a failure). Quota (-5003) and fetch errors stay
failures, as in Heritrix's ``WorkQueueFrontier.isDisregarded``."""

from __future__ import annotations

from webark.crawl.stats import CrawlStats


def test_disregarded_is_neither_ok_nor_failed_and_survives_resume() -> None:
    s = CrawlStats(job_name="t")
    lines = [("http://a.test/", 200), ("http://a.test/cal?d=1", -5000),
             ("http://a.test/x", -6000), ("http://a.test/deep", -4001),
             ("http://a.test/gone", -2), ("http://a.test/q", -5003),
             ("http://a.test/private", -9998)]  # fmt: skip
    for uri, status in lines:
        s.record(uri, status, 10, "text/html")
    snap = s.snapshot()
    assert (snap.processed, snap.succeeded, snap.failed, snap.disregarded,
            snap.robots_excluded) == (7, 1, 2, 3, 1)  # fmt: skip
    again = CrawlStats.from_json(s.to_json()).snapshot()
    assert (again.failed, again.disregarded) == (2, 3)
