"""Configuration changed while a continuous crawl runs takes effect without a restart
(issue 14, "Done means" 2): a shorter minimum wait (``webark rss site change``) starts
the next round within seconds instead of a minute later; a feed added with ``webark rss
feed add`` is fetched from the site's next round on and its entries captured; through
the control API a site is deactivated (no more rounds) and the live RSS report read.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from click.testing import CliRunner
from crawl_support import by_uri, captures, crawl_while, make_job, rss_state
from news_site import NewsSite, SimClock

from webark.apps.control.app import create_control_app
from webark.cli.main import cli
from webark.crawl.control import CrawlControl


@pytest.fixture()
def site() -> Iterator[NewsSite]:
    s = NewsSite("live-a.test", "127.0.0.41", SimClock(speed=60.0), sections=("news", "sport"))
    s.start()
    s.publish("news")
    s.publish("sport")
    yield s
    s.stop()


def _feed_hits(site: NewsSite, path: str) -> list[float]:
    return [h.start for h in site.server.snapshot() if h.path == path]


async def _until(pred: Any, timeout: float = 10.0) -> float:
    loop = asyncio.get_running_loop()
    start = loop.time()
    while not pred():
        if loop.time() - start > timeout:
            raise AssertionError("timed out")
        await asyncio.sleep(0.02)
    return loop.time() - start


def test_min_wait_and_new_feed_without_restart(site: NewsSite, tmp_path: Path) -> None:
    job = make_job(tmp_path / "job", [site], [60.0])
    job = job.__class__(**{**job.__dict__, "rss": {"sites": [{
        "name": "live-a", "min_wait": "1m",
        "feeds": [{"uri": site.url("/rss/news.xml"), "implied_pages": [site.url("/news/")]}],
    }]}})  # fmt: skip  (default poll_interval: 1 s)
    runner = CliRunner()
    timing: dict[str, float] = {}

    async def drive(ctl: Any) -> None:
        await _until(lambda: rss_state(ctl)["live-a"]["rounds"] == 1
                     and rss_state(ctl)["live-a"]["state"] == "WAITING")  # fmt: skip
        assert len(_feed_hits(site, "/rss/news.xml")) == 1
        await asyncio.sleep(1.0)
        assert len(_feed_hits(site, "/rss/news.xml")) == 1  # the minute is not over
        r = await asyncio.to_thread(runner.invoke, cli, ["rss", "site", "change",
                                    str(job.job_dir), "live-a", "--min-wait", "0.5s"])  # fmt: skip
        assert r.exit_code == 0, r.output
        timing["wait"] = await _until(lambda: len(_feed_hits(site, "/rss/news.xml")) >= 2)
        assert not _feed_hits(site, "/atom/sport.xml")
        r = await asyncio.to_thread(runner.invoke, cli, [
            "rss", "feed", "add", str(job.job_dir), "live-a", site.url("/atom/sport.xml"),
            "--implied", site.url("/sport/")])  # fmt: skip
        assert r.exit_code == 0, r.output
        timing["feed"] = await _until(lambda: bool(_feed_hits(site, "/atom/sport.xml")))
        article = site.publish("sport")
        await _until(lambda: any(h.path == article.path for h in site.server.snapshot()))
        # the control API (in the crawl's loop, as webark crawl serves it)
        app = create_control_app(CrawlControl(ctl), "t0ken")
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app),
                                     base_url="http://control",
                                     headers={"Authorization": "Bearer t0ken"}) as api:
            listing = (await api.get("/rss")).json()
            assert [s["name"] for s in listing] == ["live-a"]
            assert {f["uri"] for f in listing[0]["feeds"]} == {
                site.url("/rss/news.xml"), site.url("/atom/sport.xml")}
            report = (await api.get("/reports/rss", params={"format": "json"})).json()
            assert report["sites"][0]["min_wait_s"] == 0.5
            bad = await api.post("/rss/feeds", json={"site": "nope", "uri": site.url("/x.xml")})
            assert bad.status_code == 400 and "no site 'nope'" in bad.json()["error"]
            r2 = await api.post("/rss/sites/live-a", json={"active": False})
            assert r2.status_code == 200 and r2.json()["active"] is False
            await _until(lambda: rss_state(ctl)["live-a"]["state"] == "WAITING")
            before = len(_feed_hits(site, "/rss/news.xml"))
            await asyncio.sleep(1.5)
            assert len(_feed_hits(site, "/rss/news.xml")) == before  # deactivated
            added = await api.post("/rss/sites", json={"name": "other", "min_wait": "2m"})
            assert added.status_code == 201 and added.json()["min_wait"] == 120.0

    asyncio.run(crawl_while(job, drive))
    assert timing["wait"] < 3.0, timing  # instead of 58 s more
    assert timing["feed"] < 3.0, timing
    caps = by_uri(captures(job.job_dir))
    sport = [u for u in caps if "/sport/" in u and u.endswith(".html")]
    assert sport and all(len(caps[u]) == 1 for u in sport)
    assert site.url("/sport/") in caps  # the new feed's implied page
