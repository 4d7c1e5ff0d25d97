"""Hostile servers against the crawler's limits (issue 20, items 8, 11, 12): an endless
chunked body, a slowloris body, a page with too many links, and a name that must not go
to the system resolver, all served on 127.0.0.x by this test.

Before the fixes an endless body was spooled until the 1,200 s total timeout (no default
size cap), the total timeout could not be set from the job file, a graceful stop waited
for a slowloris fetch to end, the links beyond the cap were dropped without a word in
crawl.log, and a host without a ``resolve`` entry went to the system resolver.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import socketserver
import threading
import time
import tracemalloc
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sites import HTML, TEXT, TestSite, html
from webark.crawl.context import http_fetcher
from webark.crawl.controller import CrawlController
from webark.crawl.extract import MAX_OUTLINKS, extract_links
from webark.crawl.job import job_from_mapping
from webark.crawllog.parse import read_crawl_log
from webark.warc.check import check_file
from webark.warc.reader import ArchiveReader

MiB = 1 << 20


class StreamServer:
    """A raw HTTP/1.1 server on 127.0.0.3 whose bodies never end: ``/endless`` is a
    chunked body of 64 KiB chunks sent as fast as the client reads; ``/slow`` announces
    a Content-Length of 1 GB and sends one byte every 50 ms (slowloris); ``/robots.txt``
    allows everything. The paths requested are in :attr:`requests`."""

    def __init__(self) -> None:
        self.requests: list[str] = []
        self.stopping = threading.Event()
        owner = self

        class Handler(socketserver.BaseRequestHandler):
            def handle(self) -> None:
                f = self.request.makefile("rb")
                line = f.readline().decode("latin-1")
                while f.readline() not in (b"\r\n", b"\n", b""):
                    pass
                path = line.split(" ")[1] if line.count(" ") >= 2 else "/"
                owner.requests.append(path)
                with contextlib.suppress(OSError):  # the crawler hung up (cap, timeout, stop)
                    owner.answer(self.request, path)

        self.server = socketserver.ThreadingTCPServer(("127.0.0.3", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def answer(self, sock: socket.socket, path: str) -> None:
        if path == "/endless":
            sock.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\n"
                         b"Transfer-Encoding: chunked\r\n\r\n")  # fmt: skip
            chunk = b"10000\r\n" + b"a" * 0x10000 + b"\r\n"
            while not self.stopping.is_set():
                sock.sendall(chunk)
        elif path == "/slow":
            sock.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n"
                         b"Content-Length: 1000000000\r\n\r\n")  # fmt: skip
            while not self.stopping.is_set():
                sock.sendall(b"x")
                time.sleep(0.05)
        else:
            body = b"User-agent: *\n" if path == "/robots.txt" else b"not found"
            status = b"200 OK" if path == "/robots.txt" else b"404 Not Found"
            head = b"HTTP/1.1 %s\r\nContent-Type: text/plain\r\nContent-Length: %d\r\n"
            sock.sendall(head % (status, len(body)) + b"Connection: close\r\n\r\n" + body)

    def url(self, path: str) -> str:
        return f"http://127.0.0.3:{self.port}{path}"

    def close(self) -> None:
        self.stopping.set()
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def streams() -> Iterator[StreamServer]:
    s = StreamServer()
    yield s
    s.close()


def _job(tmp: Path, seeds: list[str], **more: Any) -> Any:
    cfg = {
        "seeds": seeds, "job_dir": str(tmp / "job"), "contact": "limits@example.org",
        "allow_private": True, "min_delay": 0, "max_delay": 0, "delay_factor": 0,
        "max_retries": 0, "workers": 2, **more,
    }  # fmt: skip
    return job_from_mapping(cfg)


def _crawl(job: Any, timeout: float = 60.0, resume: bool = False) -> Any:
    async def main() -> Any:
        return await asyncio.wait_for(
            CrawlController(job, resume=resume, extract_processes=0).run(), timeout
        )

    return asyncio.run(main())


def _responses(warcs: tuple[str, ...]) -> dict[str, Any]:
    out = {}
    for w in warcs:
        for rec in ArchiveReader(w):
            if rec.type == "response":
                out[rec.target_uri] = rec
    return out


def test_fetch_limit_defaults_and_job_keys(tmp_path: Path) -> None:
    job = _job(tmp_path, ["http://127.0.0.1/"])
    assert job.max_fetch_bytes == 1 << 30 and job.total_timeout == 1200.0
    assert job.stop_grace == 30.0 and job.max_outlinks == MAX_OUTLINKS == 6000
    limits = http_fetcher(job).limits
    assert (limits.max_size, limits.total_timeout) == (1 << 30, 1200.0)
    job = _job(tmp_path, ["http://127.0.0.1/"], total_timeout=2.5, max_fetch_bytes=1000)
    assert (http_fetcher(job).limits.total_timeout, http_fetcher(job).limits.max_size) == (2.5,
                                                                                        1000)
    with pytest.raises(Exception, match="total_timeout"):
        _job(tmp_path, ["http://127.0.0.1/"], total_timeout=0)


def test_endless_chunked_body_cut_at_the_cap(streams: StreamServer, tmp_path: Path) -> None:
    job = _job(tmp_path, [streams.url("/endless")], max_fetch_bytes=2 * MiB)
    t0 = time.monotonic()
    summary = _crawl(job)
    assert time.monotonic() - t0 < 30 and summary.stop_reason == "finished"
    (line,) = [ln for ln in read_crawl_log(job.logs_dir / "crawl.log")
               if ln.uri == streams.url("/endless")]  # fmt: skip
    assert line.status == 200 and "lenTrunc" in line.annotations
    rec = _responses(summary.warcs)[streams.url("/endless")]
    assert rec.headers.get("WARC-Truncated") == "length"
    assert 2 * MiB - 100 <= int(rec.headers.get("Content-Length")) <= 2 * MiB
    assert all(check_file(p).ok for p in summary.warcs)
    assert streams.requests.count("/endless") == 1


def test_total_timeout_from_the_job_file(streams: StreamServer, tmp_path: Path) -> None:
    job = _job(tmp_path, [streams.url("/slow")], total_timeout=1.5)
    t0 = time.monotonic()
    summary = _crawl(job)
    took = time.monotonic() - t0
    assert took < 15, f"{took:.1f} s"
    (line,) = [ln for ln in read_crawl_log(job.logs_dir / "crawl.log")
               if ln.uri == streams.url("/slow")]  # fmt: skip
    assert line.status == 200 and "timeTrunc" in line.annotations
    rec = _responses(summary.warcs)[streams.url("/slow")]
    assert rec.headers.get("WARC-Truncated") == "time"


def test_stop_aborts_fetches_after_the_grace_period(streams: StreamServer,
                                                     tmp_path: Path) -> None:  # fmt: skip
    job = _job(tmp_path, [streams.url("/slow")], stop_grace=0.5)

    async def main() -> tuple[Any, float]:
        ctl = CrawlController(job, extract_processes=0)
        crawl = asyncio.create_task(ctl.run())
        while "/slow" not in streams.requests:
            await asyncio.sleep(0.02)
        await asyncio.sleep(0.3)
        t0 = time.monotonic()
        ctl.request_stop("test stop")
        summary = await asyncio.wait_for(crawl, 20)
        return summary, time.monotonic() - t0

    summary, took = asyncio.run(main())
    assert took < 5, f"the stop waited {took:.1f} s for a slowloris fetch"
    assert summary.stop_reason == "test stop"
    uris = [ln.uri for ln in read_crawl_log(job.logs_dir / "crawl.log")]
    assert streams.url("/slow") not in uris  # aborted: no line, nothing written
    assert streams.url("/slow") not in _responses(summary.warcs)
    assert all(check_file(p).ok for p in summary.warcs)
    # the URI stayed queued: --resume fetches it (cut by a short total timeout)
    resumed = job_from_mapping({**job.to_json(), "total_timeout": 1.0})
    summary = _crawl(resumed, resume=True)
    lines = [ln for ln in read_crawl_log(job.logs_dir / "crawl.log")
             if ln.uri == streams.url("/slow")]  # fmt: skip
    assert [ln.status for ln in lines] == [200] and "timeTrunc" in lines[0].annotations


def test_too_many_outlinks_kept_to_the_cap_and_logged(tmp_path: Path) -> None:
    links = "".join(f'<a href="/p{i}.html">{i}</a>' for i in range(10_000))
    pages = {"/robots.txt": (200, TEXT, b"User-agent: *\n"), "/": (200, HTML, html(links))}
    with TestSite(pages, host="127.0.0.4") as site:
        job = _job(tmp_path, [site.url("/")], max_outlinks=50, scope={"max_hops": 1})
        summary = _crawl(job)
        paths = site.paths()
    assert summary.stop_reason == "finished"
    lines = {ln.uri: ln for ln in read_crawl_log(job.logs_dir / "crawl.log")}
    assert "dol:9950" in lines[site.url("/")].annotations
    assert sorted(p for p in paths if p.startswith("/p")) == sorted(f"/p{i}.html"
                                                                    for i in range(50))


def test_outlink_cap_bounds_extraction_memory() -> None:
    # a text sitemap of a million URLs (30 MiB): the extractor yields them lazily and the
    # cap stops making links; before, all were made and deduplicated, then cut to 6000
    # (257 MiB traced; 40 MiB after)
    body = b"".join(b"http://example.org/u%d.html\n" % i for i in range(1_000_000))
    tracemalloc.start()
    try:
        out = extract_links("http://example.org/sitemap.txt", "text/plain", body)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(out) == MAX_OUTLINKS and out.dropped == 1_000_000 - MAX_OUTLINKS
    assert out[-1].url == f"http://example.org/u{MAX_OUTLINKS - 1}.html"
    assert peak < 2 * len(body), f"{peak / MiB:.0f} MiB traced for {len(body) / MiB:.0f} MiB"


def test_resolve_only_keeps_names_off_the_system_resolver(tmp_path: Path) -> None:
    # "localhost" resolves through /etc/hosts: with resolve_only it must not be looked up
    pages = {"/robots.txt": (200, TEXT, b"User-agent: *\n")}
    with TestSite(pages, host="127.0.0.5") as site:
        site.pages["/"] = (200, HTML, html(f'<a href="http://localhost:{site.port}/leak">x</a>'
                                           f'<a href="/in.html">in</a>'))  # fmt: skip
        seed = f"http://site.test:{site.port}/"
        job = _job(tmp_path, [seed], resolve={"site.test": "127.0.0.5"}, resolve_only=True,
                   scope={"accept_regex": ["http://localhost.*"]})  # fmt: skip
        summary = _crawl(job)
        paths = site.paths()
    assert summary.stop_reason == "finished"
    assert "/in.html" in paths and "/leak" not in paths
    lines = {ln.uri: ln for ln in read_crawl_log(job.logs_dir / "crawl.log")}
    assert lines["dns:site.test"].status == 1
    assert lines["dns:localhost"].status == -1
    assert lines[f"http://localhost:{site.port}/leak"].status == -6


def test_resolve_only_covers_seeds_added_through_the_control_api(tmp_path: Path) -> None:
    # the leak of issue 20 item 12: a seed added while the crawl runs was looked up
    # through the system resolver ("localhost" resolves through /etc/hosts)
    from webark.crawl.control import CrawlControl

    pages = {"/robots.txt": (200, TEXT, b"User-agent: *\n"), "/": (200, HTML, html("x"))}
    with TestSite(pages, host="127.0.0.5", delay=0.3) as site:
        job = _job(tmp_path, [f"http://site.test:{site.port}/"],
                   resolve={"site.test": "127.0.0.5"}, resolve_only=True)  # fmt: skip

        async def main() -> Any:
            ctl = CrawlController(job, extract_processes=0)
            control = CrawlControl(ctl)
            crawl = asyncio.create_task(ctl.run())
            while ctl.frontier is None:
                await asyncio.sleep(0.01)
            result = await control.add_seeds([f"http://localhost:{site.port}/added"])
            await crawl
            return result

        result = asyncio.run(main())
        paths = site.paths()
    assert result.added == () and "/added" not in paths
    ((seed, reason),) = result.rejected
    assert seed.endswith("/added") and "no resolve entry" in reason
