"""``webark stats``: how big is the archive — captures, URLs, hosts, bytes stored against
bytes represented (the dedup savings), per MIME type, per year, per harvest.

Definitions (all byte counts in bytes):

* **capture**: a ``response``, ``resource`` or ``revisit`` record with a
  WARC-Target-URI (ARC records count as responses). Other records (request, metadata,
  warcinfo …) are counted in ``records_by_type`` and in the stored bytes only.
* **stored**: the record's length as stored, i.e. the compressed gzip member / zstd
  frame for compressed files (the CDX ``length``); the sum over all records is close
  to the files' total size (``file_bytes``).
* **represented**: the payload length a user sees on replay: the HTTP entity body
  (transfer-coding removed) of a response, the block of a resource record, and for a
  revisit **its original's payload length**, found by payload digest among the
  captures read (a revisit whose original is not among them is ``unresolved`` and
  represents 0 bytes).
* **payload stored**: the payload bytes of non-revisit captures (what is really kept);
  **dedup savings** = represented − payload stored = the payload bytes of resolved
  revisits, and the **revisit ratio** = revisits / captures.
* **harvest**: the warcinfo's ``isPartOf`` (crawl job or collection, as Heritrix and
  webark write it) or, without one, the WARC file name up to its
  ``-<14–17-digit timestamp>`` (Heritrix/webark naming: ``PREFIX-20240101…-00001-…``).
* **year**: of the capture's WARC-Date (UTC); ``unknown`` when it does not parse.
* **MIME type**: of the HTTP head (or the record's Content-Type); a revisit counts
  under **its original's type**, found with its size, so a 304 answer (a
  ``server-not-modified`` revisit, whose head has no Content-Type) is counted where
  its page is; an unresolved revisit under its own head's type (``unknown`` without).

Memory is constant in the number of records except for per-key state: one 8-byte hash
per distinct URL (the URL count), and per-host, per-MIME, per-year, per-harvest
counters, the payload size per distinct digest, and the unresolved revisits grouped by
(digest, MIME, year, harvest) until the end. Broken records are counted per kind and
only the first :data:`~webark.tools.problem_tally.MAX_LISTED` are kept as text (file @
offset), however damaged the input.
"""

from __future__ import annotations

import hashlib
import os
import re
import sys
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from webark.index.source import digest_key
from webark.tools.input_files import ARCHIVE_SUFFIXES, archive_inputs
from webark.tools.problem_tally import ProblemTally
from webark.warc.payload import dechunk
from webark.warc.reader import ArchiveReader
from webark.warc.record import WarcRecord

CAPTURE_TYPES = frozenset({"response", "resource", "revisit"})

_HARVEST_TAIL = re.compile(r"-\d{14,17}(?:-.*)?$")


@dataclass
class Bucket:
    """Counters of one key (a MIME type, a year, a harvest, or the whole archive).

    Attributes:
        captures: captures (revisits included).
        revisits: revisit records among them.
        stored: bytes as stored of these captures' records.
        represented: payload bytes represented (revisits at their original's size).
        payload_stored: payload bytes of non-revisit captures.
    """

    captures: int = 0
    revisits: int = 0
    stored: int = 0
    represented: int = 0
    payload_stored: int = 0

    @property
    def savings(self) -> int:
        """Bytes represented but not stored as payload (resolved revisits)."""
        return self.represented - self.payload_stored

    def to_json(self) -> dict[str, int]:
        return {
            "captures": self.captures, "revisits": self.revisits, "stored": self.stored,
            "represented": self.represented, "payload_stored": self.payload_stored,
            "savings": self.savings,
        }


@dataclass
class ArchiveStats:
    """The statistics of a set of (W)ARC files (see the module docstring).

    Attributes:
        files: (W)ARC files read.
        file_bytes: their total size on disk.
        records: records read; records_by_type: per WARC-Type.
        stored: bytes as stored of all records (all types).
        total: the :class:`Bucket` of all captures.
        urls: distinct capture URLs; hosts: captures per host (lowercased).
        mime, year, harvest: a :class:`Bucket` per MIME type / year / harvest.
        unresolved_revisits: revisits whose original was not among the inputs.
        problems: reader errors (broken records): counted per kind, the first
            :data:`~webark.tools.problem_tally.MAX_LISTED` kept as ``file @ offset: …``
            text (:class:`~webark.tools.problem_tally.ProblemTally`).
    """

    files: int = 0
    file_bytes: int = 0
    records: int = 0
    records_by_type: Counter[str] = field(default_factory=Counter)
    stored: int = 0
    total: Bucket = field(default_factory=Bucket)
    urls: int = 0
    hosts: Counter[str] = field(default_factory=Counter)
    mime: dict[str, Bucket] = field(default_factory=dict)
    year: dict[str, Bucket] = field(default_factory=dict)
    harvest: dict[str, Bucket] = field(default_factory=dict)
    unresolved_revisits: int = 0
    problems: ProblemTally = field(default_factory=ProblemTally)

    @property
    def revisit_ratio(self) -> float:
        """Revisits / captures (0.0 for an empty archive)."""
        return self.total.revisits / self.total.captures if self.total.captures else 0.0

    @property
    def savings_ratio(self) -> float:
        """Dedup savings / bytes represented (0.0 when nothing is represented)."""
        t = self.total
        return t.savings / t.represented if t.represented else 0.0

    def to_json(self) -> dict[str, object]:
        """A JSON-ready dict (the ``--json`` output); keyed tables sorted by key.
        ``problems`` lists the first problems as text, ``problem_counts`` counts all
        of them per kind, ``problems_not_listed`` says how many are not listed."""
        return {
            "files": self.files,
            "file_bytes": self.file_bytes,
            "records": self.records,
            "records_by_type": dict(sorted(self.records_by_type.items())),
            "stored": self.stored,
            "captures": self.total.to_json(),
            "urls": self.urls,
            "hosts": len(self.hosts),
            "top_hosts": dict(self.hosts.most_common(20)),
            "revisit_ratio": round(self.revisit_ratio, 6),
            "savings_ratio": round(self.savings_ratio, 6),
            "unresolved_revisits": self.unresolved_revisits,
            "per_mime": {k: v.to_json() for k, v in sorted(self.mime.items())},
            "per_year": {k: v.to_json() for k, v in sorted(self.year.items())},
            "per_harvest": {k: v.to_json() for k, v in sorted(self.harvest.items())},
            **self.problems.to_json(),
        }


def harvest_of_name(filename: str) -> str:
    """The harvest a WARC belongs to by its name: ``WEB-20240101120000123-00001-9~h~0
    .warc.gz`` → ``WEB``; a name without such a timestamp, without its extension."""
    base = os.path.basename(filename)
    for suffix in (*ARCHIVE_SUFFIXES, ".open"):
        if base.endswith(suffix):
            base = base[: -len(suffix)]
    stripped = _HARVEST_TAIL.sub("", base)
    return stripped or base


def _warcinfo_part_of(rec: WarcRecord) -> str | None:
    if rec.is_arc:
        return None
    for line in rec.block.head(1 << 16).split(b"\n"):
        name, sep, value = line.partition(b":")
        if sep and name.strip().lower() == b"ispartof":
            v = value.strip().decode("utf-8", "replace")
            return v or None
    return None


def payload_length(rec: WarcRecord) -> int:
    """Payload bytes of a capture: the HTTP body with chunking removed, or the block of
    a non-HTTP record (resource, ARC without HTTP head)."""
    h = rec.http
    if h is None:
        return rec.block.size
    if h.is_chunked:
        return len(dechunk(rec.block.read_all()[h.head_length:])[0])
    return max(0, rec.block.size - h.head_length)


def _host(url: str) -> str:
    """The lowercased host of a URL; for ``dns:NAME`` captures, NAME."""
    if url[:4].lower() == "dns:":
        return url[4:].lower()
    try:
        return (urlsplit(url).hostname or "-").lower()
    except ValueError:
        return "-"


def _mime_of(rec: WarcRecord) -> str:
    h = rec.http
    if h is not None:
        return h.mime or "unknown"
    if rec.type == "revisit":
        return "unknown"
    ct = rec.headers.content_type
    return ct.split(";", 1)[0].strip().lower() if ct else "unknown"


def _add_bucket(into: Bucket, b: Bucket) -> None:
    into.captures += b.captures
    into.revisits += b.revisits
    into.stored += b.stored
    into.represented += b.represented
    into.payload_stored += b.payload_stored


class StatsCollector:
    """Feed it (W)ARC files with :meth:`add_file`, then call :meth:`finish`."""

    def __init__(self) -> None:
        self.stats = ArchiveStats()
        self._url_hashes: set[int] = set()
        # payload digest -> (payload length, MIME type) of the first capture with it
        self._originals: dict[str, tuple[int, str]] = {}
        # revisits, until their originals are known: (digest, own MIME, year, harvest)
        # -> [count, bytes stored]
        self._pending: dict[tuple[str, str, str, str], list[int]] = {}

    def _bucket(self, table: dict[str, Bucket], key: str) -> Bucket:
        b = table.get(key)
        if b is None:
            b = table[key] = Bucket()
        return b

    def add_file(self, path: str | os.PathLike[str],
                 progress: Callable[[int], None] | None = None) -> None:
        """Read one (W)ARC file.

        Raises:
            OSError: the file cannot be read.
        """
        p = os.fspath(path)
        s = self.stats
        s.files += 1
        s.file_bytes += os.path.getsize(p)
        harvest = harvest_of_name(p)
        reader = ArchiveReader(p)
        errors_before = s.problems.total
        n = 0
        for n, rec in enumerate(reader, start=1):
            if progress is not None and n % 10_000 == 0:
                progress(n)
            if reader.problems:  # counted as they come, not kept (bounded memory)
                s.problems.add_reader_errors(reader.problems)
                reader.problems.clear()
            rtype = rec.type
            s.records += 1
            s.records_by_type[rtype] += 1
            stored = max(rec.length, 0)
            s.stored += stored
            if rtype == "warcinfo" and n == 1:
                harvest = _warcinfo_part_of(rec) or harvest
            url = rec.target_uri
            if rtype not in CAPTURE_TYPES or not url:
                continue
            self._capture(rec, url, stored, harvest)
        s.problems.add_reader_errors(reader.problems)
        reader.problems.clear()
        if n == 0 and s.problems.total == errors_before:
            s.problems.add("empty-file",
                           f"{p} @ 0: error: no WARC or ARC record found (empty file?)")

    def _capture(self, rec: WarcRecord, url: str, stored: int, harvest: str) -> None:
        s = self.stats
        h = int.from_bytes(hashlib.blake2b(url.encode("utf-8", "surrogateescape"),
                                           digest_size=8).digest(), "big")
        if h not in self._url_hashes:
            self._url_hashes.add(h)
            s.urls += 1
        s.hosts[_host(url)] += 1
        date = rec.date
        year = str(date.year) if date is not None else "unknown"
        mime = sys.intern(_mime_of(rec))
        digest = rec.headers.payload_digest
        if rec.type == "revisit":
            # counted under its original's MIME type once that is known (finish)
            for b in (s.total, self._bucket(s.year, year), self._bucket(s.harvest, harvest)):
                b.captures += 1
                b.stored += stored
                b.revisits += 1
            key = (digest_key(digest) if digest else "", mime, year, harvest)
            pending = self._pending.setdefault(key, [0, 0])
            pending[0] += 1
            pending[1] += stored
            return
        size = payload_length(rec)
        if digest:
            self._originals.setdefault(digest_key(digest), (size, mime))
        for b in (s.total, self._bucket(s.mime, mime), self._bucket(s.year, year),
                  self._bucket(s.harvest, harvest)):
            b.captures += 1
            b.stored += stored
            b.represented += size
            b.payload_stored += size

    def merge(self, other: StatsCollector) -> None:
        """Add what ``other`` read (not finished) after what this one read: the result
        is that of one collector reading this one's files, then ``other``'s (the first
        capture of a digest stays the original; problems are listed in that order).
        Spark's stats job reads each file with its own collector and merges them in
        input order."""
        s, o = self.stats, other.stats
        s.files += o.files
        s.file_bytes += o.file_bytes
        s.records += o.records
        s.records_by_type.update(o.records_by_type)
        s.stored += o.stored
        _add_bucket(s.total, o.total)
        s.hosts.update(o.hosts)
        for mine, theirs in ((s.mime, o.mime), (s.year, o.year), (s.harvest, o.harvest)):
            for k, b in theirs.items():
                _add_bucket(self._bucket(mine, k), b)
        s.problems.merge(o.problems)
        self._url_hashes |= other._url_hashes
        s.urls = len(self._url_hashes)
        for digest, original in other._originals.items():
            self._originals.setdefault(digest, original)
        for key, (count, stored) in other._pending.items():
            pending = self._pending.setdefault(key, [0, 0])
            pending[0] += count
            pending[1] += stored

    def finish(self) -> ArchiveStats:
        """Resolve revisits to their originals (size and MIME type) and return the
        statistics."""
        s = self.stats
        for (digest, own_mime, year, harvest), (count, stored) in self._pending.items():
            original = self._originals.get(digest) if digest else None
            m = self._bucket(s.mime, original[1] if original else own_mime)
            m.captures += count
            m.revisits += count
            m.stored += stored
            if original is None:
                s.unresolved_revisits += count
                continue
            for b in (s.total, m, s.year[year], s.harvest[harvest]):
                b.represented += original[0] * count
        self._pending.clear()
        return s


def archive_stats(paths: Iterable[str | os.PathLike[str]]) -> ArchiveStats:
    """Statistics of the (W)ARC files (or folders, or collections) in ``paths``.

    Raises:
        OSError: a file cannot be read.
    """
    c = StatsCollector()
    for p in archive_inputs(paths):
        c.add_file(p)
    return c.finish()
