"""HTTPS against a server with a certificate made in the test (trustme CA)."""

from __future__ import annotations

import ssl
from pathlib import Path

import pytest
import trustme
from fetch_support import Server, fetcher, keep_alive, run, warc_writer

from webark.fetch import S_CONNECT_FAILED, Exchange
from webark.warc.check import check_file
from webark.warc.reader import iter_records

RESPONSE = (
    b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nTransfer-Encoding: chunked\r\n\r\n"
    b"5\r\nsecur\r\n4\r\ned!!\r\n0\r\n\r\n"
)


@pytest.fixture(scope="module")
def ca() -> trustme.CA:
    return trustme.CA()


@pytest.fixture(scope="module")
def server_context(ca: trustme.CA) -> ssl.SSLContext:
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert("secure.test", "127.0.0.1").configure_cert(ctx)
    return ctx


def fetch_tls(server_context: ssl.SSLContext, **kw: object) -> tuple[Exchange, Server]:
    async def go() -> tuple[Exchange, Server]:
        async with (
            Server(keep_alive(RESPONSE), ssl=server_context) as srv,
            fetcher(resolve={"secure.test": "127.0.0.1"}, **kw) as f,
        ):
            ex1 = await f.fetch(srv.url("/a", host="secure.test", scheme="https"))
            ex2 = await f.fetch(srv.url("/b", host="secure.test", scheme="https"))
            assert ex2.ok and ex2.connection_reused == ex1.ok
        return ex1, srv

    return run(go())


def test_https_bytes_kept_exactly(server_context: ssl.SSLContext, tmp_warcs: Path) -> None:
    ex, srv = fetch_tls(server_context)  # default: certificates not verified
    assert ex.ok and ex.status == 200
    assert ex.response_bytes == RESPONSE
    assert f"Host: secure.test:{srv.port}\r\n".encode() in ex.request
    assert srv.connections == 1
    with warc_writer(tmp_warcs) as w:
        w.write(*ex.to_records(w.builder))
        path = w.paths[0]
    assert check_file(path).ok
    resp = next(r for r in iter_records(path) if r.type == "response")
    assert resp.target_uri == ex.url and resp.target_uri.startswith("https://secure.test:")
    assert resp.block.read_all() == RESPONSE


def test_https_verified_with_test_ca(ca: trustme.CA, server_context: ssl.SSLContext) -> None:
    client = ssl.create_default_context()
    ca.configure_trust(client)
    ex, _ = fetch_tls(server_context, ssl_context=client)
    assert ex.ok and ex.response_bytes == RESPONSE


def test_https_untrusted_certificate_fails_when_verifying(
    server_context: ssl.SSLContext,
) -> None:
    async def go() -> Exchange:
        verifying = ssl.create_default_context()
        async with (
            Server(keep_alive(RESPONSE), ssl=server_context) as srv,
            fetcher(resolve={"secure.test": "127.0.0.1"}, ssl_context=verifying) as f,
        ):
            return await f.fetch(srv.url(host="secure.test", scheme="https"))

    ex = run(go())
    assert ex.status == S_CONNECT_FAILED and ex.error is not None
    assert "certificate" in ex.error.message.lower()


def test_https_by_ip_address(ca: trustme.CA, server_context: ssl.SSLContext) -> None:
    client = ssl.create_default_context()
    ca.configure_trust(client)

    async def go() -> Exchange:
        async with (
            Server(keep_alive(RESPONSE), ssl=server_context) as srv,
            fetcher(ssl_context=client) as f,
        ):
            return await f.fetch(srv.url(scheme="https"))

    ex = run(go())
    assert ex.ok and ex.response_bytes == RESPONSE
