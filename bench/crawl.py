#!/usr/bin/env python3
"""bench/crawl.py — crawl throughput: ``webark crawl`` vs ``wget --recursive --warc-file``.

    .venv/bin/python bench/crawl.py              # median of 3, interleaved (~40 s)
    .venv/bin/python bench/crawl.py --runs 5
    .venv/bin/python bench/crawl.py --check      # exit 1 when the target is missed

Site: Debian's python3-doc served by nginx on 127.0.0.1:8801 through the peers'
``site.sh`` (``../shared/peers`` or ``$WEBARK_PEERS_DIR``). When the site is not
running, the script starts it and stops it again at the end (site.sh stops nginx by
its master PID).

Tools (each run a fresh child under ``/usr/bin/time -v``, fresh output folder):

  wget    exactly as peers/wget_crawl.sh: ``wget --recursive --level=inf --no-parent
          -e robots=off --warc-file=OUT/docs --no-verbose -P OUT/tree SEED``
  webark  ``.venv/bin/webark crawl --no-progress job.yaml`` with seeds [SEED],
          contact, allow_private, min_delay 0, max_delay 0, delay_factor 0,
          dedup true, scope {max_trans_hops: 0}; WARC, digests, crawl.log and reports
          on (their defaults). Politeness off, robots.txt obeyed (one 404 fetch).
          Link extraction runs in webark's default worker processes (2 on 2 CPUs).
  webark-inproc  (only with ``--tools``) the same with WEBARK_EXTRACT_PROCESSES=0:
          link extraction in the crawler's own process, no pipelining.
  webark@DIR  (only with ``--tools``) the same as ``webark`` with another checkout's
          ``DIR/.venv/bin/webark`` (e.g. ``--tools wget,webark,webark@../main``: a change
          against main, interleaved in one run).

Figures (median run by wall time, per tool):
  wall s     spawn-to-exit wall time of the child (what BASELINE.md reports for wget)
  URLs/s     HTTP responses fetched (WARC response + revisit records, any status,
             dns: records excluded) / wall s
  MB/s       "input bytes": HTTP message bytes (status line, headers, body as
             received) summed over the WARC response records; revisit records count
             their header bytes only (the body is not stored). 10^6 bytes per MB.
  CPU s      user + sys of the child (and of any children it waited for), /usr/bin/time
  RSS MB     peak RSS of the child, /usr/bin/time "Maximum resident set size"
             (/usr/bin/time forks the child itself, so the figure is not inflated by
             this big parent, as ru_maxrss of a vfork/exec child would be)

Checks: every URL that got a 200 from wget must also have got a 200 from webark, else
a WARNING and exit 2 (wget: 556 x 200 + 1 x 404, i.e. BASELINE.md's 557 responses).
webark may fetch more: /robots.txt (404), links it extracts from JS/JSON
(_static/glossary.json) and the pages Sphinx's search index names (the 4 orphan pages,
and a 404 for the changelog Debian leaves out); these are printed as notes.

Target (issue 19): webark >= 2 x wget in URLs/s and <= 0.6 x wget's CPU s (same URLs).
Last line of stdout: one JSON object.

Many hosts (``--hosts N [--delay S] [--per-host K]``, webark tools only):

    .venv/bin/python bench/crawl.py --hosts 50 --runs 5 --tools webark,webark@../main

the docs on N loopback hosts ``127.0.1.1`` … ``127.0.1.N`` port 8801, one nginx of the
bench's own (bench/_hosts.py; per-host access logs with ``$msec $request_time``), a job
with the N seeds, politeness on (``min_delay = max_delay = S``, 1 s; delay factor 0)
and ``max_uris_per_host: K`` (30). Figures per run, from the access logs: ``bound`` =
N / (S + mean fetch time of crawl.log), ``steady`` URLs/s = requests after each host's
first / (last request start − first request start), ``overall`` = requests / wall s,
CPU s and CPU ms per URL, ``overlaps`` (two requests to one host served at once: must
be 0) and the shortest gap between two requests to one host. Median run by steady.
Target (issue 19): steady >= 95 % of the bound, 0 overlaps; exit 2 on an overlap.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import ROOT, cache_dir, log, machine_info, peers_dir

SEED = "http://127.0.0.1:8801/"
TARGET = 2.0  # URLs/s of webark / wget (issue 19)
CPU_TARGET = 0.6  # CPU s of webark / wget, same URLs (issue 19)
HOSTS_TARGET = 0.95  # --hosts: steady URLs/s / bound (issue 19)
WEBARK = ROOT / ".venv" / "bin" / "webark"

JOB_YAML = """\
seeds: [@SEEDS@]
job_dir: @JOB_DIR@
contact: webarchive@example.org
allow_private: true
min_delay: 0
max_delay: 0
delay_factor: 0
dedup: true
scope: {max_trans_hops: 0}
"""


def site(cmd: str) -> dict:
    out = subprocess.run(
        [str(peers_dir() / "site.sh"), cmd], check=True, stdout=subprocess.PIPE, text=True
    ).stdout
    return json.loads(out.strip().splitlines()[-1])


def parse_time_v(path: Path) -> dict:
    vals: dict[str, str] = {}
    for line in path.read_text().splitlines():
        if ":" in line:
            k, v = line.strip().rsplit(": ", 1) if ": " in line else (line, "")
            vals[k.strip()] = v.strip()
    return {
        "user_s": float(vals["User time (seconds)"]),
        "sys_s": float(vals["System time (seconds)"]),
        "rss_kb": int(vals["Maximum resident set size (kbytes)"]),
        "exit": int(vals.get("Exit status", "0")),
    }


def scan_warcs(paths: list[Path]) -> dict:
    """Count HTTP captures in the WARCs: statuses, URL sets, input bytes."""
    from fastwarc.warc import ArchiveIterator, WarcRecordType

    status: dict[int, int] = {}
    ok_urls: set[str] = set()
    fetched = 0
    in_bytes = 0
    revisits = 0
    records = 0
    for p in paths:
        for rec in ArchiveIterator(str(p), record_types=WarcRecordType.any_type, parse_http=True):
            records += 1
            if rec.record_type not in (WarcRecordType.response, WarcRecordType.revisit):
                continue
            uri = (rec.headers.get("WARC-Target-URI") or "").strip("<>")  # wget: <uri>
            if not uri.startswith("http"):
                continue  # dns:
            fetched += 1
            in_bytes += int(rec.headers.get("Content-Length") or 0)  # HTTP head + body
            if rec.record_type == WarcRecordType.revisit:
                revisits += 1
            code = (rec.http_headers.status_code if rec.http_headers is not None else 0) or 0
            status[code] = status.get(code, 0) + 1
            if code == 200:
                ok_urls.add(uri)
    return {
        "records": records,
        "fetched": fetched,
        "input_bytes": in_bytes,
        "revisits": revisits,
        "status": {str(k): v for k, v in sorted(status.items())},
        "ok_urls": ok_urls,
    }


def webark_of(tool: str) -> Path:
    """The ``webark`` command of ``tool`` (``webark``, ``webark-inproc``, ``webark@DIR``)."""
    if tool.startswith("webark@"):
        return Path(tool.split("@", 1)[1]).resolve() / ".venv" / "bin" / "webark"
    return WEBARK


def run_one(tool: str, work: Path, job_yaml: str | None = None) -> dict:
    """One measured run of ``tool`` (fresh folder under ``work``); ``job_yaml``: a
    webark job to run instead of :data:`JOB_YAML` (``@JOB_DIR@`` filled in)."""
    out = work / tool.replace("/", "_")
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    tfile = out / "time.txt"
    if tool == "wget":
        argv = [
            "wget",
            "--recursive",
            "--level=inf",
            "--no-parent",
            "-e",
            "robots=off",
            f"--warc-file={out}/docs",
            "--no-verbose",
            "-P",
            f"{out}/tree",
            SEED,
        ]
    else:
        job = out / "job.yaml"
        text = job_yaml or JOB_YAML.replace("@SEEDS@", SEED)
        job.write_text(text.replace("@JOB_DIR@", str(out / "job")))
        argv = [str(webark_of(tool)), "crawl", "--no-progress", str(job)]
    env = dict(os.environ)
    if tool == "webark-inproc":
        env["WEBARK_EXTRACT_PROCESSES"] = "0"
    with open(out / "stdout.log", "wb") as so:
        t0 = time.perf_counter()
        p = subprocess.run(
            ["/usr/bin/time", "-v", "-o", str(tfile), *argv],
            stdout=so,
            stderr=subprocess.STDOUT,
            env=env,
        )
        wall = time.perf_counter() - t0
    tv = parse_time_v(tfile)
    if tool == "wget":
        if p.returncode not in (0, 8):  # 8: some links 404 (expected, see BASELINE.md)
            raise RuntimeError(f"wget exited {p.returncode}: {out}/stdout.log")
        warcs = [out / "docs.warc.gz"]
    else:
        if p.returncode != 0:
            raise RuntimeError(f"webark crawl exited {p.returncode}: {out}/stdout.log")
        warcs = sorted((out / "job" / "warcs").glob("*.warc.gz"))
    scan = scan_warcs(warcs)
    r = {
        "tool": tool,
        "wall_s": round(wall, 3),
        "cpu_s": round(tv["user_s"] + tv["sys_s"], 2),
        "user_s": tv["user_s"],
        "sys_s": tv["sys_s"],
        "rss_kb": tv["rss_kb"],
        "exit": p.returncode,
        "warc_gz_bytes": sum(w.stat().st_size for w in warcs),
        **scan,
    }
    if tool.startswith("webark"):
        log_lines = (out / "job" / "logs" / "crawl.log").read_text().splitlines()
        r["crawl_log_lines"] = len(log_lines)
        rep = json.loads((out / "job" / "reports" / "crawl-report.json").read_text())
        r["own_duration_s"] = rep.get("duration_s")
    r["urls_per_s"] = r["fetched"] / wall
    r["mb_per_s"] = r["input_bytes"] / 1e6 / wall
    return r


def hosts_main(args: argparse.Namespace, tools: list[str]) -> int:
    """The many-hosts mode (``--hosts N``): webark tools only, see bench/_hosts.py."""
    import _hosts

    tools = [t for t in tools if t != "wget"]  # wget's --wait is one delay for all hosts
    n, delay = args.hosts, args.delay
    job = _hosts.hosts_job(n, delay, args.per_host)
    work = cache_dir() / "crawl-hosts"
    runs: dict[str, list[dict]] = {t: [] for t in tools}
    with _hosts.Hosts(n, cache_dir() / "hosts") as h:
        for i in range(args.runs):
            for t in tools if i % 2 == 0 else tools[::-1]:
                h.reset_logs()
                r = run_one(t, work, job)
                durs = _hosts.fetch_durations_ms(work / t.replace("/", "_") / "job" / "logs"
                                                 / "crawl.log")
                r["fetch_ms_mean"] = sum(durs) / len(durs) if durs else 0.0
                r.update(_hosts.judge(_hosts.read_logs(h.logs), n, delay,
                                      r["fetch_ms_mean"] / 1000, r["wall_s"]))
                r["cpu_ms_per_url"] = 1000 * r["cpu_s"] / max(r["requests"], 1)
                runs[t].append(r)
                log(f"round {i + 1} {t}: {r['requests']} requests in {r['wall_s']:.1f} s, "
                    f"steady {r['steady_urls_per_s']:.2f} URLs/s = {r['steady_of_bound']:.1%}"
                    f" of bound {r['bound_urls_per_s']:.2f}; {r['cpu_s']:.2f} s CPU; "
                    f"overlaps {r['overlaps']}, min gap {r['min_gap_s']} s")
    print(f"\n{n} hosts (127.0.1.1-{n}:8801, nginx), delay {delay} s, {args.per_host} URLs per"
          f" host, median of {args.runs} by steady URLs/s, interleaved")
    hdr = (f"{'tool':18s} {'reqs':>5s} {'wall s':>7s} {'bound':>6s} {'steady':>7s} {'%bound':>7s}"
           f" {'overall':>8s} {'%bound':>7s} {'CPU s':>6s} {'CPU ms/URL':>10s} {'overlaps':>8s}"
           f" {'min gap':>7s}")
    print(hdr)
    print("-" * len(hdr))
    out: dict[str, object] = {"bench": "crawl-hosts", "hosts": n, "delay_s": delay,
                              "per_host": args.per_host, "runs": args.runs,
                              "machine": machine_info(), "tools": {}}
    problems = []
    for t in tools:
        r = sorted(runs[t], key=lambda x: x["steady_urls_per_s"])[(args.runs - 1) // 2]
        print(f"{t:18s} {r['requests']:5d} {r['wall_s']:7.2f} {r['bound_urls_per_s']:6.2f} "
              f"{r['steady_urls_per_s']:7.2f} {r['steady_of_bound']:7.1%} "
              f"{r['overall_urls_per_s']:8.2f} {r['overall_of_bound']:7.1%} {r['cpu_s']:6.2f} "
              f"{r['cpu_ms_per_url']:10.2f} {r['overlaps']:8d} {r['min_gap_s']!s:>7s}")
        bad = [x for x in runs[t] if x["overlaps"] or x["hosts_seen"] != n]
        if bad:
            problems.append(f"{t}: {len(bad)} run(s) with overlapping requests or hosts unseen")
        out["tools"][t] = {k: v for k, v in r.items() if k != "ok_urls"}  # type: ignore[index]
    print(f"target: steady >= {HOSTS_TARGET:.0%} of the bound, 0 overlaps")
    for pr in problems:
        print("WARNING:", pr)
    out["problems"] = problems
    print(json.dumps(out))
    return 2 if problems else 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--tools", default="wget,webark")
    ap.add_argument("--check", action="store_true", help="exit 1 when the target is missed")
    ap.add_argument("--hosts", type=int, default=0,
                    help="many-hosts mode: the docs on N loopback hosts, politeness on")
    ap.add_argument("--delay", type=float, default=1.0, help="--hosts: politeness delay, s")
    ap.add_argument("--per-host", type=int, default=30, help="--hosts: URLs fetched per host")
    args = ap.parse_args()
    tools = args.tools.split(",")
    if args.hosts:
        return hosts_main(args, tools)
    for t in tools:
        if t.startswith("webark") and not webark_of(t).exists():
            raise SystemExit(f"{webark_of(t)} missing: install the project into .venv")
    if not shutil.which("wget") or not Path("/usr/bin/time").exists():
        raise SystemExit("needs wget and /usr/bin/time (apt-get install wget time)")

    started = False
    if site("status").get("status") != "running":
        log("starting the peers' site (site.sh start)")
        site("start")
        started = True
    work = cache_dir() / "crawl"
    runs: dict[str, list[dict]] = {t: [] for t in tools}
    try:
        # warm-up: one unmeasured fetch of every page (page cache, nginx workers)
        log("warm-up: one wget crawl (not measured)")
        run_one("wget", work)
        for i in range(args.runs):
            order = tools if i % 2 == 0 else tools[::-1]
            for t in order:
                r = run_one(t, work)
                runs[t].append(r)
                noisy = "  NOISY (wall > 1.1 x CPU)" if r["wall_s"] > 1.1 * r["cpu_s"] else ""
                log(
                    f"round {i + 1} {t:6s}: {r['wall_s']:.2f} s wall, {r['cpu_s']:.2f} s CPU, "
                    f"{r['fetched']} URLs {r['status']}, {r['rss_kb'] / 1024:.1f} MB RSS{noisy}"
                )
    finally:
        if started:
            site("stop")

    med = {}
    for t, rs in runs.items():
        srt = sorted(rs, key=lambda r: r["wall_s"])
        med[t] = srt[(len(srt) - 1) // 2]

    # same pages?
    problems: list[str] = []
    notes: list[str] = []
    if "wget" in med and "webark" in med:
        a, b = med["wget"]["ok_urls"], med["webark"]["ok_urls"]
        only_w, only_k = sorted(a - b), sorted(b - a)
        if only_w:  # webark must get every page wget got
            problems.append(
                f"pages wget got (200) and webark did not: {len(only_w)}, e.g. {only_w[:5]}"
            )
        if only_k:  # a superset is fine: webark also extracts links from JS/JSON
            notes.append(f"200s only webark got: {len(only_k)}: {only_k[:5]}")

    print()
    print(f"crawl of {SEED} (python3-doc, nginx), median of {args.runs} by wall time, interleaved")
    hdr = (
        f"{'tool':8s} {'wall s':>7s} {'URLs':>5s} {'200s':>5s} {'URLs/s':>7s} {'MB/s':>6s} "
        f"{'CPU s':>6s} {'RSS MB':>7s} {'WARC MB':>8s}  all wall s"
    )
    print(hdr)
    print("-" * len(hdr))
    for t in tools:
        r = med[t]
        print(
            f"{t:8s} {r['wall_s']:7.2f} {r['fetched']:5d} {r['status'].get('200', 0):5d} "
            f"{r['urls_per_s']:7.1f} {r['mb_per_s']:6.2f} {r['cpu_s']:6.2f} "
            f"{r['rss_kb'] / 1024:7.1f} {r['warc_gz_bytes'] / 1e6:8.2f}  "
            f"{' / '.join(format(x['wall_s'], '.2f') for x in runs[t])}"
        )
    ratio = None
    for t in tools:
        if t.startswith("webark@") and "wget" in med:
            print(f"{t} / wget URLs/s = {med[t]['urls_per_s'] / med['wget']['urls_per_s']:.2f}x;"
                  f" CPU s {t} / wget = {med[t]['cpu_s'] / med['wget']['cpu_s']:.2f}x")
    if "wget" in med and "webark" in med:
        ratio = med["webark"]["urls_per_s"] / med["wget"]["urls_per_s"]
        cpu_ratio = med["webark"]["cpu_s"] / med["wget"]["cpu_s"]
        met = ratio >= TARGET
        cpu_met = cpu_ratio <= CPU_TARGET
        print(
            f"\nwebark / wget URLs/s = {ratio:.2f}x  (target >= {TARGET:.0f}x: "
            f"{'met' if met else 'NOT met'}); CPU s webark / wget = {cpu_ratio:.2f}x "
            f"(target <= {CPU_TARGET}x: {'met' if cpu_met else 'NOT met'})"
        )
        k = med["webark"]
        print(
            f"webark: statuses {k['status']}, {k['revisits']} revisit(s), crawl.log "
            f"{k['crawl_log_lines']} lines, own duration {k['own_duration_s']} s; "
            f"wget: statuses {med['wget']['status']}"
        )
    for n in notes:
        print("note:", n)
    for pr in problems:
        print("WARNING:", pr)

    out = {
        "bench": "crawl",
        "seed": SEED,
        "runs": args.runs,
        "machine": machine_info(),
        "target_ratio": TARGET,
        "target_cpu_ratio": CPU_TARGET,
        "ratio_urls_per_s": ratio and round(ratio, 3),
        "problems": problems,
        "notes": notes,
        "tools": {},
    }
    for t in tools:
        r = med[t]
        out["tools"][t] = {
            k: (round(v, 3) if isinstance(v, float) else v) for k, v in r.items() if k != "ok_urls"
        }
        out["tools"][t]["all_wall_s"] = [x["wall_s"] for x in runs[t]]
        out["tools"][t]["ok_200"] = len(r["ok_urls"])
    print(json.dumps(out))
    if problems:
        return 2
    if args.check and ratio is not None and ratio < TARGET:
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
