"""Debian's ``python3-doc`` (the Python documentation, 530 HTML pages) served from
``/usr/share/doc/python3/html`` by a static file server on 127.0.0.1 and crawled with
webark's crawler, once per test session (the ``python_docs_crawl`` fixture of
tests/conftest.py): the crawl tests check the crawl, the search tests index its WARCs.

The package is installed by ``scripts/setup.sh`` when ``WEBARK_DEMO_SITE=1`` (as
``.ci/run`` does); without it the tests are skipped, except under ``CI=true`` where a
missing site is a failure (a skipped test cannot fail).
"""

from __future__ import annotations

import asyncio
import functools
import os
import threading
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from webark.crawl.controller import CrawlController
from webark.crawl.job import job_from_mapping

DOC_DIRS = (Path("/usr/share/doc/python3/html"), Path("/usr/share/doc/python3.11/html"))


def doc_root() -> Path:
    for d in DOC_DIRS:
        if (d / "index.html").exists():
            return d
    msg = "python3-doc is not installed (scripts/setup.sh with WEBARK_DEMO_SITE=1)"
    if os.environ.get("CI") == "true":
        pytest.fail(msg + " — required under CI=true")
    pytest.skip(msg)


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, root: Path) -> None:
        self.hits: list[tuple[str, int]] = []
        self.lock = threading.Lock()
        server = self

        class Handler(SimpleHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # head and body are two writes: no 40 ms stall

            def log_message(self, format: str, *args: object) -> None:
                pass

            def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
                with server.lock:
                    server.hits.append((self.path, int(getattr(code, "value", code))))

        super().__init__(("127.0.0.1", 0), functools.partial(Handler, directory=str(root)))


def crawl_python_docs(work: Path) -> Iterator[dict[str, Any]]:
    """Serve and crawl the docs into ``work/job``; yields ``root`` (the served folder),
    ``origin`` (``http://127.0.0.1:PORT``), ``job``, ``summary`` (the crawl's) and
    ``hits`` (the server's ``(path, status)`` answers); the server stops at the end."""
    root = doc_root()
    server = _Server(root)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    origin = f"http://127.0.0.1:{server.server_address[1]}"
    job = job_from_mapping(
        {
            "seeds": [origin + "/"],
            "job_dir": str(work / "job"),
            "contact": "archive@example.org",
            "allow_private": True,
            "min_delay": 0,
            "max_delay": 0,
            "delay_factor": 0,
            "dedup": True,
            "scope": {"max_trans_hops": 0},  # stay on the one loopback host
        }
    )
    try:
        summary = asyncio.run(CrawlController(job).run())
        yield {"root": root, "origin": origin, "job": job, "summary": summary,
               "hits": server.hits}  # fmt: skip
    finally:
        server.shutdown()
        server.server_close()
