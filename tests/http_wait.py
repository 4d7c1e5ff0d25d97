"""Waiting for a server a test started (``webark serve`` in a child process) to answer,
and running one for the length of a ``with`` block."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

#: ``webark`` of this checkout, run by the interpreter of the tests.
WEBARK = [sys.executable, "-c", "from webark.cli.main import main; main()"]
_SERVE_URL = re.compile(r"at (http://127\.0\.0\.1:\d+/)")


def wait_until_serving(url: str, tries: int = 200, pause: float = 0.05) -> None:
    """Return once ``GET url`` gets any HTTP answer; after ``tries`` refused
    connections (~10 s by default), return anyway and let the test's own request
    fail with its message."""
    for _ in range(tries):
        try:
            httpx.get(url, timeout=2)
            return
        except httpx.TransportError:
            time.sleep(pause)


def stop(proc: subprocess.Popen[str]) -> None:
    """SIGTERM ``proc`` (its own PID), then SIGKILL after 15 s; reap it."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@contextmanager
def webark_child(
    args: list[str], ready: re.Pattern[str]
) -> Iterator[tuple[re.Match[str], subprocess.Popen[str]]]:
    """``webark ARGS`` as a child process: yields (the match of ``ready`` on the first
    line it prints, the process); stopped at the end.

    Raises:
        AssertionError: the first line does not match (the child's stderr is in the
            message).
    """
    proc = subprocess.Popen([*WEBARK, *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        m = ready.search(line)
        if not m:
            proc.kill()
            _, err = proc.communicate(timeout=10)
            raise AssertionError(f"webark {args[0]} did not start: {line!r}\n{err}")
        yield m, proc
    finally:
        stop(proc)


@contextmanager
def webark_serve_process(*args: str) -> Iterator[tuple[str, subprocess.Popen[str]]]:
    """``webark serve ARGS --port 0`` as a child process on 127.0.0.1: yields (its base
    URL ``http://127.0.0.1:PORT/``, the process) once it answers; stopped at the end.

    Raises:
        AssertionError: the server printed no URL (its stderr is in the message).
    """
    with webark_child(["serve", *args, "--port", "0"], _SERVE_URL) as (m, proc):
        wait_until_serving(m.group(1))
        yield m.group(1), proc


_PROXY_URL = re.compile(r"at http://127\.0\.0\.1:(\d+)/")


@contextmanager
def proxy_process(*args: str) -> Iterator[tuple[int, subprocess.Popen[str]]]:
    """``webark proxy ARGS --port 0 --allow-private --resolve-only``: yields (its port,
    the process) once listening; stopped (SIGTERM) at the end. Its CA is in a
    temporary folder unless ARGS give ``--ca-file``. No name is looked up
    (tests fetch IP literals on loopback), so nothing a client asks for leaves the
    machine."""
    argv = ["proxy", *args, "--port", "0", "--allow-private", "--resolve-only"]
    with tempfile.TemporaryDirectory(prefix="webark-proxy-ca-") as ca_dir:
        if "--ca-file" not in args:  # never the default CA under the home folder
            argv += ["--ca-file", os.path.join(ca_dir, "proxy-ca.pem")]
        with webark_child(argv, _PROXY_URL) as (m, proc):
            yield int(m.group(1)), proc


def crawl_log_lines(path: Path, n: int, wait: float = 10.0) -> list[str]:
    """The lines of a crawl.log once it has at least ``n`` (the proxy archives after
    the client has its response); fewer after ``wait`` seconds."""
    end = time.monotonic() + wait
    while True:
        lines = path.read_text().splitlines() if path.exists() else []
        if len(lines) >= n or time.monotonic() > end:
            return lines
        time.sleep(0.05)
