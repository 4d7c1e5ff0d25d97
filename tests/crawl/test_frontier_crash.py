"""Crash test: a crawler process using the frontier is killed with SIGKILL at random
moments, then restarted, until the crawl completes. Every URI it added must end finished
exactly once; only URIs in flight at a kill may be fetched again.

Run as a script, this file is the crawler (``python test_frontier_crash.py DB LOG``): a
deterministic synthetic web of 8 hosts, 4 levels deep, where some URIs fail once with a
network error or a 503 before succeeding. Each fetch attempt appends the URI to LOG
*before* the frontier hears about the result.
"""

from __future__ import annotations

import contextlib
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
import zlib
from collections import Counter
from pathlib import Path

HOSTS = 8
DEPTH = 4
FANOUT = 3


def _seeds() -> list[str]:
    return [f"http://h{k}.example/s{k}" for k in range(HOSTS)]


def _children(uri: str) -> list[str]:
    path = uri.split(".example", 1)[1]
    if path.count("/") > DEPTH:
        return []
    out = []
    for j in range(FANOUT):
        p = f"{path}/{j}"
        out.append(f"http://h{zlib.crc32(p.encode()) % HOSTS}.example{p}")
    return out


def _first_failure(uri: str) -> int | None:
    """The status of the first attempt when it fails (retried), else None."""
    h = zlib.crc32(uri.encode())
    if h % 5 == 0:
        return -2  # connect failed
    if h % 7 == 1:
        return 503
    return None


def _expected() -> dict[str, int]:
    """Every URI of the synthetic web -> number of fetch attempts it needs."""
    todo, seen = _seeds(), {}
    while todo:
        u = todo.pop()
        if u in seen:
            continue
        seen[u] = 2 if _first_failure(u) is not None else 1
        todo.extend(_children(u))
    return seen


def _worker(db: str, log: str) -> None:
    from webark.crawl.curi import CrawlURI
    from webark.crawl.frontier import Frontier, FrontierConfig

    cfg = FrontierConfig(
        min_delay=0, delay_factor=0, retry_delay=0.0, backoff_base=0.0, max_retries=3
    )
    f = Frontier.open(db, cfg)
    f.add_many(CrawlURI(u, seed=True, source=u) for u in _seeds())
    fd = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    while True:
        c = f.next_ready()
        if c is None:
            if f.next_wake() is None:
                break
            time.sleep(0.0005)
            continue
        os.write(fd, (c.uri + "\n").encode())
        time.sleep(0.003)  # the "fetch"
        fail = _first_failure(c.uri) if c.retries == 0 else None
        if fail is None:
            f.add_many(c.child(u, "L") for u in _children(c.uri))  # outlinks before finished
            f.finished(c, 200, 0.0005, size=100)
        else:
            f.finished(c, fail, 0.0005, retry_after=0 if fail == 503 else None)
    os.close(fd)
    f.close()


def test_sigkill_at_random_moments(tmp_path: Path) -> None:
    db, log = tmp_path / "frontier.db", tmp_path / "fetch.log"
    expected = _expected()
    assert len(expected) == HOSTS * sum(FANOUT**d for d in range(DEPTH + 1))  # 968
    rng = random.Random(int(os.environ.get("WEBARK_CRASH_SEED", "20261130")))
    may_repeat: set[str] = set()
    argv = [sys.executable, __file__, str(db), str(log)]
    kills = 0
    for _ in range(8):
        p = subprocess.Popen(argv)
        time.sleep(rng.uniform(0.1, 0.8))
        if p.poll() is not None:  # finished before the kill
            break
        p.send_signal(signal.SIGKILL)
        p.wait()
        kills += 1
        if db.exists():
            con = sqlite3.connect(db)
            with contextlib.suppress(sqlite3.OperationalError):  # killed before the schema
                may_repeat.update(r[0] for r in con.execute("SELECT uri FROM uris WHERE state=1"))
            con.close()
    assert kills >= 5
    done = subprocess.run(argv, timeout=60)
    assert done.returncode == 0

    con = sqlite3.connect(db)
    rows = dict(con.execute("SELECT uri, state * 1000 + status FROM uris").fetchall())
    con.close()
    assert set(rows) == set(expected)  # nothing lost, nothing invented
    assert set(rows.values()) == {2200}  # all finished, with 200

    attempts = Counter(log.read_text().split())
    assert set(attempts) == set(expected)
    for uri, need in expected.items():
        if uri in may_repeat:
            assert need <= attempts[uri] <= need + kills, uri
        else:
            assert attempts[uri] == need, uri
    # the kills did hit URIs in flight, and those were fetched again
    assert may_repeat


if __name__ == "__main__":
    _worker(sys.argv[1], sys.argv[2])
