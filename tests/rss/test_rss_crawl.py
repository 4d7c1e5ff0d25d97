"""Continuous crawling of three simulated news sites whose feeds gain entries while the
crawl runs (issue 14, "Done means" 1 and 5): each site has two or three section feeds
(RSS and Atom) with their section front page and the front page as implied pages, a
"top stories" feed repeating the newest entries of all sections, one site a feed of
undated briefs; articles embed an image and a style sheet with a background image.

What is proved, from the servers' access logs and the WARCs:

* every entry listed by a feed is captured exactly once (one response record);
* each implied page is fetched once in each round in which one of its feeds listed a
  new entry, and in no other round;
* a feed served byte-identical to its previous fetch is a revisit record, and its round
  fetches nothing for it;
* two rounds of a site start at least its minimum wait apart, and nothing of a round is
  fetched after the next round's feeds (the next round waits for the last URI);
* one request at a time per host, ``min_delay`` apart;
* nothing beyond the round's scope (related articles, archives, /private/);
* replay: the capture calendar lists every front-page capture, the diff view compares
  two consecutive ones.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import random
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from crawl_support import (
    MIN_DELAY,
    by_uri,
    captures,
    crawl_while,
    make_job,
    rounds_of,
    rss_state,
    settle,
)
from news_site import NewsSite, SimClock
from starlette.testclient import TestClient

from webark.apps.replay.app import create_server
from webark.crawllog.parse import read_crawl_log
from webark.index.collection import Collection
from webark.warc.check import check_file

WAITS = {"news-a.test": 0.6, "news-b.test": 0.9, "news-c.test": 0.7}
IPS = {"news-a.test": "127.0.0.31", "news-b.test": "127.0.0.32", "news-c.test": "127.0.0.33"}
SECTIONS = {"news-a.test": ("news", "sport", "culture"), "news-b.test": ("world", "tech"),
            "news-c.test": ("local", "arts", "money")}  # fmt: skip


@pytest.fixture(scope="module")
def news() -> Iterator[dict[str, NewsSite]]:
    clock = SimClock(speed=60.0)
    sites = {h: NewsSite(h, IPS[h], clock, sections=SECTIONS[h], briefs=h == "news-b.test")
             for h in IPS}  # fmt: skip
    for s in sites.values():
        s.start()
        for sec in s.sections:
            s.publish(sec)
    yield sites
    for s in sites.values():
        s.stop()


@pytest.fixture(scope="module")
def crawled(news: dict[str, NewsSite], tmp_path_factory: pytest.TempPathFactory
            ) -> dict[str, Any]:  # fmt: skip
    job_dir = tmp_path_factory.mktemp("rss") / "job"
    sites = list(news.values())
    job = make_job(job_dir, sites, [WAITS[s.name] for s in sites])
    rng = random.Random(14)
    live: dict[str, Any] = {}
    emissions = Emissions()
    logging.getLogger("webark.crawl.rss.scheduler").addHandler(emissions)
    logging.getLogger("webark.crawl.rss.scheduler").setLevel(logging.INFO)

    async def drive(ctl: Any) -> None:
        for step in range(36):  # ~9 s of publishing, with a quiet spell in the middle
            await asyncio.sleep(0.25)
            if 14 <= step < 22:
                continue  # rounds without new entries: unchanged feeds
            site = rng.choice(sites)
            site.publish(rng.choice(site.sections))
            if step % 5 == 0 and site.briefs:
                site.publish_brief()
        await settle(ctl)
        live["report"] = rss_state(ctl)

    try:
        summary = asyncio.run(crawl_while(job, drive))
    finally:
        logging.getLogger("webark.crawl.rss.scheduler").removeHandler(emissions)
    return {"job": job, "summary": summary, "live": live, "caps": captures(job_dir),
            "emitted": emissions.times, "emitted_at": emissions.clock}  # fmt: skip


class Emissions(logging.Handler):
    """When the scheduler emitted each round (its log line), on the servers' clock."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.times: dict[str, list[float]] = {}
        self.clock: dict[str, list[float]] = {}
        """The crawl clock's emission times (the scheduler's ``now``)."""

    def emit(self, record: logging.LogRecord) -> None:
        if record.getMessage().startswith("rss: site ") and isinstance(record.args, tuple):
            site = str(record.args[0])
            self.times.setdefault(site, []).append(time.monotonic())
            self.clock.setdefault(site, []).append(float(record.args[3]))  # type: ignore[arg-type]


def _host(uri: str) -> str:
    return uri.split("/")[2].split(":")[0]


def test_every_entry_captured_exactly_once(crawled: dict[str, Any],
                                           news: dict[str, NewsSite]) -> None:  # fmt: skip
    caps = by_uri(crawled["caps"])
    for site in news.values():
        listed = {link for s in site.served for link in s.links}
        articles = {site.url(a.path) for a in site.published()}
        if site.briefs:
            articles |= {link for s in site.served if s.path == "/rss/briefs.xml"
                         for link in s.links}  # fmt: skip
        assert listed == articles, "every article was listed by some feed"
        assert len(articles) >= 6
        for url in articles:
            got = [c.type for c in caps.get(url, [])]
            assert got == ["response"], (url, got)


def test_implied_pages_once_per_round_with_new_entries(
    crawled: dict[str, Any], news: dict[str, NewsSite]
) -> None:
    quiet_rounds = 0
    for site in news.values():
        feeds = site.feed_paths()
        implied_paths = {p for imp in feeds.values() for p in imp}
        served = {p: [s for s in site.served if s.path == p] for p in feeds}
        seen: dict[str, set[str]] = {p: set() for p in feeds}
        for rnd in rounds_of(site.server.snapshot(), set(feeds)):
            expect: set[str] = set()
            for hit in rnd.feeds:
                doc = served[hit.path].pop(0)
                new = set(doc.links) - seen[hit.path]
                seen[hit.path] |= set(doc.links)
                if new:
                    expect |= set(feeds[hit.path])
            got = [h.path for h in rnd.rest if h.path in implied_paths]
            assert sorted(got) == sorted(expect), (site.name, rnd.start, got, expect)
            quiet_rounds += not expect
        assert all(not left for left in served.values())
    assert quiet_rounds >= 3, "some rounds had no new entry"


def test_unchanged_feeds_are_revisits(crawled: dict[str, Any], news: dict[str, NewsSite]) -> None:
    caps = by_uri(crawled["caps"])
    revisits = 0
    for site in news.values():
        for path in site.feed_paths():
            docs = [s for s in site.served if s.path == path]
            recs = caps[site.url(path)]
            assert len(recs) == len(docs)
            for i, (doc, rec) in enumerate(zip(docs, recs, strict=True)):
                same = i > 0 and doc.digest == docs[i - 1].digest
                assert (rec.type == "revisit") == same, (path, i, rec)
                if same:
                    assert rec.profile and rec.profile.endswith("identical-payload-digest")
                    revisits += 1
    assert revisits >= 10


def test_rounds_wait_and_follow_each_other(crawled: dict[str, Any],
                                           news: dict[str, NewsSite]) -> None:  # fmt: skip
    for site in news.values():
        feeds = site.feed_paths()
        rounds = rounds_of(site.server.snapshot(), set(feeds))
        assert len(rounds) >= 6
        served = {p: [s for s in site.served if s.path == p] for p in feeds}
        seen: dict[str, set[str]] = {p: set() for p in feeds}
        emitted = crawled["emitted"][site.name.split(".")[0]]
        assert len(emitted) in (len(rounds), len(rounds) + 1)  # (the last one at the stop)
        for a, b in itertools.pairwise(crawled["emitted_at"][site.name.split(".")[0]]):
            assert b - a >= WAITS[site.name], (site.name, a, b)  # the minimum wait
        for rnd, at in zip(rounds, emitted, strict=False):
            assert rnd.start >= at  # a round's feeds are fetched once it is emitted
        for rnd, next_at in zip(rounds, emitted[1:], strict=False):
            last = max(h.end for h in [*rnd.feeds, *rnd.rest])
            assert next_at >= last, "the next round starts after the last URI of this one"
        for rnd in rounds:
            assert sorted(h.path for h in rnd.feeds) == sorted(feeds)  # all feeds together
            new: set[str] = set()
            for hit in rnd.feeds:
                doc = served[hit.path].pop(0)
                new |= set(doc.links) - seen[hit.path]
                seen[hit.path] |= set(doc.links)
            pages = {site.url(h.path) for h in rnd.rest}
            articles = {p for p in pages if re.search(r"/\d+\.html$", p)}
            # what a round fetches comes from this round's feeds, never the last one's
            assert articles <= new, (site.name, rnd.start, articles - new)
            for h in rnd.rest:
                m = re.match(r"/img/(\d+)\.png$", h.path)
                if m:  # an article's image: its article is in the same round
                    assert any(a.endswith(f"/{m.group(1)}.html") for a in articles), h.path


def test_politeness_in_the_access_logs(crawled: dict[str, Any], news: dict[str, NewsSite]) -> None:
    for site in news.values():
        hits = site.server.snapshot()
        for a, b in itertools.pairwise(hits):
            assert b.start >= a.end, "one request at a time per host"
            assert b.start - a.end >= MIN_DELAY - 0.005, (a.path, b.path, b.start - a.end)


def test_round_scope(crawled: dict[str, Any], news: dict[str, NewsSite]) -> None:
    for site in news.values():
        paths = [h.path for h in site.server.snapshot()]
        assert not [p for p in paths if p.startswith(("/archive/", "/private/"))]
        assert "/static/bg.png" in paths  # embed of an embed (hop path LEE)
    lines = read_crawl_log(crawled["job"].job_dir / "logs" / "crawl.log")
    hops = {ln.hop_path for ln in lines}
    assert all(re.fullmatch(r"|P|L|LE|LEE|LR?E{0,2}", h) for h in hops), hops
    sources = {ln.source_tag for ln in lines}
    assert sources == {"news-a", "news-b", "news-c"}


def test_warcs_valid_and_report(crawled: dict[str, Any], news: dict[str, NewsSite]) -> None:
    job = crawled["job"]
    for w in sorted((job.job_dir / "warcs").iterdir()):
        assert check_file(str(w)).ok, w
    report = crawled["live"]["report"]
    final = {s["site"]: s for s in
             __import__("json").loads((job.reports_dir / "rss-report.json").read_text())["sites"]}
    for site in news.values():
        name = site.name.split(".")[0]
        pages = {link for s in site.served for link in s.links}
        assert final[name]["items_found"] == len(pages)
        assert final[name]["rounds"] >= report[name]["rounds"] >= 6
        assert final[name]["min_wait_s"] == WAITS[site.name]
        assert {f["uri"] for f in final[name]["feeds"]} == {site.url(p) for p in site.feed_paths()}
        for f in final[name]["feeds"]:
            assert f["fetches"] == len([s for s in site.served if site.url(s.path) == f["uri"]])
            assert f["most_recent_entry"] or f["uri"].endswith("briefs.xml")
    text = (job.reports_dir / "rss-report.txt").read_text()
    assert "Site: news-a" in text and "implied pages: http://news-a.test:" in text


def test_replay_calendar_and_diff(crawled: dict[str, Any], news: dict[str, NewsSite],
                                  tmp_path: Path) -> None:  # fmt: skip
    job = crawled["job"]
    coll = Collection.init(tmp_path / "colls" / "rss")
    with coll:
        results = list(coll.add(sorted((job.job_dir / "warcs").iterdir())))
    assert all(r.status == "indexed" for r in results)
    site = news["news-a.test"]
    front = site.url("/")
    caps = by_uri(crawled["caps"])[front]
    assert len(caps) >= 5
    with TestClient(create_server(tmp_path / "colls")) as client:
        r = client.get(f"/rss/*/{front}")
        assert r.status_code == 200
        assert re.search(rf"\b{len(caps)} captures between", r.text), r.text[:2000]
        stamps = sorted(set(re.findall(rf'href="/rss/(\d{{14}})/{re.escape(front)}"', r.text)))
        responses = [c for c in caps if c.type == "response"]
        distinct = sorted({re.sub(r"\D", "", c.date)[:14] for c in responses})
        assert len(distinct) >= 2 and set(distinct) <= set(stamps)
        ts1, ts2 = distinct[-2], distinct[-1]
        d = client.get(f"/rss/diff/{ts1}/{ts2}/{front}")
        assert d.status_code == 200
        assert re.search(r"[1-9]\d* lines? added, removed or changed", d.text), d.text[:2000]
        assert "story" in d.text
