"""The browser workers' set-up, without a browser: the behaviors version pinned in
scripts/setup.sh, the errors that name what is missing, the prefetched document as
Playwright gets it, and the SPKI pins of the proxy's CA."""

from __future__ import annotations

import asyncio
import base64
import gzip
import hashlib
import re
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import serialization

from webark.apps.proxy.ca import CertAuthority
from webark.core.errors import BrowserUnavailableError, ConfigError
from webark.crawl.browser import (
    BEHAVIORS_VERSION,
    BrowserPool,
    PrefetchedDocument,
    proxy_spki_pins,
)
from webark.crawl.browser.behaviors import SETUP_HINT, behaviors_path

SETUP_SH = Path(__file__).resolve().parents[2] / "scripts" / "setup.sh"


def test_setup_fetches_the_behaviors_version_the_code_expects() -> None:
    (version,) = re.findall(r"npm_tarball browsertrix-behaviors (\S+) ", SETUP_SH.read_text())
    assert version == BEHAVIORS_VERSION
    assert "WEBARK_BROWSER=1" in SETUP_HINT


def test_missing_behaviors_name_the_setup_flag(tmp_path: Path) -> None:
    with pytest.raises(BrowserUnavailableError, match=re.escape(SETUP_HINT)) as err:
        behaviors_path(tmp_path / "behaviors.js")
    assert isinstance(err.value, ConfigError) and "browsertrix-behaviors" in str(err.value)


def test_missing_chromium_or_behaviors_fail_before_any_launch(tmp_path: Path) -> None:
    pytest.importorskip("playwright.async_api")
    pool = BrowserPool("127.0.0.1:1", executable_path=tmp_path / "chromium")
    with pytest.raises(BrowserUnavailableError, match=r"Chromium not found at .*setup\.sh"):
        asyncio.run(pool.start())
    fake = tmp_path / "chromium"
    fake.write_text("#!/bin/sh\nexit 1\n")
    fake.chmod(0o755)
    pool = BrowserPool("127.0.0.1:1", executable_path=fake, behaviors_js=tmp_path / "none.js")
    with pytest.raises(BrowserUnavailableError, match="browsertrix-behaviors"):
        asyncio.run(pool.start())


def test_prefetched_document_is_decoded_for_the_browser() -> None:
    body = b"<!doctype html><title>x</title>" * 50
    doc = PrefetchedDocument(200, [("Content-Type", "text/html"), ("Content-Encoding", "gzip"),
                                   ("Content-Length", "12"), ("Transfer-Encoding", "chunked"),
                                   ("Set-Cookie", "a=1"), ("Set-Cookie", "b=2"),
                                   ("Vary", "Accept"), ("Vary", "Cookie")],
                             gzip.compress(body))  # fmt: skip
    args = doc.fulfil_args()
    assert args == {"status": 200, "body": body, "headers": {
        "content-type": "text/html", "set-cookie": "a=1\nb=2", "vary": "Accept, Cookie"}}
    with pytest.raises(ValueError):
        PrefetchedDocument(200, [("Content-Encoding", "gzip")], b"not gzip").fulfil_args()


def _pin(cert: x509.Certificate) -> str:
    spki = serialization.PublicFormat.SubjectPublicKeyInfo
    der = cert.public_key().public_bytes(serialization.Encoding.DER, spki)
    return base64.b64encode(hashlib.sha256(der).digest()).decode()


def test_spki_pins_match_the_certificates_the_proxy_presents(tmp_path: Path) -> None:
    ca = CertAuthority(tmp_path / "proxy-ca.pem")
    leaf = x509.load_pem_x509_certificate(ca.leaf_path("example.org").read_bytes())
    other = x509.load_pem_x509_certificate(ca.leaf_path("127.0.0.1").read_bytes())
    pins = proxy_spki_pins(ca.path)
    assert pins == (_pin(ca.cert), _pin(leaf))
    assert _pin(other) == _pin(leaf)  # one leaf key for every host
    with pytest.raises(BrowserUnavailableError):
        proxy_spki_pins(tmp_path / "missing.pem")


def test_launch_flags_route_everything_through_the_proxy_with_the_pins(tmp_path: Path) -> None:
    ca = CertAuthority(tmp_path / "proxy-ca.pem")
    ca.leaf_path("127.0.0.1")
    args = BrowserPool("127.0.0.1:8123", ca_file=ca.path).launch_args()
    assert "--proxy-server=http://127.0.0.1:8123" in args
    assert "--proxy-bypass-list=<-loopback>" in args  # loopback through the proxy too
    assert f"--ignore-certificate-errors-spki-list={','.join(proxy_spki_pins(ca.path))}" in args
    assert "--ignore-certificate-errors" not in args  # no blanket trust
    # Playwright's own --disable-features (HttpsUpgrades among them) must not be
    # replaced: Chromium keeps only the last of repeated switches
    assert not any(a.startswith(("--disable-features", "--enable-features")) for a in args)
