"""The control API of a running ``webark crawl`` (a real CLI process crawling sites this
test serves on 127.0.0.x), called with httpx."""

from __future__ import annotations

import itertools
import json
import os
import stat
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from sites import Hit, TestSite, small_site, static_site
from webark.crawllog.parse import read_crawl_log

TOL = 0.005


def _cli(*args: str) -> list[str]:
    code = "import sys; from webark.cli.crawl_cmds import crawl; crawl(sys.argv[1:])"
    return [sys.executable, "-c", code, *args]


def _wait(cond: Callable[[], Any], what: str, timeout: float = 20.0) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        got = cond()
        if got:
            return got
        time.sleep(0.01)
    raise AssertionError(f"timed out waiting for {what}")


STARTED: list[subprocess.Popen[str]] = []
"""Every crawl process :class:`Crawl` started (``conftest.py`` ends those a failed test
left running)."""


class Crawl:
    """A ``webark crawl`` process and an httpx client for its control API."""

    def __init__(self, job_dir: Path, *args: str) -> None:
        self.job_dir = job_dir
        self.proc = subprocess.Popen(
            _cli(*args), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        STARTED.append(self.proc)  # stopped after the test if it failed (conftest.py)
        info_path = job_dir / "control.json"

        def read_info() -> dict[str, Any] | None:
            if self.proc.poll() is not None:
                raise AssertionError(f"crawl ended early: {self.proc.communicate()}")
            try:
                return json.loads(info_path.read_text())
            except (FileNotFoundError, ValueError):
                return None

        self.info = _wait(read_info, "control.json")
        self.mode = stat.S_IMODE(os.stat(info_path).st_mode)
        self.client = httpx.Client(
            base_url=self.info["url"],
            headers={"Authorization": f"Bearer {self.info['token']}"},
            timeout=10,
        )

    def status(self) -> dict[str, Any]:
        r = self.client.get("/status")
        assert r.status_code == 200, r.text
        return r.json()

    def wait_state(self, state: str) -> dict[str, Any]:
        return _wait(lambda: (s := self.status())["state"] == state and s, f"state {state}")

    def finish(self) -> tuple[str, str]:
        try:
            out, err = self.proc.communicate(timeout=60)
        finally:
            self.client.close()
        assert self.proc.returncode == 0, err
        return out, err


@pytest.fixture(scope="module")
def sites() -> Iterator[tuple[TestSite, TestSite]]:
    a = TestSite(static_site(n_pages=10, crawl_delay=None), host="127.0.0.1").start()
    b = TestSite(small_site(), host="127.0.0.2").start()
    yield a, b
    a.stop()
    b.stop()


def _args(job_dir: Path, seed: str, delay: float, *more: str) -> list[str]:
    return [
        "--seed", seed, "-o", str(job_dir), "--contact", "archive@example.org",
        "--allow-private", "--min-delay", str(delay), "--max-delay", str(delay),
        "--workers", "2", "--quiet", *more,
    ]  # fmt: skip


def _yaml(tmp: Path) -> str:
    # no retry or long back-off for site A's 500 page
    path = tmp / "job.yaml"
    path.write_text("max_http_retries: 0\nbackoff_base: 0.1\n")
    return str(path)


def _gaps(hits: list[Hit]) -> list[float]:
    hits = sorted(hits, key=lambda h: h.start)
    return [n.start - p.end for p, n in itertools.pairwise(hits)]


def test_token_status_reports(sites: Any, tmp_path: Path) -> None:
    a, _ = sites
    jd = tmp_path / "job"
    crawl = Crawl(jd, _yaml(tmp_path), *_args(jd, a.url("/"), 0.1))
    assert crawl.mode == 0o600
    url = crawl.info["url"]
    assert url.startswith("http://127.0.0.1:") and crawl.info["port"] == int(url.rsplit(":", 1)[1])
    # no token, a wrong one, another scheme: 401, and nothing is done
    assert httpx.get(url + "/status").status_code == 401
    bad = httpx.post(url + "/pause", headers={"Authorization": "Bearer " + "x" * 43})
    assert bad.status_code == 401 and bad.headers["www-authenticate"].startswith("Bearer")
    basic = httpx.get(url + "/status", headers={"Authorization": crawl.info["token"]})
    assert basic.status_code == 401
    s = crawl.wait_state("RUNNING")
    assert s["job_dir"] == str(jd) and s["settings"]["min_delay"] == 0.1
    _wait(lambda: crawl.status()["uris"]["processed"] >= 3, "3 URIs")
    s = crawl.status()
    assert s["queues"]["total"] == 1 and s["warc_bytes"] > 0 and s["bytes"] > 0
    assert s["workers"]["total"] == 2 and len(s["reports"]) == 11

    text = crawl.client.get("/reports/responsecode")
    assert text.status_code == 200 and text.headers["content-type"].startswith("text/plain")
    assert text.text.startswith("#urls rescode\n")
    js = crawl.client.get("/reports/crawl", headers={"Accept": "application/json"})
    assert js.headers["content-type"] == "application/json"
    assert js.json()["uris_processed"] >= 3 and js.json()["ended"] is None
    assert crawl.client.get("/reports/hosts?format=json").json()[0]["host"] == "127.0.0.1"
    threads = crawl.client.get("/reports/threads?format=json").json()
    assert threads["workers"] >= 1
    assert crawl.client.get("/reports/nope").status_code == 404
    bad_delay = crawl.client.post("/delays", json={"min_delay": 5, "max_delay": 1})
    assert bad_delay.status_code == 400 and "min_delay" in bad_delay.json()["error"]
    assert crawl.client.post("/delays", json={"min_dealy": 1}).status_code == 400

    assert crawl.client.post("/stop").json()["state"] in ("STOPPING", "FINISHED")
    try:
        after = crawl.client.post("/pause")
        assert after.status_code == 409 and "cannot pause" in after.json()["error"]
    except httpx.TransportError:
        pass  # the crawl already ended and the API with it (409 is tested in-process)
    _, err = crawl.finish()
    assert not (jd / "control.json").exists()
    # the token is not printed (console output lands in logs), only where it is
    assert crawl.info["token"] not in err and f"bearer token in {jd / 'control.json'}" in err
    report = json.loads((jd / "reports" / "crawl-report.json").read_text())
    assert report["stop_reason"] == "stopped by operator (control API)"


def test_pause_seeds_delays_stop_then_resume(sites: Any, tmp_path: Path) -> None:
    a, b = sites
    jd = tmp_path / "job"
    ma, mb = len(a.snapshot()), len(b.snapshot())
    crawl = Crawl(jd, _yaml(tmp_path), *_args(jd, a.url("/"), 0.05))
    _wait(lambda: crawl.status()["uris"]["processed"] >= 4, "4 URIs")

    # pause: in-flight URIs finish, then the server sees no request at all
    assert crawl.client.post("/pause").json()["state"] in ("PAUSING", "PAUSED")
    paused = crawl.wait_state("PAUSED")
    assert paused["uris"]["in_flight"] == 0 and paused["workers"]["busy"] == 0
    mark = len(a.snapshot())
    time.sleep(0.5)
    assert len(a.snapshot()) == mark, "fetched while paused"
    assert crawl.status()["uris"]["processed"] == paused["uris"]["processed"]

    # while paused: add site B as a seed (one bad seed is refused), slow down site A
    r = crawl.client.post("/seeds", json={"seeds": [b.url("/"), "ftp://x.example/", a.url("/")]})
    assert r.status_code == 200, r.text
    res = r.json()
    assert res["added"] == [b.url("/")] and res["already_seen"] == [a.url("/")]
    assert [x["seed"] for x in res["rejected"]] == ["ftp://x.example/"]
    r = crawl.client.post("/delays", json={"min_delay": 0.15, "max_delay": 0.15})
    assert r.json()["min_delay"] == 0.15 and r.json()["max_delay"] == 0.15
    saved = json.loads((jd / "state" / "job.json").read_text())
    assert b.url("/") in saved["seeds"] and saved["min_delay"] == 0.15
    assert len(a.snapshot()) == mark

    assert crawl.client.post("/resume").json()["state"] == "RUNNING"
    # the new seed is crawled with its links (its SURT prefix joined the scope)
    _wait(lambda: any(h.path.startswith("/b/") for h in b.snapshot()[mb:]), "site B pages")
    _wait(lambda: len(a.snapshot()) >= mark + 3, "site A again")
    assert crawl.client.post("/stop").status_code == 200
    crawl.finish()
    report = json.loads((jd / "reports" / "crawl-report.json").read_text())
    assert report["stop_reason"] == "stopped by operator (control API)"
    assert report["uris_queued"] > 0
    seeds = {r["seed"] for r in json.loads((jd / "reports/seeds-report.json").read_text())}
    assert seeds == {a.url("/"), b.url("/")}

    # --resume finishes the crawl with the added seed and the new delays
    r2 = subprocess.run(_cli("--resume", str(jd), "--quiet"), capture_output=True, timeout=60)
    assert r2.returncode == 0, r2.stderr.decode()
    hits_a = a.snapshot()[ma:]
    after = [h for h in hits_a if h.start > hits_a[mark - ma].start]
    assert min(_gaps(after)) >= 0.15 - TOL  # the live change holds, across the resume
    uris = [ln.uri for ln in read_crawl_log(jd / "logs" / "crawl.log")]
    assert len(uris) == len(set(uris)), "nothing logged twice"
    want_a = {a.url(p) for p in a.pages if not p.startswith("/private/")} | {a.url("/missing.html")}
    want_b = {b.url(p) for p in b.pages} | {b.url("/robots.txt")}
    assert set(uris) == want_a | want_b | {a.url("/private/secret.html")}
    final = json.loads((jd / "reports" / "crawl-report.json").read_text())
    assert final["stop_reason"] == "finished" and final["uris_queued"] == 0


def test_control_port_taken_fails_before_crawling(sites: Any, tmp_path: Path) -> None:
    import socket

    a, _ = sites
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen(1)
        port = s.getsockname()[1]
        jd = tmp_path / "job"
        r = subprocess.run(
            _cli(*_args(jd, a.url("/"), 0.0, "--control-port", str(port))),
            capture_output=True, text=True, timeout=60,
        )  # fmt: skip
    assert r.returncode == 2
    assert f"127.0.0.1:{port}" in r.stderr and "--control-port" in r.stderr
    assert not (jd / "state").exists()


def test_no_control(sites: Any, tmp_path: Path) -> None:
    _, b = sites
    jd = tmp_path / "job"
    r = subprocess.run(_cli(*_args(jd, b.url("/"), 0.0, "--no-control")), capture_output=True,
                       text=True, timeout=60)  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert "control API" not in r.stderr and "finished" in r.stderr
    assert len(read_crawl_log(jd / "logs" / "crawl.log")) == 8


def test_in_process_state_machine(sites: Any, tmp_path: Path) -> None:
    """CrawlControl + the ASGI app in the crawl's event loop (no port): states, the final
    snapshot after the end, and 409 for operations on a finished crawl."""
    import asyncio

    from webark.apps.control.app import create_control_app
    from webark.crawl.control import ControlStateError, CrawlControl
    from webark.crawl.controller import CrawlController
    from webark.crawl.job import job_from_mapping

    _, b = sites
    job = job_from_mapping({
        "seeds": [b.url("/")], "job_dir": str(tmp_path / "j"), "contact": "a@b.org",
        "allow_private": True, "min_delay": 0.02, "max_delay": 0.02, "workers": 2,
    })  # fmt: skip

    async def main() -> None:
        ctl = CrawlController(job)
        control = CrawlControl(ctl)
        assert control.state == "STARTING"
        app = create_control_app(control, "secret-token")
        h = {"Authorization": "Bearer secret-token"}
        async with httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app), base_url="http://control", headers=h
        ) as client:
            task = asyncio.create_task(ctl.run())
            while ctl.frontier is None:
                await asyncio.sleep(0.001)
            assert (await client.post("/pause")).json()["state"] in ("PAUSING", "PAUSED")
            while control.state != "PAUSED":
                await asyncio.sleep(0.005)
            done = control.status()["uris"]["processed"]
            await asyncio.sleep(0.2)
            assert control.status()["uris"]["processed"] == done
            assert (await client.post("/resume")).json()["state"] == "RUNNING"
            summary = await task
            control.finished(summary)
            status = (await client.get("/status")).json()
            assert status["state"] == "FINISHED" and status["uris"]["processed"] == 8
            assert status["stop_reason"] == "finished"
            r = await client.post("/pause")
            assert r.status_code == 409 and "finished" in r.json()["error"]
            plain = {"Content-Type": "text/plain"}
            r = await client.post("/seeds", content=b.url("/x"), headers=plain)
            assert r.status_code == 409
            threads = (await client.get("/reports/threads?format=json")).json()
            assert [t["worker"] for t in threads["threads"]] == [1, 2]  # every worker
            assert threads["busy"] == 0
            rep = await client.get("/reports/crawl?format=json")
            assert rep.json()["uris_processed"] == 8 and rep.json()["ended"] is not None
            wrong = {"Authorization": "Bearer x"}
            assert (await client.get("/status", headers=wrong)).status_code == 401
        with pytest.raises(ControlStateError):
            control.set_delays(min_delay=1)

    asyncio.run(main())
