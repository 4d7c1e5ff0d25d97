"""Checks of a collection after its writer was killed (``webark proxy``, ``webark serve
--record``): the writer process killed with SIGKILL under load, and the index lines
compared with the records on disk."""

from __future__ import annotations

import signal
import sqlite3
import subprocess
import threading
from collections.abc import Sequence
from pathlib import Path

from webark.warc.reader import read_record_at


def kill_9(proc: subprocess.Popen[str], stop: threading.Event,
           clients: Sequence[threading.Thread]) -> None:  # fmt: skip
    """SIGKILL ``proc`` (its own PID), then tell the ``clients`` to stop and join them."""
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    stop.set()
    for t in clients:
        t.join()


def index_names_complete_records(coll: Path) -> int:
    """Assert that every line of the collection's SQLite index names a complete record
    (type and URL as indexed, whole block) in ``warcs/`` (final name, or ``.open``);
    returns the number of lines."""
    warcs = coll / "warcs"
    db = sqlite3.connect(coll / "indexes" / "index.sqlite3")
    rows = db.execute("SELECT f.name, c.offset, c.url, c.record_type FROM captures c "
                      "JOIN files f ON f.id = c.file_id").fetchall()  # fmt: skip
    db.close()
    for name, offset, url, rtype in rows:
        path = warcs / name if (warcs / name).exists() else warcs / (name + ".open")
        rec = read_record_at(path, offset)
        assert rec.target_uri == url and rec.type == rtype
        assert rec.block.size == rec.content_length
    return len(rows)
