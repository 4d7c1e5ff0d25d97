"""Crawl statistics and the eleven reports: from real Heritrix crawl.logs, from a real
frontier, and at the end of crawls of sites served on loopback."""

from __future__ import annotations

import asyncio
import json
import os
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from sites import TestSite, small_site, static_site
from webark.crawl.controller import CrawlController, CrawlSummary
from webark.crawl.curi import CrawlURI
from webark.crawl.frontier import Frontier, FrontierConfig
from webark.crawl.job import CrawlJob, job_from_mapping
from webark.crawl.reports import (
    DEFAULT_REPORTS,
    DedupReport,
    FrontierNonemptyReport,
    ProcessorsReport,
    Report,
    ToeThreadsReport,
    report_by_name,
)
from webark.crawl.stats import STAGES, CrawlStats, WorkerBoard, dedup_kind
from webark.crawllog import CrawlLogLine
from webark.crawllog.parse import iter_crawl_log, read_crawl_log
from webark.dedup.sqlite_dedup import open_index
from webark.warc.reader import ArchiveReader

HERITRIX_NAMES = {
    "crawl", "seeds", "hosts", "source", "mimetype", "responsecode", "processors",
    "frontier-summary", "frontier-nonempty", "threads",
}  # fmt: skip


def _stats_from_log(path: Path) -> CrawlStats:
    """Feed a crawl.log to CrawlStats the way a resumed crawl does."""
    stats = CrawlStats(job_name=path.stem)
    for _, line in iter_crawl_log(path):
        if isinstance(line, CrawlLogLine):
            stats.record(
                line.uri, line.status, line.size or 0, line.mime_type,
                seed=line.hop_path == "", source=line.source_tag,
                duplicate=any(a.startswith("duplicate:") for a in line.annotations),
                annotations=tuple(line.annotations),
            )  # fmt: skip
    return stats


def _raw_fields(path: Path) -> list[list[str]]:
    return [ln.split() for ln in path.read_text(encoding="utf-8").splitlines() if ln.strip()]


def test_reports_from_heritrix_dedup_crawl_log(corpus: Path) -> None:
    """Heritrix 1.12 crawl.log with DeDuplicator annotations: every count in the reports
    equals what the raw lines say."""
    path = corpus / "crawllog/netarchivesuite/crawl-9.log"
    raw = _raw_fields(path)
    snap = _stats_from_log(path).snapshot()
    assert snap.processed == len(raw) == 219

    codes = {r["code"]: r["urls"] for r in report_by_name("responsecode").to_json(snap)}  # type: ignore[union-attr]
    assert codes == dict(Counter(int(f[1]) for f in raw))

    ok = [f for f in raw if int(f[1]) > 0]
    mimes = {r["mime"]: (r["urls"], r["bytes"]) for r in report_by_name("mimetype").to_json(snap)}  # type: ignore[union-attr]
    want: dict[str, list[int]] = {}
    for f in ok:
        m = want.setdefault(f[6], [0, 0])
        m[0] += 1
        m[1] += int(f[2])
    assert mimes == {k: tuple(v) for k, v in want.items()}

    dup = [f for f in ok if "duplicate:" in f[11]]
    assert len(dup) == 122
    dedup = DedupReport().to_json(snap)
    # a crawl.log does not say the original's URL: Heritrix 1 hits count as "unknown"
    assert dedup["hits"]["unknown"] == 122 and dedup["total_hits"] == 122
    assert dedup["bytes_saved"]["unknown"] == sum(int(f[2]) for f in dup)
    assert dedup["novel_bytes"] == sum(int(f[2]) for f in ok) - dedup["total_bytes_saved"]
    summary = report_by_name("crawl").to_json(snap)  # type: ignore[union-attr]
    assert summary["duplicate_by_hash"] == 122
    assert summary["total_bytes"] == sum(int(f[2]) for f in ok)

    hosts = report_by_name("hosts").to_json(snap)  # type: ignore[union-attr]
    assert sum(h["urls"] for h in hosts) == len(raw)
    www = next(h for h in hosts if h["host"] == "www.netarkivet.dk")
    www_lines = [f for f in raw if f[3].startswith("http://www.netarkivet.dk/")]
    assert www["urls"] == len(www_lines)
    assert www["duplicates"] == sum(1 for f in www_lines if "duplicate:" in f[11])
    # dns: lookups have their own row "dns:", as in Heritrix's hosts reports
    dns = next(h for h in hosts if h["host"] == "dns:")
    assert summary["hosts_visited"] == len(hosts) - 1  # Heritrix counts no "dns:" host
    assert dns["urls"] == sum(1 for f in raw if f[3].startswith("dns:")) > 0
    text = report_by_name("hosts").render_text(snap).splitlines()  # type: ignore[union-attr]
    assert text[0] == ("[#urls] [#bytes] [host] [#robots] [#remaining] [#novel-urls] "
                       "[#novel-bytes] [#dup-by-hash-urls] [#dup-by-hash-bytes] "
                       "[#not-modified-urls] [#not-modified-bytes]")  # fmt: skip
    row = next(ln.split() for ln in text if ln.split()[2] == "www.netarkivet.dk")
    assert row[3:5] == ["0", "0"] and int(row[5]) + int(row[7]) + int(row[9]) <= int(row[0])


def test_every_report_renders_text_and_json(corpus: Path) -> None:
    path = corpus / "crawllog/ukwa/h3-crawl.log"
    snap = _stats_from_log(path).snapshot()
    names = [r.name for r in DEFAULT_REPORTS]
    assert set(names) >= HERITRIX_NAMES and "dedup" in names and len(names) == 11
    for rep in DEFAULT_REPORTS:
        assert isinstance(rep, Report)
        text = rep.render_text(snap)
        assert text.endswith("\n") and text.strip()
        json.dumps(rep.to_json(snap))  # JSON-serializable as is
    assert FrontierNonemptyReport().render_text(snap) == "frontier unstarted\n"
    robots = {r["code"]: r["urls"] for r in report_by_name("responsecode").to_json(snap)}  # type: ignore[union-attr]
    assert robots[-9998] == sum(1 for f in _raw_fields(path) if f[1] == "-9998")
    assert report_by_name("threads-report.txt") is not None
    assert report_by_name("frontier-nonempty-report.json") is not None
    assert report_by_name("nope") is None


def test_dedup_kind() -> None:
    assert dedup_kind("http://example.com/a", "http://example.com/a") == "exact-url"
    # same CDX URL key (www dropped, query sorted) but another string
    assert dedup_kind("http://www.example.com/a?b=1&a=2", "http://example.com/a?a=2&b=1") == (
        "canonical-url"
    )
    assert dedup_kind("http://example.com/a", "http://example.com/b") == "digest-only"
    assert dedup_kind("http://example.com/a", "not a url") == "digest-only"


def test_not_modified_counted_apart_from_digest_duplicates() -> None:
    s = CrawlStats()
    s.note_revisit("http://a.example/x", "http://b.example/x")
    s.record("http://a.example/x", 200, 100, "text/html", duplicate=True,
             annotations=("duplicate:digest",))  # fmt: skip
    s.record("http://a.example/y", 304, 0, "text/html", duplicate=True,
             annotations=("duplicate:server-not-modified",))  # fmt: skip
    s.record("http://a.example/z", 200, 50, "text/html")
    snap = s.snapshot()
    d = DedupReport().to_json(snap)
    assert d["hits"] == {"exact-url": 0, "canonical-url": 0, "digest-only": 1, "unknown": 0,
                         "server-not-modified": 1}  # fmt: skip
    assert d["bytes_saved"]["digest-only"] == 100
    assert (snap.duplicates, snap.not_modified, snap.novel_bytes) == (1, 1, 50)
    assert snap.hosts["a.example"].not_modified == 1
    again = CrawlStats.from_json(json.loads(json.dumps(s.to_json())))
    assert again.dedup_hits == s.dedup_hits and again.not_modified == 1


class _Clock:
    def __init__(self, t: float) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t


def test_worker_board_and_frontier_nonempty(tmp_path: Path) -> None:
    """A real frontier with a fake clock: the report gives each non-empty queue's size,
    next-ready time, the delay set after its last fetch and the URI in flight."""
    clock = _Clock(1_700_000_000.0)
    cfg = FrontierConfig(delay_factor=5.0, min_delay=1.0, max_delay=30.0)
    board = WorkerBoard(wall=clock, mono=clock)
    stats = CrawlStats(board=board)
    with Frontier.open(tmp_path / "f.sqlite", cfg, clock=clock) as f:
        f.add_many([CrawlURI(f"http://a.example/{i}") for i in range(3)]
                   + [CrawlURI(f"http://b.example/{i}") for i in range(2)])  # fmt: skip
        a0 = f.next_ready()
        b0 = f.next_ready()
        assert a0 is not None and b0 is not None and a0.key == "a.example"
        board.begin(1, a0)
        board.begin(2, b0)
        clock.t += 0.5
        board.stage(1, "fetchHttp")
        clock.t += 2.0  # a0 took 2 s to fetch: delay 5 × 2 = 10 s
        board.stage(1, "candidates", 7)
        clock.t += 0.25
        f.finished(a0, 200, 2.0)
        board.end(1)
        snap = stats.snapshot(f.stats(top=10), now=clock.t)

    threads = ToeThreadsReport().to_json(snap)
    assert threads["busy"] == 1 and threads["stages"] == {"idle": 1, "preconditions": 1}
    (w2,) = [w for w in threads["threads"] if w["worker"] == 2]
    assert w2["uri"] == "http://b.example/0" and w2["stage_s"] == 2.75
    procs = {p["processor"]: p for p in ProcessorsReport().to_json(snap)}
    assert [p for p in procs] == list(STAGES)
    assert procs["preconditions"]["uris_handled"] == 2
    assert procs["fetchHttp"]["seconds"] == 2.0
    assert procs["candidates"]["items"] == 7 and procs["candidates"]["seconds"] == 0.25

    nonempty = FrontierNonemptyReport().to_json(snap)
    assert nonempty["nonempty_queues"] == 2
    qa, qb = sorted(nonempty["queues"], key=lambda q: q["queue"])
    assert (qa["queue"], qa["queued"], qa["finished"]) == ("a.example", 2, 1)
    assert qa["state"] == "snoozed"
    assert qa["delay_s"] == 10.0 and qa["wakes_in_s"] == 10.0
    assert qa["in_flight_uri"] is None
    assert (qb["queued"], qb["state"], qb["in_flight_uri"]) == (1, "in-flight", "http://b.example/0")
    assert qb["in_flight_stage"] == "preconditions" and qb["delay_s"] is None
    text = FrontierNonemptyReport().render_text(snap)
    assert "Queue a.example (snoozed)" in text and "wakes in 10.0 s" in text


# --- at the end of real crawls ----------------------------------------------------------


def _job(tmp: Path, seeds: list[str], **over: Any) -> CrawlJob:
    cfg: dict[str, Any] = {
        "seeds": seeds, "job_dir": str(tmp), "contact": "archive@example.org",
        "allow_private": True, "min_delay": 0.0, "max_delay": 0.0, "workers": 4,
        "max_http_retries": 0, "backoff_base": 0.1,
    }  # fmt: skip
    cfg.update(over)
    return job_from_mapping(cfg)


def _run(job: CrawlJob, **kw: Any) -> CrawlSummary:
    return asyncio.run(CrawlController(job, **kw).run())


def _revisits(job_dir: Path) -> list[tuple[str, str]]:
    out = []
    for name in sorted(os.listdir(job_dir / "warcs")):
        for rec in ArchiveReader(str(job_dir / "warcs" / name)):
            if rec.type == "revisit":
                out.append((rec.headers.target_uri or "", rec.headers.refers_to_target_uri or ""))
    return out


def _responses(job_dir: Path) -> list[str]:
    return [
        rec.headers.target_uri or ""
        for name in sorted(os.listdir(job_dir / "warcs"))
        for rec in ArchiveReader(str(job_dir / "warcs" / name))
        if rec.type == "response"
    ]


def test_dedup_report_exact_url_and_digest_only(tmp_path: Path) -> None:
    """Two hosts serve identical files; b is crawled, then c, then b again, with one
    dedup index. The dedup report's split matches the revisit records'
    WARC-Refers-To-Target-URI. (b and c are crawled one after the other: crawled at
    once, which of them stores a shared body first is a race.)"""
    with (
        TestSite(small_site(), host="127.0.0.2") as b,
        TestSite(small_site(), host="127.0.0.4") as c,
    ):
        index = open_index(tmp_path / "dedup.sqlite", commit_every=1)
        try:
            first = _run(_job(tmp_path / "one", [b.url("/")]), dedup=index)
            mirror = _run(_job(tmp_path / "mirror", [c.url("/")]), dedup=index)
            second = _run(_job(tmp_path / "two", [b.url("/")]), dedup=index)
        finally:
            index.close()
    jobs = ((tmp_path / "one", first), (tmp_path / "mirror", mirror), (tmp_path / "two", second))
    for job_dir, summary in jobs:
        revisits = _revisits(job_dir)
        rep = json.loads((job_dir / "reports" / "dedup-report.json").read_text())
        exact = sum(1 for uri, orig in revisits if uri == orig)
        assert rep["hits"]["exact-url"] == exact
        assert rep["hits"]["digest-only"] == len(revisits) - exact
        assert rep["total_hits"] == len(revisits) == summary.snapshot.duplicates
        lines = read_crawl_log(job_dir / "logs" / "crawl.log")
        dup_lines = [ln for ln in lines if "duplicate:digest" in ln.annotations]
        assert len(dup_lines) == len(revisits)
        assert rep["total_bytes_saved"] == sum(ln.size or 0 for ln in dup_lines)
    # first crawl: b's 5 pages share a body: digest-only hits, none exact-URL
    rep1 = json.loads((tmp_path / "one/reports/dedup-report.json").read_text())
    assert rep1["hits"]["exact-url"] == 0 and rep1["hits"]["digest-only"] >= 4
    # the mirror repeats all of b's files under other URLs: digest-only, every 200
    repm = json.loads((tmp_path / "mirror/reports/dedup-report.json").read_text())
    okm = [ln for ln in read_crawl_log(tmp_path / "mirror/logs/crawl.log") if ln.status == 200]
    assert repm["hits"]["exact-url"] == 0 and repm["hits"]["digest-only"] == len(okm)
    # recrawl of b: every 200 is a revisit; of an exact-URL original where the first
    # crawl stored this URL itself (the index prefers an exact-URL original)
    rep2 = json.loads((tmp_path / "two/reports/dedup-report.json").read_text())
    ok200 = [ln for ln in read_crawl_log(tmp_path / "two/logs/crawl.log") if ln.status == 200]
    assert rep2["total_hits"] == len(ok200) == 7
    stored_b = {uri for uri in _responses(tmp_path / "one") if uri.startswith(b.origin)}
    assert rep2["hits"]["exact-url"] == len(stored_b - {b.url("/robots.txt")}) >= 1


def test_end_of_crawl_reports_with_queued_uris(tmp_path: Path) -> None:
    """A crawl stopped by max_uris leaves URIs queued: frontier-nonempty lists the queue
    with the size the frontier itself reports; threads shows every worker idle; the
    processors report counts each URI taken once."""
    with TestSite(static_site(crawl_delay=None), host="127.0.0.1") as a:
        job = _job(tmp_path / "j", [a.url("/")], max_uris=6, workers=1)
        summary = _run(job)
    names = {p.name for p in summary.reports}
    for r in DEFAULT_REPORTS:
        assert f"{r.name}-report.txt" in names and f"{r.name}-report.json" in names
    rdir = job.reports_dir
    nonempty = json.loads((rdir / "frontier-nonempty-report.json").read_text())
    with Frontier.open(job.state_dir / "frontier.sqlite") as f:
        fs = f.stats(top=100)
    (q,) = nonempty["queues"]
    assert q["queue"] == f"127.0.0.1:{a.port}"
    assert q["queued"] == fs.queued == summary.snapshot.queued > 0
    assert q["state"] in ("ready", "snoozed") and q["in_flight_uri"] is None
    assert f"Queue 127.0.0.1:{a.port}" in (rdir / "frontier-nonempty-report.txt").read_text()

    threads = json.loads((rdir / "threads-report.json").read_text())
    assert threads["busy"] == 0 and [t["stage"] for t in threads["threads"]] == ["idle"]

    lines = read_crawl_log(job.logs_dir / "crawl.log")
    taken = [ln for ln in lines if not ln.hop_path.endswith("P")]
    procs = {p["processor"]: p for p in json.loads((rdir / "processors-report.json").read_text())}
    assert procs["preconditions"]["uris_handled"] == len(taken)
    assert procs["fetchHttp"]["uris_handled"] == len(taken)
    assert procs["disposition"]["uris_handled"] == len(taken)
    assert "Processor: fetchHttp" in (rdir / "processors-report.txt").read_text()


@pytest.mark.parametrize("name", sorted(HERITRIX_NAMES | {"dedup"}))
def test_report_names_match_heritrix_files(name: str) -> None:
    rep = report_by_name(name)
    assert rep is not None and rep.name == name
