"""``webark crawl``: run a crawl job (see :mod:`webark.crawl.controller`).

    webark crawl JOB.yaml
    webark crawl --seed URL [--seed URL …] -o JOBDIR --contact URL_OR_EMAIL [options]
    webark crawl --resume JOBDIR

CLI options override the job file's keys (:data:`webark.crawl.job.JOB_KEYS`).

While the crawl runs, the control API (:mod:`webark.apps.control.app`) listens on
127.0.0.1 (``--control-port``, a free port by default) in the same event loop; its URL
is printed, and the URL with its bearer token written to ``JOBDIR/control.json`` (mode
0600, removed at the end): the token is never printed, so it does not land in console
logs. The terminal shows :mod:`webark.cli.crawl_view` (``--quiet``: nothing).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from webark.crawl.job import CrawlJob, JobConfigError, job_from_mapping, load_job_file

if TYPE_CHECKING:
    from rich.console import Console

    from webark.crawl.controller import CrawlSummary


async def _run(
    job: CrawlJob,
    *,
    resume: bool,
    console: Console,
    control_port: int | None,
    view_mode: str | None,
    line_interval: float,
) -> CrawlSummary:
    """Run the crawl with its control API and terminal view in one event loop.

    SIGINT/SIGTERM stop the crawl gracefully (a second signal: immediate exit, as
    before; ``--resume`` recovers).

    Raises:
        CrawlSetupError: the crawl cannot start.
        OSError: the control port cannot be bound.
    """
    from webark.apps.control.app import ControlServer
    from webark.cli.crawl_view import CrawlView
    from webark.crawl.control import CrawlControl
    from webark.crawl.controller import CrawlController
    from webark.crawl.extension import job_extensions

    launcher = None
    if job.browser is not None:  # the hybrid crawl's proxy (webark.cli.crawl_browser)
        from webark.cli.crawl_browser import proxy_launcher

        launcher = proxy_launcher(job.state_dir / "proxy-ca.pem")
    ctl = CrawlController(job, resume=resume, extensions=job_extensions(job, launcher))
    control = CrawlControl(ctl)
    server: ControlServer | None = None
    if control_port is not None:
        server = ControlServer(control, port=control_port, info_path=job.job_dir / "control.json")
        server.bind()  # fail before crawling when the port is taken
    loop = asyncio.get_running_loop()

    def stop(signame: str) -> None:
        ctl.request_stop(f"{signame} received")
        for s in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(s)

    for s in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(s, stop, s.name)
    crawl = asyncio.create_task(ctl.run())
    view_task: asyncio.Task[None] | None = None
    try:
        while ctl.frontier is None and not crawl.done():  # job dir ready, frontier open
            await asyncio.sleep(0.005)
        if not crawl.done():
            if server is not None:
                await server.start()
                console.print(  # never the token: console output ends up in logs
                    f"control API: {server.url}  (bearer token in {server.info_path}, "
                    "mode 0600)",
                    highlight=False, soft_wrap=True,
                )  # fmt: skip
            view = CrawlView(
                console, lambda: control.snapshot(top=0), mode=view_mode,
                line_interval=line_interval,
            )  # fmt: skip
            view_task = asyncio.create_task(view.run())
        summary = await crawl
        control.finished(summary)
        return summary
    except BaseException:
        if not crawl.done():  # the API or the view failed: close the crawl cleanly
            ctl.request_stop("stopped: the control API or the view failed")
            with contextlib.suppress(Exception):
                await crawl
        raise
    finally:
        if view_task is not None:
            view_task.cancel()
            await asyncio.gather(view_task, return_exceptions=True)
        if server is not None:
            await server.stop()
        for s in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(s)


def _job_keys_epilog() -> str:
    """The job file's keys for ``--help`` (from :data:`webark.crawl.job.JOB_KEYS`)."""
    from webark.crawl.job import JOB_KEYS
    from webark.crawl.scope.chain import SCOPE_KEYS

    width = max(map(len, [*JOB_KEYS, *SCOPE_KEYS]))
    jobs = [f"  {k.ljust(width)}  {v}" for k, v in JOB_KEYS.items()]
    scope = [f"  {k.ljust(width)}  {v}" for k, v in SCOPE_KEYS.items()]
    return (
        "\b\nJob file keys (YAML mapping; a relative job_dir or dedup_index is taken from "
        "the job file's folder):\n" + "\n".join(jobs)
        + "\n\n\b\nKeys of its scope: mapping (the Heritrix default chain; see "
        "webark.crawl.scope.build_scope):\n" + "\n".join(scope)
    )


@click.command("crawl", epilog=_job_keys_epilog())
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
@click.option(
    "--resolve-only",
    is_flag=True,
    default=None,
    help="Resolve only the --resolve hosts (no system resolver: nothing leaves loopback).",
)
@click.option("--max-uris", type=int, metavar="N",
              help="Stop after N successful fetches of frontier URIs (dns: and robots.txt "
              "prerequisites not counted; Heritrix's maxDocumentsDownload counts them).")
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
@click.option(
    "--control-port",
    type=click.IntRange(0, 65535),
    default=0,
    show_default=True,
    metavar="PORT",
    help="Control API port on 127.0.0.1 (0: a free port).",
)
@click.option("--no-control", is_flag=True, help="Do not start the control API.")
@click.option("-q", "--quiet", is_flag=True, help="No live view or progress lines.")
@click.option("--no-progress", "quiet", is_flag=True, hidden=True)
@click.option(
    "--progress-interval",
    type=click.FloatRange(min=0.1),
    default=10.0,
    show_default=True,
    metavar="S",
    help="Seconds between progress lines when stderr is not a terminal.",
)
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
    resolve_only: bool | None,
    max_uris: int | None,
    max_retries: int | None,
    retry_delay: float | None,
    workers: int | None,
    resume_dir: Path | None,
    control_port: int,
    no_control: bool,
    quiet: bool,
    progress_interval: float,
) -> None:  # fmt: skip
    """Crawl from seeds into WARC files, a crawl.log and reports in JOBDIR.

    Politeness follows Heritrix: one request at a time per host, then a pause of
    delay-factor × fetch time, clamped to [min-delay, max-delay] and raised to the
    robots.txt Crawl-delay. SIGINT/SIGTERM stop gracefully; --resume continues.

    While it runs, a control API on 127.0.0.1 (its bearer token in
    JOBDIR/control.json, mode 0600; never printed) gives status, live reports,
    pause/resume/stop, adding seeds and changing delays (endpoints: webark.apps.control.app).

    A full disk stops the crawl cleanly: every WARC is cut back to its last complete
    record and closed, the URI being written stays queued; free space, then --resume.

    Exit status: 0 finished or stopped; 1 stopped because the disk was full; 2 the job
    cannot start (configuration, seeds, control port).
    """
    from webark.crawl.controller import CrawlSetupError

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
        "resolve_only": resolve_only,
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

    console = Console(stderr=True)
    # rich exits the program when its output pipe closes (`webark crawl … | head`); a
    # crawl must go on: the terminal output just stops (crawl.log and reports remain)
    console.on_broken_pipe = lambda: setattr(console, "quiet", True)  # type: ignore[method-assign]
    console.print(f"webark crawl → {job.job_dir}  (User-Agent: {job.user_agent})",
                  highlight=False, soft_wrap=True)  # fmt: skip
    try:
        summary = asyncio.run(
            _run(
                job,
                resume=resume_dir is not None,
                console=console,
                control_port=None if no_control else control_port,
                view_mode="off" if quiet else None,
                line_interval=progress_interval,
            )
        )
    except CrawlSetupError as e:
        console.print(f"[red]error:[/red] {e}")
        sys.exit(2)
    except OSError as e:
        if "control API" not in str(e):
            raise
        console.print(f"[red]error:[/red] {e}; choose another --control-port or 0")
        sys.exit(2)
    _print_summary(console, summary, job)
    if summary.disk_full:
        sys.exit(1)


def _print_summary(console: Console, summary: CrawlSummary, job: CrawlJob) -> None:
    from webark.cli.crawl_view import human_bytes

    s = summary.snapshot
    console.print(
        f"{summary.stop_reason}: {s.processed} URIs ({s.succeeded} ok, {s.failed} failed, "
        f"{s.robots_excluded} robots-excluded{_disregarded(s.disregarded)}), "
        f"{human_bytes(s.bytes)} in {s.elapsed:.1f} s, "
        f"{s.uris_per_second:.1f} URIs/s; {len(summary.warcs)} WARC file(s), "
        f"reports in {job.reports_dir}",
        highlight=False, soft_wrap=True,
    )  # fmt: skip


def _disregarded(n: int) -> str:
    """``, N disregarded`` for the summary line when any URI was dropped on purpose."""
    return f", {n} disregarded" if n else ""
