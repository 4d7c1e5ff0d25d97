"""The crawl's gate in the archiving proxy (no browser: a client sends what a browser
page of the crawl sends): scope, robots.txt and per-host politeness for every request,
shared with the bulk crawler's fetches; captures marked seen in the frontier and
logged with hop path ``…E`` via the page."""

from __future__ import annotations

import asyncio
import itertools
import json
from pathlib import Path

from sites import HTML, PNG, PNG_BYTES, TEXT, TestSite, html
from webark.apps.proxy.server import ArchivingProxy, ProxyConfig
from webark.capture import WarcCaptureBackend
from webark.capture.gate import PageContext
from webark.crawl.browser.gate import CrawlGate, HostSlots
from webark.crawl.context import CrawlContext, capture_config, frontier_config, http_fetcher
from webark.crawl.frontier import Frontier
from webark.crawl.job import job_from_mapping
from webark.crawl.processors.robots import RobotsPrerequisite
from webark.crawl.resume import ResumeLog
from webark.crawl.scope import build_scope
from webark.crawl.stats import CrawlStats
from webark.crawllog import parse_line

DELAY = 0.25


async def _get(port: int, url: str, meta: dict[str, object]) -> tuple[int, bytes]:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    head = (f"GET {url} HTTP/1.1\r\nHost: {url.split('/')[2]}\r\nConnection: close\r\n"
            f"Warcprox-Meta: {json.dumps(meta)}\r\n\r\n")  # fmt: skip
    writer.write(head.encode())
    data = await reader.read()
    writer.close()
    return int(data.split(b" ", 2)[1]), data.partition(b"\r\n\r\n")[2]


def test_gate_scope_robots_politeness(tmp_path: Path) -> None:
    pages = {f"/r{i}.png": (200, PNG, PNG_BYTES + bytes([i])) for i in range(5)}
    pages["/robots.txt"] = (200, TEXT, b"User-agent: *\nDisallow: /private/\n")
    pages["/private/x.png"] = (200, PNG, PNG_BYTES)
    pages["/bulk"] = (200, HTML, html("<p>bulk</p>"))
    with TestSite(pages) as a, TestSite({"/off.png": (200, PNG, PNG_BYTES)},
                                        host="127.0.0.2") as b:  # fmt: skip
        job = job_from_mapping({
            "seeds": [a.url("/page")], "job_dir": str(tmp_path / "job"),
            "contact": "a@b.org", "allow_private": True, "min_delay": DELAY,
            "max_delay": DELAY, "delay_factor": 0, "scope": {"reject_hosts": ["127.0.0.2"]},
        })  # fmt: skip
        asyncio.run(_run(job, a, b))
        hits_a, hits_b = a.snapshot(), b.snapshot()
    paths = [h.path for h in hits_a]
    assert sorted(paths) == sorted(["/robots.txt", "/bulk", *(f"/r{i}.png" for i in range(5))])
    assert hits_b == []  # out of scope: never fetched
    hits_a.sort(key=lambda h: h.start)
    for before, after in itertools.pairwise(hits_a):
        assert after.start >= before.end, "two requests at once to one host"
    # the delay is kept between requests of the slot (robots.txt is the prerequisite's)
    slot_hits = [h for h in hits_a if h.path != "/robots.txt"]
    gaps = [y.start - x.end for x, y in itertools.pairwise(slot_hits)]
    assert len(gaps) == 5 and min(gaps) >= DELAY, gaps
    lines = [parse_line(t) for t in (job.logs_dir / "crawl.log").read_text().splitlines()]
    by_uri = {ln.uri: ln for ln in lines}
    for i in range(5):
        ln = by_uri[a.url(f"/r{i}.png")]
        assert (ln.status, ln.hop_path, ln.via, ln.source_tag) == (200, "LE", a.url("/page"),
                                                                 "seed-tag")  # fmt: skip
    assert by_uri[a.url("/robots.txt")].hop_path == "LEP"
    assert a.url("/private/x.png") not in by_uri and b.url("/off.png") not in by_uri


async def _run(job, a: TestSite, b: TestSite) -> None:  # type: ignore[no-untyped-def]
    job.state_dir.mkdir(parents=True)
    ctx = CrawlContext(job, frontier_config(job), build_scope(job.scope, job.seeds),
                       CrawlStats(job_name="t"))  # fmt: skip
    ctx.frontier = Frontier.open(job.state_dir / "frontier.sqlite", ctx.frontier_config)
    ctx.backend = WarcCaptureBackend(capture_config(job, "t"))
    ctx.fetcher = http_fetcher(job)
    robots = RobotsPrerequisite(ctx, job.state_dir / "robots.sqlite", job.warcs_dir, ResumeLog())
    slots = HostSlots(ctx)
    gate = CrawlGate(ctx, slots, robots)
    proxy = ArchivingProxy(ctx.backend, ctx.fetcher, ProxyConfig(port=0), gate=gate)
    await proxy.start()
    page = PageContext(a.url("/page"), hop_path="L", via=a.url("/"), source="seed-tag")
    meta = {"metadata": page.to_metadata()}
    gate.watch(page.page, logs_own=True)
    try:
        async def bulk() -> None:  # the bulk crawler's fetch of the host, as fetchHttp
            await asyncio.sleep(0.05)
            async with slots.hold(f"127.0.0.1:{a.port}"):
                ex = await ctx.fetcher.fetch(a.url("/bulk"))  # type: ignore[union-attr]
            assert ex.status == 200

        urls = [a.url(f"/r{i}.png") for i in range(5)]
        got = await asyncio.gather(
            *(_get(proxy.port, u, meta) for u in urls),
            _get(proxy.port, a.url("/private/x.png"), meta),
            _get(proxy.port, b.url("/off.png"), meta), bulk(),
        )  # fmt: skip
        # a request of no crawl page (the browser's own traffic): refused, not fetched
        status, body = await _get(proxy.port, a.url("/r0.png"), {})
        assert (status, body) == (403, f"not a request of a crawl's page: {a.url('/r0.png')}\n"
                                  .encode())  # fmt: skip
        statuses = [g[0] for g in got[:-1]]  # type: ignore[index]
        assert statuses == [200] * 5 + [403, 403]
        assert got[0][1] == PNG_BYTES + b"\x00"  # type: ignore[index]
        assert b"out of the crawl's scope" in got[6][1]  # type: ignore[index]
        assert b"excluded by robots.txt" in got[5][1]  # type: ignore[index]
        pc = gate.unwatch(page.page)
        assert sorted(pc.others) == urls
        assert sorted(pc.refused) == sorted([a.url("/private/x.png"), b.url("/off.png")])
        t = gate.traffic
        assert (t.admitted, t.captured, t.out_of_scope, t.robots_excluded, t.marked_seen) == (
            5, 5, 1, 1, 5)
        for u in urls:  # marked seen: finished in the frontier, never queued for the bulk
            assert ctx.frontier.status_of(u) == ("finished", 200)
        assert ctx.frontier.next_ready() is None
        assert ctx.stats.snapshot(ctx.frontier.stats()).succeeded >= 5
    finally:
        await proxy.aclose()
        await ctx.fetcher.aclose()
        await ctx.backend.aclose()
        robots.close()
        ctx.frontier.close()
