"""Changes to a running ``webark crawl`` through its control API (webark.crawl.live):
reject rules that purge the frontier, deleteURIs, seeds fetched first, per-host delays
and quotas, all kept across ``--resume``. A real CLI process crawls a site served on
127.0.0.1 with a crawler trap (``/cal?d=N`` links to five more days, a tree)."""

from __future__ import annotations

import json
import re
import sqlite3
import subprocess
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from test_control import TOL, Crawl, _args, _cli, _gaps, _wait

from sites import HTML, Page, TestSite, html
from webark.crawllog.parse import read_crawl_log

CHAIN = 15


def _trap(path: str, headers: Mapping[str, str]) -> Page | None:
    m = re.fullmatch(r"/cal\?d=(\d+)", path)
    if m is None:
        return None
    d = int(m.group(1))
    links = "".join(f'<a href="/cal?d={5 * d + i}">day</a>' for i in range(1, 6))
    return 200, HTML, html(links)


def trap_site() -> dict[str, Page]:
    """``/`` → the calendar trap and a chain ``/p/1`` → ``/p/2`` … (each page also links
    to a calendar day of its own, ``/cal?d=1000+i``); ``/extra.html`` is linked from
    nowhere (a seed added while running)."""
    pages: dict[str, Page] = {
        "/": (200, HTML, html('<a href="/cal?d=0">calendar</a><a href="/p/1">p1</a>')),
        "/extra.html": (200, HTML, html("added by the operator")),
    }
    for i in range(1, CHAIN + 1):
        nxt = f'<a href="/p/{i + 1}">next</a>' if i < CHAIN else ""
        pages[f"/p/{i}"] = (200, HTML, html(f'{nxt}<a href="/cal?d={1000 + i}">day</a>'))
    return pages


@pytest.fixture()
def site() -> Iterator[TestSite]:
    s = TestSite(trap_site(), host="127.0.0.1", handler=_trap).start()
    yield s
    s.stop()


def _queued(jd: Path, like: str = "%") -> list[str]:
    """The URIs queued in the crawl's frontier (read-only, beside the running crawl)."""
    db = sqlite3.connect(f"file:{jd / 'state' / 'frontier.sqlite'}?mode=ro", uri=True)
    try:
        rows = db.execute("SELECT uri FROM uris WHERE state = 0 AND uri LIKE ?", (like,))
        return sorted(r[0] for r in rows)
    finally:
        db.close()


def _lines(jd: Path) -> list[Any]:
    return read_crawl_log(jd / "logs" / "crawl.log")


def _cal_hits(site: TestSite, since: int = 0) -> list[str]:
    return [h.path for h in site.snapshot()[since:] if h.path.startswith("/cal")]


def _resume(jd: Path) -> None:
    r = subprocess.run(_cli("--resume", str(jd), "--quiet"), capture_output=True, timeout=90)
    assert r.returncode == 0, r.stderr.decode()


def test_reject_rule_purges_trap_seed_first_kept_on_resume(site: TestSite, tmp_path: Path) -> None:
    jd = tmp_path / "job"
    crawl = Crawl(jd, *_args(jd, site.url("/"), 0.05))
    _wait(lambda: len(_cal_hits(site)) >= 4, "the trap's pages", timeout=30)
    crawl.client.post("/pause")
    crawl.wait_state("PAUSED")
    queued_cal = _queued(jd, "%/cal?d=%")
    assert len(queued_cal) >= 8, queued_cal
    hosts = crawl.client.get("/reports/hosts?format=json").json()  # Heritrix's #remaining
    assert [(h["host"], h["remaining"]) for h in hosts] == [("127.0.0.1", len(_queued(jd)))]

    # a bad rule is refused and changes nothing
    bad = crawl.client.post("/scope/reject", json={"kind": "regex", "value": "(["})
    assert bad.status_code == 400 and "regex" in bad.json()["error"]
    assert crawl.client.post("/scope/reject", json={"kind": "x", "value": "a"}).status_code == 400

    r = crawl.client.post("/scope/reject", json={"kind": "regex", "value": r".*/cal\?d=\d+"})
    assert r.status_code == 200, r.text
    got = r.json()
    assert got["purged"] == len(queued_cal)
    assert got["rules"]["regex"] == [r".*/cal\?d=\d+"]
    assert _queued(jd, "%/cal?d=%") == []
    assert crawl.client.get("/scope").json() == got["rules"]
    purged_lines = [ln for ln in _lines(jd) if ln.status == -5000]
    assert sorted(ln.uri for ln in purged_lines) == queued_cal  # one -5000 line each
    assert all(ln.hop_path and ln.hop_path.endswith("L") for ln in purged_lines)
    alerts = (jd / "logs" / "alerts.log").read_text()  # the change and its count
    rule = repr(r".*/cal\?d=\d+")
    assert f"reject rule regex {rule} added: {len(queued_cal)} queued URI(s) purged" in alerts

    # a seed added while running is fetched next, before what was queued
    assert _queued(jd), "the chain should still be queued"
    mark = len(site.snapshot())
    r = crawl.client.post("/seeds", json={"seeds": [site.url("/extra.html")]})
    assert r.json()["added"] == [site.url("/extra.html")]
    assert crawl.client.post("/resume").json()["state"] == "RUNNING"
    _wait(lambda: len(site.snapshot()) > mark, "a fetch after resume")
    assert site.snapshot()[mark].path == "/extra.html"
    _wait(lambda: len(site.snapshot()) > mark + 2, "two more fetches")
    assert _cal_hits(site, mark) == [], "the trap was fetched after the reject rule"

    crawl.client.post("/stop")
    crawl.finish()
    saved = json.loads((jd / "state" / "job.json").read_text())
    assert saved["scope"]["reject_regex"] == [r".*/cal\?d=\d+"]
    left = _queued(jd)
    assert any("/p/" in u for u in left), "the chain should still be unfinished"

    _resume(jd)  # the chain's pages link to new calendar days: the rule still holds
    assert _cal_hits(site, mark) == []
    assert {site.url(f"/p/{i}") for i in range(1, CHAIN + 1)} <= {ln.uri for ln in _lines(jd)}
    uris = [ln.uri for ln in _lines(jd)]
    assert len(uris) == len(set(uris)), "nothing logged twice"
    final = json.loads((jd / "reports" / "crawl-report.json").read_text())
    assert final["stop_reason"] == "finished" and final["uris_queued"] == 0


def test_remove_reject_rule(site: TestSite, tmp_path: Path) -> None:
    jd = tmp_path / "job"
    yaml = tmp_path / "job.yaml"
    yaml.write_text("scope:\n  reject_hosts: [example.invalid]\n")
    crawl = Crawl(jd, str(yaml), *_args(jd, site.url("/"), 0.05))
    crawl.wait_state("RUNNING")
    crawl.client.post("/pause")
    crawl.wait_state("PAUSED")
    body = {"kind": "surt", "value": site.url("/cal")}
    assert crawl.client.post("/scope/reject", json=body).status_code == 200
    rules = crawl.client.get("/scope").json()
    assert rules["host"] == ["example.invalid"] and rules["surt"] == [site.url("/cal")]
    gone = crawl.client.request("DELETE", "/scope/reject",
                                json={"kind": "host", "value": "example.invalid"})  # fmt: skip
    assert gone.status_code == 200 and gone.json()["rules"]["host"] == []
    missing = crawl.client.request("DELETE", "/scope/reject", json=body | {"value": "nope"})
    assert missing.status_code == 400 and "no surt reject rule" in missing.json()["error"]
    saved = json.loads((jd / "state" / "job.json").read_text())
    assert saved["scope"] == {"reject_surt_prefixes": [site.url("/cal")]}
    crawl.client.post("/stop")
    crawl.finish()


def test_delete_uris_and_host_delays_and_quota(site: TestSite, tmp_path: Path) -> None:
    jd = tmp_path / "job"
    key = f"127.0.0.1:{site.port}"
    crawl = Crawl(jd, *_args(jd, site.url("/"), 0.02))
    _wait(lambda: len(_cal_hits(site)) >= 4, "the trap's pages", timeout=30)
    crawl.client.post("/pause")
    crawl.wait_state("PAUSED")

    # deleteURIs: queued odd days, whole-string match, only on this queue
    odd = [u for u in _queued(jd, "%/cal?d=%") if int(u.rsplit("=", 1)[1]) % 2]
    assert odd
    none = crawl.client.post("/frontier/delete",
                             json={"uri_regex": r".*d=\d*[13579]", "queue_regex": "other:1"})
    assert none.json()["deleted"] == 0
    r = crawl.client.post("/frontier/delete", json={"uri_regex": r".*d=\d*[13579]"})
    assert r.status_code == 200 and r.json()["deleted"] == len(odd)
    assert sorted(ln.uri for ln in _lines(jd) if ln.status == -6000) == odd
    assert not [u for u in _queued(jd, "%/cal?d=%") if int(u.rsplit("=", 1)[1]) % 2]

    # a slower delay for this host only
    bad = crawl.client.post("/hosts", json={"host": key, "min_delay": 9, "max_delay": 1})
    assert bad.status_code == 400
    r = crawl.client.post("/hosts", json={"host": key, "min_delay": 0.25, "max_delay": 0.25})
    assert r.json() == {"host": key, "settings": {"min_delay": 0.25, "max_delay": 0.25},
                        "blocked": 0}  # fmt: skip
    mark = len(site.snapshot())
    crawl.client.post("/resume")
    _wait(lambda: len(site.snapshot()) >= mark + 4, "4 fetches at the new delay")
    crawl.client.post("/pause")
    crawl.wait_state("PAUSED")
    assert min(_gaps(site.snapshot()[mark:])) >= 0.25 - TOL

    # a quota the host has reached: its queued URIs are blocked at once (-5003)
    queued = _queued(jd)
    assert queued
    r = crawl.client.post("/hosts", json={"host": key, "max_uris": 1})
    assert r.json()["blocked"] == len(queued)
    assert r.json()["settings"] == {"min_delay": 0.25, "max_delay": 0.25, "max_uris": 1}
    blocked = [ln for ln in _lines(jd) if ln.status == -5003]
    assert sorted(ln.uri for ln in blocked) == queued
    assert all("Q:hostQuota" in ln.annotations for ln in blocked)
    assert _queued(jd) == []
    saved = json.loads((jd / "state" / "job.json").read_text())
    assert saved["hosts"] == {key: {"min_delay": 0.25, "max_delay": 0.25, "max_uris": 1}}
    mark = len(site.snapshot())
    crawl.client.post("/resume")
    crawl.finish()  # nothing left: the crawl ends by itself
    assert len(site.snapshot()) == mark
    final = json.loads((jd / "reports" / "crawl-report.json").read_text())
    assert final["stop_reason"] == "finished" and final["uris_queued"] == 0
