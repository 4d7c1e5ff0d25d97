#!/usr/bin/env python3
"""bench/spark.py — ``webark spark index`` (local[1], local[2]) against ``webark index -j1
/ -j2`` on the same synthetic WARC set, records/s.

    .venv/bin/python bench/spark.py                # 10 files x synth-20k = 200k records
    .venv/bin/python bench/spark.py --quick        # 4 files x synth-2k: smoke run
    .venv/bin/python bench/spark.py --files 4 --records 20000 --masters local[2]

The set is N copies of the peers' synthetic WARC (``make_warc.py``, as bench/index.py)
under distinct names (real copies, not links: ``webark index`` reads a file reached
twice once). Each tool runs once per configuration in a fresh process, so the JVM start
(~10 s here) is in Spark's process time; ``job s`` is the job alone (from Spark's summary
line, after the session is up). ``webark index`` runs with ``--sort -o`` (its output then
equals the Spark job's); the Spark job writes the sorted CDXJ and ZipNum shards. The
outputs are compared byte for byte, and 200 ZipNum queries against the sorted file.

Needs PySpark and Java (``WEBARK_SPARK=1 bash scripts/setup.sh``). Last line of stdout
is one JSON object.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as c

WEBARK = str(Path(sys.executable).parent / "webark")


def _warc_set(records: int, files: int) -> tuple[Path, list[Path]]:
    src = c.synth_warc(records)
    d = c.cache_dir() / f"spark-set-{files}x{src.name.split('.')[0]}"
    d.mkdir(exist_ok=True)
    out = []
    for i in range(files):
        p = d / f"SYNTH-2024010100000{i:02d}-{i:05d}.warc.gz"
        if not p.is_file() or p.stat().st_size != src.stat().st_size:
            shutil.copyfile(src, p)
        out.append(p)
    return d, out


def _timed(argv: list[str]) -> tuple[float, str]:
    t0 = time.perf_counter()
    r = subprocess.run(argv, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if r.returncode not in (0, 1):
        raise SystemExit(f"failed ({r.returncode}): {' '.join(argv)}\n{r.stderr[-2000:]}")
    return wall, r.stderr


def _sha(p: Path) -> tuple[str, int]:
    data = p.read_bytes()
    return hashlib.sha256(data).hexdigest(), data.count(b"\n")


def _check_zipnum(idx: Path, cdx: Path, samples: int = 200) -> int:
    """Queries answered by the ZipNum index and the sorted file alike (exact URL keys
    and prefixes picked from the file)."""
    from webark.cdx.formats import format_cdxj
    from webark.index.sorted_file import SortedCdxFile
    from webark.index.source import KeyRange
    from webark.index.zipnum import ZipNumIndex

    keys = [ln.split(" ", 1)[0] for ln in cdx.read_text("utf-8", "surrogateescape").splitlines()]
    rnd = random.Random(16)
    zn, flat = ZipNumIndex(idx), SortedCdxFile(cdx)
    for k in rnd.sample(keys, min(samples, len(keys))):
        for rng in (KeyRange(k + " ", k + "!"), KeyRange(k[: max(1, len(k) // 2)], k + "~")):
            a = [format_cdxj(x) for x in zn.scan(rng)]
            assert a == [format_cdxj(x) for x in flat.scan(rng)], rng
    return samples


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--files", type=int, help="files in the set (default 10; 4 with --quick)")
    ap.add_argument("--records", type=int, help="records per file (default 20000)")
    ap.add_argument("--masters", default="local[1],local[2]")
    ap.add_argument("--jobs", default="1,2", help="webark index -j values")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--stats", action="store_true",
                    help="also compare `webark spark stats --json` with `webark stats --json`")
    args = ap.parse_args()
    files = args.files or (4 if args.quick else 10)
    records = args.records or (2000 if args.quick else 20000)
    d, warcs = _warc_set(records, files)
    for w in warcs:
        c.warm_cache(w)
    total_bytes = sum(w.stat().st_size for w in warcs)
    nrec = files * (records + 1)  # make_warc.py: a warcinfo + N records per file
    out = c.cache_dir() / "spark-out"
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir()
    c.log(f"set={d} files={files} records={nrec} bytes={total_bytes}")
    rows: dict[str, dict[str, object]] = {}
    for j in [int(x) for x in args.jobs.split(",") if x]:
        o = out / f"index-j{j}.cdxj"
        wall, _ = _timed([WEBARK, "index", "--sort", "--no-progress", "-j", str(j), "-o",
                          str(o), *map(str, warcs)])
        sha, lines = _sha(o)
        rows[f"webark index -j{j}"] = {"process_s": round(wall, 2), "job_s": None,
                                       "records_per_s": round(nrec / wall), "lines": lines,
                                       "sha256": sha}
        c.log(f"webark index -j{j}: {wall:.1f} s")
    for m in [x for x in args.masters.split(",") if x]:
        o = out / f"spark-{m}.cdxj"
        z = out / f"zipnum-{m}"
        wall, err = _timed([WEBARK, "spark", "index", "--master", m, "--cdx", str(o),
                            "--zipnum", str(z), *map(str, warcs)])
        job = re.search(r"written, ([\d.]+) s", err)
        job_s = float(job.group(1)) if job else None
        sha, lines = _sha(o)
        rows[f"spark index {m}"] = {"process_s": round(wall, 2), "job_s": job_s,
                                    "records_per_s": round(nrec / wall),
                                    "job_records_per_s": round(nrec / job_s) if job_s else None,
                                    "lines": lines, "sha256": sha}
        c.log(f"spark index {m}: {wall:.1f} s (job {job_s} s)")
    shas = {r["sha256"] for r in rows.values()}
    same = len(shas) == 1
    spark_rows = [k for k in rows if k.startswith("spark")]
    queries = _check_zipnum(out / f"zipnum-{spark_rows[-1].split()[-1]}" / "index.idx",
                            out / f"{spark_rows[-1].replace('spark index ', 'spark-')}.cdxj"
                            ) if spark_rows else 0
    stats_same = None
    if args.stats:
        m = [x for x in args.masters.split(",") if x][-1]
        outs = {}
        for name, argv in (("webark stats", [WEBARK, "stats", "--json"]),
                           (f"spark stats {m}", [WEBARK, "spark", "stats", "--json",
                                                 "--master", m])):
            t0 = time.perf_counter()
            r = subprocess.run([*argv, *map(str, warcs)], capture_output=True, text=True)
            outs[name] = json.loads(r.stdout)
            c.log(f"{name}: {time.perf_counter() - t0:.1f} s")
        stats_same = len({json.dumps(v, sort_keys=True) for v in outs.values()}) == 1
    print(f"\nCDX indexing of {files} WARCs, {nrec:,} records, {total_bytes / 1e6:.1f} MB "
          f"on disk; {c.machine_info()['cpu']}, {os.cpu_count()} CPU (shared VM)")
    print(f"  {'tool':<22} {'process s':>9} {'rec/s':>8} {'job s':>7} {'job rec/s':>9} "
          f"{'lines':>8}")
    for k, r in rows.items():
        print(f"  {k:<22} {r['process_s']:>9} {r['records_per_s']:>8,} "
              f"{r['job_s'] if r['job_s'] is not None else '-':>7} "
              f"{r.get('job_records_per_s') or '-':>9} {r['lines']:>8}")
    base = rows.get("webark index -j1")
    ratios = {}
    if base:
        for k, r in rows.items():
            ratios[f"{k} / webark index -j1"] = round(
                float(base["process_s"]) / float(r["process_s"]), 2)  # type: ignore[arg-type]
            if r.get("job_s"):
                ratios[f"{k} job / webark index -j1"] = round(
                    float(base["process_s"]) / float(r["job_s"]), 2)  # type: ignore[arg-type]
        for k, v in ratios.items():
            print(f"  {k:<42} {v:5.2f} x" + ("" if " job " in k else " (process time)"))
    print(f"  outputs byte-identical: {same}; ZipNum = sorted file on {queries} keys x 2 queries")
    if stats_same is not None:
        print(f"  spark stats = webark stats (JSON): {stats_same}")
    print(json.dumps({"bench": "spark", "files": files, "records": nrec,
                      "bytes": total_bytes, "machine": c.machine_info(), "tools": rows,
                      "ratios": ratios, "same_output": same, "zipnum_queries": queries * 2,
                      "stats_same": stats_same}))
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
