"""A small site for the page-list and WACZ tests, served on 127.0.0.1, and its crawl
with the ``webark crawl`` CLI (a real subprocess) into a job folder.

Pages: ``/`` (seed, title "Home") links ``/a.html`` and ``/old`` (301 → ``/b.html``),
embeds ``/frame.html`` in an iframe, a style sheet and an image; ``/a.html`` links
``/c.html`` (a title with non-ASCII letters). So the pages are ``/``, ``/a.html``,
``/b.html`` (link then redirect), ``/c.html``; ``/frame.html`` is HTML but embedded
(hop ``E``), not a page.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from http_wait import WEBARK
from sites import CSS, HTML, PNG, PNG_BYTES, TEXT, Page, TestSite


def _page(title: str, body: str) -> bytes:
    return (f"<!doctype html><html><head><meta charset=utf-8><title>{title}</title>"
            f'<link rel="stylesheet" href="/s.css"></head><body>{body}</body></html>'
            ).encode()  # fmt: skip


PAGES: dict[str, Page] = {
    "/robots.txt": (200, TEXT, b"User-agent: *\nAllow: /\n"),
    "/": (200, HTML, _page("Home", '<a href="/a.html">A</a> <a href="/old">old</a>'
                                   '<iframe src="/frame.html"></iframe><img src="/i.png">')),
    "/a.html": (200, HTML, _page("Page A", '<a href="/c.html">C</a> <a href="/">home</a>')),
    "/old": (301, (("Location", "/b.html"), *HTML), b"moved"),
    "/b.html": (200, HTML, _page("Page B", "<p>the redirect target</p>")),
    "/c.html": (200, HTML, _page("Café Ürün — C", "<p>deeper</p>")),
    "/frame.html": (200, HTML, _page("Frame", "<p>embedded document</p>")),
    "/s.css": (200, CSS, b"body { color: #123 }"),
    "/i.png": (200, PNG, PNG_BYTES),
}
#: path → (title, seed, depth) of the pages of the crawl
EXPECTED_PAGES = {
    "/": ("Home", True, 0),
    "/a.html": ("Page A", False, 1),
    "/b.html": ("Page B", False, 1),
    "/c.html": ("Café Ürün — C", False, 2),
}


def crawl_site(site: TestSite, job_dir: Path, *extra_job: str) -> subprocess.CompletedProcess[str]:
    """``webark crawl`` of ``site`` (its seed ``/``) into ``job_dir``; the finished
    process (the caller checks its exit status). ``extra_job``: more YAML lines."""
    job = job_dir.parent / f"{job_dir.name}.yaml"
    job.write_text("\n".join([
        f"seeds: [{site.url('/')}]", f"job_dir: {job_dir}", "contact: test@example.org",
        "allow_private: true", "min_delay: 0", "max_delay: 0", "workers: 2",
        *extra_job,
    ]) + "\n")  # fmt: skip
    return subprocess.run([*WEBARK, "crawl", "--no-progress", str(job)], capture_output=True,
                          text=True, timeout=300)  # fmt: skip
