"""logs/progress-statistics.log of a real ``webark crawl`` (webark.crawl.progress_log):
Heritrix's layout, a line per interval, pause events, whole-crawl totals across a
``kill -9`` and ``--resume``."""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_control import Crawl, _args, _cli, _wait

from sites import TestSite, static_site
from webark.crawllog.progress import LEGEND, ProgressEvent, ProgressLine, parse_progress_line


@pytest.fixture(scope="module")
def site() -> Iterator[TestSite]:
    s = TestSite(static_site(n_pages=25, crawl_delay=None), host="127.0.0.1").start()
    yield s
    s.stop()


def _read(jd: Path) -> list[ProgressLine | ProgressEvent | None]:
    text = (jd / "logs" / "progress-statistics.log").read_text()
    assert text.endswith("\n")
    return [parse_progress_line(ln) for ln in text.splitlines()]  # every line parses


def test_progress_log_across_pause_kill_and_resume(site: TestSite, tmp_path: Path) -> None:
    jd = tmp_path / "job"
    yaml = tmp_path / "job.yaml"
    yaml.write_text("max_http_retries: 0\nbackoff_base: 0.1\nprogress_interval: 0.4\n")
    crawl = Crawl(jd, str(yaml), *_args(jd, site.url("/"), 0.08))
    _wait(lambda: sum(isinstance(x, ProgressLine) for x in _read(jd)) >= 2, "2 lines")
    crawl.client.post("/pause")
    crawl.wait_state("PAUSED")
    _wait(lambda: isinstance(x := _read(jd)[-1], ProgressEvent) and x.state == "PAUSED",
          "the pause event")  # written at the controller's next tick
    n = len(_read(jd))
    time.sleep(1.0)
    assert len(_read(jd)) == n, "no line while paused"
    crawl.client.post("/resume")
    _wait(lambda: crawl.status()["uris"]["processed"] >= 12, "12 URIs")
    _wait(lambda: isinstance(_read(jd)[-1], ProgressLine), "a line after the resume")
    crawl.proc.send_signal(signal.SIGKILL)
    crawl.proc.wait(10)
    crawl.client.close()
    before = [x for x in _read(jd) if isinstance(x, ProgressLine)]

    r = subprocess.run(_cli("--resume", str(jd), "--quiet"), capture_output=True, timeout=90)
    assert r.returncode == 0, r.stderr.decode()
    rows = _read(jd)
    events = [x.state for x in rows if isinstance(x, ProgressEvent)]
    assert events == ["RUNNING", "PAUSED", "RESUMED", "RESUMED", "ENDING", "ENDED"]
    raw = (jd / "logs" / "progress-statistics.log").read_text().splitlines()
    assert raw.count(LEGEND) == 2  # one per run, after its first event
    assert raw[1] == LEGEND and isinstance(rows[-1], ProgressEvent)
    assert rows[-1].message == "Finished"
    lines = [x for x in rows if isinstance(x, ProgressLine)]
    after = lines[len(before):]
    assert after and after[0].downloaded >= before[-1].downloaded  # whole-crawl totals
    downloaded = [x.downloaded for x in lines]
    assert downloaded == sorted(downloaded)
    final = lines[-1]
    report = json.loads((jd / "reports" / "crawl-report.json").read_text())
    assert final.downloaded == report["uris_succeeded"] and final.failures == report["uris_failed"]
    assert final.queued == 0 == report["uris_queued"] and final.busy_threads == 0
    db = sqlite3.connect(jd / "state" / "frontier.sqlite")
    try:
        in_frontier = db.execute("SELECT COUNT(*) FROM uris").fetchone()[0]
    finally:
        db.close()
    # Heritrix's discoveredUriCount: the frontier's URIs and the robots.txt prerequisite
    # fetched outside it (an IP-literal host: no dns: line); one crawl.log line each
    logged = (jd / "logs" / "crawl.log").read_text().splitlines()
    assert final.discovered == len(logged) == in_frontier + 1 >= final.downloaded
    assert final.docs_per_s_avg > 0 and final.mem_kib > 1000 and final.heap_kib >= final.mem_kib
    assert any(x.queued > 0 and x.max_depth > 0 and x.busy_threads >= 0 for x in before)
