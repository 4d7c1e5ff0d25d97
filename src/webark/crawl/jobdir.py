"""The job folder of a crawl: what is checked before anything is written (the seeds'
addresses, a folder that already holds a crawl) and its layout on start or resume.

``JOBDIR/warcs/``, ``logs/``, ``reports/``, ``state/`` (``frontier.sqlite`` marks a
folder that holds a crawl; ``job.json`` is the job as run, for ``--resume``).
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
from pathlib import Path
from urllib.parse import urlsplit

from webark.core.errors import ConfigError
from webark.crawl.job import CrawlJob
from webark.crawl.resume import ResumeLog, rebuild_stats, repair_open_warcs
from webark.crawl.stats import CrawlStats
from webark.fetch import HttpFetcher, refusal

__all__ = ["CrawlSetupError", "JobLock", "check_seeds", "prepare_job_dir"]

log = logging.getLogger(__name__)


class CrawlSetupError(ConfigError):
    """The crawl cannot start (bad seed address, job directory in use …); the message
    says what to change."""


class JobLock:
    """``JOBDIR/crawl.lock``: one crawl process per job folder (Heritrix keeps its job's
    ``.lck`` files for the same reason). An exclusive ``flock(2)`` on the file, held
    while the crawl runs, with the holder's PID written in it. The kernel drops the lock
    when its process dies (``kill -9`` included), so a lock left by a killed crawl is
    taken over by the next one (logged with the dead PID), never waited for.

    Args:
        job_dir: the job folder (created if missing).
    """

    def __init__(self, job_dir: Path) -> None:
        self.path = job_dir / "crawl.lock"
        self._fd: int | None = None

    def acquire(self) -> None:
        """Take the lock (idempotent).

        Raises:
            CrawlSetupError: another process holds it (the message gives its PID).
            OSError: the folder or the file cannot be created.
        """
        if self._fd is not None:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 64, 0).decode("ascii", "replace").strip() or "?"
            os.close(fd)
            raise CrawlSetupError(
                f"{self.path.parent} is being crawled by another process (PID {holder}, "
                f"{self.path}); stop it (POST /stop, or SIGTERM {holder}) before "
                "starting or resuming this job"
            ) from None
        except BaseException:
            os.close(fd)
            raise
        old = os.pread(fd, 64, 0).decode("ascii", "replace").strip()
        if old and old != str(os.getpid()):
            log.warning("%s: the lock of PID %s, which no longer runs, is taken over",
                        self.path, old)  # fmt: skip
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        self._fd = fd

    def release(self) -> None:
        """Give the lock up (idempotent); the file stays, emptied."""
        if self._fd is None:
            return
        with contextlib.suppress(OSError):
            os.ftruncate(self._fd, 0)
        os.close(self._fd)  # closing the descriptor drops the flock
        self._fd = None


async def check_seeds(job: CrawlJob, fetcher: HttpFetcher) -> None:
    """Refuse private/loopback seeds early, with the option that allows them (a seed
    that does not resolve is only warned about: the crawl retries it).

    Raises:
        CrawlSetupError: a seed resolves to an address ``allow_private`` does not allow.
    """
    for seed in job.seeds:
        host = urlsplit(seed).hostname or ""
        answer = await fetcher.lookup(host)
        if not answer.ok:
            log.warning("seed host %s does not resolve: %s", host, answer.error)
            continue
        for addr in answer.addresses:
            msg = refusal(addr, job.allow_private)
            if msg:
                raise CrawlSetupError(
                    f"seed {seed}: {host} resolves to {addr}: {msg.split(';')[0]}; pass "
                    "--allow-private (job file: allow_private: true) to crawl it"
                )


def prepare_job_dir(job: CrawlJob, resume: bool, stats: CrawlStats,
                    resume_log: ResumeLog) -> list[str]:  # fmt: skip
    """Make the folders and save ``state/job.json``; on resume, repair the ``.open``
    WARCs and count the earlier runs' crawl.log in ``stats`` (and ``resume_log``).
    Returns the repaired WARCs.

    Raises:
        CrawlSetupError: a new crawl in a folder that holds one, or a resume of a folder
            that holds none.
    """
    frontier_db = job.state_dir / "frontier.sqlite"
    if not resume and frontier_db.exists():
        raise CrawlSetupError(
            f"{job.job_dir} already holds a crawl; use --resume {job.job_dir} to continue "
            "it, or choose another -o directory"
        )
    if resume and not frontier_db.exists() and not (job.state_dir / "job.json").exists():
        # (job.json without frontier.sqlite: killed while starting; resuming starts it)
        raise CrawlSetupError(f"{job.job_dir}: no crawl to resume (no state/frontier.sqlite)")
    for d in (job.warcs_dir, job.logs_dir, job.reports_dir, job.state_dir):
        d.mkdir(parents=True, exist_ok=True)
    repaired: list[str] = []
    if resume:
        repaired = repair_open_warcs(job.warcs_dir)
        resume_log.watch(repaired)  # the files that may hold orphans (webark.crawl.orphans)
        rebuild_stats(job.logs_dir / "crawl.log", stats, resume_log)
    job.save()
    return repaired
