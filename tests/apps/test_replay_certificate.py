"""The replay banner of an https capture shows the server's TLS certificate: ``webark
crawl`` of a loopback HTTPS site whose chain the test made (root → intermediate →
leaf, :mod:`tls_chain`) writes one chain record per connection; replay (the ASGI app
over HTTP, httpx) finds it for the connection's first capture (concurrent to it) and
for the later ones (same WARC file, nearest earlier chain of the host), and shows the
leaf's subject, issuer, validity and SHA-256 exactly; an http capture shows none."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator
from typing import Any

import pytest
from cryptography import x509
from cryptography.hazmat.primitives.serialization import Encoding
from starlette.testclient import TestClient

from index_stores import StoreChoice
from tls_site import Crawled, crawl_both
from webark.apps.replay.app import create_server

_BANNER = re.compile(r"window\.__webark_banner=(\{.*?\});</script>")


@pytest.fixture(scope="module")
def crawled(tmp_path_factory: pytest.TempPathFactory) -> Crawled:
    return crawl_both(tmp_path_factory.mktemp("tls"))


@pytest.fixture(scope="module")
def client(crawled: Crawled, index_store: StoreChoice,
           tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:  # fmt: skip
    colls = tmp_path_factory.mktemp("colls")
    coll = index_store.init(colls / "c")
    with coll:
        assert [r.status for r in coll.add(crawled.warcs)] == ["indexed", "indexed"]
    with TestClient(create_server(colls)) as c:
        yield c


def banner(client: TestClient, url: str) -> dict[str, Any]:
    r = client.get(f"/c/2/{url}", follow_redirects=True)
    assert r.status_code == 200, r.status_code
    m = _BANNER.search(r.text)
    assert m is not None, r.text[:500]
    data: dict[str, Any] = json.loads(m.group(1))
    return data


@pytest.mark.parametrize(("path", "linked"), [("robots.txt", True), ("", False),
                                              ("next.html", False)])  # fmt: skip
def test_banner_shows_the_leaf_certificate(client: TestClient,
                                           crawled: Crawled, path: str,
                                           linked: bool) -> None:  # fmt: skip
    ca, https = crawled.ca, crawled.https
    cert = banner(client, https + path)["certificate"]
    assert cert is not None
    leaf = x509.load_der_x509_certificate(ca.sent[0])
    assert cert["sha256"] == ":".join(f"{b:02X}" for b in hashlib.sha256(ca.sent[0]).digest())
    assert cert["subject"] == leaf.subject.rfc4514_string()
    assert cert["issuer"] == x509.load_der_x509_certificate(ca.sent[1]).subject.rfc4514_string()
    assert cert["not_after"] == leaf.not_valid_after_utc.strftime("%Y-%m-%d %H:%M:%S UTC")
    assert cert["count"] == 2
    assert cert["linked"] is linked
    # the PEM shown is the chain as the server sent it: leaf, then intermediate
    sent = [c.public_bytes(Encoding.DER) for c in x509.load_pem_x509_certificates(
        cert["chain"].encode("ascii"))]  # fmt: skip
    assert sent == ca.sent


def test_http_capture_shows_no_certificate(
    client: TestClient, crawled: Crawled
) -> None:
    assert banner(client, crawled.http)["certificate"] is None
