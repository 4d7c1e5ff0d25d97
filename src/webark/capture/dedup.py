"""The dedup step of the capture back end: which original (if any) a new capture is a
revisit of, and what the dedup index learns once the capture is on disk.

Two functions, one for each side of the WARC write that
:meth:`webark.capture.backend.WarcCaptureBackend.archive` does between them:

* :func:`find_original` — before: a ``304`` answer to a conditional request is a
  ``server-not-modified`` revisit of the URL's last capture (Heritrix
  ``FetchHistoryProcessor``); any other capture the policy admits is looked up by payload
  digest, an exact-URL original first, then any URL (DESIGN.md "Revisit records").
  A chunked response is looked up under both readings of its payload digest
  (warc-specifications issue 22): the WARC 1.1 one over the transfer-decoded body
  (webark's), then the one over the chunked bytes, which wget, warcio, wpull and warcprox
  write, so a recrawl finds the originals those tools made.
* :func:`remember` — after: a full capture becomes an original in the index (unless the
  policy or the client says not), a revisit refreshes the URL's fetch history (its
  validators for the next conditional request).

The dedup index contract (:class:`webark.dedup.DedupIndex`) is that an entry is added
only once its record is on disk; the caller keeps it by calling :func:`remember` only
with records the writer returned.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from datetime import UTC

from webark.capture.meta import DigestReading, RevisitKind
from webark.core.digests import Digest
from webark.dedup import DedupIndex, FetchHistory, HitKind
from webark.dedup.policy import DedupPolicy
from webark.fetch import Exchange
from webark.warc.builders import Original
from webark.warc.record import WarcRecord

__all__ = ["NO_REVISIT", "RevisitChoice", "find_original", "payload_digests", "remember"]

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class RevisitChoice:
    """The outcome of :func:`find_original`.

    Attributes:
        original: the capture to refer to, or None (write the full response).
        kind: why it is a revisit (None without an original).
        hit_kind: exact-url / canonical-url / digest-only for a digest revisit.
        reading: the reading of the payload digest that matched.
        lookup: True when the policy admitted the capture to dedup (a full capture is
            then added to the index as an original once written).
    """

    original: Original | None = None
    kind: RevisitKind | None = None
    hit_kind: HitKind | None = None
    reading: DigestReading | None = None
    lookup: bool = False


NO_REVISIT = RevisitChoice()


def payload_digests(ex: Exchange) -> list[tuple[DigestReading, str]]:
    """The payload digest labels of a successful exchange, the WARC 1.1 reading first:
    ``[("transfer-decoded", ex.payload_digest)]``, plus ``("chunked-bytes", …)`` over
    the body as it came over the wire when the response was chunked."""
    if not ex.payload_digest:
        return []
    out: list[tuple[DigestReading, str]] = [("transfer-decoded", ex.payload_digest)]
    if "chunked" in (ex.header("Transfer-Encoding") or "").lower():
        algorithm = Digest.parse(ex.payload_digest).algorithm
        raw = ex.response.digest(algorithm, ex.head_length)
        label = Digest(algorithm, raw).label()
        if label != ex.payload_digest:
            out.append(("chunked-bytes", label))
    return out


def find_original(
    ex: Exchange,
    index: DedupIndex,
    history: FetchHistory,
    policy: DedupPolicy,
) -> RevisitChoice:
    """The original a revisit record of ``ex`` would refer to (module docstring).

    A truncated capture is never a revisit nor an original (its digest is of a part).
    """
    if ex.http_status == 304:
        last = history.last_capture(ex.url)
        if last is not None:
            # the record that holds the payload: this URL's own original when there is
            # one, else (the URL was only ever a digest revisit) the other URL's
            # original; never the URL's last capture when that is itself a revisit
            hit = index.lookup(ex.url, last.digest)
            original = hit.original if hit else Original(last.url, last.date, None, last.digest)
            return RevisitChoice(original, "server-not-modified")
    if not ex.payload_digest or ex.truncated:
        return NO_REVISIT
    decision = policy.decide(ex.http_status, ex.mime, ex.payload_size, ex.payload_digest)
    if decision.action != "lookup":
        return NO_REVISIT
    for reading, digest in payload_digests(ex):
        hit = index.lookup(ex.url, digest)
        if hit is not None:
            return RevisitChoice(hit.original, "digest", hit.kind(ex.url), reading, True)
    return RevisitChoice(lookup=True)


def remember(
    ex: Exchange,
    first: WarcRecord,
    choice: RevisitChoice,
    index: DedupIndex,
    history: FetchHistory,
    *,
    dedup_ok: bool = True,
) -> bool:
    """Tell the index about a capture whose records are now written (``first`` is its
    response or revisit record as the writer returned it). Returns True when the capture
    was added as an original."""
    date = ex.started.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    original = choice.original
    if original is not None:
        if original.payload_digest:
            last = history.last_capture(ex.url)
            history.note_capture(
                ex.url, original.payload_digest, date,
                etag=ex.header("ETag") or (last.etag if last else None),
                last_modified=ex.header("Last-Modified") or (last.last_modified if last else None),
            )  # fmt: skip
        return False
    if not (choice.lookup and dedup_ok and ex.payload_digest):
        return False
    index.add(
        ex.url, ex.payload_digest, date, first.record_id,
        os.path.basename(first.path) if first.path else None, first.offset,
        etag=ex.header("ETag"), last_modified=ex.header("Last-Modified"),
    )  # fmt: skip
    return True
