"""The hybrid crawl (issue 13) on the scripted site (tests/js_site.py), through the real
``webark crawl`` CLI, Debian's Chromium and the archiving proxy in the crawl's process:

* the bulk crawler alone finds the static part only (the site's own list: 7 of 48);
* with every page delegated (``browser: {hosts: [127.0.0.1]}``) all 48 URLs are in the
  CDX index of the job's WARCs, replay in Chromium renders them from the archive alone,
  the site's access log shows no two requests at once and the job's delay between any
  two, every page has its ``urn:view:`` / ``urn:thumbnail:`` records pointing at its
  response, and ``webark warc check`` and warcio's check pass;
* with the ``troublesome`` heuristic only the two script-made pages go to the browser
  and everything is captured all the same, but an out-of-scope subresource is refused
  (403) and never fetched.
"""

from __future__ import annotations

import itertools
import json
import shutil
import subprocess
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from browser_support import make_collection, replay_in_full, webark_serve
from test_browser_worker import require_browser

from http_wait import WEBARK
from js_site import js_site, site_urls
from sites import Hit
from webark.crawl.browser.titles import TITLES_FILE, append_title, read_titles
from webark.crawl.job import job_from_mapping
from webark.crawl.page_list import write_page_list
from webark.crawllog import parse_line
from webark.warc.reader import ArchiveReader

DELAY = 0.2
REJECTED = "/img/hero.png"


@dataclass
class Crawl:
    job_dir: Path
    origin: str
    hits: list[Hit]
    cdx_urls: set[str]
    lines: list[Any]
    report: dict[str, Any]
    stdout: str

    @property
    def warcs(self) -> list[Path]:
        return sorted((self.job_dir / "warcs").glob("*.warc.gz"))


def _crawl(tmp: Path, name: str, browser: dict[str, Any] | None,
           scope: dict[str, Any] | None = None) -> Crawl:  # fmt: skip
    with js_site() as site:
        job: dict[str, Any] = {
            "seeds": [site.url("/")], "job_dir": str(tmp / name), "contact": "test@example.org",
            "allow_private": True, "resolve_only": True, "workers": 2,
            "min_delay": DELAY, "max_delay": DELAY, "delay_factor": 0,
        }  # fmt: skip
        if browser is not None:
            job["browser"] = browser
        if scope is not None:
            job["scope"] = scope
        job_file = tmp / f"{name}.yaml"
        job_file.write_text(yaml.safe_dump(job))
        res = subprocess.run([*WEBARK, "crawl", str(job_file), "--quiet"], capture_output=True,
                             text=True, timeout=600)  # fmt: skip
        assert res.returncode == 0, res.stderr[-3000:]
        hits = site.snapshot()
        origin = site.origin
    job_dir = tmp / name
    warcs = sorted((job_dir / "warcs").glob("*.warc.gz"))
    cdx = subprocess.run([*WEBARK, "index", *map(str, warcs)], capture_output=True, text=True,
                         check=True).stdout  # fmt: skip
    urls = {json.loads(ln.split(" ", 2)[2])["url"] for ln in cdx.splitlines() if ln.strip()}
    lines = [parse_line(t) for t in (job_dir / "logs" / "crawl.log").read_text().splitlines()]
    report_file = job_dir / "reports" / "browser-report.json"
    report = json.loads(report_file.read_text()) if report_file.exists() else {}
    return Crawl(job_dir, origin, hits, urls, lines, report, res.stdout)


@pytest.fixture(scope="module")
def crawls(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Crawl]]:
    require_browser()
    tmp = tmp_path_factory.mktemp("hybrid")
    timeouts = {"load_timeout": 15, "behavior_timeout": 30}
    yield {
        "bulk": _crawl(tmp, "bulk", None),
        "all": _crawl(tmp, "all", {"hosts": ["127.0.0.1"], **timeouts}),
        "heuristic": _crawl(tmp, "heuristic", timeouts, {"reject_regex": [f".*{REJECTED}$"]}),
    }


def test_the_bulk_crawler_alone_misses_most_of_the_site(crawls: dict[str, Crawl]) -> None:
    c = crawls["bulk"]
    urls = site_urls(c.origin)
    found = set(urls.all) & c.cdx_urls
    assert found == set(urls.static)
    assert (len(found), len(urls.all)) == (7, 48)
    assert c.report == {}  # no browser: section, no browser report
    summary = json.loads((c.job_dir / "reports" / "crawl-report.json").read_text())
    assert "browser_pages" not in summary


def test_every_page_in_the_browser_captures_all_of_it(crawls: dict[str, Crawl]) -> None:
    c = crawls["all"]
    urls = site_urls(c.origin)
    assert set(urls.all) <= c.cdx_urls, sorted(set(urls.all) - c.cdx_urls)
    # every HTML page but the iframe's document (rendered inside its page) was a browser page
    pages = [u for u in urls.pages if not u.endswith("/frame.html")]
    assert c.report["pages"] == len(pages) == 35
    assert c.report["by_reason"] == {"host": 35} and c.report["errors"] == 0
    summary = json.loads((c.job_dir / "reports" / "crawl-report.json").read_text())
    assert summary["browser_pages"] == 35
    assert c.report["proxied"] == c.report["captured"] == c.report["page_requests"]
    by_uri: dict[str, list[Any]] = {}
    for ln in c.lines:
        by_uri.setdefault(ln.uri, []).append(ln)
    for page in pages:  # one line each, the crawl's, annotated
        (line,) = by_uri[page]
        assert line.status == 200 and "WrenderedURL" in line.annotations, line
    # the subresources: the proxy's lines, an embed of their page
    hero = by_uri[c.origin + "/img/hero.png"]
    assert {(ln.hop_path, ln.via) for ln in hero} == {("E", c.origin + "/")}
    batch = by_uri[c.origin + "/api/items?page=2"]
    assert {(ln.hop_path, ln.via) for ln in batch} == {("LE", c.origin + "/feed.html")}


def _no_overlap_and_delays(hits: list[Hit]) -> list[float]:
    hits = sorted(hits, key=lambda h: h.start)
    gaps = []
    for before, after in itertools.pairwise(hits):
        assert after.start >= before.end, f"{before.path} and {after.path} at once"
        gaps.append(after.start - before.end)
    return gaps


def test_the_access_log_proves_politeness(crawls: dict[str, Crawl]) -> None:
    for name in ("all", "heuristic"):
        c = crawls[name]
        gaps = _no_overlap_and_delays(c.hits)
        assert len(gaps) > 40
        assert min(gaps) >= DELAY, (name, sorted(gaps)[:5])


def test_the_heuristic_sends_only_script_made_pages(crawls: dict[str, Crawl]) -> None:
    c = crawls["heuristic"]
    urls = site_urls(c.origin)
    rejected = c.origin + REJECTED
    assert set(urls.all) - c.cdx_urls == {rejected}
    rendered = sorted(ln.uri for ln in c.lines if "WrenderedURL" in ln.annotations)
    assert rendered == [c.origin + "/", c.origin + "/feed.html"]
    assert c.report["by_reason"] == {"troublesome": 2}
    # the out-of-scope image was refused by the proxy, never fetched
    assert c.report["out_of_scope"] >= 1
    assert REJECTED not in [h.path for h in c.hits]
    # and each page fetched once: the rendered pages were given to the browser fetched
    counts = Counter(h.path for h in c.hits)
    assert counts["/"] == 1 and counts["/feed.html"] == 1


def _records(warcs: list[Path]) -> list[Any]:
    return [r for w in warcs for r in ArchiveReader(str(w))]


def test_screenshots_point_at_their_page(crawls: dict[str, Crawl]) -> None:
    c = crawls["all"]
    records = _records(c.warcs)
    responses = {r.record_id: r for r in records if r.type in ("response", "revisit")}
    shots = [r for r in records if r.type == "resource" and r.target_uri.startswith("urn:")]
    kinds = Counter((r.target_uri.split(":")[1], r.headers.get("Content-Type")) for r in shots)
    assert kinds == {("view", "image/png"): 35, ("thumbnail", "image/jpeg"): 35}
    for r in shots:
        page = r.target_uri.split(":", 2)[2]
        (to,) = r.headers.get_all("WARC-Concurrent-To")
        assert responses[to].target_uri == page, r.target_uri
        data = r.payload()
        assert data.startswith(b"\x89PNG" if "view:" in r.target_uri else b"\xff\xd8")


def test_pages_get_the_browsers_titles(crawls: dict[str, Crawl], tmp_path: Path) -> None:
    c = crawls["all"]
    titles = read_titles(c.job_dir / "state" / TITLES_FILE)
    assert titles[c.origin + "/"] == "js site" and len(titles) == 35
    listed = {p["url"]: p["title"] for p in _pages(c.job_dir)}
    assert listed == titles
    # a title the scripts set (a single-page app's) wins over the captured HTML's
    job_dir = tmp_path / "job"
    shutil.copytree(c.job_dir, job_dir)
    append_title(job_dir / "state" / TITLES_FILE, c.origin + "/", "Rendered by script")
    write_page_list(job_from_mapping({**json.loads((job_dir / "state" / "job.json").read_text()),
                                      "job_dir": str(job_dir)}))  # fmt: skip
    again = {p["url"]: p["title"] for p in _pages(job_dir)}
    assert again == {**titles, c.origin + "/": "Rendered by script"}


def _pages(job_dir: Path) -> list[dict[str, Any]]:
    lines = (job_dir / "pages" / "pages.jsonl").read_text().splitlines()
    return [json.loads(ln) for ln in lines[1:]]


def test_warcs_pass_webark_and_warcio_checks(crawls: dict[str, Crawl]) -> None:
    for name in ("all", "heuristic"):
        warcs = [str(p) for p in crawls[name].warcs]
        res = subprocess.run([*WEBARK, "warc", "check", *warcs], capture_output=True, text=True)
        assert res.returncode == 0, res.stdout + res.stderr
        warcio = Path(WEBARK[0]).parent / "warcio"
        res = subprocess.run([str(warcio), "check", "-v", *warcs], capture_output=True,
                             text=True)  # fmt: skip
        assert res.returncode == 0, res.stdout[-2000:] + res.stderr[-2000:]


def test_replay_renders_from_the_archive_alone(browser: Any, crawls: dict[str, Crawl],
                                               tmp_path: Path) -> None:  # fmt: skip
    c = crawls["all"]
    make_collection(tmp_path / "colls", "hybrid", c.warcs)
    pages = _pages(c.job_dir)
    assert len(pages) == 35  # the iframe's document is no page of its own
    with webark_serve(tmp_path / "colls") as base:
        prefix = base + "hybrid/"
        index = next(p for p in pages if p["url"] == c.origin + "/")
        ts = index["ts"].replace("-", "").replace(":", "").replace("T", "").rstrip("Z")
        answered = replay_in_full(browser, base, prefix, ts, index["url"])
        assert answered >= 8  # the page, css, icon, script, frame, hero image …
        for p in pages[:12]:
            ts = p["ts"].replace("-", "").replace(":", "").replace("T", "").rstrip("Z")
            assert replay_in_full(browser, base, prefix, ts, p["url"]) >= 1


def test_a_bad_browser_section_is_a_clear_error(tmp_path: Path) -> None:
    job = {"seeds": ["http://127.0.0.1:9/"], "job_dir": str(tmp_path / "j"),
           "contact": "a@b.org", "browser": {"pool_size": 99, "regex": ["("]}}  # fmt: skip
    job_file = tmp_path / "bad.yaml"
    job_file.write_text(yaml.safe_dump(job))
    res = subprocess.run([*WEBARK, "crawl", str(job_file)], capture_output=True, text=True,
                         timeout=60)  # fmt: skip
    assert res.returncode != 0
    out = res.stdout + res.stderr
    assert "browser.pool_size: expected an integer 1 … 16, got 99" in out, out
    assert "browser.regex[0]: not a regular expression" in out, out
    assert not (tmp_path / "j" / "warcs").exists()
