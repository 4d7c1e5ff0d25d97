"""pages/pages.jsonl (json-pages-1.0): written by ``webark crawl`` at the end of a crawl
of a real site on 127.0.0.1 (seeds, pages reached by links and redirects, not embedded
documents), by ``webark wacz pages``, and from WARCs other tools wrote (the corpus)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from http_wait import WEBARK
from sites import TestSite
from wacz_site import EXPECTED_PAGES, PAGES, crawl_site
from webark.search.pages import Page, _as_page, pages_of_warcs, write_pages


def _read(path: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    lines = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]
    return lines[0], lines[1:]


def test_crawl_writes_the_page_list(crawled: tuple[TestSite, Path]) -> None:
    site, job = crawled
    header, pages = _read(job / "pages" / "pages.jsonl")
    assert header == {"format": "json-pages-1.0", "id": "pages", "title": "All Pages",
                      "hasText": False}  # fmt: skip
    got = {p["url"]: (p["title"], p["seed"], p["depth"]) for p in pages}
    assert got == {site.url(path): want for path, want in EXPECTED_PAGES.items()}
    for p in pages:
        assert p["mime"] == "text/html" and p["status"] == 200
        assert len(p["id"]) == 32 and p["ts"].endswith("Z") and len(p["ts"]) == 20
    assert len({p["id"] for p in pages}) == len(pages)
    # the embedded document was crawled (hop E) but is not a page
    crawl_log = (job / "logs" / "crawl.log").read_text()
    frame = next(x for x in crawl_log.splitlines() if x.split()[3] == site.url("/frame.html"))
    assert frame.split()[4].endswith("E")


def _copy(job: Path, tmp_path: Path) -> Path:
    """A copy of the shared job (tests that rewrite its files)."""
    shutil.copytree(job, tmp_path / "job")
    return tmp_path / "job"


def test_wacz_pages_rewrites_it_with_text(crawled: tuple[TestSite, Path], tmp_path: Path) -> None:
    site, job = crawled
    job = _copy(job, tmp_path)
    res = subprocess.run([*WEBARK, "wacz", "pages", "--text", str(job)], capture_output=True,
                         text=True, timeout=120)  # fmt: skip
    assert res.returncode == 0, res.stderr
    assert "4 pages" in res.stderr
    header, pages = _read(job / "pages" / "pages.jsonl")
    assert header["hasText"] is True
    text = {p["url"]: p["text"] for p in pages}
    assert text[site.url("/b.html")] == "the redirect target"
    assert text[site.url("/c.html")] == "deeper"


def test_a_job_without_pages_writes_none(tmp_path: Path) -> None:
    with TestSite(PAGES) as site:
        res = crawl_site(site, tmp_path / "job", "pages: false")
    assert res.returncode == 0, res.stderr
    assert not (tmp_path / "job" / "pages").exists()


@pytest.mark.parametrize(("hop_path", "want"), [
    ("", (True, True, 0)),          # a seed
    ("R", (True, True, 0)),         # where a seed redirects to
    ("L", (True, False, 1)),
    ("LLR", (True, False, 2)),      # a link that redirected
    ("LX", (True, False, 2)),       # a speculative link (e.g. Sphinx's orphan pages)
    ("LE", (False, False, 1)),      # an iframe
    ("LER", (False, False, 1)),     # where an iframe redirects to
    ("P", (False, False, 0)),       # a prerequisite
    ("50+LL", (True, False, 52)),   # Heritrix's long hop paths: N hops dropped
])  # fmt: skip
def test_hop_paths_that_make_pages(hop_path: str, want: tuple[bool, bool, int]) -> None:
    assert _as_page(hop_path) == want


def test_pages_of_foreign_warcs(corpus: Path, tmp_path: Path) -> None:
    """Without a crawl.log, every HTML capture 2xx is a page (wacz --detect-pages): the
    pywb sample archive has example.com's page; a record cut short is reported with
    file and offset and the rest read."""
    problems: list[Any] = []
    warcs = [corpus / "pywb/warcs/example.warc.gz", corpus / "warcio/example-trunc.warc"]
    pages = list(pages_of_warcs(warcs, problems=problems))
    assert {(p.url, p.title) for p in pages} >= {("http://example.com/", "Example Domain")}
    assert all(p.depth is None and not p.seed for p in pages)
    assert any("example-trunc.warc" in str(p) for p in problems)
    # written twice, a capture is listed once
    n = write_pages(tmp_path / "p.jsonl", [*pages, *pages])
    assert n == len({p.id for p in pages})


def test_write_pages_replaces_the_file_whole(tmp_path: Path) -> None:
    out = tmp_path / "pages" / "pages.jsonl"
    page = Page(url="http://x.test/", ts="2024-01-01T00:00:00Z", title="x",
                mime="text/html", status=200, seed=True, depth=0)  # fmt: skip
    write_pages(out, [page])

    def broken() -> Any:
        yield page
        raise OSError("disk gone")

    with pytest.raises(OSError):
        write_pages(out, broken())
    _, pages = _read(out)
    assert [p["url"] for p in pages] == ["http://x.test/"]
    assert not (tmp_path / "pages" / "pages.jsonl.partial").exists()
