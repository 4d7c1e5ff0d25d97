"""The server's certificate chain of an HTTPS fetch, as sent on the wire, in one WARC
``metadata`` record per TLS connection (webark.fetch.certificates)."""

from __future__ import annotations

import asyncio
import ssl
from pathlib import Path

from fetch_support import Server, fetcher, keep_alive, run, warc_writer

from tls_chain import PEM_CHAIN, ChainCA, chain_records, parsed_chain
from webark.fetch import Exchange
from webark.fetch.certificates import peer_chain
from webark.fetch.fetcher import unverified_context
from webark.warc.builders import RecordBuilder
from webark.warc.check import check_file
from webark.warc.reader import iter_records

RESPONSE = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\nok"


def fetch_three(ca: ChainCA, **kw: object) -> tuple[list[Exchange], int]:
    """/a and /b on one kept-alive connection, /c on a second one."""

    async def go() -> tuple[list[Exchange], int]:
        async with Server(keep_alive(RESPONSE), ssl=ca.server_context()) as srv:
            async with fetcher(**kw) as f:
                out = [await f.fetch(srv.url(p, scheme="https")) for p in ("/a", "/b")]
            async with fetcher(**kw) as f:
                out.append(await f.fetch(srv.url("/c", scheme="https")))
            return out, srv.connections

    return run(go())


def test_chain_once_per_connection_as_sent(tmp_path: Path) -> None:
    ca = ChainCA()
    exchanges, connections = fetch_three(ca)  # default: not verified (Heritrix "open")
    assert connections == 2
    a, b, c = exchanges
    assert (a.connection_reused, b.connection_reused, c.connection_reused) == (False, True,
                                                                                False)
    assert list(a.tls_chain) == ca.sent  # leaf then intermediate, byte for byte
    assert b.tls_chain == ()
    assert list(c.tls_chain) == ca.sent
    with warc_writer(tmp_path) as w:
        for ex in exchanges:
            w.write(*ex.to_records(w.builder))
        path = w.paths[0]
    report = check_file(path)
    assert report.ok, report
    chains = chain_records(tmp_path)
    assert [r.target_uri for r in chains] == [a.url, c.url]
    responses = {r.record_id: r.target_uri for r in iter_records(path) if r.type == "response"}
    for rec in chains:
        assert parsed_chain(rec) == ca.sent
        (concurrent,) = rec.headers.get_all("warc-concurrent-to")
        assert responses[concurrent] == rec.target_uri
        assert rec.headers.get("content-type") == PEM_CHAIN
        assert rec.headers.date_str == next(
            r.headers.date_str for r in iter_records(path) if r.record_id == concurrent)


def test_chain_recorded_when_verified_against_test_root() -> None:
    ca = ChainCA()
    client = ssl.create_default_context()
    ca.root.configure_trust(client)
    (a, _, _), _ = fetch_three(ca, ssl_context=client)
    assert a.ok and list(a.tls_chain) == ca.sent  # the root was not sent, nor added


def test_plain_http_has_no_chain() -> None:
    async def go() -> Exchange:
        async with Server(keep_alive(RESPONSE)) as srv, fetcher() as f:
            return await f.fetch(srv.url("/"))

    ex = run(go())
    assert ex.ok and ex.tls_chain == ()
    assert [r.type for r in ex.to_records(RecordBuilder())] == ["response", "request"]


class _LeafOnly:
    """A real ``SSLObject`` seen as on a Python without ``get_unverified_chain`` (public
    or on ``_sslobj``): only ``getpeercert`` is there."""

    def __init__(self, tls: ssl.SSLObject) -> None:
        self.getpeercert = tls.getpeercert


def test_leaf_alone_without_the_chain_call() -> None:
    ca = ChainCA()

    async def go() -> tuple[tuple[bytes, ...], tuple[bytes, ...]]:
        async with Server(keep_alive(RESPONSE), ssl=ca.server_context()) as srv:
            _, writer = await asyncio.open_connection("127.0.0.1", srv.port,
                                                      ssl=unverified_context())  # fmt: skip
            tls = writer.get_extra_info("ssl_object")
            try:
                return peer_chain(tls), peer_chain(_LeafOnly(tls))  # type: ignore[arg-type]
            finally:
                writer.close()

    full, leaf = run(go())
    assert list(full) == ca.sent
    assert list(leaf) == ca.sent[:1]
    assert peer_chain(None) == ()
