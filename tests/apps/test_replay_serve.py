"""``webark serve`` as a real process serves replay beside the resolution API, prints
the replay URLs to open, and refuses a bad ``--access-rules`` file before listening."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from replay_support import build_collections

from http_wait import wait_until_serving
from index_stores import StoreChoice

CMD = [sys.executable, "-c", "from webark.cli.main import main; main()", "serve"]


def test_serve_replay_process(tmp_path: Path, corpus: Path, index_store: StoreChoice) -> None:
    colls = build_collections(tmp_path, corpus, index_store.init)
    rules = tmp_path / "rules.yaml"
    rules.write_text("- url: http://site.test/secret.html\n  policy: block\n")
    proc = subprocess.Popen([*CMD, str(colls), "--port", "0", "--access-rules", str(rules)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()
        m = re.search(r"at (http://127\.0\.0\.1:\d+/)", first)
        assert m, first
        base = m.group(1)
        shown = [proc.stdout.readline(), proc.stdout.readline()]
        assert shown[0].startswith(f"  replay pywb: {base}pywb/")
        assert shown[1].startswith(f"  replay site: {base}site/")
        wait_until_serving(base)
        with httpx.Client(base_url=base) as c:
            r = c.get("/pywb/2014/http://www.iana.org/", follow_redirects=True)
            assert r.status_code == 200 and "<title>Internet Assigned Numbers" in r.text
            assert str(r.url) == f"{base}pywb/20140126200624/http://www.iana.org/"
            assert c.get("/_webark/client.js").status_code == 200
            # id_: one Server field, the archived one (uvicorn adds none of its own)
            raw = c.get("/pywb/20140126200624id_/http://www.iana.org/")
            assert raw.headers.get_list("server") == ["Apache"]
            assert c.get("/site/2016/http://site.test/secret.html").status_code == 451
            r = c.get("/pywb/cdx", params={"url": "http://www.iana.org/", "output": "json"})
            assert r.status_code == 200 and len(r.text.splitlines()) == 3
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def test_serve_refuses_bad_access_rules(tmp_path: Path) -> None:
    (tmp_path / "c").mkdir()
    rules = tmp_path / "rules.yaml"
    rules.write_text("- url: http://a.org/\n  policy: hide\n")
    out = subprocess.run([*CMD, str(tmp_path / "c"), "--port", "0", "--access-rules",
                          str(rules)], capture_output=True, text=True, timeout=60)  # fmt: skip
    assert out.returncode != 0
    assert "--access-rules" in out.stderr and "policy" in out.stderr


def test_serve_help_explains_replay_urls() -> None:
    out = subprocess.run([*CMD, "--help"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0
    assert "/{coll}/{timestamp}/{url}" in out.stdout and "TimeGate" in out.stdout


@pytest.mark.parametrize("n", [2])
def test_serve_workers_replay(tmp_path: Path, corpus: Path, n: int) -> None:
    colls = build_collections(tmp_path, corpus)
    proc = subprocess.Popen([*CMD, str(colls), "--port", "0", "--workers", str(n)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
    try:
        assert proc.stdout is not None
        m = re.search(r"at (http://127\.0\.0\.1:\d+/)", proc.stdout.readline())
        assert m
        base = m.group(1)
        wait_until_serving(base)
        with httpx.Client() as c:
            for _ in range(10):
                r = c.get(f"{base}site/20200201000000id_/http://site.test/chain.txt")
                assert r.status_code == 200 and r.content == b"the chain's one and only payload\n"
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
