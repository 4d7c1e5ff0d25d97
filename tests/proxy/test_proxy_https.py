"""HTTPS through ``webark proxy``: CONNECT, man-in-the-middle with the proxy's own CA
(made on first use, 0600, exported by ``webark proxy ca``), curl verifying the proxy's
certificate with ``--cacert``, against a loopback server whose certificate comes from
another CA (trustme; the proxy does not verify upstream, as warcprox). The records
carry WARC-Protocol and WARC-Cipher-Suite."""

from __future__ import annotations

import ssl
import stat
import subprocess
from http.server import ThreadingHTTPServer
from pathlib import Path

import trustme
from proxy_support import crawl_log_lines, curl, proxy_process

from http_wait import WEBARK
from sites import HTML, TestSite, html
from webark.warc.reader import ArchiveReader


def test_https_by_connect_is_recorded_with_tls_fields(tmp_path: Path) -> None:
    upstream_ca = trustme.CA()
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    upstream_ca.issue_cert("127.0.0.1").configure_cert(ctx)
    site = TestSite({"/s.html": (200, HTML, html("secure page")),
                     "/t.html": (200, HTML, html("second page"))})  # fmt: skip
    httpd: ThreadingHTTPServer = site.server
    httpd.socket = ctx.wrap_socket(httpd.socket, server_side=True)
    ca_file = tmp_path / "ca" / "proxy-ca.pem"
    exported = subprocess.run([*WEBARK, "proxy", "ca", "--ca-file", str(ca_file)],
                              capture_output=True, check=True).stdout  # fmt: skip
    assert exported.startswith(b"-----BEGIN CERTIFICATE-----") and b"PRIVATE" not in exported
    assert stat.S_IMODE(ca_file.stat().st_mode) == 0o600
    assert b"PRIVATE KEY" in ca_file.read_bytes()
    cacert = tmp_path / "ca.crt"
    cacert.write_bytes(exported)
    job = tmp_path / "job"
    base = f"https://127.0.0.1:{site.port}"
    with site, proxy_process("--job", str(job), "--ca-file", str(ca_file)) as (port, _):
        one = curl(port, base + "/s.html", "--cacert", str(cacert))
        assert one.returncode == 0, one.stderr  # curl verified the proxy's leaf
        assert one.stdout == html("secure page")
        # without the CA, curl refuses the man-in-the-middle certificate
        assert curl(port, base + "/t.html").returncode == 60
        two = curl(port, base + "/t.html", "--cacert", str(cacert))
        assert two.stdout == html("second page")
        lines = crawl_log_lines(job / "logs" / "crawl.log", 2)
    assert [ln.split()[3] for ln in lines] == [base + "/s.html", base + "/t.html"]
    # one leaf certificate for the host, cached on disk with the CA's own mode
    leaves = sorted(p.name for p in (tmp_path / "ca" / "proxy-ca-certs").iterdir())
    assert leaves == ["127.0.0.1.pem", "leaf-key.pem"]
    (warc,) = (job / "warcs").iterdir()
    recs = [r for r in ArchiveReader(str(warc)) if r.type in ("response", "request")]
    assert len(recs) == 4
    for r in recs:
        assert r.target_uri.startswith(base)
        assert r.headers.get_all("warc-protocol") == ["http/1.1", "tls/1.3"]
        assert r.headers.get("warc-cipher-suite", "").startswith("TLS_")
    assert b"secure page" in recs[0].block.read_all()

