"""Scale: insert N originals (default 50,000, about 10 s, so the suite stays fast;
``WEBARK_DEDUP_ROWS=1000000`` for the 1M measurement), then look up exact-URL hits,
digest-only hits and misses. Runs in a subprocess so its peak memory can be measured.
Figures are printed (``pytest -s``).

Measured on the development machine (2 vCPUs, shared with other jobs), 1,000,000
originals in 10 WARC files, 900,000 distinct digests, URLs ~55 chars, uuid record ids,
batches of 20,000 via ``add_many``: insert 69–100 s (10,000–14,500/s; user CPU 54 s of
it is Python: digest decoding and URL canonicalization), file 472 MB (472 B per
original, three B-trees), lookups ~11,000–21,000/s exact-URL, ~15,000–17,000/s
digest-only, ~30,000/s misses (canonicalizing the URL is most of a lookup), peak RSS
~105–116 MB (32 MiB page cache; the same at 200,000 rows).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

ROWS = int(os.environ.get("WEBARK_DEDUP_ROWS", "50000"))

SCRIPT = textwrap.dedent("""
    import base64, hashlib, json, os, random, resource, sys, time
    from webark.dedup.sqlite_dedup import open_index

    n, path = int(sys.argv[1]), sys.argv[2]
    distinct = n * 9 // 10  # 10 % of the originals share a payload with another URL

    def url(i):
        return f"http://host{i % 5000}.example.com/path/{i}/page.html?q={i * 7}"

    def dig(i):
        raw = hashlib.sha1(str(i % distinct).encode()).digest()
        return "sha1:" + base64.b32encode(raw).decode()

    def row(i):
        date = f"2024-{1 + i % 12:02d}-{1 + i % 28:02d}T{i % 24:02d}:{i % 60:02d}:00Z"
        return (url(i), dig(i), date, f"<urn:uuid:{i:08x}-0000-4000-8000-000000000000>",
                f"crawl-{i // 100000:05d}.warc.gz", i * 1000, None, None)

    out = {}
    idx = open_index(path, commit_every=20000)
    t = time.perf_counter()
    for s in range(0, n, 20000):
        idx.add_many(row(i) for i in range(s, min(n, s + 20000)))
    idx.flush()
    out["insert_s"] = time.perf_counter() - t
    out["counts"] = idx.counts()
    idx.close()
    out["bytes"] = os.path.getsize(path)
    idx = open_index(path, readonly=True)
    rnd, m = random.Random(1), 20000
    for name in ("exact", "agnostic", "miss"):
        picks = [rnd.randrange(n) for _ in range(m)]
        t = time.perf_counter()
        if name == "exact":
            res = [idx.lookup(url(i), dig(i)) for i in picks]
            ok = all(h is not None and h.exact_url and h.original.target_uri == url(i)
                     for h, i in zip(res, picks))
        elif name == "agnostic":
            res = [idx.lookup(f"http://elsewhere.example/{i}", dig(i)) for i in picks]
            ok = all(h is not None and not h.exact_url and h.original.payload_digest == dig(i)
                     for h, i in zip(res, picks))
        else:
            absent = [
                "sha1:" + base64.b32encode(hashlib.sha1(b"miss%d" % i).digest()).decode()
                for i in picks
            ]
            t = time.perf_counter()
            res = [idx.lookup(url(i), d) for i, d in zip(picks, absent)]
            ok = all(h is None for h in res)
        out[name + "_per_s"] = m / (time.perf_counter() - t)
        out[name + "_ok"] = ok
    # VmHWM, not ru_maxrss: subprocess spawns with vfork, and at exec the kernel folds
    # the parent's RSS (a long pytest run: hundreds of MB) into the child's ru_maxrss
    hwm = [ln for ln in open("/proc/self/status") if ln.startswith("VmHWM:")]
    out["maxrss_mb"] = (int(hwm[0].split()[1]) if hwm else
                        resource.getrusage(resource.RUSAGE_SELF).ru_maxrss) / 1024
    print(json.dumps(out))
""")


def test_many_originals(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(ROWS), str(tmp_path / "big.sqlite")],
        capture_output=True,
        text=True,
        timeout=1200,
    )
    assert proc.returncode == 0, proc.stderr
    r = json.loads(proc.stdout)
    print(
        f"\n{ROWS:,} originals: insert {r['insert_s']:.1f} s ({ROWS / r['insert_s']:,.0f}/s), "
        f"{r['bytes'] / 1e6:.1f} MB ({r['bytes'] / ROWS:.0f} B/original); lookups/s: "
        f"exact {r['exact_per_s']:,.0f}, digest-only {r['agnostic_per_s']:,.0f}, "
        f"miss {r['miss_per_s']:,.0f}; peak RSS {r['maxrss_mb']:.0f} MB"
    )
    assert r["exact_ok"] and r["agnostic_ok"] and r["miss_ok"]
    assert r["counts"]["by_url"] == ROWS
    assert r["counts"]["by_digest"] == ROWS * 9 // 10
    # sizes, not speeds (no timing assertions in tests: the rates are printed above)
    assert r["bytes"] / ROWS < 650
    assert r["maxrss_mb"] < 400  # bounded: page cache 32 MiB + Python
