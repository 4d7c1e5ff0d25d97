#!/usr/bin/env python3
"""bench/index.py — CDX indexing throughput: ``webark index`` vs cdxj-indexer.

    .venv/bin/python bench/index.py                  # synth-20k (~152.7 MB), median of 3
    .venv/bin/python bench/index.py --runs 5
    .venv/bin/python bench/index.py --quick          # synth-2k, 1 run: smoke test
    .venv/bin/python bench/index.py --file X.warc.gz [--tools webark,cdxj-indexer]
    .venv/bin/python bench/index.py --before main   # also webark as of git ref "main"

Tools (each run is a fresh child process; its output goes to a file in the cache):

  webark        ``webark index FILE -o OUT`` (CDXJ, the CLI defaults: POST folding on,
                one process per CPU for big files), run through the CLI entry point
  webark-j1     the same with ``-j 1`` (one process)
  webark@REF    with ``--before REF``: ``webark`` and ``webark-j1`` of the source tree
                at git ref REF (``git archive`` into the cache, put first on
                PYTHONPATH), so a change's before and after are measured in one run
  cdxj-indexer  webrecorder cdxj-indexer ``FILE -o OUT`` (default options), installed
                in its own venv (``<cache>/venv-cdxj``, created on first use; never in
                the project's .venv)

Timing: ``process s`` is spawn-to-exit wall time (interpreter start, imports and
worker start-up included: what a user waits for, and what shared/peers/BASELINE.md
reports); ``index s`` runs from just after the imports to the last line written.
MB/s is uncompressed WARC bytes (10^6) per second, records/s counts every WARC record.
Runs are interleaved (round r runs every tool once) so slow phases of the shared VM hit
every tool alike; the median run per tool is reported. The page cache is warmed first,
and webark's modules are byte-compiled first (``compileall``, as ``pip install`` does;
cdxj-indexer's venv already has its ``.pyc`` files): under ``PYTHONDONTWRITEBYTECODE``
an uncompiled source tree would add ~50 ms of compiling to every webark run.
The outputs are compared: on the synthetic WARC (no POST requests) webark's CDXJ must be
byte-identical to cdxj-indexer's.

Target (issue): webark >= 5 x cdxj-indexer (MB/s, process time). ``--check`` exits 1
when missed. Last line of stdout is one JSON object.
"""

import sys
import time

_T0 = time.perf_counter()


# -- children (no webark import at module level: cdxj-indexer runs in another venv) -----
def _child(tool: str, path: str, out: str) -> None:
    import json
    import os
    import resource

    if tool in ("webark", "webark-j1"):
        from webark.cli.main import cli

        args = ["index", path, "-o", out, "--no-progress"]
        if tool == "webark-j1":
            args += ["-j", "1"]
        t1 = time.perf_counter()
        try:
            cli.main(args, standalone_mode=False)
        except SystemExit as e:  # pragma: no cover - failures are reported as such
            if e.code:
                raise
        t2 = time.perf_counter()
        from importlib.metadata import version

        import webark

        ver = f"{version('webark')} ({os.path.dirname(os.path.dirname(webark.__file__))})"
    elif tool == "cdxj-indexer":
        from cdxj_indexer.main import write_cdx_index

        t1 = time.perf_counter()
        write_cdx_index(out, [path], {})
        t2 = time.perf_counter()
        from importlib.metadata import version

        ver = version("cdxj-indexer")
    else:
        raise SystemExit(f"unknown tool {tool}")
    ru_self = resource.getrusage(resource.RUSAGE_SELF)
    ru_kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    print(
        json.dumps(
            {
                "tool": tool,
                "version": ver,
                "import_s": t1 - _T0,
                "index_s": t2 - t1,
                "cpu_s": ru_self.ru_utime + ru_self.ru_stime + ru_kids.ru_utime + ru_kids.ru_stime,
            }
        )
    )


# -- parent -----------------------------------------------------------------------------------
TOOLS = ("webark", "webark-j1", "cdxj-indexer")
TARGET = 5.0
DEFAULT_RECORDS = 20000
QUICK_RECORDS = 2000
CDXJ_INDEXER = "cdxj-indexer==1.5.0"


def _cdxj_python(cache: "object") -> str:
    """``<cache>/venv-cdxj/bin/python`` with cdxj-indexer (made on first use)."""
    import subprocess
    from pathlib import Path

    venv = Path(str(cache)) / "venv-cdxj"
    py = venv / "bin" / "python"
    if not py.exists():
        print(f"creating {venv}", file=sys.stderr)
        subprocess.run(["python3", "-m", "venv", str(venv)], check=True)
    ok = subprocess.run([str(py), "-c", "import cdxj_indexer"], capture_output=True)
    if ok.returncode != 0:
        print(f"pip install {CDXJ_INDEXER} into {venv}", file=sys.stderr)
        subprocess.run([str(py), "-m", "pip", "install", "-q", CDXJ_INDEXER], check=True)
    return str(py)


def _uncompressed_size(path: str) -> int:
    import os

    with open(path, "rb") as f:
        gz = f.read(2) == b"\x1f\x8b"
    if not gz:
        return os.path.getsize(path)
    from isal import igzip

    n = 0
    with igzip.open(path, "rb") as g:
        while d := g.read(1 << 20):
            n += len(d)
    return n


def _count_records(path: str) -> int:
    from fastwarc.warc import ArchiveIterator, WarcRecordType

    return sum(
        1 for _ in ArchiveIterator(path, record_types=WarcRecordType.any_type, parse_http=False)
    )


def _compile_webark() -> None:
    """Write the ``.pyc`` files of the webark package (what an installed package has)."""
    import compileall
    import importlib.util
    from pathlib import Path

    spec = importlib.util.find_spec("webark")
    if spec is not None and spec.origin:
        compileall.compile_dir(str(Path(spec.origin).parent), quiet=1)


def _source_at(ref: str, cache: "object") -> str:
    """``<cache>/src-<commit>/src``: webark's source tree at git ref ``ref`` (extracted
    with ``git archive``, no worktree or checkout touched)."""
    import subprocess
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    sha = subprocess.run(["git", "-C", str(root), "rev-parse", "--verify", ref + "^{commit}"],
                         check=True, capture_output=True, text=True).stdout.strip()
    dest = Path(str(cache)) / f"src-{sha[:12]}"
    if not (dest / "src" / "webark" / "__init__.py").is_file():
        dest.mkdir(parents=True, exist_ok=True)
        tar = subprocess.run(["git", "-C", str(root), "archive", sha, "src"], check=True,
                             capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", str(dest)], input=tar, check=True)
    return str(dest / "src")


def main(argv: list[str] | None = None) -> int:
    import argparse
    import hashlib
    import json
    import os
    from pathlib import Path

    import _common as c

    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--file", help="WARC to index (default: generated synth-20k.warc.gz)")
    ap.add_argument("--runs", type=int, help="runs per tool (default 3; 1 with --quick)")
    ap.add_argument(
        "--quick",
        action="store_true",
        help=f"smoke run: synth file of {QUICK_RECORDS} records, 1 run",
    )
    ap.add_argument(
        "--records", type=int, help=f"records of the generated file (default {DEFAULT_RECORDS})"
    )
    ap.add_argument("--tools", default=",".join(TOOLS), help=f"subset of {','.join(TOOLS)}")
    ap.add_argument("--before", metavar="REF",
                    help="also run webark and webark-j1 of this git ref (before a change)")
    ap.add_argument(
        "--check", action="store_true", help=f"exit 1 if webark < {TARGET} x cdxj-indexer"
    )
    args = ap.parse_args(argv)
    tools = [t for t in args.tools.split(",") if t]
    for t in tools:
        if t not in TOOLS:
            ap.error(f"unknown tool {t}")
    runs = args.runs or (1 if args.quick else 3)
    cache = c.cache_dir()
    before_src = _source_at(args.before, cache) if args.before else None
    path = (
        Path(args.file)
        if args.file
        else c.synth_warc(args.records or (QUICK_RECORDS if args.quick else DEFAULT_RECORDS))
    )
    path = path.resolve()
    pythons = {"webark": sys.executable, "webark-j1": sys.executable}
    if "cdxj-indexer" in tools:
        pythons["cdxj-indexer"] = _cdxj_python(cache)
    if "webark" in tools or "webark-j1" in tools:
        _compile_webark()
    c.warm_cache(path)
    unc = _uncompressed_size(str(path))
    nrec = _count_records(str(path))
    size = path.stat().st_size
    c.log(f"file={path} bytes={size} uncompressed={unc} records={nrec} runs={runs}")
    outdir = cache / "index-out"
    outdir.mkdir(exist_ok=True)
    here = str(Path(__file__).resolve())
    commands: dict[str, list[str]] = {}
    for t in tools:
        commands[t] = [pythons[t], here, "--child", t]
        if before_src is not None and t in ("webark", "webark-j1"):
            commands[f"{t}@{args.before}"] = [
                "env", f"PYTHONPATH={before_src}", sys.executable, here, "--child", t]
    results: dict[str, list[c.ChildRun]] = {t: [] for t in commands}
    for r in range(runs):
        for t, argv in commands.items():
            out = outdir / f"{t}.cdxj"
            out.unlink(missing_ok=True)
            run = c.run_child([*argv, str(path), str(out)])
            results[t].append(run)
            c.log(
                f"run {r + 1}/{runs} {t:<13} index {run.result['index_s']:.3f} s  "
                f"process {run.wall_s:.3f} s  cpu {run.result['cpu_s']:.3f} s  "
                f"rss {run.maxrss_kb / 1024:.1f} MB"
            )

    def digest(t: str) -> tuple[str, int]:
        data = (outdir / f"{t}.cdxj").read_bytes()
        return hashlib.sha256(data).hexdigest(), data.count(b"\n")

    table: dict[str, dict[str, object]] = {}
    for t, rs in results.items():
        med = sorted(rs, key=lambda x: x.wall_s)[(len(rs) - 1) // 2]
        idx = c.median([x.result["index_s"] for x in rs])
        sha, lines = digest(t)
        table[t] = {
            "version": med.result["version"],
            "process_secs": round(med.wall_s, 4),
            "all_process_secs": [round(x.wall_s, 4) for x in rs],
            "index_secs": round(idx, 4),
            "mb_per_s": round(unc / 1e6 / med.wall_s, 1),
            "records_per_s": round(nrec / med.wall_s),
            "index_mb_per_s": round(unc / 1e6 / idx, 1),
            "cpu_secs": round(med.result["cpu_s"], 3),
            "peak_rss_kb": med.maxrss_kb,
            "lines": lines,
            "output_sha256": sha,
        }
    print(f"\nCDX indexing: {path}")
    print(
        f"  {size / 1e6:.1f} MB on disk, {unc / 1e6:.1f} MB uncompressed, {nrec} records;"
        f" median of {runs} run(s); {c.machine_info()['cpu']}, "
        f"{os.cpu_count()} CPU, Python {sys.version.split()[0]}"
    )
    print(
        f"  {'tool':<13} {'version':<8} {'process s':>9} {'MB/s':>7} {'rec/s':>8} "
        f"{'index s':>8} {'MB/s':>7} {'CPU s':>6} {'RSS MB':>7} {'lines':>6}"
    )
    for t, row in table.items():
        print(
            f"  {t:<13} {row['version']!s:<8} {row['process_secs']:>9.3f} "
            f"{row['mb_per_s']:>7.1f} {row['records_per_s']:>8,} {row['index_secs']:>8.3f} "
            f"{row['index_mb_per_s']:>7.1f} {row['cpu_secs']:>6.2f} "
            f"{row['peak_rss_kb'] / 1024:>7.1f} {row['lines']:>6}"
        )
    ratios: dict[str, float] = {}
    met = None
    if "cdxj-indexer" in table:
        base = table["cdxj-indexer"]
        for t in commands:
            if t == "cdxj-indexer":
                continue
            ratios[f"{t}/cdxj-indexer"] = round(
                float(base["process_secs"]) / float(table[t]["process_secs"]), 2
            )  # type: ignore[arg-type]
            ratios[f"{t}/cdxj-indexer (index s)"] = round(
                float(base["index_secs"]) / float(table[t]["index_secs"]), 2
            )  # type: ignore[arg-type]
        for k, v in ratios.items():
            print(f"  {k:<38} {v:5.2f} x")
        if "webark" in table:
            met = ratios["webark/cdxj-indexer"] >= TARGET
            print(
                f"  target webark >= {TARGET} x cdxj-indexer (process MB/s): "
                f"{'MET' if met else 'NOT MET'}"
            )
            same = table["webark"]["output_sha256"] == base["output_sha256"]
            print(f"  webark output identical to cdxj-indexer's: {same}")
    print("  (shared VM: differences under ~10 % are noise, see shared/peers/BASELINE.md)")
    print(
        json.dumps(
            {
                "bench": "index",
                "file": str(path),
                "file_bytes": size,
                "uncompressed_bytes": unc,
                "warc_records": nrec,
                "runs": runs,
                "machine": c.machine_info(),
                "tools": table,
                "ratios": ratios,
                "target": {"webark/cdxj-indexer_min": TARGET, "met": met},
                "same_output": (
                    table["webark"]["output_sha256"] == table["cdxj-indexer"]["output_sha256"]
                    if "webark" in table and "cdxj-indexer" in table
                    else None
                ),
            }
        )
    )
    return 1 if args.check and met is False else 0


if __name__ == "__main__":
    if len(sys.argv) >= 2 and sys.argv[1] == "--child":
        _child(sys.argv[2], sys.argv[3], sys.argv[4])
    else:
        sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parent))
        raise SystemExit(main())
