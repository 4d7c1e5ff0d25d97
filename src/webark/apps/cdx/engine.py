"""Running a :class:`~webark.apps.cdx.params.CdxQuery` against an
:class:`~webark.index.source.IndexSource`: a lazy pipeline from index lines to response
bytes, so memory stays bounded whatever the size of the result (a 10-million-line
prefix query streams).

Pipeline (each stage a generator; nothing is buffered except where noted)::

    scan(key range)  ─ or ─  closest merge (two scans)  ─ or ─  by_digest
      → resume skip → digest (with url) → filter → collapse → page → limit → format

* **closest** (exact URL only): one forward scan from ``urlkey closest14`` and one
  reverse scan from just before it, merged by |Δt| (seconds); ties go to the earlier
  capture (the reference's rule; pywb's ``cdx_sort_closest`` keeps the earlier of
  equal distances too). ``limit=1`` costs two binary searches and two lines, whatever
  the number of captures (pywb reads every capture of the URL).
* **resume**: a :class:`~webark.apps.cdx.params.ResumeKey` names the last line sent;
  the scan starts at its ``urlkey timestamp`` (O(log n), unlike ``page``) and skips the
  lines up to it; the line itself primes ``collapse`` so a resumed query collapses as
  one long query would.
* **page** (``page``/``pageSize``): pages of ``pageSize`` result lines; page ``k``
  skips ``k × pageSize`` lines (O(k × pageSize) reading — use ``resumeKey`` for long
  walks). ``showNumPages`` counts the result (O(result)).
* **raw fast path**: when the query needs nothing but ``urlkey timestamp``
  (:attr:`CdxQuery.simple`) and the source gives raw lines
  (:func:`~webark.apps.cdx.sources.raw_scanner`), CDXJ lines are copied as they are
  (``output=cdxj``) or spliced into pywb's JSON object (``output=json``) without a JSON
  parse — about 6× less work per line on a host query.
"""

from __future__ import annotations

import itertools
import json
import logging
import math
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any, TypeVar

from webark.apps.cdx.output import LinkWriter, line_formatter, raw_cdxj_to_json
from webark.apps.cdx.params import CdxQuery, ResumeKey, ts_seconds
from webark.apps.cdx.sources import RawSource, raw_scanner, raw_ts
from webark.cdx.formats import format_cdxj, parse_line
from webark.cdx.line import CdxLine
from webark.index.filters import Collapse
from webark.index.source import IndexSource, KeyRange, digest_key, in_time, key_range

T = TypeVar("T")
log = logging.getLogger(__name__)

#: First response chunk is sent once this many bytes are ready (time to first byte).
FIRST_CHUNK = 16 * 1024
#: Later chunks.
CHUNK = 64 * 1024
#: Lines formatted per piece.
BATCH = 256

_FAR = 1 << 62


@dataclass(frozen=True, slots=True)
class Context:
    """What formatting needs beyond the query.

    Attributes:
        collection: the collection's name (``collection=`` of link output).
        replay_prefix: base of archival URLs, ending in ``/``
            (``http://127.0.0.1:8080/coll/``); a capture is ``{prefix}{ts}/{url}``.
    """

    collection: str
    replay_prefix: str


# --- item accessors (raw bytes or parsed lines) ----------------------------------------


def _raw_key_ts(raw: bytes) -> str:
    i = raw.find(b" ")
    j = raw.find(b" ", i + 1)
    return raw[: j if j >= 0 else len(raw)].decode("utf-8", "surrogateescape")


def _line_key_ts(line: CdxLine) -> str:
    return f"{line.urlkey} {line.timestamp}"


def _line_ts(line: CdxLine) -> str:
    return line.timestamp


def _parse_raw(raw: bytes) -> CdxLine:
    return parse_line(raw.decode("utf-8", "surrogateescape"))


def _seconds(ts: str) -> int:
    try:
        return ts_seconds(ts)
    except ValueError:
        return _FAR


# --- stages -----------------------------------------------------------------------------


class _Tracker:
    """Position of the last item pulled from the base scan: its ``urlkey timestamp``
    and its ordinal among the lines with that value (for resume keys)."""

    __slots__ = ("key_ts", "n")

    def __init__(self) -> None:
        self.key_ts: str | None = None
        self.n = 0

    def wrap(self, items: Iterable[T], key_ts: Callable[[T], str]) -> Iterator[T]:
        for item in items:
            k = key_ts(item)
            if k == self.key_ts:
                self.n += 1
            else:
                self.key_ts, self.n = k, 1
            yield item


class _Prime:
    """The last item sent before a resumed query (primes collapse)."""

    __slots__ = ("item",)

    def __init__(self) -> None:
        self.item: Any = None


def _resume_skip(
    items: Iterator[T], tr: _Tracker, resume: ResumeKey, reverse: bool, prime: _Prime
) -> Iterator[T]:
    for item in items:
        k = tr.key_ts
        assert k is not None
        before = k > resume.key_ts if reverse else k < resume.key_ts
        if before:
            continue
        if k == resume.key_ts and tr.n <= resume.n:
            if tr.n == resume.n:
                prime.item = item
            continue
        yield item
        yield from items
        return


def closest_merge(
    fwd: Iterator[T], bwd: Iterator[T], target: int, ts: Callable[[T], str]
) -> Iterator[T]:
    """Merge captures at/after (``fwd``, ascending) and before (``bwd``, descending) the
    target second by |Δt|; on equal distance the earlier (``bwd``) capture first."""
    f = next(fwd, None)
    b = next(bwd, None)
    df = abs(_seconds(ts(f)) - target) if f is not None else _FAR
    db = abs(_seconds(ts(b)) - target) if b is not None else _FAR
    while f is not None or b is not None:
        if b is not None and (f is None or db <= df):
            yield b
            b = next(bwd, None)
            db = abs(_seconds(ts(b)) - target) if b is not None else _FAR
        else:
            assert f is not None
            yield f
            f = next(fwd, None)
            df = abs(_seconds(ts(f)) - target) if f is not None else _FAR


def _collapse(
    items: Iterable[T],
    rules: tuple[Collapse, ...],
    token: Callable[[Collapse, T], Any],
    prime: _Prime,
) -> Iterator[T]:
    last: list[Any] | None = None
    for item in items:
        if last is None:
            last = [token(r, prime.item) if prime.item is not None else None for r in rules]
        # chained like IA's collapse filters: a rule sees only what the earlier ones kept
        for i, r in enumerate(rules):
            t = token(r, item)
            if t == last[i]:
                break
            last[i] = t
        else:
            yield item


def _raw_token(rule: Collapse, raw: bytes) -> Any:
    key, _, rest = raw.partition(b" ")
    v = key if rule.field == "urlkey" else rest.partition(b" ")[0]
    return v[: rule.n] if rule.n is not None else v


def _line_token(rule: Collapse, line: CdxLine) -> Any:
    return rule.token(line)


# --- the query --------------------------------------------------------------------------


def _scan_range(q: CdxQuery) -> tuple[KeyRange, bool]:
    """The range to scan and its direction, the resume key applied."""
    rng, reverse = q.rng, q.sort == "reverse"
    if q.resume is not None:
        k = q.resume.key_ts
        if not reverse:
            rng = KeyRange(max(rng.start, k), rng.end, rng.from_ts, rng.to_ts)
        else:
            end = k + "!"
            if rng.end is None or end < rng.end:
                rng = KeyRange(rng.start, end, rng.from_ts, rng.to_ts)
    return rng, reverse


def _closest_ranges(q: CdxQuery) -> tuple[KeyRange, KeyRange]:
    """(at/after, before) ranges of the closest sort, within the exact range."""
    assert q.closest14 is not None and q.url is not None
    split = f"{q.key} {q.closest14}"
    rng = q.rng
    fwd = KeyRange(max(rng.start, split), rng.end)
    end = split if rng.end is None or split < rng.end else rng.end
    return fwd, KeyRange(rng.start, end)


def query_lines(
    q: CdxQuery, source: IndexSource, raw: RawSource | None
) -> tuple[Iterator[Any], _Tracker | None]:
    """The result items of ``q`` before paging/limit: raw lines (bytes, when ``raw``
    is given) or :class:`CdxLine`, and the tracker of resume positions (None unless
    resume keys are involved)."""
    is_raw = raw is not None
    key_ts_fn: Callable[[Any], str] = _raw_key_ts if is_raw else _line_key_ts
    ts_fn: Callable[[Any], str] = raw_ts if is_raw else _line_ts

    def scan(rng: KeyRange, reverse: bool) -> Iterator[Any]:
        if raw is not None:
            return raw.scan(rng, reverse)
        return source.scan(rng, reverse)

    tracker: _Tracker | None = None
    prime = _Prime()
    items: Iterator[Any]
    if q.sort == "closest":
        fr, br = _closest_ranges(q)
        items = closest_merge(scan(fr, False), scan(br, True), q.closest_sec, ts_fn)
    else:
        if q.url is None:  # digest lookup without url: source order, time-filtered
            assert q.digest is not None
            rng = q.rng
            items = (x for x in source.by_digest(q.digest) if in_time(rng, x.timestamp))
            reverse = False
        else:
            rng, reverse = _scan_range(q)
            items = scan(rng, reverse)
        if q.resume is not None or q.show_resume_key:
            tracker = _Tracker()
            items = tracker.wrap(items, key_ts_fn)
            if q.resume is not None:
                items = _resume_skip(items, tracker, q.resume, reverse, prime)
    if q.digest is not None and q.url is not None:
        want = digest_key(q.digest)
        items = (x for x in items if digest_key(x.digest) == want)
    if q.filters:
        flt = q.filters

        def keep(line: CdxLine) -> bool:
            text: list[str] = []

            def whole() -> str:
                if not text:
                    text.append(format_cdxj(line))
                return text[0]

            return all(f.matches(line, whole) for f in flt)

        items = filter(keep, items)
    if q.collapse:
        items = _collapse(items, q.collapse, _raw_token if is_raw else _line_token, prime)
    return items, tracker


def run_query(q: CdxQuery, source: IndexSource, ctx: Context) -> Iterator[bytes]:
    """The response body of ``q`` as pieces of bytes (lazy; :class:`Chunks` regroups them).

    Raises (while iterating):
        IndexUnavailable: the index cannot be read (before the first piece: answer 503).
    """
    raw = raw_scanner(source) if q.simple else None
    items, tracker = query_lines(q, source, raw)

    if q.show_num_pages:
        count = sum(1 for _ in items)
        pages = math.ceil(count / q.page_size)
        if q.output == "json":
            obj = {"pages": pages, "pageSize": q.page_size, "blocks": count}
            yield (json.dumps(obj) + "\n").encode()
        else:
            yield f"{pages}\n".encode()
        return

    if q.page is not None:
        skip = q.page * q.page_size
        items = itertools.islice(items, skip, skip + q.page_size)
    limit = q.limit

    link = LinkWriter(ctx.replay_prefix, ctx.collection) if q.output == "link" else None
    fmt: Callable[[Any], bytes]
    if raw is not None:
        if q.output == "json":
            fmt = _raw_json_line(line_formatter(q))
        elif raw.cdxj:
            fmt = _raw_cdxj_line
        else:
            fmt = _raw_checked_cdxj_line(line_formatter(q))
    elif link is not None:
        fmt = link
    else:
        fmt = line_formatter(q)

    if not q.show_resume_key:
        # the common case: format in batches (one join per BATCH lines, few yields)
        it = items if limit is None else itertools.islice(items, limit)
        while True:
            batch = list(itertools.islice(it, BATCH))
            if not batch:
                break
            yield b"".join(map(fmt, batch))
    else:
        last: tuple[str, int] | None = None
        for n, item in enumerate(items):
            if limit is not None and n >= limit:
                if last is not None:
                    token = ResumeKey(last[0], last[1]).encode()
                    if q.output == "json":
                        yield (json.dumps({"resumeKey": token}) + "\n").encode()
                    else:
                        yield b"\n" + token.encode() + b"\n"
                break
            yield fmt(item)
            if tracker is not None and tracker.key_ts is not None:
                last = (tracker.key_ts, tracker.n)
    if link is not None:
        yield link.end()


def _raw_cdxj_line(raw: bytes) -> bytes:
    # a CDXJ file: the stored line is the output (pywb passes index lines through too)
    return raw + b"\n"


def _raw_checked_cdxj_line(fallback: Callable[[CdxLine], bytes]) -> Callable[[bytes], bytes]:
    def fmt(raw: bytes) -> bytes:
        parts = raw.split(b" ", 2)
        if len(parts) == 3 and parts[2][:1] == b"{":
            return raw + b"\n"
        return _parse_and_format(raw, fallback)

    return fmt


def _parse_and_format(raw: bytes, fallback: Callable[[CdxLine], bytes]) -> bytes:
    try:
        return fallback(_parse_raw(raw))
    except (ValueError, KeyError) as exc:
        log.warning("skipping unreadable CDX line %r: %s", raw[:120], exc)
        return b""


#: A CDXJ line whose key needs no JSON escaping and whose JSON object is not empty.
_PLAIN_CDXJ = re.compile(rb'([^ "\\\x00-\x1f]+) ([0-9]+) \{(?![ \t]*\})')


def _raw_json_line(fallback: Callable[[CdxLine], bytes]) -> Callable[[bytes], bytes]:
    match = _PLAIN_CDXJ.match

    def fmt(raw: bytes) -> bytes:
        m = match(raw)
        if m is not None:  # the common case: one regex match, one copy (~0.6 µs)
            return b'{"urlkey": "%s", "timestamp": "%s", %s\n' % (m[1], m[2], raw[m.end() :])
        parts = raw.split(b" ", 2)
        if len(parts) == 3 and parts[2][:1] == b"{":
            return raw_cdxj_to_json(parts[0], parts[1], parts[2])
        return _parse_and_format(raw, fallback)

    return fmt


class Chunks:
    """Pieces of bytes regrouped into response chunks: the first as soon as
    :data:`FIRST_CHUNK` bytes are ready, then :data:`CHUNK`-byte chunks.
    ``exhausted`` is True once the last chunk has been produced (before it is
    returned) and ``produced`` counts the chunks made so far, so a caller holding the
    first chunk knows it is the whole answer only when :attr:`single` is True (a
    producer running ahead in another thread may have finished *later* chunks)."""

    def __init__(self, pieces: Iterable[bytes], first: int = FIRST_CHUNK, size: int = CHUNK):
        self._it = self._gen(pieces, first, size)
        self.exhausted = False
        self.produced = 0

    @property
    def single(self) -> bool:
        """True when the answer is exactly one chunk (the first) and nothing follows."""
        return self.exhausted and self.produced == 1

    def __iter__(self) -> Iterator[bytes]:
        return self._it

    def __next__(self) -> bytes:
        return next(self._it)

    def _gen(self, pieces: Iterable[bytes], first: int, size: int) -> Iterator[bytes]:
        buf: list[bytes] = []
        n = 0
        limit = first
        for p in pieces:
            buf.append(p)
            n += len(p)
            if n >= limit:
                self.produced += 1
                yield b"".join(buf)
                buf, n, limit = [], 0, size
        self.produced += 1
        self.exhausted = True
        yield b"".join(buf)


# --- TimeMap ------------------------------------------------------------------------------


def timemap_exists(url: str, source: IndexSource) -> tuple[CdxLine, CdxLine] | None:
    """First and last capture of ``url`` (exact), or None when it has none.

    Raises:
        ValueError: not a usable URL.
        IndexUnavailable: the index cannot be read.
    """
    rng = key_range(url, "exact")
    first = next(iter(source.scan(rng)), None)
    if first is None:
        return None
    last = next(iter(source.scan(rng, reverse=True)), first)
    return first, last


def run_timemap(
    url: str, source: IndexSource, ctx: Context, self_url: str, first: CdxLine, last: CdxLine
) -> Iterator[bytes]:
    """A Memento TimeMap in link format (RFC 7089 §5.1.1): the original resource, the
    TimeMap itself (``from``/``until``), the TimeGate, then every memento in time
    order, the first and last marked ``first memento`` / ``last memento``.

    Raises (while iterating):
        IndexUnavailable: the index cannot be read.
    """
    from webark.apps.cdx.output import http_date

    w = LinkWriter(ctx.replay_prefix, ctx.collection)
    head = (
        f'<{url}>; rel="original",\n'
        f'<{self_url}>; rel="self"; type="application/link-format"; '
        f'from="{http_date(first.timestamp)}"; until="{http_date(last.timestamp)}",\n'
        f'<{ctx.replay_prefix}{url}>; rel="timegate",\n'
    )
    yield head.encode("utf-8", "surrogateescape")
    it = iter(source.scan(key_range(url, "exact")))
    prev = next(it, None)
    i = 0
    while prev is not None:
        nxt = next(it, None)
        rels = []
        if i == 0:
            rels.append("first")
        if nxt is None:
            rels.append("last")
        rels.append("memento")
        yield w(prev, " ".join(rels))
        prev = nxt
        i += 1
    yield w.end()
