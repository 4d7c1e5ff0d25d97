"""End-to-end crawls of sites this test serves itself on 127.0.0.1 / 127.0.0.2."""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from sites import Hit, TestSite, small_site, static_site
from webark.cli.crawl_cmds import crawl
from webark.crawl.controller import CrawlController, CrawlSetupError, CrawlSummary
from webark.crawl.job import CrawlJob, JobConfigError, job_from_mapping
from webark.crawllog import CrawlLogLine
from webark.crawllog.parse import read_crawl_log
from webark.warc.check import check_file
from webark.warc.reader import ArchiveReader

MIN_DELAY = 0.02
CRAWL_DELAY = 0.05  # site A's robots.txt
TOL = 0.005


@pytest.fixture(scope="module")
def sites() -> Iterator[tuple[TestSite, TestSite]]:
    b = TestSite(small_site(), host="127.0.0.2").start()
    a = TestSite(static_site(crawl_delay=CRAWL_DELAY, other=b.origin), host="127.0.0.1").start()
    yield a, b
    a.stop()
    b.stop()


def make_job(tmp: Path, a: TestSite, b: TestSite, **over: Any) -> CrawlJob:
    cfg: dict[str, Any] = {
        "seeds": [a.url("/"), b.url("/")],
        "job_dir": str(tmp / "job"),
        "contact": ["https://example.org/crawler", "archive@example.org"],
        "allow_private": True,
        "min_delay": MIN_DELAY,
        "max_delay": 1.0,
        "workers": 4,
        "max_http_retries": 0,
        "backoff_base": 0.1,  # after the 500 (Heritrix-style back-off; 120 s by default)
        "retry_delay": 0.1,
        "max_retries": 1,
    }
    cfg.update(over)
    return job_from_mapping(cfg)


def run(job: CrawlJob, **kw: Any) -> CrawlSummary:
    return asyncio.run(CrawlController(job, **kw).run())


def warc_responses(job_dir: Path) -> Counter[str]:
    out: Counter[str] = Counter()
    for name in sorted(os.listdir(job_dir / "warcs")):
        for rec in ArchiveReader(str(job_dir / "warcs" / name)):
            if rec.type in ("response", "revisit"):
                out[rec.headers.target_uri or ""] += 1
    return out


def expected_urls(a: TestSite, b: TestSite) -> set[str]:
    """Every URI a polite crawl fetches (robots.txt included; /private/ excluded)."""
    pa = [p for p in a.pages if not p.startswith("/private/")] + ["/missing.html"]
    pb = [*list(b.pages), "/robots.txt"]
    return {a.url(p) for p in pa} | {b.url(p) for p in pb}


def hits_since(site: TestSite, mark: int) -> list[Hit]:
    return site.snapshot()[mark:]


@pytest.fixture(scope="module")
def crawled(
    sites: tuple[TestSite, TestSite], tmp_path_factory: pytest.TempPathFactory
) -> tuple[CrawlJob, CrawlSummary, list[Hit], list[Hit]]:
    a, b = sites
    ma, mb = len(a.snapshot()), len(b.snapshot())
    job = make_job(tmp_path_factory.mktemp("crawl"), a, b)
    summary = run(job)
    return job, summary, hits_since(a, ma), hits_since(b, mb)


def test_every_reachable_uri_captured_once(crawled: Any, sites: Any) -> None:
    job, summary, hits_a, hits_b = crawled
    a, b = sites
    got = warc_responses(job.job_dir)
    assert set(got) == expected_urls(a, b)
    assert max(got.values()) == 1
    # the servers saw each of them exactly once too
    seen = Counter([a.url(h.path) for h in hits_a] + [b.url(h.path) for h in hits_b])
    assert set(seen) == expected_urls(a, b) and max(seen.values()) == 1
    assert summary.stop_reason == "finished"
    assert all(h.user_agent.startswith("webark/") and "+https://example.org/crawler" in
               h.user_agent for h in hits_a)  # fmt: skip


def test_robots_excluded_logged_not_fetched(crawled: Any, sites: Any) -> None:
    job, _, hits_a, _ = crawled
    a, _ = sites
    lines = {ln.uri: ln for ln in read_crawl_log(job.logs_dir / "crawl.log")}
    secret = a.url("/private/secret.html")
    assert lines[secret].status == -9998
    assert lines[secret].hop_path == "L"
    assert "/private/secret.html" not in [h.path for h in hits_a]


def _check_politeness(hits: list[Hit], min_gap: float) -> None:
    hits = sorted(hits, key=lambda h: h.start)
    for prev, nxt in itertools.pairwise(hits):
        assert nxt.start >= prev.end, f"overlap: {prev.path} and {nxt.path}"
        assert nxt.start - prev.end >= min_gap - TOL, (prev.path, nxt.path, nxt.start - prev.end)


def test_one_request_per_host_and_delays(crawled: Any) -> None:
    _, _, hits_a, hits_b = crawled
    _check_politeness(hits_a, CRAWL_DELAY)  # robots.txt Crawl-delay raises min_delay
    _check_politeness(hits_b, MIN_DELAY)
    # the two hosts were crawled in parallel
    a0, a1 = min(h.start for h in hits_a), max(h.end for h in hits_a)
    assert any(a0 < h.start < a1 for h in hits_b)


def test_crawl_log_lines_and_hop_paths(crawled: Any, sites: Any) -> None:
    job, summary, _, _ = crawled
    a, b = sites
    lines: list[CrawlLogLine] = read_crawl_log(job.logs_dir / "crawl.log")
    uris = [ln.uri for ln in lines]
    assert len(uris) == len(set(uris)), "one final line per URI"
    by = {ln.uri: ln for ln in lines}
    assert set(by) == expected_urls(a, b) | {a.url("/private/secret.html")}
    assert by[a.url("/")].hop_path == "" and by[a.url("/")].via is None
    assert by[a.url("/robots.txt")].hop_path == "P"
    assert by[a.url("/robots.txt")].via == a.url("/")
    assert by[a.url("/img/logo.png")].hop_path == "E"
    assert by[a.url("/img/bg.png")].hop_path == "EE"
    assert by[a.url("/new.html")].hop_path == "LR"
    assert by[a.url("/new.html")].via == a.url("/old")
    assert by[a.url("/p/21.html")].hop_path == "LLLLL"
    assert by[b.url("/b/1.html")].source_tag in (a.url("/"), b.url("/"))
    assert by[a.url("/old")].status == 301
    assert by[a.url("/missing.html")].status == 404
    assert by[a.url("/error.html")].status == 500
    ok = by[a.url("/p/1.html")]
    assert ok.status == 200 and ok.mime_type == "text/html"
    assert ok.digest and ok.digest.startswith("sha1:")
    assert ok.fetch_began is not None and ok.fetch_duration_ms is not None
    assert ok.extra["warcFilename"].endswith(".warc.gz")
    assert summary.snapshot.processed == len(lines)


def test_warcs_valid_with_metadata(crawled: Any) -> None:
    job, summary, _, _ = crawled
    assert summary.warcs
    types: Counter[str] = Counter()
    for path in summary.warcs:
        report = check_file(path)
        assert report.ok, report.errors
        types.update(report.counts)
    assert types["warcinfo"] >= 1
    assert types["response"] == types["request"] == types["metadata"]
    assert not [n for n in os.listdir(job.warcs_dir) if n.endswith(".open")]


def test_reports_written(crawled: Any) -> None:
    job, _summary, _, _ = crawled
    names = {p.name for p in job.reports_dir.iterdir()}
    for r in ("crawl", "seeds", "hosts", "mimetype", "responsecode", "frontier-summary"):
        assert f"{r}-report.txt" in names and f"{r}-report.json" in names
    crawl_json = json.loads((job.reports_dir / "crawl-report.json").read_text())
    assert crawl_json["uris_robots_excluded"] == 1
    assert crawl_json["seeds_crawled"] == 2
    # the final report has the WARC bytes on disk (it had null: found by a fresh user)
    on_disk = sum(os.path.getsize(job.warcs_dir / n) for n in os.listdir(job.warcs_dir))
    assert crawl_json["warc_bytes"] == on_disk > 0
    codes = {r["code"]: r["urls"] for r in
             json.loads((job.reports_dir / "responsecode-report.json").read_text())}  # fmt: skip
    assert codes[404] == 2 and codes[500] == 1  # /missing.html, B robots.txt and codes[-9998] == 1
    assert "text/html" in (job.reports_dir / "mimetype-report.txt").read_text()


def test_max_uris(sites: Any, tmp_path: Path) -> None:
    a, b = sites
    job = make_job(tmp_path, a, b, min_delay=0.0, max_delay=0.0, max_uris=5, seeds=[a.url("/")])
    summary = run(job)
    assert "max_uris" in summary.stop_reason
    assert summary.snapshot.succeeded <= 5 + job.workers


def test_private_address_refused_clearly(sites: Any, tmp_path: Path) -> None:
    a, b = sites
    job = make_job(tmp_path, a, b, allow_private=False)
    with pytest.raises(CrawlSetupError, match="--allow-private"):
        run(job)
    assert not job.job_dir.exists()  # nothing written: the same command can be rerun
    run(make_job(tmp_path, a, b, seeds=[b.url("/")], min_delay=0.0, max_delay=0.0))
    with pytest.raises(CrawlSetupError, match="--resume"):
        run(make_job(tmp_path, a, b, seeds=[b.url("/")]))


def test_dedup_writes_revisits(sites: Any, tmp_path: Path) -> None:
    a, b = sites
    job = make_job(tmp_path, a, b, min_delay=0.0, max_delay=0.0, dedup=True, seeds=[b.url("/")])
    run(job)
    lines = read_crawl_log(job.logs_dir / "crawl.log")
    # /b/1..5.html have identical bodies: the first is stored, the others are revisits
    dups = [ln for ln in lines if "duplicate:digest" in ln.annotations]
    assert len(dups) == 4
    for path in os.listdir(job.warcs_dir):
        assert check_file(job.warcs_dir / path).ok


def test_job_config_errors(tmp_path: Path) -> None:
    base = {"seeds": ["http://example.org/"], "job_dir": str(tmp_path), "contact": "a@b.org"}
    with pytest.raises(JobConfigError, match="contact"):
        job_from_mapping({**base, "contact": None})
    with pytest.raises(JobConfigError, match="did you mean 'min_delay'"):
        job_from_mapping({**base, "min_dealy": 1})
    with pytest.raises(JobConfigError, match="max_delay"):
        job_from_mapping({**base, "min_delay": 5, "max_delay": 1})
    with pytest.raises(JobConfigError, match=r"seeds\[0\]"):
        job_from_mapping({**base, "seeds": ["ftp//x"]})
    job = job_from_mapping({**base, "contact": ["https://x.org/bot", "a@b.org"]})
    assert job.user_agent.endswith("(+https://x.org/bot; a@b.org)")
    # a typo in a scope key, and a dedup_index that does not exist (it used to be
    # created empty, in another job's folder, or to fail with a traceback)
    with pytest.raises(JobConfigError, match=r"scope\.max_hop: .*did you mean 'max_hops'"):
        job_from_mapping({**base, "scope": {"max_hop": 2}})
    gone = tmp_path / "crawl-1" / "state" / "dedup.sqlite"
    for parent in (False, True):
        if parent:
            gone.parent.mkdir(parents=True)
        with pytest.raises(JobConfigError, match=r"dedup_index: .* is not a file"):
            job_from_mapping({**base, "dedup": True, "dedup_index": str(gone)})
    assert not gone.exists()


def test_cli_requires_contact(tmp_path: Path) -> None:
    r = CliRunner().invoke(crawl, ["--seed", "http://example.org/", "-o", str(tmp_path / "j")])
    assert r.exit_code == 2
    assert "contact" in r.output


def test_cli_job_file(sites: Any, tmp_path: Path) -> None:
    _a, b = sites
    (tmp_path / "job.yaml").write_text(
        f"seeds: ['{b.url('/')}']\njob_dir: out\ncontact: archive@example.org\n"
        "allow_private: true\nmin_delay: 0\nmax_delay: 0\n"
    )
    r = CliRunner().invoke(crawl, [str(tmp_path / "job.yaml"), "--no-progress"])
    assert r.exit_code == 0, r.output
    lines = read_crawl_log(tmp_path / "out" / "logs" / "crawl.log")
    assert len(lines) == 8  # robots.txt, /, 5 pages, 1 image


def _cli(*args: str) -> list[str]:
    code = "import sys; from webark.cli.crawl_cmds import crawl; crawl(sys.argv[1:])"
    return [sys.executable, "-c", code, *args]


def test_resume_after_kill(sites: Any, tmp_path: Path) -> None:
    a, b = sites
    ref = make_job(tmp_path / "ref", a, b)
    run(ref)
    want = set(warc_responses(ref.job_dir))

    jd = tmp_path / "killed"
    args = [
        "--seed", a.url("/"), "--seed", b.url("/"), "-o", str(jd),
        "--contact", "archive@example.org", "--allow-private",
        "--min-delay", str(MIN_DELAY), "--max-delay", "1", "--workers", "4", "--no-progress",
    ]  # fmt: skip
    # no retry or long back-off for the 500 page: keys of a job file, options override
    (tmp_path / "job.yaml").write_text("max_http_retries: 0\nbackoff_base: 0.1\n")
    proc = subprocess.Popen(_cli(str(tmp_path / "job.yaml"), *args), stderr=subprocess.PIPE)
    log = jd / "logs" / "crawl.log"
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if log.exists() and log.read_text().count("\n") >= 12:
            break
        time.sleep(0.01)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    before = read_crawl_log(log)
    assert 12 <= len(before) < len(want), "killed mid-crawl"
    assert any(n.endswith(".open") for n in os.listdir(jd / "warcs"))

    r = subprocess.run(_cli("--resume", str(jd), "--no-progress"), capture_output=True, timeout=60)
    assert r.returncode == 0, r.stderr.decode()
    assert set(warc_responses(jd)) == want
    final: dict[str, list[int]] = defaultdict(list)
    for ln in read_crawl_log(log):
        final[ln.uri].append(ln.status)
    assert set(final) == {ln.uri for ln in read_crawl_log(ref.logs_dir / "crawl.log")}
    for name in os.listdir(jd / "warcs"):
        assert not name.endswith(".open")
        if name.endswith(".warc.gz"):
            assert check_file(jd / "warcs" / name).ok, name
    assert (jd / "reports" / "crawl-report.txt").exists()


def test_robots_unreachable_is_prerequisite_failure(tmp_path: Path) -> None:
    pages = small_site()
    pages["/robots.txt"] = (503, (("Content-Type", "text/plain"),), b"busy")
    with TestSite(pages, host="127.0.0.3") as c:
        job = job_from_mapping(
            {"seeds": [c.url("/")], "job_dir": str(tmp_path / "j"), "contact": "a@b.org",
             "allow_private": True, "min_delay": 0, "max_delay": 0}
        )  # fmt: skip
        run(job)
        lines = {ln.uri: ln for ln in read_crawl_log(job.logs_dir / "crawl.log")}
        assert lines[c.url("/robots.txt")].status == 503
        assert lines[c.url("/robots.txt")].hop_path == "P"
        assert lines[c.url("/")].status == -61
        assert c.paths() == ["/robots.txt"]  # RFC 9309: unreachable → nothing fetched


def test_sigterm_stops_gracefully_then_resume(sites: Any, tmp_path: Path) -> None:
    a, _b = sites
    jd = tmp_path / "stopped"
    mark = len(a.snapshot())
    (tmp_path / "job.yaml").write_text(
        f"seeds: ['{a.url('/')}']\njob_dir: {jd}\ncontact: archive@example.org\n"
        "allow_private: true\nmin_delay: 0.05\nmax_delay: 0.05\n"
        "max_http_retries: 0\nbackoff_base: 0.1\n"
    )
    proc = subprocess.Popen(_cli(str(tmp_path / "job.yaml"), "--no-progress"))
    log = jd / "logs" / "crawl.log"
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if log.exists() and log.read_text().count("\n") >= 5:
            break
        time.sleep(0.01)
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=20) == 0
    report = json.loads((jd / "reports" / "crawl-report.json").read_text())
    assert report["stop_reason"] == "SIGTERM received"
    assert report["uris_queued"] > 0
    assert not [n for n in os.listdir(jd / "warcs") if n.endswith(".open")]
    first = report
    time.sleep(0.5)  # a pause between the stop and the resume: not crawl time
    r = subprocess.run(_cli("--resume", str(jd), "--no-progress"), capture_output=True, timeout=60)
    assert r.returncode == 0, r.stderr.decode()
    uris = [ln.uri for ln in read_crawl_log(log)]
    # a graceful stop loses nothing and fetches nothing twice (robots.txt included: the
    # robots cache is kept in state/robots.sqlite)
    assert len(uris) == len(set(uris))
    assert [h.path for h in hits_since(a, mark)].count("/robots.txt") == 1
    report = json.loads((jd / "reports" / "crawl-report.json").read_text())
    assert report["stop_reason"] == "finished" and report["uris_queued"] == 0
    # the report is the whole crawl's: its first start, both sessions' running time
    sessions = json.loads((jd / "state" / "sessions.json").read_text())
    assert len(sessions) == 2 and all(s["ended"] for s in sessions)
    assert report["started"] == first["started"]
    ran = sum(s["ended"] - s["started"] for s in sessions)
    assert abs(report["duration_s"] - ran) < 0.01
    assert report["duration_s"] > first["duration_s"]
    # resuming a finished crawl keeps those figures
    r = subprocess.run(_cli("--resume", str(jd), "--no-progress"), capture_output=True, timeout=60)
    assert r.returncode == 0, r.stderr.decode()
    again = json.loads((jd / "reports" / "crawl-report.json").read_text())
    assert again["started"] == first["started"]
    assert again["duration_s"] >= report["duration_s"]
    assert again["uris_processed"] == report["uris_processed"]


def test_dns_prerequisite_recorded(sites: Any, tmp_path: Path) -> None:
    _, b = sites
    seed = f"http://site-b.test:{b.port}/"
    job = job_from_mapping(
        {"seeds": [seed], "job_dir": str(tmp_path / "j"), "contact": "a@b.org",
         "allow_private": True, "min_delay": 0, "max_delay": 0,
         "resolve": {"site-b.test": "127.0.0.2"}}
    )  # fmt: skip
    summary = run(job)
    lines = read_crawl_log(job.logs_dir / "crawl.log")
    assert [ln.uri for ln in lines[:2]] == [
        "dns:site-b.test",
        f"http://site-b.test:{b.port}/robots.txt",
    ]
    dns = lines[0]
    assert dns.status == 1 and dns.hop_path == "P" and dns.via == seed
    assert dns.mime_type == "text/dns" and dns.digest and dns.extra["warcFilename"]
    assert len([ln for ln in lines if ln.uri.startswith("dns:")]) == 1
    assert "dns:site-b.test" in warc_responses(job.job_dir)
    assert all(check_file(p).ok for p in summary.warcs)


class _CountReport:
    """A report that is no subclass of anything: the Report protocol is structural."""

    name = "count"

    def render_text(self, snap: Any) -> str:
        return f"{snap.processed}\n"

    def to_json(self, snap: Any) -> Any:
        return {"processed": snap.processed, "hosts": sorted(snap.hosts)}


def test_custom_report_and_progress(sites: Any, tmp_path: Path) -> None:
    from webark.crawl.reports import Report

    _, b = sites
    assert isinstance(_CountReport(), Report)
    job = make_job(tmp_path, *sites, seeds=[b.url("/")], min_delay=0.05, max_delay=0.05)
    seen: list[Any] = []
    run(job, reports=(_CountReport(),), on_progress=seen.append, progress_interval=0.05)
    assert (job.reports_dir / "count-report.txt").read_text() == "8\n"
    assert json.loads((job.reports_dir / "count-report.json").read_text())["hosts"] == ["127.0.0.2"]
    assert len(seen) >= 3 and seen[-1].processed == 8 and seen[-1].ended is not None
    assert any(0 < s.processed < 8 and s.queued > 0 for s in seen)


def test_closed_output_pipe_does_not_stop_the_crawl(sites: Any, tmp_path: Path) -> None:
    """``webark crawl … 2>&1 | head -1``: the terminal output stops when the pipe
    closes, the crawl goes on to its end (it used to stop after two URIs, "the control
    API or the view failed"; found by a fresh-user trial)."""
    _a, b = sites
    proc = subprocess.Popen(
        [sys.executable, "-c", "from webark.cli.main import main; main()", "crawl",
         "--seed", b.url("/"), "-o", str(tmp_path / "job"), "--contact", "a@example.org",
         "--allow-private", "--min-delay", "0", "--max-delay", "0"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
    )  # fmt: skip
    assert proc.stdout is not None
    assert proc.stdout.readline().startswith(b"webark crawl")
    proc.stdout.close()  # as `head -1` does
    assert proc.wait(120) == 0
    lines = read_crawl_log(tmp_path / "job" / "logs" / "crawl.log")
    assert len(lines) == 8  # robots.txt, /, 5 pages, 1 image: the whole crawl
    report = json.loads((tmp_path / "job" / "reports" / "crawl-report.json").read_text())
    assert report["stop_reason"] == "finished"
