"""``webark serve``: binds 127.0.0.1, prints the URL, serves the collections of a folder
(one process, or several workers with their own SO_REUSEPORT sockets), stops on
SIGTERM / SIGINT (workers too)."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

URL_RE = re.compile(r"at (http://127\.0\.0\.1:(\d+)/)")


@contextmanager
def serving(colls: Path, *args: str) -> Iterator[tuple[str, subprocess.Popen[str]]]:
    proc = subprocess.Popen(
        [sys.executable, "-c", "from webark.cli.main import main; main()", "serve", str(colls),
         "--port", "0", *args],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        m = URL_RE.search(line)
        assert m, line
        base = m.group(1)
        for _ in range(200):
            try:
                if httpx.get(base + "cdxj/cdx", params={"url": "x.com"}, timeout=2).status_code:
                    break
            except httpx.TransportError:
                time.sleep(0.05)
        yield base, proc
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def _children(pid: int) -> list[int]:
    try:
        return [int(x) for x in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


def test_serve_one_process(colls_dir: Path) -> None:
    with serving(colls_dir) as (base, proc):
        r = httpx.get(base + "cdxj/cdx", params={"url": "example.com", "output": "json"})
        assert r.status_code == 200 and len(r.text.splitlines()) == 7
        assert httpx.get(base).json()["collections"][0]["name"] == "cdxj"
        assert httpx.get(base + "nope/cdx", params={"url": "a"}).status_code == 404
        assert httpx.get(base + "nothing/cdx", params={"url": "a"}).status_code == 503
        r = httpx.get(base + "cdxj/timemap/link/http://example.com/news")
        assert r.status_code == 200 and base + "cdxj/20100601000000/" in r.text
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(15) in (0, -signal.SIGTERM)  # uvicorn re-raises the signal it handled


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_serve_workers(colls_dir: Path, sig: signal.Signals) -> None:
    with serving(colls_dir, "--workers", "2") as (base, proc):
        kids = _children(proc.pid)
        assert len(kids) == 2
        with httpx.Client() as c:  # keep-alive: each connection sticks to one worker
            for _ in range(20):
                r = c.get(base + "store/cdx", params={"url": "example.com/*", "limit": "3"})
                assert r.status_code == 200 and len(r.text.splitlines()) == 3
        for _ in range(20):  # new connections spread over the workers
            r = httpx.get(base + "cdxj/cdx", params={"url": "example.com", "closest": "2015",
                                                     "limit": "1"})  # fmt: skip
            assert r.status_code == 200
        proc.send_signal(sig)
        proc.wait(15)
        for k in kids:
            for _ in range(100):
                if not Path(f"/proc/{k}").exists() or "zombie" in _state(k):
                    break
                time.sleep(0.05)
            else:
                os.kill(k, signal.SIGKILL)
                raise AssertionError(f"worker {k} still running")


def _state(pid: int) -> str:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("State:"):
                return line.lower()
    except OSError:
        return "gone"
    return ""


@pytest.mark.parametrize(("first", "second"), [("1", "1"), ("2", "2"), ("1", "2"), ("2", "1")])
def test_serve_refuses_a_taken_port(colls_dir: Path, first: str, second: str) -> None:
    # also a second multi-worker server, which SO_REUSEPORT alone would let share the port
    with serving(colls_dir, "--workers", first) as (base, _):
        port = base.rsplit(":", 1)[1].strip("/")
        r = subprocess.run(
            [sys.executable, "-c", "from webark.cli.main import main; main()", "serve",
             str(colls_dir), "--port", port, "--workers", second],
            capture_output=True, text=True, timeout=30,
        )  # fmt: skip
        assert r.returncode != 0 and "cannot listen" in r.stderr


def test_serve_is_listed_in_help() -> None:
    r = subprocess.run(
        [sys.executable, "-c", "from webark.cli.main import main; main()", "--help"],
        capture_output=True, text=True, timeout=30,
    )  # fmt: skip
    assert "serve" in r.stdout


def test_rewrite_budget_option_reaches_the_app(
    monkeypatch: pytest.MonkeyPatch, colls_dir: Path
) -> None:
    """``--rewrite-budget MIB`` sets the replay app's byte budget (bytes = MiB << 20)."""
    from click.testing import CliRunner

    from webark.cli import serve_cmds

    seen: dict[str, object] = {}

    def fake_run_one(sock: object, app_args: dict[str, object], common: object) -> None:
        seen.update(app_args)
        sock.close()  # type: ignore[attr-defined]

    monkeypatch.setattr(serve_cmds, "_run_one", fake_run_one)
    result = CliRunner().invoke(
        serve_cmds.serve, [str(colls_dir), "--port", "0", "--rewrite-budget", "3"]
    )
    assert result.exit_code == 0, result.output
    assert seen["rewrite_budget"] == 3 << 20
    from webark.apps.replay.app import create_server

    assert create_server(str(colls_dir), rewrite_budget=3 << 20).budget.limit == 3 << 20
    bad = CliRunner().invoke(serve_cmds.serve, [str(colls_dir), "--rewrite-budget", "0"])
    assert bad.exit_code == 2


def test_a_collection_folder_given_instead_of_its_parent(colls_dir: Path) -> None:
    """``webark serve colls/web`` (the collection itself, a natural mistake after
    ``collection init colls/web``) says which folder to give; it served 0 collections."""
    from click.testing import CliRunner

    from webark.cli import serve_cmds

    coll = next(p for p in colls_dir.iterdir() if (p / "collection.toml").exists())
    r = CliRunner().invoke(serve_cmds.serve, [str(coll), "--port", "0"])
    assert r.exit_code == 2
    assert "is a collection; give the folder that holds it" in r.output
    assert str(colls_dir) in r.output


def _stop(proc: subprocess.Popen[str]) -> str:
    """SIGTERM the server, wait for it, return the rest of its stdout."""
    proc.send_signal(signal.SIGTERM)
    out, _ = proc.communicate(timeout=15)
    return out


def test_access_log_at_the_default_log_level(colls_dir: Path) -> None:
    """`--access-log` printed nothing: uvicorn gave its access logger the --log-level
    (warning by default), and access lines are INFO."""
    with serving(colls_dir, "--access-log") as (base, proc):
        assert httpx.get(base + "cdxj/cdx", params={"url": "example.com"}).status_code == 200
        assert httpx.get(base + "nope/cdx", params={"url": "a"}).status_code == 404
        out = _stop(proc)
    assert re.search(r'127\.0\.0\.1:\d+ - "GET /cdxj/cdx\?url=example\.com HTTP/1\.1" 200', out)
    assert re.search(r'"GET /nope/cdx\?url=a HTTP/1\.1" 404', out)
    with serving(colls_dir) as (base, proc):  # the default: no access log
        assert httpx.get(base + "cdxj/cdx", params={"url": "example.com"}).status_code == 200
        out = _stop(proc)
    assert "GET /cdxj/cdx" not in out
