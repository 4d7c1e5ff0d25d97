"""``webark crawl``: run a crawl job (see :mod:`webark.crawl.controller`).

    webark crawl JOB.yaml
    webark crawl --seed URL [--seed URL …] -o JOBDIR --contact URL_OR_EMAIL [options]
    webark crawl --resume JOBDIR

CLI options override the job file's keys (:data:`webark.crawl.job.JOB_KEYS`).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from webark.crawl.job import JobConfigError, job_from_mapping, load_job_file


def _human(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024:
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} TiB"


@click.command("crawl")
@click.argument("job_file", required=False, type=click.Path(dir_okay=False, path_type=Path))
@click.option("--seed", "seeds", multiple=True, metavar="URL", help="Seed URL (repeatable).")
@click.option("-o", "--output", "job_dir", type=click.Path(path_type=Path), help="Job directory.")
@click.option(
    "--contact",
    multiple=True,
    metavar="URL_OR_EMAIL",
    help="Operator contact for the User-Agent (required; repeatable).",
)
@click.option(
    "--allow-private",
    is_flag=True,
    default=None,
    help="Allow private, loopback and link-local addresses.",
)
@click.option("--min-delay", type=float, metavar="S", help="Min seconds between fetches/host.")
@click.option("--max-delay", type=float, metavar="S", help="Max seconds between fetches/host.")
@click.option("--delay-factor", type=float, metavar="F", help="Delay = F × fetch time.")
@click.option("--resolve", multiple=True, metavar="HOST:IP", help="Resolve HOST to IP.")
@click.option("--max-uris", type=int, metavar="N", help="Stop after N successful fetches.")
@click.option("--max-retries", type=int, metavar="N", help="Retries of network failures (30).")
@click.option("--retry-delay", type=float, metavar="S", help="Seconds between them (900).")
@click.option("--workers", type=int, metavar="N", help="Concurrent fetches (all hosts).")
@click.option(
    "--resume",
    "resume_dir",
    type=click.Path(file_okay=False, path_type=Path),
    metavar="JOBDIR",
    help="Continue a stopped or killed crawl.",
)
@click.option("--no-progress", is_flag=True, help="No live progress line on stderr.")
def crawl(
    job_file: Path | None,
    seeds: tuple[str, ...],
    job_dir: Path | None,
    contact: tuple[str, ...],
    allow_private: bool | None,
    min_delay: float | None,
    max_delay: float | None,
    delay_factor: float | None,
    resolve: tuple[str, ...],
    max_uris: int | None,
    max_retries: int | None,
    retry_delay: float | None,
    workers: int | None,
    resume_dir: Path | None,
    no_progress: bool,
) -> None:  # fmt: skip
    """Crawl from seeds into WARC files, a crawl.log and reports in JOBDIR.

    Politeness follows Heritrix: one request at a time per host, then a pause of
    delay-factor × fetch time, clamped to [min-delay, max-delay] and raised to the
    robots.txt Crawl-delay. SIGINT/SIGTERM stop gracefully; --resume continues.
    """
    from webark.crawl.controller import CrawlSetupError, run_job

    cfg: dict[str, Any] = {}
    if resume_dir is not None:
        saved = resume_dir / "state" / "job.json"
        if not saved.exists():
            raise click.UsageError(f"{resume_dir} holds no crawl to resume ({saved} missing)")
        cfg = json.loads(saved.read_text())
    elif job_file is not None:
        try:
            cfg = load_job_file(job_file)
        except JobConfigError as e:
            raise click.UsageError(str(e)) from e
    overrides: dict[str, Any] = {
        "seeds": list(seeds) or None,
        "job_dir": str(job_dir) if job_dir else None,
        "contact": list(contact) or None,
        "allow_private": allow_private,
        "min_delay": min_delay,
        "max_delay": max_delay,
        "delay_factor": delay_factor,
        "resolve": list(resolve) or None,
        "max_uris": max_uris,
        "workers": workers,
        "max_retries": max_retries,
        "retry_delay": retry_delay,
    }
    if resume_dir is not None:
        overrides["job_dir"] = str(resume_dir)
    for k, v in overrides.items():
        if v is not None:
            cfg[k] = v
    if min_delay is not None and max_delay is None and cfg.get("max_delay") is not None:
        cfg["max_delay"] = max(cfg["max_delay"], min_delay)
    try:
        job = job_from_mapping(cfg)
    except JobConfigError as e:
        raise click.UsageError(str(e)) from e

    from rich.console import Console
    from rich.live import Live
    from rich.text import Text

    console = Console(stderr=True)
    live: Live | None = None

    def progress(snap: Any) -> None:
        text = Text(
            f"{snap.processed} done, {snap.queued} queued, "
            f"{snap.uris_per_second:.1f} URIs/s, {_human(snap.bytes)}, "
            f"{snap.failed} errors, {snap.robots_excluded} robots-excluded, "
            f"{snap.elapsed:.0f} s"
        )
        if live is not None:
            live.update(text)

    show = not no_progress and console.is_terminal
    console.print(f"webark crawl → {job.job_dir}  (User-Agent: {job.user_agent})")
    try:
        if show:
            with Live(Text("starting…"), console=console, refresh_per_second=4) as live:
                summary = run_job(job, resume=resume_dir is not None, on_progress=progress)
        else:
            summary = run_job(job, resume=resume_dir is not None)
    except CrawlSetupError as e:
        console.print(f"[red]error:[/red] {e}")
        sys.exit(2)
    s = summary.snapshot
    console.print(
        f"{summary.stop_reason}: {s.processed} URIs ({s.succeeded} ok, {s.failed} failed, "
        f"{s.robots_excluded} robots-excluded), {_human(s.bytes)} in {s.elapsed:.1f} s, "
        f"{s.uris_per_second:.1f} URIs/s; {len(summary.warcs)} WARC file(s), "
        f"reports in {job.reports_dir}"
    )
