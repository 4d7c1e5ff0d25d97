"""The terminal view of ``webark crawl``: rich panel on a terminal, plain progress lines
otherwise, nothing with --quiet; fed by snapshots of real crawls of a loopback site."""

from __future__ import annotations

import asyncio
import io
import re
from pathlib import Path
from typing import Any

from click.testing import CliRunner
from rich.console import Console

import sites
from webark.cli.crawl_cmds import crawl
from webark.cli.crawl_view import CrawlView, RateMeter, human_bytes, progress_line, render_view
from webark.crawl.control import CrawlControl
from webark.crawl.controller import CrawlController
from webark.crawl.job import CrawlJob, job_from_mapping
from webark.crawl.stats import StatsSnapshot


def _job(tmp: Path, seed: str, delay: float) -> CrawlJob:
    return job_from_mapping({
        "seeds": [seed], "job_dir": str(tmp / "job"), "contact": "archive@example.org",
        "allow_private": True, "min_delay": delay, "max_delay": delay, "workers": 3,
        "max_http_retries": 0, "backoff_base": 0.1,
    })  # fmt: skip


def _crawl_with_snapshots(job: CrawlJob, every: float = 0.03) -> list[StatsSnapshot]:
    async def main() -> list[StatsSnapshot]:
        ctl = CrawlController(job)
        control = CrawlControl(ctl)
        task = asyncio.create_task(ctl.run())
        snaps = []
        while not task.done():
            if ctl.frontier is not None:
                snaps.append(control.snapshot(top=0))
            await asyncio.sleep(every)
        control.finished(await task)
        snaps.append(control.snapshot(top=0))
        return snaps

    return asyncio.run(main())


def _text(renderable: Any) -> str:
    console = Console(record=True, width=160, file=io.StringIO(), color_system=None)
    console.print(renderable)
    return console.export_text()


def test_panel_and_lines_show_the_crawl(tmp_path: Path) -> None:
    with sites.TestSite(sites.small_site(), host="127.0.0.2") as b:
        snaps = _crawl_with_snapshots(_job(tmp_path, b.url("/"), 0.05))
    final = snaps[-1]
    assert final.state == "FINISHED" and final.processed == 8
    text = _text(render_view(final, (2.5, 2048.0)))
    assert "URIs/s" in text and "2.5 (avg" in text and "2.0 KiB/s" in text
    assert f"{final.processed} ({final.succeeded} ok)" in text
    assert "0 active / 1 total" in text
    assert f"WARC    {human_bytes(final.warc_bytes)}" in re.sub(r"\s{2,}", "    ", text)
    assert final.warc_bytes and final.warc_bytes > 1000
    # mid-crawl: a busy worker's URI is on screen with its stage
    busy = next(s for s in snaps if any(w.uri for w in s.workers))
    w = next(w for w in busy.workers if w.uri)
    mid = _text(render_view(busy))
    assert w.uri and w.uri in mid and w.stage in mid and "1 active / 1 total" in mid
    line = progress_line(final, 1.25)
    assert "8 done (8 ok, 0 errors, 0 robots)" in line and "1.2 URIs/s" in line
    assert "queues 0/1" in line and human_bytes(final.bytes) + " fetched" in line


def test_rate_meter_uses_recent_snapshots(tmp_path: Path) -> None:
    with sites.TestSite(sites.small_site(), host="127.0.0.2") as b:
        snaps = _crawl_with_snapshots(_job(tmp_path, b.url("/"), 0.05))
    meter = RateMeter(window=0.2)
    kept: list[StatsSnapshot] = []
    for s in snaps:
        rate, bps = meter.add(s)
        kept.append(s)
        while len(kept) > 2 and s.now - kept[0].now > 0.2:
            kept.pop(0)
        dt = s.now - kept[0].now
        if dt > 0:
            assert rate == (s.processed - kept[0].processed) / dt
            assert bps == (s.bytes - kept[0].bytes) / dt
    assert human_bytes(1536) == "1.5 KiB" and human_bytes(None) == "-"


def test_live_view_on_a_terminal(tmp_path: Path) -> None:
    """mode None + a terminal console → the rich live panel, redrawn while crawling."""
    out = io.StringIO()
    console = Console(file=out, force_terminal=True, width=120)

    async def main(job: CrawlJob) -> int:
        ctl = CrawlController(job)
        control = CrawlControl(ctl)
        view = CrawlView(console, lambda: control.snapshot(top=0), refresh=0.05)
        assert view.mode == "live"
        task = asyncio.create_task(ctl.run())
        while ctl.frontier is None:
            await asyncio.sleep(0.005)
        shown = asyncio.create_task(view.run())
        control.finished(await task)
        shown.cancel()
        await asyncio.gather(shown, return_exceptions=True)
        return control.snapshot().processed

    with sites.TestSite(sites.small_site(), host="127.0.0.2") as b:
        processed = asyncio.run(main(_job(tmp_path, b.url("/"), 0.05)))
    text = out.getvalue()
    assert "\x1b[" in text  # drawn with terminal control sequences
    assert text.count("URIs/s") >= 2  # redrawn
    assert f"{processed} ({processed} ok)" in re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", text)


def _cli_args(seed: str, job_dir: Path, delay: float, interval: float) -> list[str]:
    return ["--seed", seed, "-o", str(job_dir), "--contact", "a@b.org", "--allow-private",
            "--min-delay", str(delay), "--max-delay", str(delay),
            "--progress-interval", str(interval), "--no-control"]  # fmt: skip


def test_cli_progress_lines_when_not_a_terminal(tmp_path: Path) -> None:
    with sites.TestSite(sites.small_site(), host="127.0.0.2") as b:
        args = _cli_args(b.url("/"), tmp_path / "j", 0.1, 0.2)
        r = CliRunner().invoke(crawl, args)
        assert r.exit_code == 0, r.output
        lines = [ln for ln in r.stderr.splitlines() if " done (" in ln]
        assert len(lines) >= 2, r.stderr
        assert all("URIs/s" in ln and "queues " in ln and "WARC " in ln for ln in lines)
        counts = [int(re.search(r"(\d+) done", ln).group(1)) for ln in lines]  # type: ignore[union-attr]
        assert counts == sorted(counts) and counts[-1] <= 8
        quiet = CliRunner().invoke(crawl, [*args[:3], str(tmp_path / "q"), *args[4:], "--quiet"])
        assert quiet.exit_code == 0, quiet.output
        assert " done (" not in quiet.stderr and "finished: 8 URIs" in quiet.stderr


def test_first_progress_line_has_the_rate(tmp_path: Path) -> None:
    # issue 19: the first line read "0.0 URIs/s" while URIs were being finished (the
    # rate meter had no earlier snapshot)
    with sites.TestSite(sites.small_site(), host="127.0.0.2") as b:
        r = CliRunner().invoke(crawl, _cli_args(b.url("/"), tmp_path / "j", 0.15, 0.5))
    assert r.exit_code == 0, r.output
    lines = [ln for ln in r.stderr.splitlines() if " done (" in ln]
    assert lines, r.stderr
    first = re.search(r"(\d+) done .* ([\d.]+) URIs/s", lines[0])
    assert first is not None and int(first.group(1)) > 0
    assert float(first.group(2)) > 0, lines[0]


def test_idle_crawl_says_what_it_waits_for(tmp_path: Path) -> None:
    # issue 19: a seed that does not resolve waited max_retries × retry_delay with a
    # progress line saying only "1 queued" (resolve_only: no lookup leaves loopback)
    job = job_from_mapping({
        "seeds": ["http://nowhere.test/"], "job_dir": str(tmp_path / "job"),
        "contact": "archive@example.org", "allow_private": True, "resolve_only": True,
        "max_retries": 3, "retry_delay": 90,
    })  # fmt: skip

    async def main() -> StatsSnapshot:
        ctl = CrawlController(job, extract_processes=0)
        control = CrawlControl(ctl)
        task = asyncio.create_task(ctl.run())
        snap = None
        for _ in range(500):
            await asyncio.sleep(0.01)
            if ctl.frontier is not None:
                snap = control.snapshot(top=0)
                if snap.next_retry is not None:
                    break
        ctl.request_stop("test")
        await task
        assert snap is not None
        return snap

    snap = asyncio.run(main())
    line = progress_line(snap)
    assert "1 queued" in line
    m = re.search(r"; waiting for retry 1/3 of http://nowhere\.test/ \(-6: prerequisite "
                  r"domain lookup failed\) at (\d\d:\d\d:\d\d) UTC, in (1 min [23]\d s)$", line)
    assert m is not None, line
    assert _text(render_view(snap)).count("waiting for retry 1/3") == 1
