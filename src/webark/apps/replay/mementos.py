"""The replay app's Memento side: TimeGate, mementos (select, redirect or render),
record and patch mode.

:class:`MementoViews` is a mixin of :class:`~webark.apps.replay.app.ReplayServer`
(the module docstring of :mod:`webark.apps.replay.app` describes the behaviour: the
302 to a capture's own timestamp, POST/PUT lookups, fuzzy matches, the byte budget of
large rewrites). It reads the server's ``pages``, ``budget``, ``send_timeout``,
``rewrite_limit`` and ``recorder``, and uses :class:`~webark.apps.replay.views.PageViews`
for the 404 / 451 / 503 pages.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection
from dataclasses import dataclass
from urllib.parse import quote

import anyio.to_thread
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse

from webark.apps.replay.budget import ByteBudget, Lease
from webark.apps.replay.certificates import certificate_of
from webark.apps.replay.leased import Deferred, LeasedResponse, limiters
from webark.apps.replay.memento import (
    BadAcceptDatetime,
    MementoLinks,
    display_date,
    http_date,
    parse_accept_datetime,
)
from webark.apps.replay.paths import (
    Target,
    archival_url,
    captures_url,
    clamp_timestamp,
    coll_prefix,
    record_prefix,
)
from webark.apps.replay.record import Recorder, RecordFailure, skipped
from webark.apps.replay.render import RAW_CSP, REPLAY_CSP, Banner, Rendered, render, rewrite_weight
from webark.apps.replay.request_info import (
    BODY_METHODS,
    BodyTooLarge,
    expected_families,
    is_navigation,
    lookup_body,
)
from webark.apps.replay.screenshots import THUMBNAIL, VIEW, screenshot_of
from webark.apps.replay.select import Blocked, Chosen, Missing, select_capture
from webark.apps.replay.sources import ReplayContext
from webark.apps.replay.views import PageViews
from webark.cdx.line import CdxLine
from webark.cdx.post import method_url
from webark.core.text import without_paths
from webark.index.capture_select import captures, closest, neighbours
from webark.index.collection import CollectionError
from webark.index.fuzzy import FuzzyMatch
from webark.index.resolved import ResolvedCapture

#: Response header naming the fuzzy-match rules a capture was found by
#: (:mod:`webark.index.fuzzy`), on the memento and on the redirect to it.
FUZZY_HEADER = "X-Webark-Fuzzy-Match"

#: Characters an HTTP field value cannot hold (RFC 9110 §5.5: CTLs other than HTAB);
#: servers refuse to send them (uvicorn drops the connection).
_CTL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")


def _latin1(value: str) -> bytes:
    value = _CTL.sub(" ", value)
    try:
        return value.encode("latin-1")
    except UnicodeEncodeError:
        return quote(value, safe=" !\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~").encode("latin-1")


def _response(r: Rendered, extra: list[tuple[str, str]]) -> Response:
    resp: Response
    if r.stream is not None:
        resp = StreamingResponse(r.stream, status_code=r.status)
    else:
        resp = Response(r.body, status_code=r.status)
    resp.raw_headers = [(k.lower().encode("latin-1"), _latin1(v)) for k, v in r.headers + extra]
    return resp


class MementoViews(PageViews):
    """TimeGate, memento, record and patch responses, as methods of the replay server."""

    budget: ByteBudget
    send_timeout: float
    recorder: Recorder | None

    async def timegate(self, request: Request, ctx: ReplayContext, target: Target) -> Response:
        """RFC 7089 TimeGate: 302 to the memento closest to ``Accept-Datetime`` (latest
        without it), with ``Vary: accept-datetime`` and a ``Link`` header; 400 for a bad
        ``Accept-Datetime``."""
        vary = {"Vary": "accept-datetime"}
        ts: str | None = None
        header = request.headers.get("accept-datetime")
        if header is not None:
            try:
                ts = parse_accept_datetime(header)
            except BadAcceptDatetime as exc:
                return self.pages.error(400, "Bad Accept-Datetime", str(exc), ctx.name, vary)
        sel = await run_in_threadpool(select_capture, ctx, target.url, ts)
        if isinstance(sel, Blocked):
            return self.blocked(ctx, sel)
        if isinstance(sel, Missing):
            return await run_in_threadpool(self.missing, ctx, target.url, ts, sel, "", vary)
        chosen, url = sel.capture.line.timestamp, sel.capture.line.url
        prefix = coll_prefix(str(request.base_url), ctx.name)
        links = MementoLinks(url, prefix, chosen, target.modifier)
        location = archival_url(prefix, chosen, url, target.modifier)
        return Response(b"", 302, headers={"Location": location, "Link": links.header(), **vary})

    async def memento(self, request: Request, ctx: ReplayContext, target: Target) -> Response:
        """A memento: the capture, or a 302 to the canonical timestamp, 404, 451 (one
        hop to a worker thread for the whole lookup and rendering; a large rewrite
        waits for its lease and is rendered in a second hop, see the module
        docstring). A POST/PUT is looked up by its method and body
        (:func:`webark.cdx.post.method_url`, as the collection's index keys them) and
        answered at once, without a redirect (a browser would repeat it as a GET)."""
        lookup: str | None = None
        if request.method in BODY_METHODS:
            try:
                body = await lookup_body(request)
            except BodyTooLarge as exc:
                return self.pages.error(413, "Request body too large", str(exc), ctx.name)
            lookup = method_url(target.url, request.method, request.headers.get("content-type"),
                                body, compat=ctx.compat)  # fmt: skip
        ask = MementoRequest(
            abs_prefix=coll_prefix(str(request.base_url), ctx.name),
            range_header=request.headers.get("range"),
            head_only=request.method == "HEAD",
            if_range=request.headers.get("if-range"),
            navigation=is_navigation(request.headers),
            lookup_url=lookup,
            expected=expected_families(request.headers, target.modifier, target.url),
        )
        small, large = limiters()
        first = await anyio.to_thread.run_sync(self._memento, ctx, target, ask, None,
                                               limiter=small)  # fmt: skip
        if not isinstance(first, Deferred):
            return first
        lease = await self.budget.acquire(first.weight)
        try:
            resp = await anyio.to_thread.run_sync(self._memento, ctx, target, ask, lease,
                                                  limiter=large)  # fmt: skip
        except BaseException:
            lease.release()
            raise
        if isinstance(resp, Deferred):  # cannot happen with a lease
            lease.release()
            raise AssertionError("memento deferred twice")
        return LeasedResponse(resp, lease, self.send_timeout)

    async def record(self, request: Request, ctx: ReplayContext, target: Target) -> Response:
        """Record mode (:mod:`.record`): fetch and archive ``target.url``, then serve
        the capture just written with its links to ``/{coll}/record/…``. Patch mode
        (``target.kind == "patch"``, pywb's, its issue 601): the latest capture of
        exactly this URL when the collection has one (served with links to
        ``/{coll}/patch/…``, nothing fetched), else recorded. 404 when the server does
        not record; a request with ``Recorder-Skip: 1`` is fetched and served so but
        not recorded (:meth:`.record.Recorder.live`); 409 for a collection that cannot
        be indexed while written; 502 / 504 / 403 when the live URL cannot be fetched
        (nothing written)."""
        if self.recorder is None:
            return self.pages.error(404, "Record mode is off",
                                    "This server does not record (webark serve --record).",
                                    ctx.name)  # fmt: skip
        ask = MementoRequest(
            abs_prefix=coll_prefix(str(request.base_url), ctx.name),
            head_only=request.method == "HEAD", navigation=is_navigation(request.headers),
        )  # fmt: skip
        if target.kind == "patch":
            have = await anyio.to_thread.run_sync(self._archived, ctx, target, ask)
            if have is not None:
                return have
        rec_path = record_prefix(coll_prefix("/", ctx.name), target.kind)
        if skipped(request.headers.items()):  # pywb's Recorder-Skip: 1, nothing written
            live = await self.recorder.live(target.url, request.headers.items(), rec_path)
            if isinstance(live, RecordFailure):
                return self.pages.error(live.status, live.reason, live.message, ctx.name)
            shown = Target("memento", ctx.name, target.url, live.line.timestamp,
                           target.modifier)  # fmt: skip
            return await anyio.to_thread.run_sync(
                lambda: self._serve(ctx, shown, live, ask, live_mode=target.kind))
        try:
            self.recorder.backend(ctx.folder)
        except (CollectionError, ValueError) as exc:
            return self.pages.error(409, "Cannot record into this collection",
                                    without_paths(str(exc)), ctx.name)  # fmt: skip
        got = await self.recorder.record(ctx.folder, target.url, request.headers.items(),
                                         rec_path)  # fmt: skip
        if isinstance(got, RecordFailure):
            return self.pages.error(got.status, got.reason, got.message, ctx.name)
        return await anyio.to_thread.run_sync(self._recorded, ctx, target, ask, got)

    def _archived(self, ctx: ReplayContext, target: Target,
                  ask: MementoRequest) -> Response | None:  # fmt: skip
        """Patch mode: the latest capture of exactly ``target.url`` served with links
        to ``/{coll}/patch/…`` (a blocked one: 451), None when there is none (a fuzzy
        match does not count: the URL itself is missing) (worker thread)."""
        sel = select_capture(ctx, target.url, None)
        if isinstance(sel, Blocked):
            return self.blocked(ctx, sel)
        if not isinstance(sel, Chosen) or sel.fuzzy is not None:
            return None
        ts = sel.capture.line.timestamp
        shown = Target("memento", ctx.name, target.url, ts, target.modifier)
        return self._serve(ctx, shown, sel.capture, ask, live_mode=target.kind)

    def _recorded(self, ctx: ReplayContext, target: Target, ask: MementoRequest,
                  ts: str) -> Response:  # fmt: skip
        """The capture of ``target.url`` at ``ts`` just recorded (worker thread)."""
        sel = select_capture(ctx, target.url, ts)
        if isinstance(sel, Blocked):  # recorded, but the access rules hide it
            return self.blocked(ctx, sel)
        if not isinstance(sel, Chosen) or sel.capture.line.timestamp != ts:
            return self.pages.error(500, "Recorded capture not found",
                                    f"{target.url} was recorded at {ts} but the index does "
                                    "not give it back.", ctx.name)  # fmt: skip
        shown = Target("memento", ctx.name, target.url, ts, target.modifier)
        return self._serve(ctx, shown, sel.capture, ask, live_mode=target.kind)

    def _memento(self, ctx: ReplayContext, target: Target, ask: MementoRequest,
                 lease: Lease | None = None) -> Response | Deferred:  # fmt: skip
        """Select and render (worker thread). Without ``lease``, a large rewrite is
        not rendered: a :class:`Deferred` with its weight comes back instead."""
        assert target.timestamp is not None
        sel = select_capture(ctx, ask.lookup_url or target.url, clamp_timestamp(target.timestamp),
                             expected=ask.expected)  # fmt: skip
        if isinstance(sel, Blocked):
            return self.blocked(ctx, sel)
        if isinstance(sel, Missing):
            reason = ""
            if ask.lookup_url is not None:
                reason = "no capture of a request with this method and body"
            return self.missing(ctx, target.url, target.timestamp, sel, reason)
        rc, fuzzy = sel.capture, sel.fuzzy
        ts = rc.line.timestamp
        if ask.lookup_url is None and (ts != target.timestamp
                                       or (fuzzy is not None and fuzzy.moves_path)):
            # to the capture's own URL too: same URL key, maybe another spelling (/a vs
            # /a/), or the URL a fuzzy match found; a URL whose extra parameters only the
            # page's script reads stays as asked
            shown = target.url if fuzzy is not None and fuzzy.keeps_asked_url else rc.line.url
            location = archival_url(ask.abs_prefix, ts, shown, target.modifier)
            links = MementoLinks(rc.line.url, ask.abs_prefix, ts, target.modifier)
            headers = {"Location": location, "Link": links.header(), **_fuzzy_header(fuzzy)}
            return Response(b"", 302, headers=headers)
        weight = rewrite_weight(rc, target.modifier, rewrite_limit=self.rewrite_limit)
        if weight and lease is None:
            return Deferred(weight)  # and rc goes: a waiting request holds no payload
        return self._serve(ctx, target, rc, ask, fuzzy, lease)

    def _serve(self, ctx: ReplayContext, target: Target, rc: ResolvedCapture,
               ask: MementoRequest, fuzzy: FuzzyMatch | None = None,
               lease: Lease | None = None, live_mode: str | None = None) -> Response:  # fmt: skip
        """The memento response of ``rc``; ``live_mode``: ``record`` or ``patch`` for
        record and patch mode (links to ``/{coll}/{live_mode}/{modifier}/…``, no
        banner)."""
        ts = rc.line.timestamp
        url = rc.line.url  # the base of relative links: the capture's URL as archived
        reserve: Callable[[int], None] | None = None
        if lease is not None:
            held = lease

            def grow(n: int) -> None:  # the decoded size may pass what was acquired
                if n > held.weight:
                    held.grow(n - held.weight)

            reserve = grow
        prefix = coll_prefix("/", ctx.name)
        prev, nxt = neighbours(ctx.source, url, ts)
        first = next(iter(captures(ctx.source, url)), None)
        last_l = closest(ctx.source, url, None, limit=1)
        last = last_l[0] if last_l else None
        banner = None
        if target.modifier in ("", "mp_") and live_mode is None:
            def cap(x: CdxLine | None) -> tuple[str, str] | None:
                if x is None or ctx.access.excluded(x):
                    return None
                return archival_url(prefix, x.timestamp, url, target.modifier), display_date(
                    x.timestamp
                )

            banner = Banner(display_date(ts), captures_url(prefix, url), cap(prev), cap(nxt),
                            _screenshot_link(ctx, rc, prefix),
                            _certificate(ctx, rc))  # fmt: skip
        rendered = render(
            rc, url=url, prefix=record_prefix(prefix, live_mode) if live_mode else prefix,
            root="/",
            modifier=target.modifier, range_header=ask.range_header, banner=banner,
            head_only=ask.head_only, if_range=ask.if_range, reserve=reserve,
            rewrite_limit=self.rewrite_limit, navigation=ask.navigation,
            link_timestamp="" if live_mode else None,
        )  # fmt: skip
        links = MementoLinks(
            url, ask.abs_prefix, ts, target.modifier,
            first=first.timestamp if first else None,
            prev=prev.timestamp if prev else None,
            next=nxt.timestamp if nxt else None,
            last=last.timestamp if last else None,
        )  # fmt: skip
        csp = RAW_CSP if target.modifier == "id_" else REPLAY_CSP
        extra = [("Memento-Datetime", http_date(ts)), ("Link", links.header()),
                 ("Content-Security-Policy", csp), *_fuzzy_header(fuzzy).items()]  # fmt: skip
        return _response(rendered, extra)


@dataclass(frozen=True, slots=True)
class MementoRequest:
    """What a memento request asks beyond its target: ``abs_prefix`` (the collection's
    absolute URL), its ``Range`` / ``If-Range`` headers, ``head_only`` (HEAD),
    ``navigation`` (:func:`~webark.apps.replay.request_info.is_navigation`),
    ``lookup_url`` (a POST/PUT's method URL, None for GET/HEAD) and ``expected`` (the
    MIME families it can use, :func:`~webark.apps.replay.request_info.expected_families`)."""

    abs_prefix: str
    range_header: str | None = None
    head_only: bool = False
    if_range: str | None = None
    navigation: bool = False
    lookup_url: str | None = None
    expected: Collection[str] | None = None


def _screenshot_link(ctx: ReplayContext, rc: ResolvedCapture,
                     prefix: str) -> tuple[str, str] | None:  # fmt: skip
    """The banner's screenshot link of an HTML capture ``rc``: (its ``id_`` URL under
    ``prefix``, display date), None without one or for other media (no banner
    there, so no lookup) (:func:`webark.apps.replay.screenshots.screenshot_of`)."""
    ctype = (rc.header("Content-Type") or rc.line.mime or "").lower()
    if "html" not in ctype or rc.line.url.startswith((VIEW, THUMBNAIL)):
        return None
    shot = screenshot_of(ctx, rc)
    if shot is None:
        return None
    return shot.href(prefix), display_date(shot.line.timestamp)


def _certificate(ctx: ReplayContext, rc: ResolvedCapture) -> dict[str, object] | None:
    """The banner's certificate of an https HTML capture ``rc`` (its JSON form), None
    for other media (no banner there, so no lookup) or without a chain record
    (:func:`webark.apps.replay.certificates.certificate_of`)."""
    ctype = (rc.header("Content-Type") or rc.line.mime or "").lower()
    if "html" not in ctype:
        return None
    cert = certificate_of(ctx, rc)
    return cert.data() if cert is not None else None


def _fuzzy_header(fuzzy: FuzzyMatch | None) -> dict[str, str]:
    """:data:`FUZZY_HEADER` naming the rules of a fuzzy match (none for an exact one)."""
    return {} if fuzzy is None else {FUZZY_HEADER: ", ".join(fuzzy.rules)}
