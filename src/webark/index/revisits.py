"""Revisit resolution: find the original capture whose payload a revisit record stands for.

A revisit (WARC 1.1 §6.7, profiles ``identical-payload-digest`` and
``server-not-modified``) keeps this capture's HTTP head but not its body; replay serves
the revisit's status and headers with the payload of an earlier capture with the same
payload digest (reference resolution-and-replay.md, "Revisit resolution"; pywb
``resolvingloader`` and OpenWayback's ``ResourceIndexReplayDispatcher`` do the same).

Where the original is looked for, in order (:meth:`RevisitResolver.original`):

1. **Same URL, same digest**: the latest non-revisit capture of the revisit's URL key
   with the same payload digest not after the revisit; else the earliest one after it.
   (A ``server-not-modified`` revisit without a digest takes the latest capture of the
   URL not after it, whatever its digest.)
2. **WARC-Refers-To-Target-URI + WARC-Refers-To-Date** (IIPC "recording arbitrary
   duplicates"; written by webark, Heritrix, warcprox): the capture of that URL with
   the same digest closest to that date (the exact capture when the dates agree); with
   no digest, the capture at exactly that date.
3. **Digest only** (``IndexSource.by_digest``, any URL; URL-agnostic dedup): a capture
   of the same URL key first, then the one closest in time to the revisit.

Candidates that do not load (WARC missing, bad offset) or that turn out to be revisits
themselves are skipped and the next one is tried.

Speed: step 1 and 2 read a URL's captures **once** — one scan of its key range,
grouped by digest — and keep that in a bounded LRU cache (``url_cache`` URL keys, each
entry reused for ``ttl`` seconds), so replaying each of a chain of hundreds of revisits
of one URL costs a dictionary lookup and a bisection, not a re-scan (O(n) in all instead
of O(n²)). Digest-only lookups (step 3) are cached the same way per digest.

Digests are compared in one normalized form (:func:`~webark.index.source.digest_key`:
``sha1:BASE32``), since indexes differ (CDX11 and pywb write the bare Base32 value,
CDXJ and the WARC header ``sha1:BASE32``; hex and Base64 occur too).
"""

from __future__ import annotations

import bisect
import contextlib
import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from webark.cdx.line import CdxLine
from webark.core.digests import Digest, digest_label
from webark.core.errors import DigestError, FormatError
from webark.core.timestamps import from_timestamp14, w3c_to_timestamp14
from webark.index.capture_select import capture_type, exact_key
from webark.index.locations import WarcNotFound
from webark.index.record_loader import RecordLoader, TtlCache
from webark.index.source import IndexSource, KeyRange, digest_key
from webark.warc.record import WarcRecord

log = logging.getLogger(__name__)

_EMPTY_SHA1 = digest_label(b"", "sha1")  # sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ
_EMPTY_SHA256 = digest_label(b"", "sha256")  # sha256:e3b0c442…b855

#: The payload digest of an empty body, in the spellings indexes and WARCs use: sha1
#: Base32 with and without ``sha1:``, sha256 hex with and without ``sha256:``, and
#: sha256 Base32. A revisit with one of these needs no original: its body is empty.
EMPTY_PAYLOAD_DIGESTS = frozenset(
    {
        _EMPTY_SHA1,
        _EMPTY_SHA1.split(":", 1)[1],
        _EMPTY_SHA256,
        _EMPTY_SHA256.split(":", 1)[1],
        "sha256:" + Digest.parse(_EMPTY_SHA256).base32(),
    }
)
_EMPTY_KEYS = frozenset({_EMPTY_SHA1, _EMPTY_SHA256})

#: Capture types that can be an original (they hold a payload).
ORIGINAL_TYPES = frozenset({"response", "resource"})


def is_empty_payload_digest(digest: str | None) -> bool:
    """True when ``digest`` (any encoding, with or without label) is the digest of an
    empty payload (sha1 or sha256)."""
    if not digest:
        return False
    return digest.strip() in EMPTY_PAYLOAD_DIGESTS or digest_key(digest) in _EMPTY_KEYS


def revisit_digest(line: CdxLine, record: WarcRecord) -> str | None:
    """The payload digest a revisit stands for, normalized (``sha1:BASE32``): its
    WARC-Payload-Digest, else the index line's digest; None when neither has one."""
    for d in (record.headers.payload_digest, line.digest):
        if d and d.strip() not in ("-", ""):
            return digest_key(d)
    return None


def _seconds(ts: str) -> float:
    try:
        return from_timestamp14(ts).timestamp()
    except ValueError:
        return float("inf")


@dataclass
class UrlCaptures:
    """The non-revisit captures of one URL key, read in one scan: ``by_digest`` maps a
    normalized digest to its lines in timestamp order (``stamps`` the timestamps, for
    bisection); ``all_lines``/``all_stamps`` every one, whatever the digest."""

    by_digest: dict[str, list[CdxLine]] = field(default_factory=dict)
    stamps: dict[str, list[str]] = field(default_factory=dict)
    all_lines: list[CdxLine] = field(default_factory=list)
    all_stamps: list[str] = field(default_factory=list)

    @classmethod
    def read(cls, source: IndexSource, urlkey: str) -> UrlCaptures:
        """One scan of ``urlkey``'s range (``urlkey``..``urlkey!``)."""
        out = cls()
        for line in source.scan(KeyRange(urlkey, urlkey + "!")):
            if line.urlkey == urlkey:
                out.add(line)
        return out

    def add(self, line: CdxLine, key_of: Callable[[str], str] = digest_key) -> None:
        """Take ``line`` in (lines must come in index order); revisits and other
        non-original captures are ignored. ``key_of`` normalizes a digest (a cached
        :func:`digest_key` for callers that see many lines)."""
        if capture_type(line) not in ORIGINAL_TYPES:
            return
        self.all_lines.append(line)
        self.all_stamps.append(line.timestamp)
        if line.digest and line.digest != "-":
            d = key_of(line.digest)
            self.by_digest.setdefault(d, []).append(line)
            self.stamps.setdefault(d, []).append(line.timestamp)

    def around(self, digest: str | None, timestamp: str) -> list[CdxLine]:
        """Candidates with ``digest`` (None: any digest): the latest at or before
        ``timestamp`` first (then older ones, newest first), then those after it,
        oldest first."""
        if digest is None:
            lines, stamps = self.all_lines, self.all_stamps
        else:
            lines, stamps = self.by_digest.get(digest, []), self.stamps.get(digest, [])
        i = bisect.bisect_right(stamps, timestamp)
        return lines[:i][::-1] + lines[i:]

    def closest(self, digest: str | None, timestamp: str) -> list[CdxLine]:
        """Candidates with ``digest`` (None: any) by distance to ``timestamp``, ties to
        the earlier."""
        lines = self.all_lines if digest is None else self.by_digest.get(digest, [])
        t = _seconds(timestamp)
        return sorted(lines, key=lambda x: (abs(_seconds(x.timestamp) - t), x.timestamp))


def _payload_has(record: WarcRecord, digest: str) -> bool:
    """True when a reading of ``record``'s payload has ``digest`` (normalized)."""
    try:
        want = Digest.parse(digest)
    except DigestError:
        return False
    return any(raw == want.raw for _, raw in record.payload_digests(want.algorithm))


class RevisitResolver:
    """Find the original of a revisit (see the module docstring for the order).

    Args:
        source: the collection's index.
        loader: loads candidate records.
        url_cache: URL keys whose captures are cached (LRU).
        digest_cache: digests whose ``by_digest`` candidates are cached (LRU).
        ttl: seconds a cached entry is used before the index is read again (so WARCs
            added to a running collection are seen).
        max_digest_lines: at most this many lines read from one ``by_digest`` lookup
            (a digest shared by very many captures, e.g. a tracking pixel).
        verify_payload: hash each candidate's payload and skip candidates whose payload
            does not have the revisit's digest (either reading of a chunked body, see
            ``WarcRecord.payload_digests``). Off by default (it reads the whole
            payload once more; pywb does not verify either); catches originals that are
            damaged or mis-indexed.

    Thread-safe: the caches are locked; index reads happen outside the locks.
    """

    def __init__(
        self,
        source: IndexSource,
        loader: RecordLoader,
        *,
        url_cache: int = 1024,
        digest_cache: int = 1024,
        ttl: float = 300.0,
        max_digest_lines: int = 10_000,
        verify_payload: bool = False,
    ):
        self.source = source
        self.loader = loader
        self.max_digest_lines = max_digest_lines
        self.verify_payload = verify_payload
        self._urls: TtlCache[str, UrlCaptures] = TtlCache(url_cache, ttl)
        self._digests: TtlCache[str, list[CdxLine]] = TtlCache(digest_cache, ttl)

    def clear_cache(self) -> None:
        """Forget cached index reads (after the index changed)."""
        self._urls.clear()
        self._digests.clear()

    def url_captures(self, urlkey: str) -> UrlCaptures:
        """The cached :class:`UrlCaptures` of ``urlkey`` (read on first use)."""
        return self._urls.get_or_make(urlkey, lambda: UrlCaptures.read(self.source, urlkey))

    def _digest_lines(self, digest: str) -> list[CdxLine]:
        def read() -> list[CdxLine]:
            out = []
            for n, line in enumerate(self.source.by_digest(digest)):
                if n >= self.max_digest_lines:
                    log.warning("digest %s: more than %d captures, rest ignored",
                                digest, self.max_digest_lines)
                    break
                if capture_type(line) in ORIGINAL_TYPES:
                    out.append(line)
            return out

        return self._digests.get_or_make(digest, read)

    def candidates(self, line: CdxLine, record: WarcRecord) -> Iterable[CdxLine]:
        """Every candidate original of the revisit ``line``/``record``, best first
        (lazily: later steps are only read when earlier ones are used up)."""
        digest = revisit_digest(line, record)
        ts = line.timestamp
        # 1. same URL
        yield from self.url_captures(line.urlkey).around(digest, ts)
        # 2. WARC-Refers-To-Target-URI + WARC-Refers-To-Date
        uri = record.headers.refers_to_target_uri
        date = record.headers.refers_to_date
        uri = (uri or "").strip().removeprefix("<").removesuffix(">")  # wget's <…>
        if uri:
            try:
                key = exact_key(uri)
            except ValueError:
                key = None
            if key is not None and key != line.urlkey:
                caps = self.url_captures(key)
                when = ts
                if date:
                    with contextlib.suppress(ValueError):
                        when = w3c_to_timestamp14(date)
                if digest is not None:
                    yield from caps.closest(digest, when)
                elif date:
                    yield from (x for x in caps.around(None, when) if x.timestamp == when)
        # 3. digest only, any URL: same URL key first, then closest in time
        if digest is not None:
            t = _seconds(ts)
            yield from sorted(
                self._digest_lines(digest),
                key=lambda x: (x.urlkey != line.urlkey, abs(_seconds(x.timestamp) - t),
                               x.timestamp),
            )

    def original(
        self, line: CdxLine, record: WarcRecord
    ) -> tuple[CdxLine, WarcRecord] | None:
        """The original capture of a revisit and its record.

        Args:
            line: the revisit's index line.
            record: the revisit record (``RecordLoader.load(line)``).

        Returns:
            ``(original line, original record)`` — a response or resource record — or
            None when no loadable original exists, or when the payload digest is the
            empty-payload digest (:data:`EMPTY_PAYLOAD_DIGESTS`: the body is empty,
            the caller serves an empty body).

        Raises:
            IndexUnavailable: the index cannot be read.
        """
        digest = revisit_digest(line, record)
        if digest is not None and is_empty_payload_digest(digest):
            return None
        seen: set[tuple[str, int]] = {(line.filename, line.offset)}
        for cand in self.candidates(line, record):
            where = (cand.filename, cand.offset)
            if where in seen:
                continue
            seen.add(where)
            try:
                rec = self.loader.load(cand)
            except (WarcNotFound, FormatError) as exc:
                log.warning("original candidate of %s %s not loadable: %s",
                            line.url, line.timestamp, exc)
                continue
            if rec.type not in ORIGINAL_TYPES:
                continue
            if self.verify_payload and digest is not None and not _payload_has(rec, digest):
                log.warning("original candidate %s @ %d of %s: payload digest is not %s",
                            cand.filename, cand.offset, line.url, digest)
                continue
            return cand, rec
        return None
