#!/usr/bin/env python3
"""bench/browser.py — the hybrid crawl's cost: bulk-only vs browser crawls of the
scripted test site (tests/js_site.py), side by side in one run (issue 13).

    .venv/bin/python bench/browser.py            # three crawls, ~2 min
    .venv/bin/python bench/browser.py --delay 0  # politeness off (the default: 0.05 s)

Crawls (each ``webark crawl --quiet job.yaml`` as a fresh child, fresh job folder, the
site served on 127.0.0.1 in this process):

  bulk        no ``browser:`` section: the bulk crawler alone
  heuristic   ``browser: {}``: the ``troublesome`` heuristic picks the pages
  all-pages   ``browser: {hosts: [127.0.0.1]}``: every page in the browser

Figures per crawl: URLs of the site captured (of its own list), pages in pages.jsonl,
browser pages, wall seconds, pages per minute, CPU seconds (user + system of every process
of the child's tree, sampled from /proc every 0.1 s: Playwright's driver and Chromium's
processes; or what the child reaped, when larger),
peak RSS of the whole process tree (sampled from /proc every 0.1 s) per page, site
requests (its access log) and requests through the proxy per browser page; then the
ratios against the bulk crawler. One JSON line at the end.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "tests")]

from js_site import js_site, site_urls  # noqa: E402

WEBARK = [str(ROOT / ".venv" / "bin" / "python"), "-c", "from webark.cli.main import main; main()"]
PAGE = os.sysconf("SC_PAGE_SIZE")


TICK = os.sysconf("SC_CLK_TCK")


def _tree(root: int) -> tuple[int, dict[int, float]]:
    """Bytes of resident memory of ``root`` and all its descendants, and each one's own
    CPU seconds so far (utime + stime, /proc)."""
    parents: dict[int, int] = {}
    rss: dict[int, int] = {}
    cpu: dict[int, float] = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            stat = Path(f"/proc/{d}/stat").read_text()
            statm = Path(f"/proc/{d}/statm").read_text().split()
        except OSError:
            continue
        fields = stat.rpartition(")")[2].split()
        parents[int(d)] = int(fields[1])
        rss[int(d)] = int(statm[1]) * PAGE
        cpu[int(d)] = (int(fields[11]) + int(fields[12])) / TICK
    tree, todo = {root}, [root]
    while todo:
        p = todo.pop()
        for c, pp in parents.items():
            if pp == p and c not in tree:
                tree.add(c)
                todo.append(c)
    return sum(rss.get(p, 0) for p in tree), {p: cpu.get(p, 0.0) for p in tree}


def crawl(work: Path, name: str, browser: dict | None, delay: float) -> dict:
    with js_site() as site:
        job = {"seeds": [site.url("/")], "job_dir": str(work / name),
               "contact": "bench@example.org", "allow_private": True,
               "resolve_only": True, "workers": 2,
               "min_delay": delay, "max_delay": delay, "delay_factor": 0}  # fmt: skip
        if browser is not None:
            job["browser"] = {"load_timeout": 15, "behavior_timeout": 30, **browser}
        job_file = work / f"{name}.json"
        job_file.write_text(json.dumps(job))
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.monotonic()
        proc = subprocess.Popen([*WEBARK, "crawl", str(job_file), "--quiet"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)  # fmt: skip
        peak = [0]
        seen: dict[int, float] = {}  # pid -> its CPU seconds when last sampled
        done = threading.Event()

        def sample() -> None:
            while not done.is_set():
                total, cpu = _tree(proc.pid)
                peak[0] = max(peak[0], total)
                seen.update(cpu)
                done.wait(0.1)

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        _, err = proc.communicate(timeout=900)
        wall = time.monotonic() - t0
        done.set()
        sampler.join()
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if proc.returncode != 0:
            tail = err.decode()[-2000:]
            raise SystemExit(f"{name}: webark crawl exited {proc.returncode}:\n{tail}")
        hits = len(site.snapshot())
        urls = site_urls(site.origin)
    job_dir = work / name
    warcs = sorted(str(p) for p in (job_dir / "warcs").glob("*.warc.gz"))
    cdx = subprocess.run([*WEBARK, "index", *warcs], capture_output=True, text=True,
                         check=True).stdout  # fmt: skip
    got = {json.loads(ln.split(" ", 2)[2])["url"] for ln in cdx.splitlines() if ln.strip()}
    pages = len((job_dir / "pages" / "pages.jsonl").read_text().splitlines()) - 1
    rep_file = job_dir / "reports" / "browser-report.json"
    rep = json.loads(rep_file.read_text()) if rep_file.exists() else {}
    bpages = rep.get("pages", 0)
    # the larger of: what the child reaped (its waited descendants), and every process of
    # the tree as last sampled (Chromium's zygote-forked renderers are not reaped by the
    # child; a process's last 0.1 s before it ended is missed)
    waited = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    cpu = max(waited, sum(seen.values()))
    return {
        "crawl": name, "captured": len(set(urls.all) & got), "site_urls": len(urls.all),
        "pages": pages, "browser_pages": bpages, "wall_s": round(wall, 2),
        "pages_per_min": round(pages / wall * 60, 1), "cpu_s": round(cpu, 2),
        "cpu_s_per_page": round(cpu / pages, 3), "peak_rss_mb": round(peak[0] / 2**20, 1),
        "peak_rss_mb_per_page": round(peak[0] / 2**20 / pages, 2), "site_requests": hits,
        "proxied_per_browser_page": round(rep.get("proxied", 0) / bpages, 2) if bpages else 0.0,
    }  # fmt: skip


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--delay", type=float, default=0.05, help="politeness delay, s (0.05)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="webark-bench-browser-") as tmp:
        work = Path(tmp)
        rows = [crawl(work, "bulk", None, args.delay),
                crawl(work, "heuristic", {}, args.delay),
                crawl(work, "all-pages", {"hosts": ["127.0.0.1"]}, args.delay)]  # fmt: skip
    cols = ("crawl", "captured", "pages", "browser_pages", "wall_s", "pages_per_min", "cpu_s",
            "cpu_s_per_page", "peak_rss_mb", "peak_rss_mb_per_page", "site_requests",
            "proxied_per_browser_page")  # fmt: skip
    print("  ".join(f"{c:>14}" for c in cols))
    for r in rows:
        print("  ".join(f"{r[c]!s:>14}" for c in cols))
    bulk = rows[0]
    print()
    for r in rows[1:]:
        ppm = r["pages_per_min"] / bulk["pages_per_min"]
        print(f"{r['crawl']} / bulk: pages per minute {ppm:.2f}x, "
              f"CPU s per page {r['cpu_s_per_page'] / bulk['cpu_s_per_page']:.1f}x, "
              f"peak RSS {r['peak_rss_mb'] / bulk['peak_rss_mb']:.1f}x, "
              f"site requests {r['site_requests'] / bulk['site_requests']:.1f}x; "
              f"captured {r['captured']} of {r['site_urls']} (bulk {bulk['captured']})")
    print(json.dumps({"bench": "browser", "delay": args.delay, "rows": rows}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
