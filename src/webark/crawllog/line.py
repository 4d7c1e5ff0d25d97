"""The :class:`CrawlLogLine` model: one line of a Heritrix crawl.log, field for field."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from webark.core.digests import Digest
from webark.core.errors import DigestError
from webark.crawllog.annotations import (
    DuplicateOf,
    annotation_value,
    attempts,
    parse_duplicate,
)
from webark.crawllog.status import (
    is_disregarded_status,
    is_failure_status,
    status_meaning,
    status_name,
)


@dataclass(frozen=True, slots=True)
class CrawlLogLine:
    """One crawl.log line (Heritrix 3 layout; Heritrix 1.x lines parse into it too).

    Every column is kept so that :func:`~webark.crawllog.format_line` writes the line
    back byte for byte; ``-`` columns are ``None`` (or ``""`` / ``()`` where noted).

    Attributes:
        timestamp: column 1, time the line was logged (aware UTC datetime, millisecond
            precision), e.g. ``2018-11-26T14:27:46.376Z``.
        status: column 2, fetch status: HTTP status, ``1`` DNS success, or a negative
            Heritrix code (see :mod:`webark.crawllog.status`).
        size: column 3, content size in bytes (for HTTP: the body without headers as
            declared/received; for DNS: the whole answer), ``None`` for ``-``.
        uri: column 4, the URI (``http:``, ``https:``, ``dns:``, ``ftp:`` …).
        hop_path: column 5, hops from the seed (``LLE``; ``12+LLRLL`` when more than 50
            hops were dropped), ``""`` for a seed (written ``-``).
        via: column 6, the URI this one was discovered from, ``None`` for seeds.
        mime_type: column 7, MIME type without parameters as Heritrix truncates it
            (``text/html``; ``no-type`` or ``unknown`` when none), ``None`` for ``-``.
        thread: column 8, worker thread number (``#014`` → 14).
        fetch_began: column 9, first part: when the fetch began, ``None`` for ``-``.
        fetch_duration_ms: column 9, second part: fetch duration in milliseconds
            (can be negative when the clock stepped back), ``None`` for ``-``.
        digest: column 10, content digest as written: ``sha1:BASE32`` (Heritrix 3, later
            1.x) or unprefixed Base32 (older Heritrix 1.x), ``None`` for ``-``.
        source_tag: column 11, the seed this URI descends from when source tagging is
            on, ``None`` for ``-``. Absent from early Heritrix 1.x logs (11 columns).
        annotations: column 12, comma-separated tokens, ``()`` for ``-``.
        extra_info: column 13, Heritrix 3's JSON extra info as written (raw text, so
            key order and spacing survive a round trip), ``None`` when absent. Parsed
            form: :attr:`extra`.
    """

    timestamp: datetime
    status: int
    size: int | None
    uri: str
    hop_path: str
    via: str | None
    mime_type: str | None
    thread: int
    fetch_began: datetime | None
    fetch_duration_ms: int | None
    digest: str | None
    source_tag: str | None
    annotations: tuple[str, ...] = ()
    extra_info: str | None = None

    # ---- derived views -------------------------------------------------------------

    @property
    def extra(self) -> dict[str, Any]:
        """The JSON extra info as a dict (``{}`` when absent), e.g.
        ``{"warcFilename": …, "warcFileOffset": 942, "contentSize": 2495}``.

        Raises:
            ValueError: ``extra_info`` is set but not a JSON object (only possible for
                lines built by hand; :func:`parse_line` checks it).
        """
        if self.extra_info is None:
            return {}
        value = json.loads(self.extra_info)
        if not isinstance(value, dict):
            raise ValueError("crawl.log extra info is not a JSON object")
        return value

    @property
    def is_seed(self) -> bool:
        """True when the hop path is empty (the line of a seed)."""
        return self.hop_path == ""

    @property
    def hop_count(self) -> int:
        """Number of hops from the seed, counting hops dropped by a ``N+`` prefix."""
        dropped, plus, rest = self.hop_path.partition("+")
        if plus and dropped.isdigit():
            return int(dropped) + len(rest)
        return len(self.hop_path)

    @property
    def last_hop(self) -> str | None:
        """The last hop type (``L``, ``E``, ``X``, ``R``, ``P``, ``I`` …), ``None`` for
        seeds."""
        return self.hop_path[-1] if self.hop_path else None

    @property
    def status_meaning(self) -> str:
        """A short English meaning of :attr:`status` (see
        :func:`webark.crawllog.status.status_meaning`)."""
        return status_meaning(self.status)

    @property
    def status_name(self) -> str | None:
        """Heritrix constant for a non-HTTP status (``S_BLOCKED_BY_QUOTA``) or None."""
        return status_name(self.status)

    @property
    def is_failure(self) -> bool:
        """True when no response was obtained: status ``<= 0`` (DNS failure, connect
        failure, robots/quota/scope exclusion …). HTTP 4xx/5xx are not failures."""
        return is_failure_status(self.status)

    @property
    def is_disregarded(self) -> bool:
        """True for statuses Heritrix counts as "disregarded" rather than failed
        (robots.txt ``-9998``, scope ``-5000``, hop limits, processor, operator)."""
        return is_disregarded_status(self.status)

    @property
    def duplicate_of(self) -> DuplicateOf | None:
        """The first duplicate annotation, parsed (see
        :func:`webark.crawllog.annotations.parse_duplicate`), or ``None``."""
        for a in self.annotations:
            dup = parse_duplicate(a)
            if dup is not None:
                return dup
        return None

    @property
    def is_duplicate(self) -> bool:
        """True when an annotation says the payload was already archived
        (``duplicate:…``, ``warcRevisit:…``, ``unwritten:identicalDigest``)."""
        return self.duplicate_of is not None

    @property
    def attempts(self) -> int:
        """Fetch attempts: from the ``Nt`` annotation, else 1."""
        n = attempts(self.annotations)
        return 1 if n is None else n

    @property
    def quota(self) -> str | None:
        """The quota key of a ``Q:`` annotation (``group-max-all-kb``), else None."""
        return annotation_value(self.annotations, "Q:")

    @property
    def error(self) -> str | None:
        """The exception of an ``err=`` annotation, else None."""
        return annotation_value(self.annotations, "err=")

    @property
    def ip(self) -> str | None:
        """The IP address of an ``ip:`` annotation (Heritrix 3), else None."""
        return annotation_value(self.annotations, "ip:")

    @property
    def truncated(self) -> str | None:
        """``lenTrunc``, ``timeTrunc`` or ``headerTrunc`` when the content was cut."""
        for a in self.annotations:
            if a in ("lenTrunc", "timeTrunc", "headerTrunc"):
                return a
        return None

    @property
    def digest_label(self) -> str | None:
        """The digest as a WARC label (``sha1:BASE32``), adding the ``sha1:`` prefix
        of unprefixed Heritrix 1.x digests; ``None`` when absent or undecodable."""
        if self.digest is None:
            return None
        try:
            return Digest.parse(self.digest).label()
        except DigestError:
            return None


def extra_info_json(extra: Mapping[str, Any]) -> str:
    """Serialize extra info the way Heritrix 3's ``JSONObject.toString()`` does:
    compact, no spaces, keys in the given order, non-ASCII kept.

    >>> extra_info_json({"warcFilename": "a.warc.gz", "warcFileOffset": 942})
    '{"warcFilename":"a.warc.gz","warcFileOffset":942}'
    """
    return json.dumps(dict(extra), separators=(",", ":"), ensure_ascii=False)
