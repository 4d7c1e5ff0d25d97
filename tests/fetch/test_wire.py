"""The exact bytes on the wire end up in the Exchange and in the WARC records."""

from __future__ import annotations

import base64
import hashlib
from pathlib import Path

import pytest
from fetch_support import Server, fetcher, keep_alive, one_then_close, run, warc_writer

from webark.fetch import Exchange
from webark.fetch.fetcher import _Target
from webark.warc.check import check_file
from webark.warc.reader import iter_records


def sha1_label(data: bytes) -> str:
    return "sha1:" + base64.b32encode(hashlib.sha1(data).digest()).decode()


CONTENT_LENGTH = (
    b"HTTP/1.1 200 OK\r\n"
    b"Date: Thu, 01 Jan 2026 12:00:00 GMT\r\n"
    b"content-TYPE: text/plain; charset=utf-8\r\n"
    b"X-Odd-CASE: yes\r\n"
    b"X-Folded: part one\r\n"
    b"   part two\r\n"
    b"Set-Cookie: a=1\r\n"
    b"Set-Cookie: b=2\r\n"
    b"Content-Length: 13\r\n"
    b"\r\n"
    b"hello, world!"
)

CHUNKS = [b"<html>", b"chunked ", b"body</html>"]
CHUNKED = (
    b"HTTP/1.1 200 OK\r\n"
    b"Content-Type: text/html\r\n"
    b"TRANSFER-encoding: chunked\r\n"
    b"\r\n"
    b"6;name=value\r\n<html>\r\n"
    b"8\r\nchunked \r\n"
    b"B\r\nbody</html>\r\n"
    b"0\r\n"
    b"X-Trailer: t\r\n"
    b"\r\n"
)

CLOSE_DELIMITED = (
    b"HTTP/1.0 200 OK\r\nContent-Type: application/octet-stream\r\n\r\n" + bytes(range(256)) * 40
)


def fetch_one(handler, path: str = "/", **kw) -> tuple[Exchange, Server]:
    async def go() -> tuple[Exchange, Server]:
        async with Server(handler) as srv, fetcher() as f:
            ex = await f.fetch(srv.url(path), **kw)
        return ex, srv

    return run(go())


@pytest.mark.parametrize("pieces", [1, 7, 200])
def test_content_length_bytes_kept_exactly(pieces: int) -> None:
    ex, srv = fetch_one(keep_alive(CONTENT_LENGTH, pieces=pieces))
    assert ex.ok and ex.status == 200 and ex.truncated is None
    assert ex.response_bytes == CONTENT_LENGTH == srv.sent[0]
    assert ex.request == srv.requests[0]
    assert ex.payload_digest == sha1_label(b"hello, world!")
    assert ex.payload_size == 13
    assert ex.head_length == CONTENT_LENGTH.index(b"\r\n\r\n") + 4
    # parsed headers keep the server's case and order; folded lines are joined
    names = [n for n, _ in ex.headers]
    assert names[:4] == ["Date", "content-TYPE", "X-Odd-CASE", "X-Folded"]
    assert ex.header("x-folded") == "part one part two"
    assert ex.header_values("set-cookie") == ["a=1", "b=2"]
    assert ex.mime == "text/plain"
    assert ex.ip_address == "127.0.0.1"
    assert ex.duration_ms >= 0 and ex.started.tzinfo is not None


@pytest.mark.parametrize("pieces", [1, 5, 97])
def test_chunked_bytes_kept_and_payload_dechunked(pieces: int) -> None:
    ex, srv = fetch_one(keep_alive(CHUNKED, pieces=pieces))
    assert ex.response_bytes == CHUNKED == srv.sent[0]
    payload = b"".join(CHUNKS)
    assert ex.payload_digest == sha1_label(payload)
    assert ex.payload_size == len(payload)


def test_close_delimited_body() -> None:
    ex, _ = fetch_one(one_then_close(CLOSE_DELIMITED, pieces=9))
    assert ex.ok and ex.http_version == "1.0"
    assert ex.response_bytes == CLOSE_DELIMITED
    assert ex.payload_digest == sha1_label(bytes(range(256)) * 40)


def test_request_bytes_and_headers() -> None:
    async def go() -> tuple[Exchange, Server]:
        async with (
            Server(keep_alive(CONTENT_LENGTH)) as srv,
            fetcher(default_headers=[("From", "archive@example.org"), ("Accept", "*/*")]) as f,
        ):
            ex = await f.fetch(
                srv.url("/a/b?x=1&y=%20"),
                headers=[("If-None-Match", '"v1"'), ("accept", "text/html")],
            )
        return ex, srv

    ex, srv = run(go())
    port = srv.port
    assert (
        ex.request
        == (
            f"GET /a/b?x=1&y=%20 HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
            "User-Agent: webark-test/0.1 (+mailto:archive@example.org)\r\n"
            'From: archive@example.org\r\nIf-None-Match: "v1"\r\n'
            "accept: text/html\r\n\r\n"
        ).encode()
    )
    assert srv.requests[0] == ex.request


def test_head_request_has_no_body() -> None:
    head = b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\nContent-Type: text/html\r\n\r\n"
    ex, _ = fetch_one(keep_alive(head), method="HEAD")
    assert ex.ok and ex.response_bytes == head and ex.payload_size == 0
    assert ex.request.startswith(b"HEAD / HTTP/1.1\r\n")


def test_redirect_is_returned_not_followed() -> None:
    resp = b"HTTP/1.1 302 Found\r\nLocation: /elsewhere\r\nContent-Length: 0\r\n\r\n"
    ex, srv = fetch_one(keep_alive(resp))
    assert ex.status == 302 and ex.header("Location") == "/elsewhere"
    assert len(srv.requests) == 1


def test_not_modified() -> None:
    def answer(req: bytes) -> bytes:
        if b'If-None-Match: "v1"' in req:
            return b'HTTP/1.1 304 Not Modified\r\nETag: "v1"\r\n\r\n'
        return b'HTTP/1.1 200 OK\r\nETag: "v1"\r\nContent-Length: 2\r\n\r\nok'

    ex, _ = fetch_one(keep_alive(answer), headers=[("If-None-Match", '"v1"')])
    assert ex.status == 304 and ex.payload_size == 0
    assert ex.response_bytes == b'HTTP/1.1 304 Not Modified\r\nETag: "v1"\r\n\r\n'


def test_interim_responses_kept_apart() -> None:
    hints = b"HTTP/1.1 103 Early Hints\r\nLink: </style.css>; rel=preload\r\n\r\n"
    ex, _ = fetch_one(keep_alive(hints + CONTENT_LENGTH, pieces=11))
    assert ex.status == 200
    assert ex.informational == hints
    assert ex.response_bytes == CONTENT_LENGTH


@pytest.mark.parametrize("response", [CONTENT_LENGTH, CHUNKED, CLOSE_DELIMITED])
def test_written_warc_keeps_wire_bytes_and_checks(response: bytes, tmp_warcs: Path) -> None:
    handler = one_then_close(response) if response is CLOSE_DELIMITED else keep_alive(response)
    ex, _ = fetch_one(handler)
    with warc_writer(tmp_warcs) as w:
        w.write(*ex.to_records(w.builder))
        path = w.paths[0]
    report = check_file(path)
    assert report.ok, [str(p) for p in report.errors]
    recs = list(iter_records(path))
    assert [r.type for r in recs] == ["warcinfo", "response", "request"]
    resp, req = recs[1], recs[2]
    assert resp.block.read_all() == response
    assert req.block.read_all() == ex.request
    assert resp.headers.get("WARC-Payload-Digest") == ex.payload_digest
    assert resp.headers.get("WARC-IP-Address") == "127.0.0.1"
    assert resp.headers.get("WARC-Truncated") is None
    assert req.headers.get("WARC-Concurrent-To") == resp.record_id
    assert resp.headers.get("WARC-Date") == req.headers.get("WARC-Date")
    digests = {d.field: d for rr in report.records for d in rr.digests if rr.type == "response"}
    assert digests["WARC-Payload-Digest"].reading == "transfer-decoded"


def test_bad_response_is_connection_broken() -> None:
    ex, _ = fetch_one(one_then_close(b"HTTP/1.1 2OO OK\r\n\r\n"))
    assert ex.status == -3 and not ex.ok
    assert ex.error is not None and ex.error.kind == "RemoteProtocolError"
    assert ex.annotations == ("err=RemoteProtocolError",)


@pytest.mark.parametrize(
    ("url", "host_header", "target", "key"),
    [
        ("http://Example.COM/", "example.com", "/", ("http", "example.com", 80)),
        ("https://example.com:443", "example.com", "/", ("https", "example.com", 443)),
        (
            "http://example.com:8080/a?b#frag",
            "example.com:8080",
            "/a?b",
            ("http", "example.com", 8080),
        ),
        ("http://example.com/a?", "example.com", "/a?", ("http", "example.com", 80)),
        ("http://[::1]:8000/x", "[::1]:8000", "/x", ("http", "::1", 8000)),
        (
            "https://bücher.example/",
            "xn--bcher-kva.example",
            "/",
            ("https", "xn--bcher-kva.example", 443),
        ),
    ],
)
def test_request_target_and_host(url: str, host_header: str, target: str, key: tuple) -> None:
    t = _Target(url)
    assert (t.host_header, t.target, t.key) == (host_header, target, key)


def test_request_body_gets_content_length() -> None:
    def echo(req: bytes) -> bytes:
        return b"HTTP/1.1 201 Created\r\nContent-Length: 0\r\n\r\n"

    async def go() -> tuple[Exchange, Server]:
        async with Server(keep_alive(echo)) as srv, fetcher() as f:
            ex = await f.fetch(srv.url("/form"), method="POST", body=b"a=1&b=2")
            assert (await f.fetch(srv.url("/next"))).ok  # the body was not left unread
        return ex, srv

    ex, _ = run(go())
    assert ex.status == 201
    assert ex.request.startswith(b"POST /form HTTP/1.1\r\n")
    assert ex.request.endswith(b"\r\nContent-Length: 7\r\n\r\na=1&b=2")


@pytest.mark.parametrize(
    ("response", "body"),
    [
        (CONTENT_LENGTH, b"hello, world!"),
        (CLOSE_DELIMITED, bytes(range(256)) * 40),
        (CHUNKED, None),
    ],
)
def test_body_hashed_once(response: bytes, body: bytes | None) -> None:
    """A body read as is (no transfer coding) hands its digest to the block, so the
    record builder does not hash it again; a chunked one does not (its raw bytes differ
    from what was hashed). Either way the block's digest is the true one."""
    handler = one_then_close if response is CLOSE_DELIMITED else keep_alive
    ex, _ = fetch_one(handler(response, pieces=3))
    block = ex.response
    seeded = block._digests or {}
    key = ("sha1", ex.head_length, False)
    if body is None:
        assert key not in seeded
    else:
        assert seeded[key] == hashlib.sha1(body).digest()
    assert block.digest("sha1", ex.head_length) == hashlib.sha1(
        response[ex.head_length :]
    ).digest()
