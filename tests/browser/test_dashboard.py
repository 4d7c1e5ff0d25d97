"""The crawl dashboard (webark.apps.control.dashboard) in headless Chromium, during a
real ``webark crawl`` of a site on 127.0.0.1 with a crawler trap: the token once, kept
in a cookie for the port; the page updates while the crawl runs; pause, a reject rule
that purges the trap's queued URIs (the trap's requests stop in the server's access
log), a seed fetched next, resume, stop."""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

sys.path.insert(0, str(Path(__file__).parent.parent / "crawl"))
from test_control import Crawl, _args, _wait
from test_live_changes import _cal_hits, _queued, _trap, trap_site

from sites import TestSite


@pytest.fixture()
def site() -> Iterator[TestSite]:
    s = TestSite(trap_site(), host="127.0.0.1", handler=_trap).start()
    yield s
    s.stop()


def _text(page: Any, sel: str) -> str:
    return str(page.locator(sel).inner_text()).strip()


def _number(page: Any, sel: str) -> int:
    return int(_text(page, sel).replace(",", "") or 0)


def test_dashboard_drives_a_running_crawl(context: Any, site: TestSite, tmp_path: Path) -> None:
    jd = tmp_path / "job"
    yaml = tmp_path / "job.yaml"
    yaml.write_text("progress_interval: 0.3\n")
    crawl = Crawl(jd, str(yaml), *_args(jd, site.url("/"), 0.15))
    url, token = crawl.info["url"], crawl.info["token"]
    port = crawl.info["port"]

    # no token: the form, and the API refuses a request without the CSRF header too
    page = context.new_page()
    page.goto(url + "/")
    assert page.locator("#token").count() == 1 and page.locator("#state").count() == 0
    page.fill("#token", "wrong")
    page.click("#sign-in")
    assert "wrong token" in _text(page, "#login-error")
    page.fill("#token", token)
    page.click("#sign-in")
    page.wait_for_selector("#state")
    cookies = {c["name"]: c for c in context.cookies()}
    c = cookies[f"webark_token_{port}"]
    assert c["value"] == token and c["httpOnly"] and c["sameSite"] == "Strict"
    jar = {f"webark_token_{port}": token}
    assert httpx.post(url + "/pause", cookies=jar).status_code == 403  # no CSRF header
    assert httpx.get(url + "/status", cookies=jar).status_code == 200

    # the page updates while the crawl runs
    first = _number(page, "#processed")
    _wait(lambda: _number(page, "#processed") > first + 2, "the page's count to grow", 30)
    _wait(lambda: len(_cal_hits(site)) >= 3, "the trap's pages", 30)
    page.wait_for_function(
        "document.querySelector('#chart-uris polyline').getAttribute('points').split(' ')"
        ".length >= 2")
    assert page.locator("#queues tbody tr").count() >= 1
    assert _text(page, "#queues tbody tr td >> nth=0") == f"127.0.0.1:{site.port}"

    # pause
    page.click("#pause")
    page.wait_for_function("document.getElementById('state').textContent === 'PAUSED'",
                           timeout=20000)  # fmt: skip
    queued_cal = _queued(jd, "%/cal?d=%")
    assert queued_cal

    # a reject rule that purges the trap's queued URIs
    page.fill("#reject-value", r".*/cal\?d=\d+")
    page.click("#reject-add")
    page.wait_for_function("document.getElementById('message').textContent.includes('purged')")
    assert _text(page, "#message") == f"rule added: {len(queued_cal)} queued URIs purged"
    assert _queued(jd, "%/cal?d=%") == []
    page.wait_for_function("document.getElementById('rules').textContent.includes('regex')")

    # the crawl.log filter shows the purged URIs' -5000 lines
    page.fill("#log-status", "-5000")
    page.wait_for_function(
        f"document.querySelectorAll('#log tbody tr').length === {min(len(queued_cal), 200)}")
    statuses = page.locator("#log tbody tr td:nth-child(2)").all_inner_texts()
    assert set(statuses) == {"-5000"}

    # a seed, fetched next after resume
    mark = len(site.snapshot())
    page.fill("#seeds", site.url("/extra.html"))
    page.click("#seeds-form button")
    page.wait_for_function("document.getElementById('message').textContent.includes('added: 1')")
    page.click("#resume")
    page.wait_for_function("document.getElementById('state').textContent === 'RUNNING'")
    _wait(lambda: len(site.snapshot()) > mark, "a fetch after resume")
    assert site.snapshot()[mark].path == "/extra.html"
    _wait(lambda: len(site.snapshot()) > mark + 2, "more fetches")
    assert _cal_hits(site, mark) == [], "the trap was fetched after the rule"

    # stop
    page.click("#stop")
    page.wait_for_function(
        "['STOPPING', 'FINISHED', 'ENDED'].includes(document.getElementById('state').textContent)")
    crawl.finish()
    assert re.search(r"stopped by operator", (jd / "reports" / "crawl-report.txt").read_text())
