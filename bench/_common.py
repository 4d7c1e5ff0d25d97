"""Helpers shared by the benchmarks in bench/ (not part of the webark package).

* where things are: the project root, the peers' scripts (``../shared/peers`` beside the
  project, or ``$WEBARK_PEERS_DIR``) and the cache of generated inputs
  (``/tmp/webark-bench`` or ``$WEBARK_BENCH_CACHE``);
* a Python that has warcio + isal for the peers' ``make_warc.py`` (this interpreter when
  it has them, else a venv made once in ``<cache>/venv-tools``);
* deterministic synthetic WARCs, generated once and cached;
* running one measurement in a fresh child process and getting *its* rusage (peak RSS,
  CPU) through ``os.wait4``, so children never mix their figures.
"""

from __future__ import annotations

import asyncio
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Coroutine
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")

ROOT = Path(__file__).resolve().parent.parent
"""The project root (the folder holding bench/ and src/)."""

# sha256 of make_warc.py outputs recorded in shared/peers/BASELINE.md (default seed/level)
KNOWN_SHA256 = {
    20000: "6c3bb67067aa1ad2db22028eccd2da0964dd8f3ff3405f06bb00449a003edcc1",
}


def peers_dir() -> Path:
    env = os.environ.get("WEBARK_PEERS_DIR")
    if env:
        return Path(env)
    for cand in (ROOT.parent / "shared" / "peers", Path("/work/shared/peers")):
        if (cand / "make_warc.py").is_file():
            return cand
    raise SystemExit("make_warc.py not found: set WEBARK_PEERS_DIR to the peers folder")


def cache_dir() -> Path:
    d = Path(os.environ.get("WEBARK_BENCH_CACHE", "/tmp/webark-bench"))
    d.mkdir(parents=True, exist_ok=True)
    return d


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def _has_modules(python: str, modules: tuple[str, ...]) -> bool:
    code = "import " + ", ".join(modules)
    return subprocess.run([python, "-c", code], capture_output=True).returncode == 0


def tools_python(modules: tuple[str, ...] = ("warcio", "isal")) -> str:
    """A Python interpreter that can import ``modules``: this one if it can, else
    ``<cache>/venv-tools/bin/python`` (created and ``pip install``-ed on first use)."""
    if _has_modules(sys.executable, modules):
        return sys.executable
    venv = cache_dir() / "venv-tools"
    py = venv / "bin" / "python"
    if not py.exists():
        log(f"creating {venv}")
        subprocess.run(["python3", "-m", "venv", str(venv)], check=True)
    if not _has_modules(str(py), modules):
        log(f"pip install {' '.join(modules)} into {venv}")
        subprocess.run([str(py), "-m", "pip", "install", "-q", *modules], check=True)
    return str(py)


def synth_warc(records: int) -> Path:
    """``<cache>/synth-{records}.warc.gz`` from the peers' make_warc.py (default seed and
    level, so byte-identical to the peers' file of the same size); generated when missing.
    A sidecar ``….json`` (make_warc's summary) marks a complete file."""
    name = f"synth-{records // 1000}k" if records % 1000 == 0 else f"synth-{records}"
    out = cache_dir() / f"{name}.warc.gz"
    meta = out.with_name(out.name + ".json")
    if out.is_file() and meta.is_file():
        return out
    py = tools_python()
    script = peers_dir() / "make_warc.py"
    # generate under the final name (make_warc.py writes it into the warcinfo record, so
    # the name is part of the bytes) in a scratch folder, then move into place
    tmpdir = Path(tempfile.mkdtemp(prefix=".gen-", dir=cache_dir()))
    log(f"generating {out} ({records} records) with {script} ...")
    t0 = time.perf_counter()
    try:
        res = subprocess.run([py, str(script), str(records), str(tmpdir / out.name)],
                             check=True, stdout=subprocess.PIPE, text=True)
        summary = json.loads(res.stdout.strip().splitlines()[-1])
        for f in tmpdir.iterdir():
            os.replace(f, out.with_name(f.name))
    finally:
        shutil.rmtree(tmpdir, ignore_errors=True)
    summary["out"] = str(out)
    meta.write_text(json.dumps(summary) + "\n")
    want = KNOWN_SHA256.get(records)
    if want and summary.get("sha256") != want:
        log(f"note: {out.name} sha256 {summary.get('sha256')} differs from BASELINE.md's {want}")
    log(f"generated in {time.perf_counter() - t0:.1f} s")
    return out


def warm_cache(path: str | os.PathLike[str]) -> None:
    """Read the file once so every timed run sees a warm page cache (as the peers did)."""
    with open(path, "rb", buffering=0) as f:
        while f.read(1 << 24):
            pass


@dataclass
class ChildRun:
    """One child process: its JSON result, wall seconds (spawn to exit) and rusage."""

    result: dict
    wall_s: float
    maxrss_kb: int
    cpu_s: float


def run_child(argv: list[str]) -> ChildRun:
    """Run ``argv`` (which prints one JSON line last on stdout) and collect the child's
    own rusage with ``os.wait4`` (``RUSAGE_CHILDREN`` would be a max over all children)."""
    t0 = time.perf_counter()
    p = subprocess.Popen(argv, stdout=subprocess.PIPE)
    assert p.stdout is not None
    out = p.stdout.read()
    p.stdout.close()
    _pid, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode != 0:
        raise RuntimeError(f"child failed ({p.returncode}): {' '.join(argv)}")
    result = json.loads(out.decode().strip().splitlines()[-1])
    # ru_maxrss is in KiB on Linux
    return ChildRun(result, wall, int(ru.ru_maxrss), ru.ru_utime + ru.ru_stime)


def median_run(runs: list[ChildRun], key: str = "read_s") -> ChildRun:
    """The run with the median ``result[key]`` (lower median for an even count)."""
    srt = sorted(runs, key=lambda r: r.result[key])
    return srt[(len(srt) - 1) // 2]


def median(xs: list[float]) -> float:
    return statistics.median_low(xs) if xs else float("nan")


def machine_info() -> dict[str, object]:
    cpu = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {"cpu": cpu or platform.processor(), "nproc": os.cpu_count(),
            "python": platform.python_version(), "kernel": platform.release()}


@dataclass(frozen=True)
class LoadgenArgs:
    """What a load generator child process is given on its command line (the server's
    port, a file of request paths, phase and warm-up seconds, keep-alive or not, and the
    PIDs whose CPU time it measures)."""

    port: int
    paths: list[str]
    seconds: float
    warm: float
    keepalive: bool
    pids: list[int]

    @classmethod
    def parse(cls, argv: list[str]) -> LoadgenArgs:
        """``PORT PATHS_FILE SECONDS WARM ka|new PID,PID…`` (as ``run_phase`` writes it)."""
        return cls(int(argv[0]), Path(argv[1]).read_text().split("\n"), float(argv[2]),
                   float(argv[3]), argv[4] == "ka", [int(p) for p in argv[5].split(",")])

    @staticmethod
    def argv(port: int, paths_file: Path, seconds: float, warm: float, keepalive: bool,
             pids: list[int]) -> list[str]:
        return [str(port), str(paths_file), str(seconds), str(warm),
                "ka" if keepalive else "new", ",".join(map(str, pids))]


def run_event_loop(coro: Coroutine[Any, Any, T]) -> T:
    """Run ``coro`` on uvloop when it is installed (the load generator must not be the
    bottleneck), else on asyncio's loop."""
    try:
        import uvloop
    except ImportError:
        return asyncio.run(coro)
    return uvloop.run(coro)
