"""An endless redirect chain against the crawler (issue 20, item 10), served on 127.0.0.x
by this test: ``/r0`` → ``/r1`` → … for ever, and an embedded image on another host
whose redirects never end.

Before the fix the chain was followed to the hop limit and the target the scope dropped
had no crawl.log line: the crawl ended on a 301 pointing nowhere. Now each dropped target
has its line, with Heritrix's status for why (-4001 too many link hops, -4002 too many
embed hops) and the rule in its extra info.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from pathlib import Path

from sites import HTML, TEXT, Page, TestSite, html
from webark.crawl.controller import CrawlController
from webark.crawl.job import job_from_mapping
from webark.crawllog.parse import read_crawl_log


def chain(prefix: str, origin: str = "") -> object:
    """A handler redirecting ``/{prefix}N`` to ``/{prefix}N+1`` (301), for ever."""

    def handler(path: str, headers: Mapping[str, str]) -> Page | None:
        if not path.startswith("/" + prefix) or not path[len(prefix) + 1 :].isdigit():
            return None
        n = int(path[len(prefix) + 1 :])
        return (301, (("Location", f"{origin}/{prefix}{n + 1}"), ("Content-Type", "text/plain")),
                b"moved")  # fmt: skip

    return handler


def test_dropped_redirect_targets_get_their_lines(tmp_path: Path) -> None:
    robots = {"/robots.txt": (200, TEXT, b"User-agent: *\n")}
    with TestSite(robots, host="127.0.0.7", handler=chain("i")) as cdn:  # type: ignore[arg-type]
        page = html(f'<img src="{cdn.url("/i0")}"><a href="/r0">chain</a>')
        with TestSite({**robots, "/": (200, HTML, page)}, host="127.0.0.6",
                      handler=chain("r")) as site:  # type: ignore[arg-type]  # fmt: skip
            job = job_from_mapping({
                "seeds": [site.url("/")], "job_dir": str(tmp_path / "job"),
                "contact": "redirects@example.org", "allow_private": True,
                "min_delay": 0, "max_delay": 0, "delay_factor": 0, "workers": 2,
                "scope": {"max_hops": 8},
            })  # fmt: skip
            summary = asyncio.run(CrawlController(job, extract_processes=0).run())
            paths, cdn_paths = site.paths(), cdn.paths()
    assert summary.stop_reason == "finished"
    lines = {ln.uri: ln for ln in read_crawl_log(job.logs_dir / "crawl.log")}
    # the link chain: "/" is hop 0, /r0 hop 1 (L), /r7 hop 8 (LRRRRRRR), /r8 one too many
    assert [p for p in paths if p[2:].isdigit()] == [f"/r{i}" for i in range(8)]
    assert all(lines[site.url(f"/r{i}")].status == 301 for i in range(8))
    dropped = lines[site.url("/r8")]
    assert dropped.status == -4001 and dropped.hop_path == "L" + "R" * 8
    assert dropped.via == site.url("/r7")
    assert json.loads(dropped.extra_info or "{}") == {"rejectedBy": "max_hops"}
    # the embed on another host: accepted through 5 redirects (E + RRRRR), the 6th not
    assert [p for p in cdn_paths if p[2:].isdigit()] == [f"/i{i}" for i in range(6)]
    embed = lines[cdn.url("/i6")]
    assert embed.status == -4002 and embed.hop_path == "E" + "R" * 6
    assert json.loads(embed.extra_info or "{}") == {"rejectedBy": "reject_by_default"}
    # one line per URI
    uris = [ln.uri for ln in read_crawl_log(job.logs_dir / "crawl.log")]
    assert len(uris) == len(set(uris))
