"""Hostile and sloppy response heads, from a server on 127.0.0.1 sending scripted bytes.

Heads that h11 (strict RFC 9112) refuses but browsers, curl and Heritrix's HttpClient
read used to fail the fetch with -3 (connection broken): the page was not archived and
the crawl retried it 30 times, 900 s apart. They are now read leniently
(:mod:`webark.fetch.lenient`), the WARC block still holding the bytes exactly as sent.
Heads that no client can read stay failures.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from fetch_support import Server, fetcher, one_then_close, run, warc_writer

from webark.fetch import Exchange
from webark.fetch.lenient import lenient_fields, mend_heads
from webark.warc.check import check_file
from webark.warc.reader import iter_records

CL2 = b"Content-Length: 2\r\n"

READABLE = {
    "VT in a value": (b"Content-Type: text/html\x0bx\r\n" + CL2,
                      ("Content-Type", "text/html\x0bx")),
    "NUL in a value": (b"X-A: a\x00b\r\n" + CL2, ("X-A", "a\x00b")),
    "CR in a value": (b"X-A: a\rb\r\n" + CL2, ("X-A", "a\rb")),
    "space before colon": (b"X-A : x\r\n" + CL2, ("X-A", "x")),
    "junk line": (b"Content-Type: text/html\r\nJunkLine\r\n" + CL2, ("Content-Type", "text/html")),
    "name with space": (b"Bad Name: x\r\n" + CL2, ("Content-Length", "2")),
    "empty name": (b": x\r\n" + CL2, ("Content-Length", "2")),
    "leading space": (b" X-A: a\r\n" + CL2, ("X-A", "a")),
    "bad Content-Length": (b"Content-Length: 2x\r\n", ("Content-Length", "2x")),
    "negative Content-Length": (b"Content-Length: -1\r\n", ("Content-Length", "-1")),
    "TE identity": (b"Transfer-Encoding: identity\r\nContent-Length: 9\r\n",
                    ("Transfer-Encoding", "identity")),
}  # fmt: skip


def fetch_one(response: bytes) -> Exchange:
    async def go() -> Exchange:
        async with Server(one_then_close(response)) as srv, fetcher() as f:
            return await f.fetch(srv.url("/"))

    return run(go())


@pytest.mark.parametrize("case", sorted(READABLE))
def test_sloppy_head_read_and_archived_as_sent(case: str, tmp_warcs: Path) -> None:
    fields, expected = READABLE[case]
    response = b"HTTP/1.1 200 OK\r\n" + fields + b"\r\nok"
    ex = fetch_one(response)
    assert ex.status == 200, ex.error
    assert ex.response_bytes == response  # the bytes as sent, not as mended
    assert ex.head_length == len(response) - 2
    assert ex.payload_size == 2
    assert expected in ex.headers
    with warc_writer(tmp_warcs) as w:
        w.write(*ex.to_records(w.builder))
        path = w.paths[0]
    assert check_file(path).ok
    (rec,) = [r for r in iter_records(path) if r.type == "response"]
    assert rec.block.read_all() == response and rec.payload() == b"ok"


def test_lowercase_protocol_and_chunked_after_another_coding() -> None:
    response = b"http/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n"
    ex = fetch_one(response)
    assert ex.status == 200 and ex.response_bytes == response
    assert ex.payload_size == 2  # de-chunked
    assert ex.headers == (("Transfer-Encoding", "gzip, chunked"),)


def test_sloppy_interim_and_final_heads() -> None:
    interim = b"HTTP/1.1 100 Continue\r\nX-A : y\r\n\r\n"
    final = b"HTTP/1.1 200 OK\r\nX-B : z\r\n" + CL2 + b"\r\nok"
    ex = fetch_one(interim + final)
    assert ex.status == 200
    assert ex.informational == interim and ex.response_bytes == final
    assert ex.headers == (("X-B", "z"), ("Content-Length", "2"))


@pytest.mark.parametrize(
    "response",
    [
        b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nok",  # RFC: fatal
        b"HTTP/2 200\r\nContent-Length: 2\r\n\r\nok",
        b"<html>HTTP/0.9 style, no head at all</html>",
        b"HTTP/1.1 0 Zero\r\nContent-Length: 2\r\n\r\nok",
    ],
)
def test_unreadable_heads_still_fail(response: bytes) -> None:
    ex = fetch_one(response)
    assert ex.status == -3 and ex.error is not None and ex.error.kind == "RemoteProtocolError"


def test_mime_cut_like_heritrix() -> None:
    # a Content-Type with spaces put extra fields in crawl.log lines (unreadable lines)
    for value, mime in [
        (b"text/html foo bar", "text/html"),
        (b"TEXT/HTML;charset=utf-8", "text/html"),
        (b"text/html,text/plain", "text/html"),
        (b"text/html\x0bx", "text/html"),
        (b";charset=utf-8", None),
    ]:
        ex = fetch_one(b"HTTP/1.1 200 OK\r\nContent-Type: " + value + b"\r\n" + CL2 + b"\r\nok")
        assert ex.status == 200 and ex.mime == mime, value


def test_mend_keeps_offsets_and_lenient_fields() -> None:
    head = b"HTTP/1.1 200 OK\r\nX-A : 1\r\nJunk\r\nX-B: a\x0cb\r\n folded\r\n\r\nBODY: x\r\n"
    mended = mend_heads(head)
    assert mended is not None and len(mended) == len(head)
    assert mended.endswith(b"\r\n\r\nBODY: x\r\n")  # the body is not touched
    assert lenient_fields(head[: head.index(b"\r\n\r\n") + 4]) == (
        ("X-A", "1"), ("X-B", "a\x0cb folded"),
    )  # fmt: skip
    assert mend_heads(b"HTTP/1.1 200 OK\r\nX-A: 1\r\n\r\n") is None  # nothing to mend
