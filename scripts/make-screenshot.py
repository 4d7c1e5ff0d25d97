#!/usr/bin/env python3
"""Make docs/replay-screenshot.png: the python docs, crawled by ``webark crawl`` and
replayed by ``webark serve``, in Debian's Chromium with the replay banner.

    .venv/bin/python scripts/make-screenshot.py [--page library/functions.html] [--out PNG]

Steps (as scripts/demo.sh): serve Debian's python3-doc on 127.0.0.1 (a free port), crawl
it completely (delays off, robots.txt obeyed), stop the site, index the WARCs into a
collection ``pydocs``, serve it, open the replay of ``--page`` (its capture, default
rewritten mode) at 1280×800 and save a screenshot of the viewport. Every request the page
makes must go to the replay server (anything else is aborted and makes the script fail).

Needs ``WEBARK_DEMO_SITE=1 WEBARK_BROWSER=1 bash scripts/setup.sh`` (python3-doc,
/usr/bin/chromium). About 15 s.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
import threading
import time
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parent.parent
WEBARK = [sys.executable, "-c", "from webark.cli.main import main; main()"]
SITES = (Path("/usr/share/doc/python3/html"), Path("/usr/share/doc/python3.11/html"))
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run",
                 "--disable-quic"]  # fmt: skip


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


def crawl(site: Path, work: Path) -> list[Path]:
    """Serve ``site`` on 127.0.0.1, crawl it into ``work/job``, stop it; the WARCs."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(_Quiet, directory=str(site)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    seed = f"http://127.0.0.1:{server.server_address[1]}/"
    try:
        (work / "job.yaml").write_text(
            f"seeds: [{seed}]\njob_dir: {work / 'job'}\ncontact: webarchive@example.org\n"
            "allow_private: true\nmin_delay: 0\nmax_delay: 0\ndelay_factor: 0\n"
            "scope: {max_trans_hops: 0}\n"
        )
        subprocess.run([*WEBARK, "crawl", "--no-progress", str(work / "job.yaml")], check=True,
                       stdout=subprocess.DEVNULL)  # fmt: skip
    finally:
        server.shutdown()
        server.server_close()
    return sorted((work / "job" / "warcs").glob("*.warc.gz"))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--page", default="library/functions.html", help="page of the docs")
    ap.add_argument("--out", default=str(ROOT / "docs" / "replay-screenshot.png"))
    args = ap.parse_args()
    site = next((d for d in SITES if (d / "index.html").is_file()), None)
    if site is None or not Path(CHROMIUM).exists():
        sys.exit("needs python3-doc and chromium: WEBARK_DEMO_SITE=1 WEBARK_BROWSER=1 "
                 "bash scripts/setup.sh")  # fmt: skip
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory(prefix="webark-shot-") as tmp:
        work = Path(tmp)
        t0 = time.perf_counter()
        warcs = crawl(site, work)
        colls = work / "collections"
        subprocess.run([*WEBARK, "collection", "init", str(colls / "pydocs")], check=True,
                       stdout=subprocess.DEVNULL)  # fmt: skip
        subprocess.run([*WEBARK, "collection", "add", "--link", "--no-progress",
                        str(colls / "pydocs"), *map(str, warcs)], check=True,
                       stdout=subprocess.DEVNULL)  # fmt: skip
        seed = re.search(r"seeds: \[(.*?)\]", (work / "job.yaml").read_text())
        assert seed
        serve = subprocess.Popen([*WEBARK, "serve", str(colls), "--port", "0"],
                                 stdout=subprocess.PIPE, text=True)  # fmt: skip
        try:
            assert serve.stdout is not None
            m = re.search(r"at (http://127\.0\.0\.1:\d+/)", serve.stdout.readline())
            if not m:
                sys.exit("webark serve did not start")
            base = m.group(1)
            url = f"{base}pydocs/{seed.group(1)}{args.page}"
            escaped: list[str] = []

            def route(route: object, request: object) -> None:
                u = request.url  # type: ignore[attr-defined]
                parts = urlsplit(u)
                if parts.scheme in ("data", "blob") or u.startswith(base):
                    route.continue_()  # type: ignore[attr-defined]
                else:
                    escaped.append(u)
                    route.abort()  # type: ignore[attr-defined]

            with sync_playwright() as pw:
                browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
                ctx = browser.new_context(viewport={"width": 1280, "height": 800})
                ctx.route("**/*", route)
                page = ctx.new_page()
                for _ in range(50):  # the server prints its URL just before it listens
                    try:
                        resp = page.goto(url, wait_until="networkidle")
                        break
                    except Exception:
                        time.sleep(0.1)
                else:
                    sys.exit(f"cannot open {url}")
                if resp is None or resp.status != 200:
                    sys.exit(f"{url}: status {resp and resp.status}")
                page.wait_for_selector("#__webark_banner_host", state="visible")
                Path(args.out).parent.mkdir(parents=True, exist_ok=True)
                page.screenshot(path=args.out)
                title = page.title()
                browser.close()
        finally:
            serve.terminate()
            serve.wait(15)
        if escaped:
            sys.exit(f"requests left the archive: {escaped[:5]}")
        size = Path(args.out).stat().st_size
        print(f"{args.out}: {title!r} from {url}, {size:,} bytes, "
              f"{time.perf_counter() - t0:.1f} s")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
