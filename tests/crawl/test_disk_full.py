"""A full disk in the middle of a crawl: the crawl stops cleanly (every WARC valid, no
URI logged as failed), and ``--resume`` after space was freed ends with the same
captures as a crawl that never ran out of space, each URI captured and logged once.

The disk is filled by making the WARC writer's low-level write raise ``ENOSPC`` after a
number of writes (what ``os.write`` raises on a full file system; the same crawl was
also run for real on a 3 MiB tmpfs, see DESIGN-NOTES)."""

from __future__ import annotations

import asyncio
import errno
import os
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import webark.warc.writer as writer_mod
from sites import TestSite, static_site
from webark.crawl.controller import CrawlController, CrawlSummary
from webark.crawl.job import CrawlJob, job_from_mapping
from webark.crawllog.parse import read_crawl_log
from webark.warc.check import check_file
from webark.warc.reader import ArchiveReader


@pytest.fixture(scope="module")
def site() -> Iterator[TestSite]:
    s = TestSite(static_site(n_pages=30, crawl_delay=None), host="127.0.0.1").start()
    yield s
    s.stop()


def make_job(tmp: Path, site: TestSite) -> CrawlJob:
    return job_from_mapping({
        "seeds": [site.url("/")], "job_dir": str(tmp / "job"), "contact": "archive@example.org",
        "allow_private": True, "min_delay": 0, "max_delay": 0, "delay_factor": 0,
        "max_http_retries": 0, "retry_delay": 0.05, "max_retries": 1, "backoff_base": 0.05,
    })  # fmt: skip


def run(job: CrawlJob, **kw: Any) -> CrawlSummary:
    return asyncio.run(CrawlController(job, **kw).run())


def captures(job_dir: Path) -> Counter[str]:
    out: Counter[str] = Counter()
    for name in sorted(os.listdir(job_dir / "warcs")):
        path = job_dir / "warcs" / name
        assert name.endswith(".warc.gz"), name  # no .open, no .invalid
        report = check_file(str(path))
        assert report.ok, (name, report.errors[:3])
        for rec in ArchiveReader(str(path)):
            if rec.type in ("response", "revisit"):
                out[rec.headers.target_uri or ""] += 1
    return out


@pytest.mark.parametrize("writes_before_full", [3, 20])
def test_disk_full_stops_cleanly_and_resume_completes(
    site: TestSite, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, writes_before_full: int
) -> None:
    full_run = run(make_job(tmp_path / "whole", site))
    want = captures(tmp_path / "whole" / "job")
    assert full_run.stop_reason == "finished" and not full_run.disk_full

    real = writer_mod._write_all
    calls = 0

    def filling(fd: int, data: bytes | memoryview) -> int:
        nonlocal calls
        calls += 1
        if calls > writes_before_full:
            os.write(fd, bytes(data)[: len(data) // 2])  # part of the record got in
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(fd, data)

    job = make_job(tmp_path, site)
    monkeypatch.setattr(writer_mod, "_write_all", filling)
    stopped = run(job)
    assert stopped.disk_full and stopped.stop_reason.startswith("disk full")
    assert "--resume" in stopped.stop_reason
    partial = captures(job.job_dir)  # every WARC cut back to complete records, valid
    assert 0 < sum(partial.values()) < sum(want.values())
    lines = read_crawl_log(job.logs_dir / "crawl.log")
    assert all(ln.status != -5 for ln in lines)  # a full disk is no URI's error

    monkeypatch.setattr(writer_mod, "_write_all", real)  # space freed
    resumed = run(job, resume=True)
    assert resumed.stop_reason == "finished" and not resumed.disk_full
    got = captures(job.job_dir)
    assert set(got) == set(want)
    assert max(got.values()) == 1  # nothing captured twice
    lines = read_crawl_log(job.logs_dir / "crawl.log")
    uris = [ln.uri for ln in lines]
    assert len(uris) == len(set(uris))
    assert {u for u in uris if u.startswith("http")} >= set(want)
