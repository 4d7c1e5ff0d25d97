"""alerts.log and runtime-errors.log of a real crawl (webark.crawl.error_logs): a
processor that fails on one URI of a site served on 127.0.0.1."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from pathlib import Path

from sites import TestSite, small_site
from webark.crawl.context import CrawlContext
from webark.crawl.controller import CrawlController
from webark.crawl.job import job_from_mapping
from webark.crawl.processing import Processor, UriProcessing
from webark.crawl.reports import Report
from webark.crawllog import parse_line
from webark.crawllog.parse import read_crawl_log


class Faulty:
    """A crawl extension whose processor has a bug on ``/b/3.html``."""

    reports: tuple[Report, ...] = ()
    name = "faulty"

    def open(self, ctx: CrawlContext, wake: Callable[[], None]) -> Sequence[Processor]:
        return [self]

    def should_process(self, p: UriProcessing) -> bool:
        return True

    async def process(self, p: UriProcessing) -> None:
        if p.curi.uri.endswith("/b/3.html"):
            raise RuntimeError("boom in the faulty processor")

    async def run(self) -> None:
        await asyncio.Event().wait()

    def close(self) -> None:
        pass


def test_processor_bug_goes_to_runtime_errors_and_alerts(tmp_path: Path) -> None:
    with TestSite(small_site(), host="127.0.0.1") as site:
        job = job_from_mapping({
            "seeds": [site.url("/")], "job_dir": str(tmp_path / "j"), "contact": "a@b.org",
            "allow_private": True, "min_delay": 0.0, "max_delay": 0.0, "workers": 2,
        })  # fmt: skip
        summary = asyncio.run(CrawlController(job, extensions=[Faulty()]).run())
    assert summary.stop_reason == "finished"
    logs = tmp_path / "j" / "logs"
    bad = site.url("/b/3.html")
    failed = [ln for ln in read_crawl_log(logs / "crawl.log") if ln.status == -5]
    assert [(ln.uri, ln.annotations) for ln in failed] == [(bad, ("err=RuntimeError",))]

    text = (logs / "runtime-errors.log").read_text()
    first, *trace = text.splitlines()
    line = parse_line(first)  # a crawl.log line, as Heritrix's RuntimeErrorFormatter writes
    assert (line.status, line.uri, line.hop_path, line.annotations) == (
        -5, bad, "L", ("err=RuntimeError",))
    assert trace[0] == "  Traceback (most recent call last):"
    assert trace[-1] == "  RuntimeError: boom in the faulty processor"

    alerts = (logs / "alerts.log").read_text().splitlines()
    assert alerts[0].endswith(f" ERROR webark.crawl.pipeline error processing {bad}")
    assert alerts[0][:4].isdigit() and alerts[0][23] == "Z"  # ISO 8601 UTC, milliseconds
    assert "  RuntimeError: boom in the faulty processor" in alerts
