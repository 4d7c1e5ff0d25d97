#!/usr/bin/env python3
"""bench/replay_fidelity.py — how much of what a page asks for replay answers from the
archive, in Debian's Chromium: ``webark serve`` vs pywb 2.10 on the same WARCs.

    .venv/bin/python bench/replay_fidelity.py                  # every page of the crawl
    .venv/bin/python bench/replay_fidelity.py --pages 50       # a spread of 50 pages
    .venv/bin/python bench/replay_fidelity.py --only webark
    .venv/bin/python bench/replay_fidelity.py --warc X.warc.gz  # other WARCs (one collection)

**WARCs.** The python docs crawl of ``bench/replay.py`` (made once into the cache), or
the ``--warc`` files. **Servers.** As ``bench/replay.py`` starts them (webark: a
collection, ``webark serve``; pywb: ``wb-manager add`` + ``wayback`` from its own venv);
each in its default mode (pywb's is framed: the top frame and the ``mp_`` page in it,
both counted; an ``mp_`` page opened alone sends the browser to the top frame at once,
aborting its own requests).

**Per page** (every HTML 200 capture, or ``--pages`` spread over them), in a fresh
Playwright context on ``/usr/bin/chromium`` that ignores the pages' CSP (so that a URL a
server fails to rewrite shows up as a request to another host, which is aborted and
counted — the CSP would otherwise hide it): the page is loaded, the network let idle,
and every request followed to its last redirect. A request is **for a captured
resource** when its original URL (the URL inside the archive URL) has a capture in the
collection's index (an exact CDX key match, read from the webark collection for both
servers); it is **answered** when its last response has a status below 400.

Reported per server: pages, requests to the archive, requests for captured resources,
the share answered, requests that left the replay server, and the misses. The last
line of stdout is one JSON object. Target (issue 17): 100 % answered, 0 leaving.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import ROOT, cache_dir, log, machine_info
from cdx_server import pywb_venv, pywb_version, stop
from replay import COLL, crawl_warcs, start_pywb, start_webark

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic"]
_ARCHIVAL = re.compile(rf"^/{COLL}/(\d{{0,14}})([a-z]{{2}}_)?/(.+)$", re.S)


def all_pages(colls: Path) -> list[tuple[str, str]]:
    """(timestamp, url) of every HTML 200 capture of the webark collection."""
    sys.path.insert(0, str(ROOT / "src"))
    from webark.index.collection import Collection
    from webark.index.source import KeyRange

    source = Collection.open(colls / COLL).source()
    return sorted({(x.timestamp, x.url) for x in source.scan(KeyRange("", None))
                   if x.mime == "text/html" and x.status == "200"})  # fmt: skip


class Captured:
    """Whether an original URL has a capture (exact key), from the webark collection."""

    def __init__(self, colls: Path):
        from webark.index.capture_select import closest
        from webark.index.collection import Collection

        self._source = Collection.open(colls / COLL).source()
        self._closest = closest
        self._seen: dict[str, bool] = {}

    def __call__(self, url: str) -> bool:
        if url not in self._seen:
            try:
                self._seen[url] = bool(self._closest(self._source, url, None, limit=1))
            except ValueError:
                self._seen[url] = False
        return self._seen[url]


def replay_page(browser: Any, base: str, path: str, captured: Captured) -> dict[str, Any]:
    """Load one page; its requests classified (module docstring)."""
    ctx = browser.new_context(viewport={"width": 1280, "height": 800}, service_workers="block",
                              bypass_csp=True)  # fmt: skip
    escaped: list[str] = []
    finals: dict[int, tuple[str, str, int | str]] = {}

    def route(r: Any, req: Any) -> None:
        if req.url.startswith(base) or req.url.startswith(("data:", "blob:", "about:")):
            r.continue_()
        else:
            escaped.append(req.url)
            r.abort()

    def done(req: Any, failed: bool = False) -> None:
        first = req
        while first.redirected_from is not None:
            first = first.redirected_from
        if failed:
            finals[id(first)] = (first.method, first.url, req.failure or "failed")
            return
        resp = req.response()
        finals[id(first)] = (first.method, first.url, resp.status if resp else "no response")

    ctx.route("**/*", route)
    page = ctx.new_page()
    page.on("requestfinished", done)
    page.on("requestfailed", lambda req: done(req, True))
    try:
        page.goto(base.rstrip("/") + path, wait_until="load", timeout=60000)
        page.wait_for_load_state("networkidle", timeout=30000)
    except Exception as exc:  # a page that does not load is a finding, not a stop
        log(f"  {path}: {exc}")
    finally:
        ctx.close()
    out: dict[str, Any] = {"requests": 0, "captured": 0, "answered": 0, "misses": [],
                           "escaped": [u for u in escaped]}  # fmt: skip
    for method, url, status in finals.values():
        m = _ARCHIVAL.match(url[len(base) - 1 :]) if url.startswith(base) else None
        if m is None:
            continue
        out["requests"] += 1
        if method == "GET" and captured(m.group(3)):
            out["captured"] += 1
            if isinstance(status, int) and status < 400:
                out["answered"] += 1
            else:
                out["misses"].append(f"{m.group(3)} ({status})")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pages", type=int, default=0, help="a spread of N pages (0: all)")
    ap.add_argument("--only", choices=("webark", "pywb"))
    ap.add_argument("--warc", action="append", default=[], help="replay these WARCs instead")
    ap.add_argument("--pywb-venv", default=str(cache_dir() / "venv-pywb"))
    ap.add_argument("--recrawl", action="store_true")
    args = ap.parse_args()
    work = cache_dir() / "replay-fidelity"
    work.mkdir(parents=True, exist_ok=True)
    warcs = ([Path(w).resolve() for w in args.warc] if args.warc
             else crawl_warcs(cache_dir() / "replay", args.recrawl))  # fmt: skip
    names = [args.only] if args.only else ["webark", "pywb"]
    venv = pywb_venv(Path(args.pywb_venv)) if "pywb" in names else None
    from playwright.sync_api import sync_playwright

    out: dict[str, Any] = {"bench": "replay_fidelity", "machine": machine_info(),
                           "warcs": [str(w) for w in warcs]}  # fmt: skip
    servers = {"webark": start_webark(work, warcs, 1)}
    try:
        pages = all_pages(work / "webark-colls")
        if args.pages and args.pages < len(pages):
            step = len(pages) / args.pages
            pages = [pages[int(i * step)] for i in range(args.pages)]
        out["pages"] = len(pages)
        captured = Captured(work / "webark-colls")
        if venv is not None:
            servers["pywb"] = start_pywb(work, warcs, venv)
            out["pywb_version"] = pywb_version(venv)
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            for name in names:
                _, port = servers[name]
                base = f"http://127.0.0.1:{port}/"
                mode = ""  # pywb's default is framed: its mp_ page, opened alone,
                # sends the browser to the top frame, aborting its own requests
                tot: dict[str, Any] = {"requests": 0, "captured": 0, "answered": 0,
                                       "escaped": 0, "misses": [], "escapes": []}  # fmt: skip
                for i, (ts, url) in enumerate(pages):
                    row = replay_page(browser, base, f"/{COLL}/{ts}{mode}/{url}", captured)
                    for k in ("requests", "captured", "answered"):
                        tot[k] += row[k]
                    tot["escaped"] += len(row["escaped"])
                    tot["misses"] += [f"{url}: {x}" for x in row["misses"]]
                    tot["escapes"] += [f"{url}: {x}" for x in row["escaped"]]
                    if (i + 1) % 50 == 0:
                        log(f"  {name}: {i + 1}/{len(pages)} pages")
                share = tot["answered"] / tot["captured"] if tot["captured"] else 0.0
                tot["answered_share"] = round(share, 5)
                log(f"{name}: {len(pages)} pages, {tot['requests']} requests to the archive, "
                    f"{tot['captured']} for captured resources, {tot['answered']} answered "
                    f"({share:.2%}), {tot['escaped']} left the replay server")  # fmt: skip
                for line in (tot["misses"] + tot["escapes"])[:20]:
                    log(f"    {line}")
                tot["misses"], tot["escapes"] = tot["misses"][:50], tot["escapes"][:50]
                out[name] = tot
            browser.close()
    finally:
        for name, (proc, _) in servers.items():
            stop(proc, name)
        shutil.rmtree(work / "pywb-root", ignore_errors=True)
    w = out.get("webark", {})
    out["target"] = {"answered_share": 1.0, "escaped": 0,
                     "met": w.get("answered_share") == 1.0 and w.get("escaped") == 0}  # fmt: skip
    print(json.dumps(out))


if __name__ == "__main__":
    main()
