"""Running a continuous crawl of :mod:`news_site` sites in process, and reading back
what the servers saw and what the WARCs hold (shared by the continuous-crawling tests)."""

from __future__ import annotations

import asyncio
import os
from collections import defaultdict
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from news_site import NewsSite

from sites import Hit
from webark.crawl.controller import CrawlController, CrawlSummary
from webark.crawl.job import CrawlJob, job_from_mapping
from webark.warc.reader import ArchiveReader

MIN_DELAY = 0.03
MAX_DELAY = 0.1


def rss_sites(sites: Sequence[NewsSite], waits: Sequence[float]) -> list[dict[str, Any]]:
    """The ``rss.sites`` of a job crawling ``sites`` (site name = host's first label)."""
    return [
        {"name": s.name.split(".")[0], "min_wait": w,
         "feeds": [{"uri": s.url(p), "implied_pages": [s.url(i) for i in imp]}
                   for p, imp in s.feed_paths().items()]}
        for s, w in zip(sites, waits, strict=True)
    ]  # fmt: skip


def make_job(job_dir: Path, sites: Sequence[NewsSite], waits: Sequence[float],
             **over: Any) -> CrawlJob:  # fmt: skip
    cfg: dict[str, Any] = {
        "job_dir": str(job_dir),
        "contact": "rss-test@example.org",
        "allow_private": True,
        "resolve": {s.name: s.server.host for s in sites},
        "min_delay": MIN_DELAY, "max_delay": MAX_DELAY, "delay_factor": 1.0,
        "workers": 4,
        "rss": {"poll_interval": 0.1, "sites": rss_sites(sites, waits)},
    }  # fmt: skip
    cfg.update(over)
    return job_from_mapping(cfg)


async def crawl_while(job: CrawlJob, drive: Callable[[CrawlController], Awaitable[None]]
                      ) -> CrawlSummary:  # fmt: skip
    """Run the crawl of ``job`` while ``drive(controller)`` runs, then stop it."""
    ctl = CrawlController(job)
    task = asyncio.create_task(ctl.run())
    try:
        while ctl.frontier is None and not task.done():
            await asyncio.sleep(0.01)
        await drive(ctl)
    finally:
        ctl.request_stop("test over")
    return await task


def rss_state(ctl: CrawlController) -> dict[str, Any]:
    """The live RSS report's JSON, by site."""
    from webark.crawl.rss.report import RssReport

    snap = ctl.stats.snapshot()
    return {s["site"]: s for s in RssReport().to_json(snap)["sites"]}


async def settle(ctl: CrawlController, rounds_after: int = 2, timeout: float = 30.0) -> None:
    """Wait until every site has completed ``rounds_after`` more rounds and is waiting."""
    start = {k: v["rounds"] for k, v in rss_state(ctl).items()}
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while loop.time() < end:
        now = rss_state(ctl)
        if all(v["rounds"] >= start[k] + rounds_after and v["state"] == "WAITING"
               for k, v in now.items()):  # fmt: skip
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"sites did not settle: {rss_state(ctl)}")


@dataclass(frozen=True)
class Capture:
    uri: str
    type: str  # response | revisit
    date: str
    profile: str | None


def captures(job_dir: Path) -> list[Capture]:
    """Response and revisit records of the job's WARCs, in WARC order."""
    out = []
    for name in sorted(os.listdir(job_dir / "warcs")):
        if ".warc" not in name or name.endswith(".open"):
            continue
        for rec in ArchiveReader(str(job_dir / "warcs" / name)):
            if rec.type in ("response", "revisit"):
                h = rec.headers
                out.append(Capture(h.target_uri or "", rec.type, h.get("WARC-Date") or "",
                                   h.get("WARC-Profile")))  # fmt: skip
    return out


def by_uri(caps: list[Capture]) -> dict[str, list[Capture]]:
    out: dict[str, list[Capture]] = defaultdict(list)
    for c in caps:
        out[c.uri].append(c)
    return out


@dataclass
class Round:
    """One round of a site as its server saw it: the feed hits, then the rest."""

    feeds: list[Hit]
    rest: list[Hit]

    @property
    def start(self) -> float:
        return self.feeds[0].start


def rounds_of(hits: list[Hit], feed_paths: set[str]) -> list[Round]:
    """Split a host's access log (in order) into rounds: a round starts with its feeds
    (each once); a feed seen again starts the next round."""
    out: list[Round] = []
    for h in hits:
        if h.path == "/robots.txt":
            continue
        if h.path in feed_paths:
            cur = out[-1] if out else None
            if cur is None or cur.rest or h.path in {f.path for f in cur.feeds}:
                out.append(Round([h], []))
            else:
                cur.feeds.append(h)
        elif out:
            out[-1].rest.append(h)
        else:
            raise AssertionError(f"{h.path} fetched before any feed")
    return out
