"""The job's page list, ``pages/pages.jsonl`` (json-pages-1.0: the ``pages/`` of a WACZ,
what ReplayWeb.page lists and searches), written at the end of a crawl from the job's
WARCs and crawl.log (:mod:`webark.search.pages` says which captures are pages).

Written again at the end of every run of the job (``--resume`` included), over all its
WARCs, so it always lists the whole job; the file is replaced whole (a crash leaves the
previous one).

A hybrid crawl's pages (``browser:``) get the title their browser visit saw
(:mod:`webark.crawl.browser.titles`) instead of the captured HTML's, when it had one.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from pathlib import Path

from webark.crawl.browser.titles import TITLES_FILE, read_titles
from webark.crawl.job import CrawlJob
from webark.search.pages import HopPaths, pages_of_warcs, write_pages
from webark.warc.record import Problem

log = logging.getLogger(__name__)

_SUFFIXES = (".warc", ".warc.gz", ".warc.zst")


def write_page_list(job: CrawlJob) -> list[Path]:
    """Write ``job.pages_path`` from the job's finished WARCs and its crawl.log; returns
    ``[path]``, or ``[]`` when it could not be written (logged: the crawl's WARCs are
    complete all the same, and ``webark wacz pages JOBDIR`` writes it later)."""
    started = time.monotonic()
    crawl_log = job.logs_dir / "crawl.log"
    warcs = sorted(p for p in job.warcs_dir.iterdir() if p.name.endswith(_SUFFIXES)) \
        if job.warcs_dir.is_dir() else []  # fmt: skip
    problems: list[Problem] = []
    try:
        hops = HopPaths([crawl_log] if crawl_log.is_file() else [])
        titles = read_titles(job.state_dir / TITLES_FILE)
        pages = (dataclasses.replace(pg, title=titles[pg.url]) if titles.get(pg.url) else pg
                 for pg in pages_of_warcs(warcs, hops=hops, problems=problems))  # fmt: skip
        n = write_pages(job.pages_path, pages)
    except OSError as e:
        log.error("pages/pages.jsonl not written (%s); `webark wacz pages %s` writes it",
                  e, job.job_dir)  # fmt: skip
        return []
    for p in problems[:20]:
        log.warning("pages list: %s", p)
    log.info("pages list: %d pages in %s (%.1f s)", n, job.pages_path,
             time.monotonic() - started)  # fmt: skip
    return [job.pages_path]
