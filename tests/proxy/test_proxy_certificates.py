"""``webark proxy`` records the certificate chain the *upstream* server sent (not the
proxy's own man-in-the-middle leaf) once per upstream TLS connection: curl through the
proxy to a loopback server whose chain the test made (root → intermediate → leaf)."""

from __future__ import annotations

import subprocess
from pathlib import Path

from proxy_support import crawl_log_lines, curl, proxy_process

from http_wait import WEBARK
from sites import HTML, TestSite, html
from tls_chain import ChainCA, chain_records, checked_and_listed, parsed_chain
from webark.warc.reader import ArchiveReader


def test_upstream_chain_recorded_once_per_connection(tmp_path: Path) -> None:
    ca = ChainCA()
    site = TestSite({"/s.html": (200, HTML, html("secure page")),
                     "/t.html": (200, HTML, html("second page"))})  # fmt: skip
    site.server.socket = ca.server_context().wrap_socket(site.server.socket, server_side=True)
    ca_file = tmp_path / "ca" / "proxy-ca.pem"
    cacert = tmp_path / "proxy-ca.crt"
    cacert.write_bytes(subprocess.run([*WEBARK, "proxy", "ca", "--ca-file", str(ca_file)],
                                      capture_output=True, check=True).stdout)  # fmt: skip
    job = tmp_path / "job"
    base = f"https://127.0.0.1:{site.port}"
    with site, proxy_process("--job", str(job), "--ca-file", str(ca_file)) as (port, _):
        for path, text in (("/s.html", "secure page"), ("/t.html", "second page")):
            got = curl(port, base + path, "--cacert", str(cacert))
            assert got.returncode == 0, got.stderr
            assert got.stdout == html(text)
        assert len(crawl_log_lines(job / "logs" / "crawl.log", 2)) == 2
    (warc,) = (job / "warcs").iterdir()
    responses = {r.record_id: r for r in ArchiveReader(str(warc)) if r.type == "response"}
    assert sorted(r.target_uri or "" for r in responses.values()) == [base + "/s.html",
                                                                      base + "/t.html"]
    # the proxy keeps its upstream connection alive: one chain, with the first capture
    (chain,) = chain_records(job / "warcs")
    assert parsed_chain(chain) == ca.sent
    first = responses[chain.headers.get("warc-concurrent-to") or ""]
    assert chain.target_uri == first.target_uri == base + "/s.html"
    assert checked_and_listed(warc) == [("metadata", base + "/s.html", chain.record_id)]
