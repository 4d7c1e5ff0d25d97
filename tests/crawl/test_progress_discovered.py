"""``discovered`` of progress-statistics.log counts the prerequisites (Heritrix's
``discoveredUriCount``: queued + in flight + every URI finished, ``dns:`` and robots.txt
included), so a line never shows fewer URIs discovered than downloaded: a real crawl of
a site reached by a host name (``--resolve``), whose ``dns:`` and robots.txt lines are
fetched outside the frontier."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from test_control import _args, _cli

from sites import TestSite, static_site
from webark.crawllog import read_crawl_log
from webark.crawllog.progress import ProgressLine, parse_progress_line


def test_discovered_counts_dns_and_robots_prerequisites(tmp_path: Path) -> None:
    jd = tmp_path / "job"
    yaml = tmp_path / "job.yaml"  # the site's failing page: no long retries
    yaml.write_text("max_http_retries: 0\nbackoff_base: 0.1\n")
    with TestSite(static_site(n_pages=6, crawl_delay=None), host="127.0.0.1") as site:
        seed = f"http://site.test:{site.port}/"
        r = subprocess.run(_cli(str(yaml), *_args(jd, seed, 0.0, "--resolve", "site.test:127.0.0.1",
                                       "--resolve-only")),
                           capture_output=True, text=True, timeout=60)  # fmt: skip
    assert r.returncode == 0, r.stderr
    log = list(read_crawl_log(jd / "logs" / "crawl.log"))
    uris = [ln.uri for ln in log]
    assert "dns:site.test" in uris and f"http://site.test:{site.port}/robots.txt" in uris
    rows = [parse_progress_line(t) for t in
            (jd / "logs" / "progress-statistics.log").read_text().splitlines()]  # fmt: skip
    lines = [x for x in rows if isinstance(x, ProgressLine)]
    assert lines and all(x.discovered >= x.downloaded for x in lines)
    final = lines[-1]
    ok = sum(1 for ln in log if ln.status > 0)
    assert final.queued == 0
    assert final.discovered == len(log)  # every URI discovered has its line at the end
    assert final.downloaded == ok > 6  # the pages, the dns: lookup and robots.txt
    report = json.loads((jd / "reports" / "crawl-report.json").read_text())
    assert report["uris_succeeded"] == ok


def test_max_uris_counts_frontier_uris_not_prerequisites(tmp_path: Path) -> None:
    """``--max-uris`` as its --help says: the ``dns:`` and robots.txt prerequisites are
    not counted (Heritrix's maxDocumentsDownload would count them)."""
    jd = tmp_path / "job"
    with TestSite(static_site(n_pages=6, crawl_delay=None), host="127.0.0.1") as site:
        seed = f"http://site.test:{site.port}/"
        args = _args(jd, seed, 0.0, "--resolve", "site.test:127.0.0.1", "--resolve-only",
                     "--max-uris", "3")  # fmt: skip
        r = subprocess.run(_cli(*args), capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    ok = [ln.uri for ln in read_crawl_log(jd / "logs" / "crawl.log") if ln.status > 0]
    prerequisites = {"dns:site.test", seed + "robots.txt"}
    assert prerequisites <= set(ok)
    assert len(ok) == 3 + len(prerequisites)
    help_text = subprocess.run(_cli("--help"), capture_output=True, text=True, timeout=60)
    assert "prerequisites not counted" in " ".join(help_text.stdout.split())
