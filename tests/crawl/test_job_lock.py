"""One crawl process per job folder (``JOBDIR/crawl.lock``, webark.crawl.jobdir.JobLock):
a second ``webark crawl`` or ``--resume`` is refused with the PID of the one that runs,
which finishes unharmed; a lock left by a ``kill -9`` is taken over."""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_control import Crawl, _args, _cli, _wait, _yaml

from sites import TestSite, static_site
from webark.crawl.jobdir import CrawlSetupError, JobLock
from webark.crawllog.parse import read_crawl_log


@pytest.fixture(scope="module")
def site() -> Iterator[TestSite]:
    s = TestSite(static_site(n_pages=12, crawl_delay=None), host="127.0.0.1").start()
    yield s
    s.stop()


def test_second_crawl_refused_first_unharmed(site: TestSite, tmp_path: Path) -> None:
    jd = tmp_path / "job"
    crawl = Crawl(jd, _yaml(tmp_path), *_args(jd, site.url("/"), 0.1))
    _wait(lambda: crawl.status()["uris"]["processed"] >= 2, "2 URIs")
    crawl.client.post("/pause")  # it runs (and holds the lock) however slow the refusals
    info = json.loads((jd / "control.json").read_text())
    for args in (("--resume", str(jd), "--quiet"), tuple(_args(jd, site.url("/"), 0.0))):
        r = subprocess.run(_cli(*args), capture_output=True, text=True, timeout=60)
        assert r.returncode == 2, r.stderr
        err = " ".join(r.stderr.split())
        assert f"PID {crawl.proc.pid}" in err and "crawled by another process" in err
    assert json.loads((jd / "control.json").read_text()) == info  # not clobbered
    assert (jd / "crawl.lock").read_text().strip() == str(crawl.proc.pid)
    assert crawl.client.post("/resume").json()["state"] == "RUNNING"
    crawl.finish()
    lines = read_crawl_log(jd / "logs" / "crawl.log")
    uris = [ln.uri for ln in lines]
    assert len(uris) == len(set(uris)) and site.url("/p/12.html") in uris
    report = json.loads((jd / "reports" / "crawl-report.json").read_text())
    assert report["stop_reason"] == "finished" and report["uris_queued"] == 0
    assert (jd / "crawl.lock").read_text() == ""  # released


def test_lock_of_killed_crawl_taken_over(site: TestSite, tmp_path: Path) -> None:
    jd = tmp_path / "job"
    crawl = Crawl(jd, _yaml(tmp_path), *_args(jd, site.url("/"), 0.1))
    _wait(lambda: crawl.status()["uris"]["processed"] >= 2, "2 URIs")
    crawl.proc.send_signal(signal.SIGKILL)
    crawl.proc.wait(10)
    crawl.client.close()
    assert (jd / "crawl.lock").read_text().strip() == str(crawl.proc.pid)  # left behind
    r = subprocess.run(_cli("--resume", str(jd), "--quiet"), capture_output=True, text=True,
                       timeout=90)  # fmt: skip
    assert r.returncode == 0, r.stderr
    report = json.loads((jd / "reports" / "crawl-report.json").read_text())
    assert report["stop_reason"] == "finished"


def test_job_lock_in_process(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys; from pathlib import Path; "
         "from webark.crawl.jobdir import JobLock; JobLock(Path(sys.argv[1])).acquire(); "
         "print('locked', flush=True); sys.stdin.read()", str(tmp_path)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        with pytest.raises(CrawlSetupError, match=f"PID {holder.pid}"):
            JobLock(tmp_path).acquire()
    finally:
        holder.kill()
        holder.wait(10)
    lock = JobLock(tmp_path)
    with caplog.at_level(logging.WARNING, logger="webark.crawl.jobdir"):
        lock.acquire()
    assert f"PID {holder.pid}, which no longer runs" in caplog.text
    lock.acquire()  # idempotent
    assert (tmp_path / "crawl.lock").read_text().strip() == str(os.getpid())
    with pytest.raises(CrawlSetupError):  # one lock per folder, within a process too
        JobLock(tmp_path).acquire()
    lock.release()
    again = JobLock(tmp_path)
    again.acquire()
    again.release()
