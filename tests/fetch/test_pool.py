"""Keep-alive connection reuse and the per-host connection limit."""

from __future__ import annotations

import asyncio

from fetch_support import Peer, Server, fetcher, keep_alive, one_then_close, run

from webark.fetch import Exchange

OK = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
CHUNKED_OK = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n"


def test_keep_alive_reuses_one_connection() -> None:
    async def go() -> tuple[list[Exchange], Server]:
        async with Server(keep_alive(lambda req: CHUNKED_OK if b"/c" in req else OK)) as srv:
            async with fetcher() as f:
                out = [await f.fetch(srv.url(f"/{p}")) for p in ("a", "c", "b", "c", "d")]
                assert f.connections_opened == 1
            return out, srv

    exchanges, srv = run(go())
    assert all(e.ok for e in exchanges)
    assert srv.connections == 1 and len(srv.requests) == 5
    assert [e.connection_reused for e in exchanges] == [False, True, True, True, True]


def test_connection_close_is_honoured() -> None:
    resp = b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok"

    async def go() -> Server:
        async with Server(one_then_close(resp)) as srv, fetcher() as f:
            for _ in range(3):
                assert (await f.fetch(srv.url())).ok
        return srv

    assert run(go()).connections == 3


def test_http10_response_is_not_reused() -> None:
    resp = b"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok"

    async def go() -> Server:
        async with Server(keep_alive(resp)) as srv, fetcher() as f:
            for _ in range(2):
                assert (await f.fetch(srv.url())).ok
        return srv

    assert run(go()).connections == 2


def test_keep_alive_off_sends_connection_close() -> None:
    async def go() -> tuple[Exchange, Server]:
        async with Server(keep_alive(OK)) as srv, fetcher(keep_alive=False) as f:
            ex = await f.fetch(srv.url())
            ex2 = await f.fetch(srv.url())
            assert ex2.ok and not ex2.connection_reused
        return ex, srv

    ex, srv = run(go())
    assert b"\r\nConnection: close\r\n" in ex.request
    assert srv.connections == 2


def test_server_closing_idle_connection_is_retried() -> None:
    """A kept-alive connection the server closed while idle (no Connection: close
    header) is noticed, and the request goes out again on a new connection."""

    async def handler(peer: Peer) -> None:
        if await peer.read_request() is not None:
            await peer.send(OK)
        peer.close()  # silently, as servers do at their keep-alive timeout

    async def go() -> tuple[list[Exchange], Server]:
        async with Server(handler) as srv, fetcher() as f:
            out = []
            for _ in range(3):
                out.append(await f.fetch(srv.url()))
        return out, srv

    exchanges, srv = run(go())
    assert [e.status for e in exchanges] == [200, 200, 200]
    assert srv.connections == 3


def test_stale_connection_detected_after_send() -> None:
    """The server reads the second request, then closes without answering: the fetcher
    cannot tell this from an idle close, retries once, and gets its answer."""
    state = {"n": 0}

    async def handler(peer: Peer) -> None:
        while await peer.read_request() is not None:
            state["n"] += 1
            if state["n"] == 2:
                peer.close()
                return
            await peer.send(OK)

    async def go() -> tuple[list[Exchange], Server]:
        async with Server(handler) as srv, fetcher() as f:
            out = [await f.fetch(srv.url()) for _ in range(2)]
        return out, srv

    exchanges, srv = run(go())
    assert [e.status for e in exchanges] == [200, 200]
    assert srv.connections == 2 and len(srv.requests) == 3


def test_one_connection_per_host_by_default() -> None:
    async def handler(peer: Peer) -> None:
        while await peer.read_request() is not None:
            await asyncio.sleep(0.02)
            await peer.send(OK)

    async def go(per_host: int) -> Server:
        async with Server(handler) as srv, fetcher(max_connections_per_host=per_host) as f:
            results = await asyncio.gather(*(f.fetch(srv.url(f"/{i}")) for i in range(6)))
            assert all(r.ok for r in results)
        return srv

    one = run(go(1))
    assert one.max_open == 1 and one.connections == 1
    three = run(go(3))
    assert three.max_open == 3


def test_cancelled_fetch_releases_its_place() -> None:
    async def handler(peer: Peer) -> None:
        while (req := await peer.read_request()) is not None:
            if b"/slow" in req:
                await asyncio.sleep(5)
            await peer.send(OK)

    async def go() -> Exchange:
        async with Server(handler) as srv, fetcher() as f:
            slow = asyncio.create_task(f.fetch(srv.url("/slow")))
            await asyncio.sleep(0.05)
            waiting = asyncio.create_task(f.fetch(srv.url("/fast")))
            await asyncio.sleep(0.05)
            slow.cancel()
            return await asyncio.wait_for(waiting, 2)

    assert run(go()).status == 200


def test_idle_connections_are_bounded() -> None:
    async def go() -> int:
        servers = [Server(keep_alive(OK)) for _ in range(4)]
        for s in servers:
            await s.__aenter__()
        async with fetcher(max_idle_connections=2) as f:
            for s in servers:
                assert (await f.fetch(s.url())).ok
            idle = f.pool.idle_count
        for s in servers:
            await s.__aexit__()
        return idle

    assert run(go()) == 2
