"""Request/response pairing and POST/PUT folding for the CDX indexer.

A response line can depend on its request: the request's method and body fold into the
key (``post_append``: pywb ``join_request_records``, cdxj-indexer ``concur_req_resp``)
and ``req.http:*`` fields come from it. Two neighbouring records pair up when they have
the same target URI and the second is ``WARC-Concurrent-To`` the first; which record
types pair is a compat rule (:meth:`~webark.cdx.compat.CompatRules.pair_roles`). The fold
is :func:`webark.cdx.post.method_url`, the one rule replay looks POST requests up with.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import replace
from typing import TYPE_CHECKING

from webark.cdx.post import FOLDED_METHODS, method_query, method_url
from webark.url import cdx_key, to_scope_surt
from webark.url.errors import InvalidURLError
from webark.warc.record import WarcRecord

if TYPE_CHECKING:
    from webark.cdx.core import Entry, RecordIndexer
    from webark.cdx.line import CdxLine

__all__ = ["run_paired"]


def run_paired(ix: RecordIndexer, records: Iterable[WarcRecord]) -> Iterator[CdxLine | str]:
    """The lines of ``records`` (as :meth:`RecordIndexer.run`), each request/response
    pair finished together."""
    prev: Entry | None = None
    rules, finish, entry = ix.rules, ix.finish, ix.entry
    in_stream, selected = rules.in_stream, rules.selected
    for rec in records:
        rtype = rec.type
        if not in_stream(rec, rtype):
            continue
        e = entry(rec, selected(rec, rtype))
        if rtype == "request":
            ix.request_fields(e, e)
        if prev is not None and _pair(ix, prev, e):
            if (out := finish(prev)) is not None:
                yield out
            if (out := finish(e)) is not None:
                yield out
            prev = None
            continue
        if prev is not None and (out := finish(prev)) is not None:
            yield out
        prev = e
    if prev is not None and (out := finish(prev)) is not None:
        yield out


def _pair(ix: RecordIndexer, a: Entry, b: Entry) -> bool:
    """Do ``a`` and ``b`` pair up? If so, fold the request into both lines."""
    if a.url != b.url:  # the records' target URIs
        return False
    if b.rec.headers.get("warc-concurrent-to") != a.rec.headers.get("warc-record-id"):
        return False
    roles = ix.rules.pair_roles(a, b)
    if roles is None:
        return False
    req, resp = roles
    if ix.rules.request_fields_to_response:
        ix.request_fields(req, resp)
    if ix.o.post_append and ix.head(req) is not None:
        _as_line(ix, req)
        _as_line(ix, resp)
        _fold(ix, req, resp)
    return True


def _as_line(ix: RecordIndexer, e: Entry) -> None:
    """Turn a text-mode entry back into a :class:`CdxLine` (before folding)."""
    if e.text is not None:
        e.text = None
        e.line = ix.build(e)
        if e.line is None:
            e.emit = False


def _fold(ix: RecordIndexer, req: Entry, resp: Entry) -> None:
    """Apply the POST/PUT fold of ``req`` to both lines."""
    head = ix.head(req)
    if head is None:
        return
    rules = ix.rules
    upper = head.tokens()[0].upper()
    body = b""
    if upper in FOLDED_METHODS:
        body = rules.request_body(head, req.rec.block.read_all()[head.end :])
    content_type = head.get(b"content-type")
    query = method_query(upper, content_type, body, compat=rules.name)
    if query is None:
        return
    for e in (resp, req):
        if e.line is None:
            continue
        new_url = method_url(e.line.url, upper, content_type, body, compat=rules.name)
        assert new_url is not None  # folded, as method_query said
        if ix.o.scope_keys:
            try:
                key = to_scope_surt(new_url)
            except (InvalidURLError, ValueError):
                key = e.line.surt
            e.line = replace(e.line, urlkey=key, surt=key, method=upper)
        else:
            e.line = replace(e.line, urlkey=cdx_key(new_url), method=upper)
    if resp.line is not None:
        extra = dict(resp.line.extra)
        rules.fold_extra(extra, upper, query)
        resp.line = replace(resp.line, extra=extra)
