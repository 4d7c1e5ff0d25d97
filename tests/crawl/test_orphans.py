"""A crawler killed (SIGKILL) between writing a capture and logging it, then resumed
(issue 20, item 17): the WARC holds the first capture of the URI with no crawl.log line,
and the resumed crawl fetches and captures it again.

The kill is made exact: the crawler runs in a subprocess whose ``disposition`` processor
sends itself SIGKILL when it reaches ``/victim.html``, i.e. after ``warcWriter`` wrote
the capture and before its line. Before the fix nothing told the orphan from the capture
of record; now a metadata record refers to it (``WARC-Refers-To``), and the logged
capture is the second one.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

from sites import HTML, TEXT, TestSite, html
from webark.crawl.controller import CrawlController
from webark.crawl.job import job_from_mapping
from webark.crawl.orphans import ORPHAN_FIELD
from webark.crawllog.parse import read_crawl_log
from webark.warc.check import check_file
from webark.warc.reader import ArchiveReader

KILLER = """
import asyncio, json, os, signal, sys
from webark.crawl.controller import CrawlController
from webark.crawl.job import job_from_mapping
from webark.crawl.processors import disposition

finish = disposition.Disposition.finish

def finish_or_die(self, p):
    if p.curi.uri.endswith("/victim.html"):
        os.kill(os.getpid(), signal.SIGKILL)  # written, not logged
    finish(self, p)

disposition.Disposition.finish = finish_or_die
job = job_from_mapping(json.loads(sys.argv[1]))
asyncio.run(CrawlController(job, extract_processes=0).run())
"""


def test_written_not_logged_capture_marked_on_resume(tmp_path: Path) -> None:
    pages = {
        "/robots.txt": (200, TEXT, b"User-agent: *\n"),
        "/": (200, HTML, html('<a href="/victim.html">v</a>')),
        "/victim.html": (200, HTML, html('<a href="/after.html">after</a>')),
        "/after.html": (200, HTML, html("after")),
    }
    with TestSite(pages, host="127.0.0.10") as site:
        cfg = {
            "seeds": [site.url("/")], "job_dir": str(tmp_path / "job"),
            "contact": "orphans@example.org", "allow_private": True, "workers": 1,
            "min_delay": 0, "max_delay": 0, "delay_factor": 0,
        }  # fmt: skip
        env = {**os.environ, "WEBARK_EXTRACT_PROCESSES": "0"}
        killed = subprocess.run([sys.executable, "-c", KILLER, json.dumps(cfg)], env=env,
                                capture_output=True, text=True, timeout=60)  # fmt: skip
        assert killed.returncode == -9, killed.stderr
        job = job_from_mapping(cfg)
        summary = asyncio.run(CrawlController(job, resume=True, extract_processes=0).run())
        paths = site.paths()
    assert summary.stop_reason == "finished"
    victim = site.url("/victim.html")
    assert paths.count("/victim.html") == 2 and "/after.html" in paths
    warcs = sorted(str(p) for p in job.warcs_dir.iterdir())  # both runs' files
    records = [(os.path.basename(w), rec) for w in warcs for rec in ArchiveReader(w)]
    captures = [(name, rec) for name, rec in records
                if rec.type == "response" and rec.target_uri == victim]  # fmt: skip
    assert len(captures) == 2
    (line,) = [ln for ln in read_crawl_log(job.logs_dir / "crawl.log") if ln.uri == victim]
    extra = json.loads(line.extra_info or "{}")
    logged = [c for c in captures if (c[0], c[1].offset) ==
              (extra["warcFilename"], extra["warcFileOffset"])]  # fmt: skip
    orphan_name, orphan = next(c for c in captures if c not in logged)
    assert logged and logged[0][1].record_id != orphan.record_id
    marks = [rec for _, rec in records if rec.type == "metadata"
             and rec.headers.get("WARC-Refers-To") == orphan.record_id]  # fmt: skip
    assert len(marks) == 1 and marks[0].target_uri == victim
    body = marks[0].block.read_all().decode()
    fields = dict(ln.split(": ", 1) for ln in body.splitlines() if ": " in ln)
    assert (ORPHAN_FIELD[0], fields.get(ORPHAN_FIELD[0])) == ORPHAN_FIELD
    assert fields["warcFilename"] == orphan_name
    assert fields["warcFileOffset"] == str(orphan.offset)
    # nothing else is marked: the logged captures are no orphans
    assert sum(1 for _, rec in records if rec.type == "metadata"
               and rec.headers.get("WARC-Refers-To")) == 1  # fmt: skip
    assert len(warcs) == 2 and all(check_file(w).ok for w in warcs)
