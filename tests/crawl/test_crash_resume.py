"""Crash test of the whole crawler: ``webark crawl`` (a subprocess) killed with SIGKILL
at 20 random moments and resumed each time with ``webark crawl --resume JOBDIR``.

The site (two host names mapped to 127.0.0.5 and 127.0.0.6 by ``resolve``, about 290
URIs): a tree of pages, shared images, redirects, 404s, a page answering 503 once, and
pages with identical bodies (dedup revisits). An uninterrupted crawl of the same site
(another job, run at the same time; the servers tell the two apart by the ``From``
header) is the reference. In the end (issue 4, "Done means"):

* the set of captured URIs (WARC response and revisit records) is the reference's;
* every WARC passes ``webark warc check`` and ``warcio check``; no ``.open`` file is
  left;
* crawl.log has exactly one final line per URI, the reference's URIs;
* the servers saw each URI once, except URIs in flight at a kill (read from the
  frontier after each kill) and the robots.txt fetched for them when the kill came
  before it was saved; the 503 page twice.

The kill moments come from a seeded RNG (``WEBARK_CRASH_SEED`` to vary them).
"""

from __future__ import annotations

import contextlib
import os
import random
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

from sites import HTML, PNG, PNG_BYTES, TEXT, Hit, Page, TestSite, html
from webark.crawllog.parse import read_crawl_log
from webark.warc.reader import ArchiveReader

KILLS = 20
HOSTS = {"www.crash-a.test": "127.0.0.5", "crash-b.test": "127.0.0.6"}
N_PAGES = {"www.crash-a.test": 180, "crash-b.test": 130}
BIN = Path(sys.executable).parent


def tree_site(n: int) -> dict[str, Page]:
    """Page i links to pages 2i and 2i+1 (a binary tree of ``n`` pages, 8 levels),
    embeds one of 12 images, every 20th links a redirect and a missing page; pages
    divisible by 7 have identical bodies."""
    pages: dict[str, Page] = {
        "/robots.txt": (200, TEXT, b"User-agent: *\nDisallow: /private/\n"),
        "/": (200, HTML, html('<a href="/t/1.html">start</a><a href="/once.html">once</a>')),
        "/once.html": (200, HTML, html("served after one 503")),
    }
    for i in range(1, n + 1):
        if i % 7 == 0:
            body = '<img src="/img/0.png"><a href="/">home</a>'
        else:
            kids = "".join(f'<a href="/t/{k}.html">t{k}</a>' for k in (2 * i, 2 * i + 1) if k <= n)
            body = f'<img src="/img/{i % 12}.png">{kids}'
            if i % 20 == 0:
                body += f'<a href="/go/{i}">go</a><a href="/gone/{i}.html">gone</a>'
                body += f'<a href="/private/{i}.html">private</a>'
                pages[f"/go/{i}"] = (302, (("Location", f"/moved/{i}.html"), *HTML), b"")
                pages[f"/moved/{i}.html"] = (200, HTML, html(f"moved {i}"))
        pages[f"/t/{i}.html"] = (200, HTML, html(body))
    for k in range(12):
        pages[f"/img/{k}.png"] = (200, PNG, PNG_BYTES + bytes([k]))
    return pages


class OnceBusy:
    """``/once.html`` answers 503 (Retry-After 0) to the first request of each crawl
    (told apart by the ``From`` header), then 200."""

    def __init__(self) -> None:
        self.seen: set[str] = set()
        self.lock = threading.Lock()

    def __call__(self, path: str, headers: Mapping[str, str]) -> Page | None:
        if path != "/once.html":
            return None
        with self.lock:
            first = headers.get("from", "") not in self.seen
            self.seen.add(headers.get("from", ""))
        return (503, (("Retry-After", "0"), *TEXT), b"busy") if first else None


@pytest.fixture(scope="module")
def servers() -> Iterator[dict[str, TestSite]]:
    out = {
        host: TestSite(tree_site(N_PAGES[host]), host=ip, delay=0.03, handler=OnceBusy()).start()
        for host, ip in HOSTS.items()
    }
    yield out
    for s in out.values():
        s.stop()


def job_yaml(path: Path, job_dir: Path, contact: str, sites: dict[str, TestSite]) -> Path:
    seeds = "".join(f"\n  - http://{h}:{s.port}/" for h, s in sites.items())
    resolve = "".join(f"\n  {h}: {ip}" for h, ip in HOSTS.items())
    path.write_text(
        f"seeds:{seeds}\njob_dir: {job_dir}\ncontact: {contact}\nallow_private: true\n"
        f"resolve:{resolve}\n"
        "min_delay: 0.01\nmax_delay: 0.05\ndelay_factor: 1.0\nworkers: 4\ndedup: true\n"
        "max_http_retries: 2\nbackoff_base: 0.05\nretry_delay: 0.1\nmax_retries: 3\n"
    )
    return path


def crawl_cmd(*args: str) -> list[str]:
    return [str(BIN / "webark"), "crawl", "--no-progress", *args]


def captured(job_dir: Path) -> set[str]:
    out: set[str] = set()
    for name in sorted(os.listdir(job_dir / "warcs")):
        if name.endswith(".warc.gz"):
            for rec in ArchiveReader(str(job_dir / "warcs" / name)):
                if rec.type in ("response", "revisit"):
                    out.add(rec.headers.target_uri or "")
    return out


def in_flight(job_dir: Path) -> set[str]:
    """URIs the frontier has in flight (after a kill): they may be fetched again."""
    db = job_dir / "state" / "frontier.sqlite"
    if not db.exists():
        return set()
    con = sqlite3.connect(db)
    try:
        with contextlib.suppress(sqlite3.OperationalError):  # killed before the schema
            return {r[0] for r in con.execute("SELECT uri FROM uris WHERE state = 1")}
        return set()
    finally:
        con.close()


def robots_saved(job_dir: Path) -> int:
    db = job_dir / "state" / "robots.sqlite"
    if not db.exists():
        return 0
    con = sqlite3.connect(db)
    try:
        with contextlib.suppress(sqlite3.OperationalError):
            return int(con.execute("SELECT count(*) FROM robots").fetchone()[0])
        return 0
    finally:
        con.close()


def hits_of(sites: dict[str, TestSite], contact: str) -> Counter[str]:
    out: Counter[str] = Counter()
    for host, site in sites.items():
        h: Hit
        for h in site.snapshot():
            if h.headers.get("from") == contact:
                out[f"http://{host}:{site.port}{h.path}"] += 1
    return out


def unexplained_repeats(hits: Counter[str], may_repeat: set[str], robots_unsaved: bool) -> set[str]:
    """URIs the servers answered more than once (``/once.html``, a 503 then a 200,
    aside) that were not in flight at a kill; robots.txt too when a kill came before it
    was saved (then it is fetched again, as documented)."""
    twice = {u for u, n in hits.items() if n > 1 and not u.endswith("/once.html")}
    out = {u for u in twice if u not in may_repeat}
    if robots_unsaved:
        out = {u for u in out if not u.endswith("/robots.txt")}
    return out


def wait_for_log_growth(p: subprocess.Popen[bytes], log: Path, before: int) -> None:
    """Until the run ``p`` has written past ``before`` bytes of crawl.log (mid-crawl),
    it has exited, or 30 s have passed."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and p.poll() is None:
        if log.exists() and log.stat().st_size > before:
            break
        time.sleep(0.005)


def kill_9(p: subprocess.Popen[bytes], kill: int) -> None:
    """SIGKILL the run ``p`` (kill number ``kill``, from 1); a run that already ended
    fails the test, with its stderr."""
    if p.poll() is not None:
        err = p.stderr.read().decode() if p.stderr else ""
        pytest.fail(f"crawl ended before kill {kill} (exit {p.returncode}): {err}")
    p.send_signal(signal.SIGKILL)
    p.wait()
    if p.stderr:
        p.stderr.close()


def test_sigkill_20_times_then_resume(servers: dict[str, TestSite], tmp_path: Path) -> None:
    ref_dir, jd = tmp_path / "ref", tmp_path / "killed"
    ref_yaml = job_yaml(tmp_path / "ref.yaml", ref_dir, "ref@example.org", servers)
    reference = subprocess.Popen(crawl_cmd(str(ref_yaml)), stderr=subprocess.PIPE)

    rng = random.Random(int(os.environ.get("WEBARK_CRASH_SEED", "20261130")))
    yaml = job_yaml(tmp_path / "job.yaml", jd, "crash@example.org", servers)
    may_repeat: set[str] = set()
    robots_unsaved_at_kill = False
    kills = 0
    progress: list[int] = []
    log = jd / "logs" / "crawl.log"
    for _ in range(KILLS):
        resumable = (jd / "state" / "job.json").exists()
        argv = crawl_cmd("--resume", str(jd)) if resumable else crawl_cmd(str(yaml))
        before = log.stat().st_size if log.exists() else 0
        p = subprocess.Popen(argv, stderr=subprocess.PIPE)
        if rng.random() < 0.25:  # anywhere, start-up (imports, WARC repair …) included
            time.sleep(rng.uniform(0.0, 1.5))
        else:  # once the run has logged something (start-up takes ~1 s): mid-crawl
            wait_for_log_growth(p, log, before)
            time.sleep(rng.uniform(0.0, 0.3))
        kill_9(p, kills + 1)
        kills += 1
        may_repeat |= in_flight(jd)
        robots_unsaved_at_kill |= robots_saved(jd) < len(HOSTS)
        progress.append(log.read_bytes().count(b"\n") if log.exists() else 0)
    assert kills == KILLS
    assert len(set(progress)) > KILLS // 2, f"too few kills came mid-crawl: {progress}"
    print(f"\ncrawl.log lines at each kill: {progress}; URIs in flight at kills: {len(may_repeat)}")
    done = subprocess.run(crawl_cmd("--resume", str(jd)), capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr.decode()[-3000:]
    _, ref_err = reference.communicate(timeout=120)
    assert reference.returncode == 0, ref_err.decode()[-3000:]

    # the same captures as the uninterrupted crawl
    want = captured(ref_dir)
    print(f"captured URIs: {len(want)}")
    assert len(want) >= 260  # 278: pages, images, redirects, 404s, robots.txt, dns:
    assert captured(jd) == want

    # every WARC valid for webark and for warcio; none left open
    warcs = sorted(str(jd / "warcs" / n) for n in os.listdir(jd / "warcs"))
    assert not [w for w in warcs if w.endswith(".open")]
    files = [w for w in warcs if w.endswith(".warc.gz")]
    assert len(files) > 1  # runs that got as far as writing wrote their own file
    check = subprocess.run([str(BIN / "webark"), "warc", "check", *files], capture_output=True)
    assert check.returncode == 0, check.stdout.decode()[-3000:]
    wcheck = subprocess.run([str(BIN / "warcio"), "check", *files], capture_output=True)
    assert wcheck.returncode == 0, (wcheck.stdout + wcheck.stderr).decode()[-3000:]

    # exactly one final crawl.log line per URI, and the reference's URIs
    lines = read_crawl_log(jd / "logs" / "crawl.log")
    per_uri = Counter(ln.uri for ln in lines)
    assert [u for u, n in per_uri.items() if n > 1] == []
    ref_lines = read_crawl_log(ref_dir / "logs" / "crawl.log")
    assert set(per_uri) == {ln.uri for ln in ref_lines}
    final = {ln.uri: ln.status for ln in lines}
    assert final == {ln.uri: ln.status for ln in ref_lines}

    # nothing fetched twice except URIs in flight at a kill (and their robots.txt)
    hits = hits_of(servers, "crash@example.org")
    assert set(hits) == {u for u in want if u.startswith("http")}
    assert unexplained_repeats(hits, may_repeat, robots_unsaved_at_kill) == set()
    for u in [u for u in hits if u.endswith("/once.html")]:  # a 503, then a 200
        assert (2 <= hits[u] <= 2 + kills) if u in may_repeat else hits[u] == 2, u
    assert may_repeat, "the kills hit URIs in flight"


def test_resume_repairs_the_kill_windows(servers: dict[str, TestSite], tmp_path: Path) -> None:
    """The windows a kill can hit between two files, made on purpose after a finished
    crawl: (1) the last crawl.log line written, the frontier not told (the URI is still
    in flight); (2) robots.txt logged but not saved in state/robots.sqlite, and a URI
    of that host fetched but not logged (in flight); (3) a torn last line. The resumed
    crawl fetches (1) not again, fetches the URI of (2) but reads its robots.txt back
    from the WARC record its line points at (neither fetched nor logged again), and
    cuts (3)."""
    import asyncio

    from webark.crawl.controller import CrawlController
    from webark.crawl.job import job_from_mapping

    host, site = "crash-b.test", servers["crash-b.test"]
    jd = tmp_path / "job"
    cfg = {
        "seeds": [f"http://{host}:{site.port}/"], "job_dir": str(jd),
        "contact": "windows@example.org", "allow_private": True, "resolve": HOSTS,
        "min_delay": 0, "max_delay": 0, "max_http_retries": 2, "backoff_base": 0.01,
        "scope": {"max_hops": 3},
    }  # fmt: skip
    job = job_from_mapping(cfg)
    asyncio.run(CrawlController(job).run())
    log = jd / "logs" / "crawl.log"
    before = read_crawl_log(log)
    last = before[-1].uri
    assert last.startswith("http") and not last.endswith("/robots.txt")
    # (0) another URI was fetched but not logged (killed in flight before its line)
    other = next(ln.uri for ln in before if ln.uri.endswith("/t/2.html"))
    kept = [ln for ln in log.read_text().splitlines() if ln.split()[3] != other]
    log.write_text("".join(ln + "\n" for ln in kept))
    con = sqlite3.connect(jd / "state" / "frontier.sqlite")
    uid, qid = con.execute("SELECT id, qid FROM uris WHERE uri = ?", (last,)).fetchone()
    con.execute("UPDATE uris SET state = 1, status = NULL WHERE id = ?", (uid,))
    con.execute("UPDATE queues SET inflight = ?, finished = finished - 1 WHERE qid = ?", (uid, qid))
    con.execute("UPDATE uris SET state = 0, status = NULL WHERE uri = ?", (other,))
    con.execute("UPDATE queues SET queued = 1, finished = finished - 1 WHERE qid = ?", (qid,))
    con.commit()
    con.close()
    # robots.txt is needed again for `other`: its entry was "not saved"
    con = sqlite3.connect(jd / "state" / "robots.sqlite")
    assert con.execute("DELETE FROM robots").rowcount == 1
    con.commit()
    con.close()
    with open(log, "ab") as f:
        f.write(b"2026-11-30T05:00:00.000Z   200       1234 http://crash-b.test/torn")

    hits = hits_of(servers, "windows@example.org")
    resumed = CrawlController(job_from_mapping(cfg), resume=True)
    summary = asyncio.run(resumed.run())
    assert summary.stop_reason == "finished"
    after = read_crawl_log(log)
    assert Counter(ln.uri for ln in after) == Counter(ln.uri for ln in before)  # once each
    assert after[-1].uri == other and b"/torn" not in log.read_bytes()
    new_hits = hits_of(servers, "windows@example.org") - hits
    assert new_hits == Counter({other: 1})
    con = sqlite3.connect(jd / "state" / "frontier.sqlite")
    assert con.execute("SELECT state FROM uris WHERE uri = ?", (last,)).fetchone() == (2,)
    con.close()
    assert summary.snapshot.processed == len(after)
