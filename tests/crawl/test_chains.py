"""The processor chains of a crawl are what the processors report lists: the same
processors, in chain order, each with the URIs it handled in a real loopback crawl."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from sites import TestSite, small_site
from webark.crawl.controller import CrawlController
from webark.crawl.job import job_from_mapping
from webark.crawl.stats import STAGES
from webark.crawllog.parse import read_crawl_log


def test_processors_report_lists_the_chains(tmp_path: Path) -> None:
    with TestSite(small_site(4)) as site:
        job = job_from_mapping({
            "seeds": [site.url("/")], "job_dir": str(tmp_path / "job"),
            "contact": "archive@example.org", "allow_private": True, "min_delay": 0,
            "max_delay": 0, "delay_factor": 0, "dns_records": False,
        })  # fmt: skip
        ctl = CrawlController(job, extract_processes=0)
        summary = asyncio.run(ctl.run())
    assert ctl.chains is not None and ctl.chains.names == STAGES
    rows = json.loads((job.reports_dir / "processors-report.json").read_text())
    assert [r["processor"] for r in rows] == list(STAGES)
    handled = {r["processor"]: r["uris_handled"] for r in rows}
    lines = read_crawl_log(job.logs_dir / "crawl.log")
    frontier_uris = [ln for ln in lines if not ln.uri.endswith("/robots.txt")]
    # every URI taken from the frontier went through preconditions and disposition;
    # the fetched ones through every processor
    assert handled["preconditions"] == handled["disposition"] == len(frontier_uris)
    fetched = sum(1 for ln in frontier_uris if ln.status > 0)
    for name in ("fetchHttp", "extractors", "warcWriter", "candidates"):
        assert handled[name] == fetched, (name, handled)
    assert summary.snapshot.processed == len(lines)
