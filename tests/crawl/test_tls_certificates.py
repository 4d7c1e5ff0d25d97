"""``webark crawl`` of an HTTPS site on loopback whose certificate chain the test made
(root → intermediate → leaf): the chain the server sent is in the WARC, once per TLS
connection, as a ``metadata`` record concurrent to the first capture on it; the crawl
does not verify certificates (Heritrix's ``open`` trust level: the test root is not
trusted by anything). Its captures carry ``WARC-Protocol`` and ``WARC-Cipher-Suite``."""

from __future__ import annotations

import subprocess
from pathlib import Path

from http_wait import WEBARK
from sites import HTML, TestSite, html
from tls_chain import ChainCA, chain_records, checked_and_listed, parsed_chain
from webark.warc.reader import ArchiveReader


def test_crawl_records_the_servers_chain(tmp_path: Path) -> None:
    ca = ChainCA()
    site = TestSite({"/": (200, HTML, html('<a href="/next.html">next</a>')),
                     "/next.html": (200, HTML, html("second page"))})  # fmt: skip
    site.server.socket = ca.server_context().wrap_socket(site.server.socket, server_side=True)
    job = tmp_path / "job"
    seed = f"https://127.0.0.1:{site.port}/"
    with site:
        done = subprocess.run([*WEBARK, "crawl", "--seed", seed, "-o", str(job),
                               "--contact", "archive@example.org", "--allow-private",
                               "--min-delay", "0", "--max-delay", "0", "--no-control",
                               "--quiet"], capture_output=True, text=True,
                              timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr
    (warc,) = (job / "warcs").iterdir()
    records = list(ArchiveReader(str(warc)))
    responses = {r.record_id: r for r in records if r.type == "response"}
    assert sorted(r.target_uri or "" for r in responses.values()) == [
        seed, seed + "next.html", seed + "robots.txt"]
    # one kept-alive connection to the host (one request at a time per host): one chain
    (chain,) = chain_records(job / "warcs")
    assert parsed_chain(chain) == ca.sent  # exactly the leaf and intermediate sent
    first = responses[chain.headers.get("warc-concurrent-to") or ""]
    assert chain.target_uri == first.target_uri == seed + "robots.txt"
    assert checked_and_listed(warc) == [("metadata", seed + "robots.txt", chain.record_id)]
    # WARC-Protocol and WARC-Cipher-Suite on the crawler's captures over TLS, as the proxy's
    for r in records:
        if r.type in ("response", "request"):
            protocols = r.headers.get_all("warc-protocol")
            assert len(protocols) == 2 and protocols[0] == "http/1.1", protocols
            assert protocols[1].startswith("tls/1."), protocols
            assert (r.headers.get("warc-cipher-suite") or "").startswith("TLS_")
