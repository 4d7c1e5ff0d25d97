"""A crawl writing a WARC and appending its lines to a collection's index store batch by
batch (``IndexStore.append_to``), as the capture back end will: run as a child process
by :func:`run_live_writer`, so that tests can kill it with ``-9``.

It prints ``OPEN NAME PATH`` (the WARC's final name, and the ``.open`` path it is written
at, which it records as the WARC's location so that replay finds its captures while it
is written), ``BATCH N`` after each committed batch (N captures so far) and
``DONE PATH`` when the WARC is closed and marked complete.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

LIVE_WRITER = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from webark.cdx.indexer import index_records
    from webark.index.collection import Collection
    from webark.warc.writer import WarcWriter

    root, out, captures, batch = sys.argv[1], Path(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    coll = Collection.open(root)
    store = coll.store()
    app = None
    pending = []
    with WarcWriter(out, prefix="LIVE") as w:
        for i in range(captures):
            body = f"<html><title>Live page {i}</title><p>capture number {i}</p></html>"
            resp = (f"HTTP/1.1 200 OK\\r\\nContent-Type: text/html\\r\\n"
                    f"Content-Length: {len(body)}\\r\\n\\r\\n{body}").encode()
            url = f"http://live.test/page{i}.html"
            recs = w.write(*w.builder.exchange(url, resp, b"GET / HTTP/1.1\\r\\n\\r\\n"))
            if app is None:
                name = Path(recs[0].path).name  # records carry the final name
                app = store.append_to(name)
                coll.locate(name, recs[0].path + ".open")  # where it is while written
                print("OPEN", name, recs[0].path + ".open", flush=True)
            pending += index_records(recs, name)
            if (i + 1) % batch == 0:
                app.add(pending, recs[-1].offset + recs[-1].length)
                pending = []
                print("BATCH", i + 1, flush=True)
                time.sleep(0.01)
        app.add(pending, recs[-1].offset + recs[-1].length)
    final = w.paths[0]
    app.finish(size=Path(final).stat().st_size)
    coll.locate(name, final)
    print("DONE", final, flush=True)
""")


def run_live_writer(root: Path, out: Path, captures: int, batch: int) -> subprocess.Popen[str]:
    """A process writing ``captures`` captures into a WARC and appending their lines to
    the collection's store every ``batch`` captures (as the capture back end will)."""
    argv = [sys.executable, "-c", LIVE_WRITER, str(root), str(out), str(captures), str(batch)]
    return subprocess.Popen(argv, stdout=subprocess.PIPE, text=True)
