"""Header fields an HTTP/1.1 proxy must not pass on, and the messages the proxy makes.

Hop-by-hop fields (RFC 9110 §7.6.1): ``Connection`` and every field it names,
``Proxy-Connection`` (the old non-standard one browsers still send), ``Keep-Alive``,
``TE``, ``Trailer``, ``Transfer-Encoding``, ``Upgrade``, ``Proxy-Authenticate`` and
``Proxy-Authorization``. The proxy reads the whole request body before sending it
upstream, so the request it sends is framed by ``Content-Length`` (the fetcher adds it)
and ``Expect`` is answered by the proxy itself. A response body is relayed with the
framing it came with, so ``Transfer-Encoding`` and ``Content-Length`` stay on the
response; the other hop-by-hop fields go.

warcprox's ``Warcprox-Meta`` request header is the proxy's own: it never goes upstream
nor into the WARC.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

__all__ = [
    "HOP_BY_HOP", "connection_tokens", "head_bytes", "message", "request_fields",
    "response_fields",
]  # fmt: skip

HOP_BY_HOP = frozenset({
    "connection", "proxy-connection", "keep-alive", "te", "trailer", "transfer-encoding",
    "upgrade", "proxy-authenticate", "proxy-authorization",
})  # fmt: skip
"""Lowercased names of the hop-by-hop fields (module docstring)."""

_REQUEST_ONLY = frozenset({"expect", "warcprox-meta"})
_FRAMING = frozenset({"transfer-encoding"})


def connection_tokens(fields: Iterable[tuple[str, str]]) -> set[str]:
    """The lowercased options of every ``Connection`` (and ``Proxy-Connection``) field:
    ``close``, ``keep-alive`` and the names of further hop-by-hop fields."""
    out: set[str] = set()
    for n, v in fields:
        if n.lower() in ("connection", "proxy-connection"):
            out.update(t.strip().lower() for t in v.split(",") if t.strip())
    return out


def request_fields(fields: Sequence[tuple[str, str]]) -> list[tuple[str, str]]:
    """The client's request fields to send upstream, in their order and case, without
    the hop-by-hop ones, ``Expect`` and ``Warcprox-Meta``."""
    drop = HOP_BY_HOP | _REQUEST_ONLY | connection_tokens(fields)
    return [(n, v) for n, v in fields if n.lower() not in drop]


def response_fields(fields: Sequence[tuple[str, str]]) -> list[tuple[str, str]]:
    """The upstream response fields to pass to the client: without the hop-by-hop
    ones, except ``Transfer-Encoding`` (the body goes on with its framing)."""
    drop = (HOP_BY_HOP - _FRAMING) | (connection_tokens(fields) - {"transfer-encoding",
                                                                   "content-length"})
    return [(n, v) for n, v in fields if n.lower() not in drop]  # fmt: skip


def head_bytes(status_line: bytes, fields: Iterable[tuple[str, str]]) -> bytes:
    """A message head: ``status_line`` (without its CRLF), the fields (ISO-8859-1), and
    the blank line."""
    lines = [status_line] + [f"{n}: {v}".encode("iso-8859-1") for n, v in fields]
    return b"\r\n".join(lines) + b"\r\n\r\n"


def message(status: int, reason: str, text: str,
            fields: Sequence[tuple[str, str]] = (), *, close: bool = False) -> bytes:  # fmt: skip
    """A complete response the proxy makes itself (an error, a status page): a
    ``text/plain`` (or, when ``fields`` give a Content-Type, that type) body of
    ``text`` with its ``Content-Length``; ``Connection: close`` when ``close``."""
    body = text.encode("utf-8")
    out = list(fields)
    if not any(n.lower() == "content-type" for n, _ in out):
        out.append(("Content-Type", "text/plain; charset=utf-8"))
    out.append(("Content-Length", str(len(body))))
    if close:
        out.append(("Connection", "close"))
    return head_bytes(f"HTTP/1.1 {status} {reason}".encode("ascii"), out) + body
