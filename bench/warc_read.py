#!/usr/bin/env python3
"""bench/warc_read.py — WARC read throughput: webark vs warcio vs fastwarc vs the isal floor.

    .venv/bin/python bench/warc_read.py                 # synth-20k (~152.7 MB), median of 3
    .venv/bin/python bench/warc_read.py --runs 5
    .venv/bin/python bench/warc_read.py --quick         # synth-2k, 1 run: smoke test
    .venv/bin/python bench/warc_read.py --file X.warc.gz [--tools webark,fastwarc]

Tools (each run is a fresh child process, so imports and peak RSS are its own):

  webark        ArchiveReader(path), every record, ``rec.block.read_all()``
  webark+http   the same, plus ``rec.http`` (parsed HTTP head) for response records,
                as the CDX indexer does
  warcio        warcio ArchiveIterator(f), ``rec.content_stream().read()`` for every record
  fastwarc      fastwarc ArchiveIterator(path, any_type, parse_http=False),
                ``rec.reader.read()`` (the reader webark's fast path is built on)
  isal          isal.igzip.open(path).read(1 MiB) until EOF: the gunzip floor (gzip only)

Timing: ``read s`` is wall time from just after the imports to the last byte (steady-state
throughput, what scales with the file); ``CPU s`` is the process CPU time of that same
section; ``process s`` is spawn-to-exit wall time (what shared/peers/BASELINE.md reports:
interpreter start and imports included); ``import s`` is the import time alone. MB/s is
uncompressed WARC bytes (10^6) per read second; records/s counts every WARC record
(warcinfo included), the same count for all tools. Runs are interleaved (round r runs
every tool once) so slow phases of the shared VM hit every tool alike; each figure is the
median over runs. The page cache is warmed first. A run whose wall time exceeds its CPU
time by more than 10 % had its core taken away (busy VM): the output says how many.
Peak RSS is the child's VmHWM (the kernel folds the parent's RSS into a vfork-spawned
child's ``ru_maxrss``, which is kept in the JSON as ``rusage_maxrss_kb``).

warcio's ``content_stream()`` also undoes chunking and Content-Encoding (its normal use);
the others hand over the stored bytes.

Target (issue): webark >= 0.75 x the isal floor (MB/s). ``--check`` exits 1 when missed;
exit 2 means a consistency check failed (record counts or bytes differ between tools).
Last line of stdout is one JSON object.
"""

import sys
import time

_T0 = time.perf_counter()


# -- children: keep their imports local, so each measures only its own tool ------------------
def _child_webark(path: str, http: bool) -> dict:
    from webark.warc.reader import ArchiveReader

    t1, c1 = time.perf_counter(), time.process_time()
    reader = ArchiveReader(path)
    n = nbytes = nhttp = 0
    for rec in reader:
        nbytes += len(rec.block.read_all())
        n += 1
        if http and rec.type == "response" and rec.http is not None:
            nhttp += 1
    t2, c2 = time.perf_counter(), time.process_time()
    return {"t1": t1, "t2": t2, "cpu_s": c2 - c1, "records": n, "bytes": nbytes,
            "http_heads": nhttp, "engine": reader.engine, "problems": len(reader.problems),
            "dist": "webark"}


def _child_warcio(path: str) -> dict:
    from warcio.archiveiterator import ArchiveIterator

    t1, c1 = time.perf_counter(), time.process_time()
    n = nbytes = 0
    with open(path, "rb") as f:
        for rec in ArchiveIterator(f):
            nbytes += len(rec.content_stream().read())
            n += 1
    t2, c2 = time.perf_counter(), time.process_time()
    return {"t1": t1, "t2": t2, "cpu_s": c2 - c1, "records": n, "bytes": nbytes, "dist": "warcio"}


def _child_fastwarc(path: str) -> dict:
    from fastwarc.warc import ArchiveIterator, WarcRecordType

    t1, c1 = time.perf_counter(), time.process_time()
    n = nbytes = 0
    for rec in ArchiveIterator(path, record_types=WarcRecordType.any_type, parse_http=False):
        nbytes += len(rec.reader.read())
        n += 1
    t2, c2 = time.perf_counter(), time.process_time()
    return {"t1": t1, "t2": t2, "cpu_s": c2 - c1, "records": n, "bytes": nbytes, "dist": "FastWARC"}


def _child_isal(path: str) -> dict:
    from isal import igzip

    t1, c1 = time.perf_counter(), time.process_time()
    nbytes = 0
    with igzip.open(path, "rb") as g:  # reads every gzip member (multi-member file)
        while True:
            d = g.read(1 << 20)
            if not d:
                break
            nbytes += len(d)
    t2, c2 = time.perf_counter(), time.process_time()
    return {"t1": t1, "t2": t2, "cpu_s": c2 - c1, "records": None, "bytes": nbytes, "dist": "isal"}


def _vm_hwm_kb() -> int | None:
    """Peak RSS of this process image (Linux VmHWM). getrusage's ru_maxrss is not enough
    here: the kernel folds the parent's RSS at exec time into it (subprocess spawns with
    vfork), so every child would show at least the parent's size."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def _child(tool: str, path: str) -> None:
    if tool == "webark":
        r = _child_webark(path, http=False)
    elif tool == "webark+http":
        r = _child_webark(path, http=True)
    elif tool == "warcio":
        r = _child_warcio(path)
    elif tool == "fastwarc":
        r = _child_fastwarc(path)
    elif tool == "isal":
        r = _child_isal(path)
    else:
        raise SystemExit(f"unknown tool {tool}")
    t1, t2 = r.pop("t1"), r.pop("t2")
    r.update(tool=tool, import_s=t1 - _T0, read_s=t2 - t1)
    from importlib.metadata import version

    r["version"] = version(r.pop("dist"))
    r["vm_hwm_kb"] = _vm_hwm_kb()
    import json

    print(json.dumps(r))


# -- parent ---------------------------------------------------------------------------------
TOOLS = ("webark", "webark+http", "warcio", "fastwarc", "isal")
TARGET_VS_ISAL = 0.75
DEFAULT_RECORDS = 20000
QUICK_RECORDS = 2000


def _detect(path: str) -> str:
    with open(path, "rb") as f:
        head = f.read(4)
    if head[:2] == b"\x1f\x8b":
        return "gzip"
    if head == b"\x28\xb5\x2f\xfd":
        return "zstd"
    return "none"


def _uncompressed_size(path: str, compression: str) -> int:
    import os

    if compression == "none":
        return os.path.getsize(path)
    if compression == "zstd":
        import zstandard

        n = 0
        with open(path, "rb") as f, zstandard.ZstdDecompressor().stream_reader(
                f, read_across_frames=True) as r:
            while d := r.read(1 << 20):
                n += len(d)
        return n
    from isal import igzip

    n = 0
    with igzip.open(path, "rb") as g:
        while d := g.read(1 << 20):
            n += len(d)
    return n


def main(argv: list[str] | None = None) -> int:
    import argparse
    import json
    import os

    import _common as c

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--file", help="WARC to read (default: generated synth-20k.warc.gz)")
    ap.add_argument("--runs", type=int, help="runs per tool, median reported (default 3; "
                    "1 with --quick)")
    ap.add_argument("--quick", action="store_true",
                    help=f"smoke run: synth file of {QUICK_RECORDS} records, 1 run")
    ap.add_argument("--records", type=int,
                    help=f"records of the generated file (default {DEFAULT_RECORDS})")
    ap.add_argument("--tools", default=",".join(TOOLS),
                    help=f"comma list, subset of {','.join(TOOLS)}")
    ap.add_argument("--check", action="store_true",
                    help=f"exit 1 if webark < {TARGET_VS_ISAL} x the isal floor")
    args = ap.parse_args(argv)

    tools = [t.strip() for t in args.tools.split(",") if t.strip()]
    for t in tools:
        if t not in TOOLS:
            ap.error(f"unknown tool {t!r}")
    runs = args.runs or (1 if args.quick else 3)
    if args.file:
        path = os.path.abspath(args.file)
        if not os.path.isfile(path):
            ap.error(f"no such file: {args.file}")
    else:
        n = args.records or (QUICK_RECORDS if args.quick else DEFAULT_RECORDS)
        path = str(c.synth_warc(n))
    compression = _detect(path)
    if compression != "gzip" and "isal" in tools:
        c.log(f"{compression} file: no isal floor")
        tools.remove("isal")

    c.warm_cache(path)
    file_bytes = os.path.getsize(path)
    unc = _uncompressed_size(path, compression)
    c.log(f"file={path} bytes={file_bytes} uncompressed={unc} runs={runs}")

    me = os.path.abspath(__file__)
    by_tool: dict[str, list[c.ChildRun]] = {t: [] for t in tools}
    for r in range(runs):
        for t in tools:
            cr = c.run_child([sys.executable, me, "--child", t, path])
            by_tool[t].append(cr)
            rss = cr.result["vm_hwm_kb"] or cr.maxrss_kb
            c.log(f"run {r + 1}/{runs} {t:12s} read {cr.result['read_s']:.3f} s  "
                  f"process {cr.wall_s:.3f} s  rss {rss / 1024:.1f} MB")

    # one record count for everybody (as BASELINE.md): fastwarc's, else webark's
    ref = next((by_tool[t][0].result["records"] for t in ("fastwarc", "webark", "webark+http",
                                                          "warcio") if t in by_tool), None)
    warnings: list[str] = []
    for t, rs in by_tool.items():
        for cr in rs:
            got = cr.result["records"]
            if got is not None and ref is not None and got != ref:
                warnings.append(f"{t} read {got} records, expected {ref}")
            if t == "isal" and cr.result["bytes"] != unc:
                warnings.append(f"isal gave {cr.result['bytes']} bytes, expected {unc}")
            if t.startswith("webark") and cr.result.get("problems"):
                warnings.append(f"{t}: {cr.result['problems']} problems, engine "
                                f"{cr.result['engine']}")
    if "webark" in by_tool and "fastwarc" in by_tool and \
            by_tool["webark"][0].result["bytes"] != by_tool["fastwarc"][0].result["bytes"]:
        warnings.append("webark and fastwarc block bytes differ")

    out: dict[str, dict] = {}
    for t, rs in by_tool.items():
        m = c.median_run(rs)
        secs = m.result["read_s"]
        out[t] = {
            "version": m.result["version"],
            "read_secs": round(secs, 4),
            "all_read_secs": [round(x.result["read_s"], 4) for x in rs],
            "mb_per_s": round(unc / 1e6 / secs, 1),
            "records_per_s": round(ref / secs) if ref else None,
            "process_secs": round(c.median([x.wall_s for x in rs]), 4),
            "import_secs": round(c.median([x.result["import_s"] for x in rs]), 4),
            "peak_rss_kb": m.result["vm_hwm_kb"] or m.maxrss_kb,
            "rusage_maxrss_kb": m.maxrss_kb,
            # CPU time is a second view, not immune to a busy VM either: steal time counts
            "read_cpu_secs": round(c.median([x.result["cpu_s"] for x in rs]), 4),
            "process_cpu_secs": round(m.cpu_s, 3),
        }
        if m.result.get("http_heads"):
            out[t]["http_heads"] = m.result["http_heads"]

    def ratio(a: str, b: str, key: str = "read_secs") -> float | None:
        if a in out and b in out:
            return round(out[b][key] / out[a][key], 3)  # throughput a / throughput b
        return None

    ratios = {}
    for a in ("webark", "webark+http", "warcio"):
        for b in ("isal", "fastwarc"):
            if ratio(a, b) is not None:
                ratios[f"{a}/{b}"] = ratio(a, b)
                ratios[f"{a}/{b} (cpu)"] = ratio(a, b, "read_cpu_secs")
                ratios[f"{a}/{b} (process)"] = ratio(a, b, "process_secs")
    overhead = {}
    if ref and "fastwarc" in out:
        for a in ("webark", "webark+http"):
            if a in out:
                overhead[a] = round((out[a]["read_secs"] - out["fastwarc"]["read_secs"])
                                    / ref * 1e6, 2)
    # single-threaded children: wall ~= CPU unless the VM took the core away
    contended = {t: sum(1 for x in rs if x.result["read_s"] > 1.10 * x.result["cpu_s"])
                 for t, rs in by_tool.items()}
    n_contended = sum(contended.values())
    met = None
    if "webark/isal" in ratios:
        met = ratios["webark/isal"] >= TARGET_VS_ISAL

    # -- human table ------------------------------------------------------------------------
    mi = c.machine_info()
    print(f"\nWARC read: {path}")
    print(f"  {file_bytes / 1e6:.1f} MB on disk, {unc / 1e6:.1f} MB uncompressed, "
          f"{ref} records; median of {runs} run(s); {mi['cpu']}, {mi['nproc']} CPU, "
          f"Python {mi['python']}")
    hdr = (f"  {'tool':12s} {'version':8s} {'read s':>7s} {'MB/s':>7s} {'rec/s':>8s} "
           f"{'CPU s':>6s} {'process s':>9s} {'import s':>8s} {'RSS MB':>7s}  read s (all runs)")
    print(hdr)
    print("  " + "-" * (len(hdr) - 2))
    for t, o in out.items():
        print(f"  {t:12s} {o['version']:8s} {o['read_secs']:7.3f} {o['mb_per_s']:7.1f} "
              f"{o['records_per_s'] or 0:8,d} {o['read_cpu_secs']:6.3f} {o['process_secs']:9.3f} "
              f"{o['import_secs']:8.3f} "
              f"{o['peak_rss_kb'] / 1024:7.1f}  "
              + " ".join(f"{x:.3f}" for x in o["all_read_secs"]))
    print()
    for a in ("webark", "webark+http", "warcio"):
        parts = [f"{ratios[k]:.2f}x {b} (CPU s: {ratios[k + ' (cpu)']:.2f}x)"
                 for b in ("isal", "fastwarc") if (k := f"{a}/{b}") in ratios]
        if parts:
            print(f"  {a:12s} = " + ", ".join(parts))
    for a, us in overhead.items():
        print(f"  {a:12s} costs {us:.2f} us/record more than fastwarc alone")
    if met is not None:
        print(f"  target webark >= {TARGET_VS_ISAL}x isal floor: "
              f"{'MET' if met else 'NOT MET'} ({ratios['webark/isal']:.2f}x)")
    print("  (shared VM: differences under ~10 % are noise, see shared/peers/BASELINE.md)")
    if n_contended:
        print(f"  NOISY: in {n_contended} of {runs * len(by_tool)} runs wall time exceeded CPU "
              f"time by >10 % (the VM was busy): "
              + ", ".join(f"{t} {k}/{runs}" for t, k in contended.items() if k)
              + "; check `uptime` and rerun")
    for w in warnings:
        print(f"  WARNING: {w}")
    print(json.dumps({
        "bench": "warc_read", "file": path, "file_bytes": file_bytes,
        "uncompressed_bytes": unc, "compression": compression, "warc_records": ref,
        "runs": runs, "machine": mi, "tools": out, "ratios": ratios,
        "overhead_us_per_record_vs_fastwarc": overhead,
        "target": {"webark/isal_min": TARGET_VS_ISAL, "met": met}, "warnings": warnings,
        "contended_runs": contended,
    }))
    if warnings:
        return 2
    return 1 if (args.check and met is False) else 0


if __name__ == "__main__":
    if len(sys.argv) > 3 and sys.argv[1] == "--child":
        _child(sys.argv[2], sys.argv[3])
    else:
        sys.exit(main())
