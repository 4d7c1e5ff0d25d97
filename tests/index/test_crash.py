"""`kill -9` during `collection add` leaves a consistent collection: every WARC is either
fully indexed or not at all, and the next `add` completes the job."""

from __future__ import annotations

import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from webark.index.collection import Collection

IANA_LINES = 171


def _copies(src: Path, d: Path, n: int) -> list[Path]:
    d.mkdir()
    out = []
    for i in range(n):
        p = d / f"iana-{i:03d}.warc.gz"
        shutil.copy(src, p)
        out.append(p)
    return out


def _check(root: Path, names: list[str]) -> set[str]:
    """Assert consistency; return the names that are indexed."""
    coll = Collection.open(root)
    if coll.config.store == "sqlite":
        db = sqlite3.connect(root / "indexes" / "index.sqlite3")
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        files = {n: (i, lines) for i, n, lines in db.execute("SELECT id, name, lines FROM files")}
        for _name, (fid, lines) in files.items():
            rows = db.execute("SELECT count(*) FROM captures WHERE file_id = ?", (fid,)).fetchone()
            assert rows[0] == lines == IANA_LINES
        orphans = db.execute(
            "SELECT count(*) FROM captures WHERE file_id NOT IN (SELECT id FROM files)"
        ).fetchone()[0]
        assert orphans == 0
        db.close()
        done = set(files)
    else:
        done = set()
        for p in (root / "indexes" / "per-warc").glob("*.cdxj"):
            assert sum(1 for _ in p.open("rb")) == IANA_LINES
            assert Path(str(p) + ".digests").exists()
            done.add(p.name[: -len(".cdxj")])
    assert done <= set(names)
    # queries see exactly the indexed WARCs, each completely
    per_file: dict[str, int] = {}
    for line in coll.source().scan(coll_range()):
        per_file[line.filename] = per_file.get(line.filename, 0) + 1
    assert per_file == dict.fromkeys(done, IANA_LINES)
    coll.close()
    return done


def coll_range():  # type: ignore[no-untyped-def]
    from webark.index.source import KeyRange

    return KeyRange("", None)


SLOW_ADD = textwrap.dedent("""
    import sys, time
    from webark.cdx.indexer import FileIndex
    from webark.index.collection import Collection

    root, mode, target, *paths = sys.argv[1:]

    def index(path, name):
        for i, line in enumerate(FileIndex(path, filename=name)):
            if i == 100 and name == target:
                print("MIDWAY", flush=True)
                time.sleep(120)
            yield line

    for r in Collection.open(root).add(paths, mode, index=index):
        print("DONE", r.name, r.status, flush=True)
""")


@pytest.mark.parametrize(
    ("store", "mode"), [("sqlite", "copy"), ("sqlite", "in-place"), ("cdxj", "copy")]
)
def test_kill_in_the_middle_of_a_warc(tmp_path: Path, corpus: Path, store: str, mode: str) -> None:
    """Killed while the 3rd WARC's lines are being written: WARCs 1–2 are indexed, the
    3rd is not (nothing of it), the rest untouched; re-running add finishes."""
    paths = _copies(corpus / "pywb/warcs/iana.warc.gz", tmp_path / "in", 5)
    names = [p.name for p in paths]
    root = tmp_path / "coll"
    Collection.init(root, store=store).close()  # type: ignore[arg-type]
    proc = subprocess.Popen(
        [sys.executable, "-c", SLOW_ADD, str(root), mode, names[2], *map(str, paths)],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    seen = []
    for line in proc.stdout:
        seen.append(line.split())
        if line.startswith("MIDWAY"):
            break
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(30)
    assert seen == [["DONE", names[0], "indexed"], ["DONE", names[1], "indexed"], ["MIDWAY"]]
    assert _check(root, names) == set(names[:2])

    coll = Collection.open(root)
    res = list(coll.add(paths, mode))  # type: ignore[arg-type]
    coll.close()
    assert [r.status for r in res] == ["skipped", "skipped", "indexed", "indexed", "indexed"]
    assert _check(root, names) == set(names)


def test_kill_at_random_moments_with_the_cli(tmp_path: Path, corpus: Path) -> None:
    """The real `webark collection add`, killed as soon as k WARCs are indexed (so during
    the copy or the indexing of a later one), three times; always consistent."""
    paths = _copies(corpus / "pywb/warcs/iana.warc.gz", tmp_path / "in", 10)
    names = [p.name for p in paths]
    root = tmp_path / "coll"
    Collection.init(root).close()
    cmd = [
        sys.executable,
        "-c",
        "from webark.cli.main import main; main()",
        "collection",
        "add",
        str(root),
        *map(str, paths),
        "--no-progress",
    ]
    db = root / "indexes" / "index.sqlite3"
    done: set[str] = set()
    rnd = random.Random(7)
    for k in (1, 4, 7):
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and proc.poll() is None:
            con = sqlite3.connect(db, timeout=5)
            n = con.execute("SELECT count(*) FROM files").fetchone()[0]
            con.close()
            if n >= k:
                time.sleep(rnd.uniform(0, 0.05))  # somewhere in the next copy/index
                break
            time.sleep(0.005)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(30)
        now = _check(root, names)
        assert now >= done
        done = now
    rc = subprocess.run(cmd, capture_output=True, timeout=120).returncode
    assert rc == 0
    assert _check(root, names) == set(names)
    assert Collection.open(root).unindexed_warcs() == []
