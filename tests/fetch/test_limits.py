"""Timeouts, size and time limits, connection failures: the Heritrix status codes and
the truncation flags."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import socket
from pathlib import Path

import pytest
from fetch_support import Peer, Server, fetcher, keep_alive, run, warc_writer

from webark.fetch import (
    S_CONNECT_FAILED,
    S_CONNECT_LOST,
    S_TIMEOUT,
    S_UNFETCHABLE_URI,
    Exchange,
    FetchError,
    FetchLimits,
)
from webark.warc.check import check_file
from webark.warc.reader import iter_records

BIG_BODY = bytes(range(256)) * 400  # 102400 bytes
BIG = b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(BIG_BODY) + BIG_BODY
BIG_CHUNKED = (
    b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
    + b"".join(b"%x\r\n" % 1000 + BIG_BODY[i : i + 1000] + b"\r\n" for i in range(0, 50000, 1000))
    + b"0\r\n\r\n"
)


def sha1_label(data: bytes) -> str:
    return "sha1:" + base64.b32encode(hashlib.sha1(data).digest()).decode()


def fetch_with(handler, limits: FetchLimits, **kw) -> tuple[Exchange, Server]:
    async def go() -> tuple[Exchange, Server]:
        async with Server(handler) as srv, fetcher(limits=limits, **kw) as f:
            ex = await f.fetch(srv.url())
        return ex, srv

    return run(go())


@pytest.mark.parametrize("response", [BIG, BIG_CHUNKED], ids=["length", "chunked"])
def test_max_size_keeps_truncated_capture(response: bytes, tmp_warcs: Path) -> None:
    limits = FetchLimits(read_timeout=2, total_timeout=5, max_size=10_000)
    ex, _ = fetch_with(keep_alive(response), limits)
    assert ex.ok and ex.status == 200
    assert ex.truncated == "length" and ex.annotations == ("lenTrunc",)
    assert ex.response_bytes == response[:10_000]
    with warc_writer(tmp_warcs) as w:
        recs = w.write(*ex.to_records(w.builder))
        path = w.paths[0]
    assert recs[0].headers.get("WARC-Truncated") == "length"
    assert recs[0].headers.get("WARC-Payload-Digest") == ex.payload_digest
    report = check_file(path)
    assert report.ok, [str(p) for p in report.errors]
    back = next(r for r in iter_records(path) if r.type == "response")
    assert back.block.read_all() == response[:10_000]


def test_max_size_not_reached() -> None:
    limits = FetchLimits(read_timeout=2, total_timeout=5, max_size=len(BIG))
    ex, _ = fetch_with(keep_alive(BIG), limits)
    assert ex.truncated is None and ex.response_bytes == BIG


def test_truncated_connection_is_not_reused() -> None:
    async def go() -> Server:
        limits = FetchLimits(read_timeout=2, total_timeout=5, max_size=1000)
        async with Server(keep_alive(BIG)) as srv, fetcher(limits=limits) as f:
            assert (await f.fetch(srv.url())).truncated == "length"
            assert (await f.fetch(srv.url())).truncated == "length"
        return srv

    assert run(go()).connections == 2


def test_total_timeout_keeps_time_truncated_capture(tmp_warcs: Path) -> None:
    body = b"x" * 100

    async def handler(peer: Peer) -> None:
        await peer.read_request()
        head = b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n"
        peer.writer.write(head)
        for _ in range(10):  # 100 bytes every 0.1 s: 1 s for the body
            peer.writer.write(body)
            await peer.writer.drain()
            await asyncio.sleep(0.1)
        peer.server.sent.append(head + body * 10)

    limits = FetchLimits(read_timeout=1, total_timeout=0.35)
    ex, _ = fetch_with(handler, limits)
    assert ex.ok and ex.status == 200
    assert ex.truncated == "time" and ex.annotations == ("timeTrunc",)
    got = ex.response_bytes
    assert got.startswith(b"HTTP/1.1 200 OK\r\n") and 0 < len(got) - 41 < 1000
    assert ex.payload_digest == sha1_label(got[41:])
    assert 300 <= ex.duration_ms < 1000
    with warc_writer(tmp_warcs) as w:
        recs = w.write(*ex.to_records(w.builder))
        path = w.paths[0]
    assert recs[0].headers.get("WARC-Truncated") == "time"
    assert check_file(path).ok


def test_no_response_head_is_timeout() -> None:
    async def handler(peer: Peer) -> None:
        await peer.read_request()
        await asyncio.sleep(3)

    ex, _ = fetch_with(handler, FetchLimits(read_timeout=0.2, total_timeout=5))
    assert ex.status == S_TIMEOUT and ex.error is not None
    assert ex.error.kind == "ReadTimeout" and ex.annotations == ("err=ReadTimeout",)
    assert 150 <= ex.duration_ms < 2000
    with pytest.raises(FetchError):
        ex.to_records(None)  # type: ignore[arg-type]


def test_slow_head_hits_total_timeout() -> None:
    async def handler(peer: Peer) -> None:
        await peer.read_request()
        for b in b"HTTP/1.1 200 OK\r\n":  # one byte every 0.05 s
            peer.writer.write(bytes([b]))
            await asyncio.sleep(0.05)
        await asyncio.sleep(2)

    ex, _ = fetch_with(handler, FetchLimits(read_timeout=1, total_timeout=0.3))
    assert ex.status == S_TIMEOUT and ex.error is not None and ex.error.kind == "TotalTimeout"
    assert ex.response_bytes.startswith(b"HTTP/")  # what did arrive, for diagnosis


def test_stall_in_body_is_connection_broken() -> None:
    async def handler(peer: Peer) -> None:
        await peer.read_request()
        peer.writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nabc")
        await asyncio.sleep(3)

    ex, _ = fetch_with(handler, FetchLimits(read_timeout=0.2, total_timeout=5))
    assert ex.status == S_CONNECT_LOST and ex.http_status == 200
    assert ex.error is not None and ex.error.kind == "ReadTimeout"
    assert ex.response_bytes.endswith(b"\r\n\r\nabc")


def test_disconnect_in_body_is_connection_broken() -> None:
    async def handler(peer: Peer) -> None:
        await peer.read_request()
        await peer.send(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nabc")
        peer.close()

    ex, _ = fetch_with(handler, FetchLimits(read_timeout=2, total_timeout=5))
    assert ex.status == S_CONNECT_LOST and ex.error is not None
    assert ex.error.kind == "RemoteProtocolError"


def test_empty_reply_is_connection_broken() -> None:
    async def handler(peer: Peer) -> None:
        await peer.read_request()
        peer.close()

    ex, _ = fetch_with(handler, FetchLimits(read_timeout=2, total_timeout=5))
    assert ex.status == S_CONNECT_LOST


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_connection_refused_is_connect_failed() -> None:
    async def go() -> Exchange:
        async with fetcher() as f:
            return await f.fetch(f"http://127.0.0.1:{free_port()}/")

    ex = run(go())
    assert ex.status == S_CONNECT_FAILED and ex.error is not None
    assert ex.error.kind == "ConnectionRefusedError"
    assert ex.annotations == ("err=ConnectionRefusedError",)
    assert ex.ip_address == "127.0.0.1" and ex.request == b""


def test_tls_handshake_stall_is_connect_timeout() -> None:
    """A server that accepts TCP but never answers the TLS ClientHello."""

    async def handler(peer: Peer) -> None:
        await asyncio.sleep(3)

    async def go() -> Exchange:
        limits = FetchLimits(connect_timeout=0.2, read_timeout=2, total_timeout=5)
        async with Server(handler) as srv, fetcher(limits=limits) as f:
            return await f.fetch(srv.url(scheme="https"))

    ex = run(go())
    assert ex.status == S_TIMEOUT and ex.error is not None and ex.error.kind == "ConnectTimeout"
    assert 150 <= ex.duration_ms < 2000


@pytest.mark.parametrize(
    "url",
    ["ftp://127.0.0.1/", "http:///nohost", "http://127.0.0.1:99999/", "http://127.0.0.1/é"],
)
def test_unfetchable_urls(url: str) -> None:
    async def go() -> Exchange:
        async with fetcher() as f:
            return await f.fetch(url)

    ex = run(go())
    assert ex.status == S_UNFETCHABLE_URI and ex.error is not None


def test_bad_request_header_is_unfetchable() -> None:
    async def go() -> Exchange:
        async with fetcher() as f:
            return await f.fetch("http://127.0.0.1:1/", headers=[("X-Bad", "a\r\nb")])

    assert run(go()).status == S_UNFETCHABLE_URI


def test_large_response_is_spooled_to_disk(tmp_warcs: Path) -> None:
    limits = FetchLimits(read_timeout=2, total_timeout=5, spool_threshold=8192)
    ex, _ = fetch_with(keep_alive(BIG_CHUNKED), limits)
    assert ex.ok and not ex.response.in_memory
    assert ex.response.size == len(BIG_CHUNKED)
    assert ex.response_bytes == BIG_CHUNKED
    assert ex.payload_digest == sha1_label(BIG_BODY[:50000])
    with warc_writer(tmp_warcs) as w:
        recs = w.write(*ex.to_records(w.builder))
        path = w.paths[0]
    assert recs[0].headers.get("WARC-Payload-Digest") == ex.payload_digest
    assert check_file(path).ok


def test_spooled_response_after_interim_response() -> None:
    hints = b"HTTP/1.1 103 Early Hints\r\nLink: </a.css>\r\n\r\n"
    limits = FetchLimits(read_timeout=2, total_timeout=5, spool_threshold=1000)
    ex, _ = fetch_with(keep_alive(hints + BIG), limits)
    assert ex.informational == hints and not ex.response.in_memory
    assert ex.response_bytes == BIG


def test_limits_are_validated() -> None:
    with pytest.raises(ValueError):
        FetchLimits(read_timeout=0)
    with pytest.raises(ValueError):
        FetchLimits(max_size=-1)


def test_max_size_within_head_fails() -> None:
    limits = FetchLimits(read_timeout=2, total_timeout=5, max_size=20)
    ex, _ = fetch_with(keep_alive(BIG), limits)
    assert ex.status == S_CONNECT_LOST and ex.error is not None
    assert ex.error.kind == "HeaderTrunc" and ex.response_bytes == BIG[:20]
