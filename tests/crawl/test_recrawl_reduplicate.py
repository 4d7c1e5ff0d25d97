"""``webark reduplicate`` on the crawler's own recrawls: a site crawled, recrawled with the
first crawl's dedup index (same-URL revisits) and a mirror host crawled with it
(URL-agnostic revisits), all served by this test on 127.0.0.10-11. Reduplicating the
recrawl and the mirror crawl gives WARCs without a revisit, whose payload digests all
verify (webark and warcio), and whose index alone has the captures of the deduplicated
harvest (URL key, time, status, payload digest)."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sites import TestSite, static_site
from webark.cdx.indexer import FileIndex
from webark.core.digests import same_digest
from webark.crawl.controller import CrawlController
from webark.crawl.job import CrawlJob, job_from_mapping
from webark.index.collection import Collection
from webark.tools.reduplicate import reduplicate
from webark.tools.reduplicate_harvest import select_harvest
from webark.warc.check import check_file
from webark.warc.reader import ArchiveReader

A, B = "www.redup-a.test", "redup-mirror.test"
IPS = {A: "127.0.0.10", B: "127.0.0.11"}


def _job(tmp: Path, name: str, seed: str, **over: Any) -> CrawlJob:
    cfg: dict[str, Any] = {
        "seeds": [seed], "job_dir": str(tmp / name), "contact": "archive@example.org",
        "allow_private": True, "resolve": IPS, "min_delay": 0, "max_delay": 0,
        "max_http_retries": 0, "backoff_base": 0.05,
    }  # fmt: skip
    cfg.update(over)
    return job_from_mapping(cfg)


def _warcs(j: CrawlJob) -> list[Path]:
    return sorted(Path(j.job_dir, "warcs").glob("*.warc.gz"))


def _captures(paths: list[Path]) -> Counter[tuple[str, str, str, str]]:
    out: Counter[tuple[str, str, str, str]] = Counter()
    for p in paths:
        for line in FileIndex(p):
            if line.record_type in ("response", "revisit"):
                digest = line.digest.removeprefix("sha1:")
                out[(line.urlkey, line.timestamp, line.status, digest)] += 1
    return out


@pytest.fixture(scope="module")
def harvests(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    tmp = tmp_path_factory.mktemp("redup-crawler")
    pages = static_site(n_pages=10, crawl_delay=None)
    pages.pop("/error.html")
    a = TestSite(pages, host=IPS[A]).start()
    b = TestSite(pages, host=IPS[B]).start()
    try:
        first = _job(tmp, "first", f"http://{A}:{a.port}/", dedup=True)
        asyncio.run(CrawlController(first).run())
        index = str(first.state_dir / "dedup.sqlite")
        second = _job(tmp, "second", f"http://{A}:{a.port}/", dedup_index=index)
        asyncio.run(CrawlController(second).run())
        mirror = _job(tmp, "mirror", f"http://{B}:{b.port}/", dedup_index=index)
        asyncio.run(CrawlController(mirror).run())
    finally:
        a.stop()
        b.stop()
    coll = Collection.init(tmp / "coll")
    added = list(coll.add([*_warcs(first), *_warcs(second), *_warcs(mirror)]))
    assert added and all(r.status == "indexed" for r in added), added
    out: dict[str, Any] = {"coll": coll}
    for j in (second, mirror):
        harvest = select_harvest(coll, job_dir=j.job_dir)
        report = reduplicate(coll, harvest, tmp / f"redup-{j.job_dir.name}")
        out[j.job_dir.name] = (j, harvest, report, tmp / f"redup-{j.job_dir.name}")
    yield out
    coll.close()


@pytest.mark.parametrize("name", ["second", "mirror"])
def test_reduplicated_crawler_harvest(harvests: dict[str, Any], name: str) -> None:
    j, harvest, report, outdir = harvests[name]
    revisits_in = [r for p in _warcs(j) for r in ArchiveReader(p) if r.type == "revisit"]
    assert len(revisits_in) >= 8  # the crawler did deduplicate this harvest
    if name == "mirror":  # URL-agnostic: every original is on the other host
        assert all(A in (r.headers.get("WARC-Refers-To-Target-URI") or "") for r in revisits_in)
    assert report.ok and report.total("revisits") == len(revisits_in)
    assert report.total("verified") == len(revisits_in)
    outputs = sorted(outdir.glob("*.warc.gz"))
    assert outputs
    payload_of = {}
    for p in outputs:
        recs = list(ArchiveReader(p))
        assert not [r for r in recs if r.type == "revisit"]
        rep = check_file(p)
        assert rep.ok and rep.digest_counts["mismatch"] == 0, rep.errors
        for r in recs:
            if r.type == "response":
                payload_of[r.headers.record_id] = r
    done = subprocess.run(
        [sys.executable, "-m", "warcio.cli", "check", *map(str, outputs)],
        capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    # each former revisit is now a response with its original's payload
    for rev in revisits_in:
        full = payload_of[rev.headers.record_id]
        assert same_digest(full.headers.payload_digest, rev.headers.payload_digest)
        assert full.headers.get("WARC-Refers-To-Target-URI") == rev.headers.get(
            "WARC-Refers-To-Target-URI"
        )
    # the output alone indexes to the same captures as the deduplicated harvest
    assert _captures(outputs) == _captures([h.path for h in harvest])
