"""A stored HTTP response head brought up to date by a ``304 Not Modified`` (RFC 9111
§4.3.4 "Freshening Stored Responses upon Validation").

A ``server-not-modified`` revisit (WARC 1.1 §6.7.3) keeps the 304's head only; the
response it stands for is the original's, with every header field the 304 carries
replacing all fields of that name in the stored head — except the fields that describe
the stored body's framing and encoding or are hop-by-hop (:data:`NOT_FRESHENED`),
which a 304 cannot change. Replay (:mod:`webark.index.resolved`) and
``webark reduplicate`` both build the response this way.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

__all__ = ["NOT_FRESHENED", "freshen_fields", "freshen_head"]

NOT_FRESHENED = frozenset(
    {
        "content-length", "transfer-encoding", "content-encoding", "content-range",
        "connection", "keep-alive", "proxy-connection", "te", "trailer", "upgrade",
    }
)  # fmt: skip
"""Lowercase field names a 304 never replaces (body framing and coding, hop-by-hop)."""


def _replaced(names: Iterable[str]) -> set[str]:
    return {n for n in (name.strip().lower() for name in names) if n not in NOT_FRESHENED}


def freshen_fields(
    stored: Sequence[tuple[str, str]], not_modified: Sequence[tuple[str, str]]
) -> list[tuple[str, str]]:
    """``stored`` header fields (``(name, value)`` pairs, in order) updated with the
    fields of a 304: the stored fields whose name the 304 replaces are dropped, the
    304's (those not in :data:`NOT_FRESHENED`) are appended in their order.

    >>> freshen_fields([("Content-Type", "text/html"), ("ETag", '"a"'),
    ...                 ("Content-Length", "5")],
    ...                [("ETag", '"b"'), ("Content-Length", "0"), ("Date", "x")])
    [('Content-Type', 'text/html'), ('Content-Length', '5'), ('ETag', '"b"'), ('Date', 'x')]
    """
    replace = _replaced(n for n, _ in not_modified)
    out = [(n, v) for n, v in stored if n.strip().lower() not in replace]
    out += [(n, v) for n, v in not_modified if n.strip().lower() in replace]
    return out


def _head_lines(head: bytes) -> tuple[bytes, list[tuple[bytes, str]]]:
    """Status line and raw ``(line, lowercase name)`` pairs of an HTTP head."""
    lines = head.split(b"\r\n") if b"\r\n" in head else head.split(b"\n")
    fields = []
    for raw in lines[1:]:
        if raw:
            fields.append((raw, raw.split(b":", 1)[0].strip().lower().decode("latin-1")))
    return lines[0], fields


def freshen_head(stored: bytes, not_modified: bytes) -> bytes:
    """:func:`freshen_fields` on raw heads (status line, fields, optional blank line):
    the stored status line, the bytes of the untouched stored fields as they were, then
    the 304's replacing fields; the result ends with CRLF CRLF."""
    status, old = _head_lines(stored)
    _, new = _head_lines(not_modified)
    replace = _replaced(n for _, n in new)
    out = [status] + [raw for raw, n in old if n not in replace]
    out += [raw for raw, n in new if n in replace]
    return b"\r\n".join(out) + b"\r\n\r\n"
