"""Deduplication: find the original a revisit record can refer to (layer L3).

DESIGN.md "Revisit records": dedup prefers an **exact-URL original** (same canonical URL
key, same payload digest) and falls back to a **digest-only (URL-agnostic) original**
(any URL, same payload digest). This package holds:

* :class:`DedupIndex` — the extension point for originals (a ``typing.Protocol`` of two
  methods): :meth:`~DedupIndex.lookup`, :meth:`~DedupIndex.add`;
* :class:`FetchHistory` — the last capture of each URL (Heritrix's fetch history, for
  conditional requests and ``server-not-modified`` revisits): :meth:`~FetchHistory.last_capture`,
  :meth:`~FetchHistory.note_capture`;
* :class:`DedupHit` and :class:`LastCapture` — what lookups return;
* :mod:`webark.dedup.sqlite_dedup` — the embedded SQLite (WAL) implementation,
  :func:`webark.dedup.sqlite_dedup.open_index`;
* :mod:`webark.dedup.policy` — :class:`~webark.dedup.policy.DedupPolicy`, which captures
  are worth deduplicating (status, MIME type, size, empty payload), and
  :func:`~webark.dedup.policy.check_capture`, the crawl-time decide-then-look-up step;
* :mod:`webark.dedup.build` — filling an index outside any crawl from crawl.logs (Heritrix
  1 and 3), WARC/ARC files and CDX/CDXJ files (``webark dedup build``).

Sources for the behaviour: Heritrix 3's ``DeDuplicator`` add-on (Kristinn Sigurðsson,
Lucene index built from crawl.logs or WARCs, "origin" lookups by URL or by digest with
a same-URL preference) and its built-in ``PersistLoadProcessor``/``FetchHistoryProcessor``
(last capture per URL, used for same-URL dedup and conditional requests);
warcprox's ``DedupDb`` (digest-keyed, optional buckets); the IIPC
"WARC revisit records for arbitrary duplicates" proposal (``WARC-Refers-To-Target-URI``
and ``WARC-Refers-To-Date`` so replay can find a URL-agnostic original without the
record id), which WARC 1.1 §6.7 adopted.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Protocol, runtime_checkable

from webark.warc.builders import Original

__all__ = ["DedupHit", "DedupIndex", "FetchHistory", "HitKind", "LastCapture", "Original"]

HitKind = Literal["exact-url", "canonical-url", "digest-only"]


@dataclass(frozen=True, slots=True)
class DedupHit:
    """The result of a successful :meth:`DedupIndex.lookup`.

    Attributes:
        original: the earlier capture, ready for
            :class:`~webark.warc.builders.RecordBuilder` revisits: ``target_uri`` →
            ``WARC-Refers-To-Target-URI``, ``date`` (W3C-DTF string as recorded) →
            ``WARC-Refers-To-Date``, ``record_id`` → ``WARC-Refers-To`` (``None`` when
            the index was built from a crawl.log or CDX, which do not carry record ids),
            ``payload_digest`` (``sha1:BASE32``).
        exact_url: True when the original has the same canonical URL key
            (:func:`webark.url.cdx_key`) as the looked-up URL, False for a digest-only
            (URL-agnostic) hit. Heritrix reports these as "exact-URL" vs "digest-only"
            duplicates; a crawl.log annotates both ``duplicate:digest``.
        warc_filename: name of the WARC file holding the original, when known.
        offset: byte offset of the original record in that file (as stored, i.e.
            compressed), when known.
    """

    original: Original
    exact_url: bool
    warc_filename: str | None = None
    offset: int | None = None

    def kind(self, url: str) -> HitKind:
        """How the hit matched ``url`` (the URL that was looked up), the three counts of
        Heritrix's dedup report: ``"exact-url"`` (same URL string), ``"canonical-url"``
        (same canonical key, e.g. ``www.`` or query order differ), ``"digest-only"``."""
        if not self.exact_url:
            return "digest-only"
        return "exact-url" if self.original.target_uri == url else "canonical-url"


@dataclass(frozen=True, slots=True)
class LastCapture:
    """The most recent capture of one URL (by capture date), for same-URL dedup and for
    conditional requests on recrawl (``If-None-Match`` / ``If-Modified-Since`` → 304 →
    ``server-not-modified`` revisit), as Heritrix's fetch history keeps it.

    Attributes:
        url: the URL as captured (not canonicalized).
        digest: its payload digest (``sha1:BASE32``).
        date: its capture date (W3C-DTF string as recorded).
        etag: its ``ETag`` response header, verbatim (quotes and ``W/`` kept), if any.
        last_modified: its ``Last-Modified`` response header, verbatim, if any.

    (For the record id of the original to refer to, :meth:`DedupIndex.lookup` the
    URL with this digest.)
    """

    url: str
    digest: str
    date: str
    etag: str | None = None
    last_modified: str | None = None


@runtime_checkable
class DedupIndex(Protocol):
    """A dedup index: payload digests (and URLs) of originals already archived.

    Implementations: :class:`webark.dedup.sqlite_dedup.SqliteDedupIndex` (embedded);
    a PostgreSQL one for several crawler nodes is planned behind the same protocol
    (DESIGN.md "Beyond one machine").

    Contract: add an original only **after** its record is safely written — an entry
    lost in a crash only costs a full record being stored again, while an entry for a
    record that was never written would make revisits point at nothing.
    """

    def lookup(self, url: str, digest: str) -> DedupHit | None:
        """Find an original with payload ``digest`` (any encoding of a sha1, or a
        ``sha256:`` label), preferring one whose canonical URL key equals ``url``'s
        (``exact_url=True``), else any URL (``exact_url=False``); None if the digest is
        unknown."""
        ...

    def add(
        self,
        url: str,
        digest: str,
        date: str,
        record_id: str | None = None,
        warc_filename: str | None = None,
        offset: int | None = None,
        *,
        etag: str | None = None,
        last_modified: str | None = None,
    ) -> None:
        """Record an original: ``url`` as captured, its payload ``digest``, its capture
        ``date`` (W3C-DTF, e.g. ``2014-01-27T17:12:00Z``), and where it is stored
        (WARC-Record-ID, file name, byte offset as stored). ``etag`` and
        ``last_modified`` are response headers kept for
        :meth:`FetchHistory.last_capture`."""
        ...

    # (the last capture of a URL is :class:`FetchHistory`'s; the SQLite index is both)


@runtime_checkable
class FetchHistory(Protocol):
    """The most recent capture of each URL (Heritrix ``FetchHistoryProcessor`` /
    ``PersistLoadProcessor``): what a recrawl sends as ``If-None-Match`` /
    ``If-Modified-Since``, and which capture a ``304`` revisit refers to.

    :meth:`DedupIndex.add` of an original also makes it its URL's last capture.
    """

    def last_capture(self, url: str) -> LastCapture | None:
        """The most recent capture added for ``url``'s canonical key, or None."""
        ...

    def note_capture(
        self,
        url: str,
        digest: str,
        date: str,
        *,
        etag: str | None = None,
        last_modified: str | None = None,
    ) -> None:
        """Record a capture of ``url`` that is not an original (a revisit: payload
        ``digest`` as its original's, capture ``date`` W3C-DTF, the validators it was
        answered with) as the URL's last capture."""
        ...
