"""``webark crawl`` of a loopback HTTPS site whose certificate chain the test made
(:class:`tls_chain.ChainCA`) and of the same pages over plain HTTP: the WARCs the replay
tests of the banner's certificate read."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

from http_wait import WEBARK
from sites import HTML, TestSite, html
from tls_chain import ChainCA, chain_records

#: robots.txt served as HTML, so that the connection's first capture (the crawler
#: fetches robots.txt first: the one the chain record is concurrent to) has a banner
PAGES = {"/robots.txt": (200, HTML, html("no rules")),
         "/": (200, HTML, html('<a href="/next.html">next</a>')),
         "/next.html": (200, HTML, html("second page"))}  # fmt: skip


@dataclass(frozen=True)
class Crawled:
    """``ca`` (the chain), ``https``/``http`` (the two seeds), ``warcs`` (their WARC
    files: the https crawl's first)."""

    ca: ChainCA
    https: str
    http: str
    warcs: list[Path]


def _crawl(seed: str, job: Path) -> list[Path]:
    done = subprocess.run([*WEBARK, "crawl", "--seed", seed, "-o", str(job),
                           "--contact", "archive@example.org", "--allow-private",
                           "--min-delay", "0", "--max-delay", "0", "--no-control",
                           "--quiet"], capture_output=True, text=True, timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr
    return sorted((job / "warcs").iterdir())


def crawl_both(root: Path) -> Crawled:
    """Crawl :data:`PAGES` over HTTPS (one kept-alive connection: one chain record,
    concurrent to robots.txt) and over HTTP, into ``root/tls`` and ``root/plain``."""
    ca = ChainCA()
    tls = TestSite(PAGES)
    tls.server.socket = ca.server_context().wrap_socket(tls.server.socket, server_side=True)
    plain = TestSite(PAGES)
    https, http = f"https://127.0.0.1:{tls.port}/", f"http://127.0.0.1:{plain.port}/"
    with tls, plain:
        warcs = _crawl(https, root / "tls") + _crawl(http, root / "plain")
    (chain,) = chain_records(root / "tls" / "warcs")
    assert chain.target_uri == https + "robots.txt"
    return Crawled(ca, https, http, warcs)
