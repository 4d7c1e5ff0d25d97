"""The embedded dedup index: one SQLite file in WAL mode (DESIGN.md "Storage").

Tables (all ``WITHOUT ROWID``, so each is one B-tree ordered by its key):

* ``by_url(urlkey, digest → ts, url, date, record_id, file_id, offset)`` — one
  preferred original per (canonical URL key, payload digest): the **exact-URL** lookup.
* ``by_digest(digest → urlkey, ts)`` — one preferred original per digest, pointing at
  its ``by_url`` row: the **digest-only (URL-agnostic)** lookup. Stored as a pointer
  rather than a copy, so the index is about 40 % smaller.
* ``last(urlkey → url, digest, date, ts, etag, last_modified)`` — the most
  recent capture per URL key (Heritrix fetch history), for same-URL dedup and
  ``If-None-Match`` / ``If-Modified-Since`` on recrawls.
* ``files(id → name)`` — WARC file names, stored once.

Keys: ``urlkey`` is :func:`webark.url.cdx_key` (IA canonicalization, the same key the
CDX index uses, so "exact URL" means what replay means by it); ``digest`` is the raw
hash bytes (20 bytes for sha1; ``b"sha256:" + raw`` for other algorithms), so every
encoding of a digest (Base32, hex, Base64, with or without ``sha1:``) finds the same row;
``ts`` is the capture time in microseconds since the Unix epoch (UTC); ``date`` keeps the
date text as given (for ``WARC-Refers-To-Date``) only when it differs from the
second-precision W3C-DTF form of ``ts`` (``2014-01-27T17:12:00Z``), else it is NULL —
this saves about 40 bytes per original. ``record_id`` holds the 16 uuid bytes of a
``<urn:uuid:…>`` id (other ids as text).

**Which original is preferred when there are several** (``prefer``):

* ``"earliest"`` (default) — the first capture of the payload, as Heritrix's DeDuplicator
  index built from crawl.logs/WARCs effectively keeps (its digest lookups return the
  first indexed original). Chosen because the answer does not depend on the order in
  which files were loaded (``webark dedup build a b`` = ``build b a``), does not move
  once given (every revisit of a crawl refers to the same record, so losing one WARC
  affects a known set) and matches replay's "first capture" intuition.
* ``"latest"`` — the most recent capture, as warcprox's ``DedupDb`` does (it overwrites
  the digest's entry with each new original). Closer in time, so more likely in a WARC
  that is still at hand; chosen per index file and stored in it.

Ties (same capture time) keep the entry already stored.

Crash safety: WAL with ``synchronous=NORMAL``; :meth:`SqliteDedupIndex.add` commits every
``commit_every`` additions (and on :meth:`~SqliteDedupIndex.flush` / close). A crash
loses at most the uncommitted tail, which only means those payloads get stored in full
again — never a revisit pointing at a record that was not written (see the
:class:`~webark.dedup.DedupIndex` contract). Memory is bounded by SQLite's page cache
(``cache_mib``, default 32 MiB) whatever the number of rows.
"""

from __future__ import annotations

import logging
import os
import re
import sqlite3
import uuid
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from types import TracebackType
from typing import Any, Literal

from webark.core.digests import Digest
from webark.core.errors import DigestError
from webark.core.timestamps import format_w3c_date, from_timestamp14, parse_w3c_date
from webark.dedup import DedupHit, LastCapture
from webark.url import cdx_key
from webark.warc.builders import Original

log = logging.getLogger(__name__)

Prefer = Literal["earliest", "latest"]
SCHEMA_VERSION = "1"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS files (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);
CREATE TABLE IF NOT EXISTS by_url (
    urlkey TEXT NOT NULL,
    digest BLOB NOT NULL,
    ts INTEGER NOT NULL,
    url TEXT NOT NULL,
    date TEXT,
    record_id,
    file_id INTEGER,
    offset INTEGER,
    PRIMARY KEY (urlkey, digest)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS by_digest (
    digest BLOB PRIMARY KEY,
    urlkey TEXT NOT NULL,
    ts INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS last (
    urlkey TEXT PRIMARY KEY,
    url TEXT NOT NULL,
    digest BLOB NOT NULL,
    date TEXT,
    ts INTEGER NOT NULL,
    etag TEXT,
    last_modified TEXT
) WITHOUT ROWID;
"""

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_CANONICAL_DATE = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\Z", re.ASCII)


def digest_bytes(digest: str) -> bytes:
    """The stored form of a digest: raw sha1 bytes (20), or ``b"ALGO:" + raw`` for other
    algorithms. Accepts every encoding :meth:`webark.core.digests.Digest.parse` does.

    Raises:
        ValueError: not a digest (:class:`~webark.core.errors.DigestError`).
    """
    d = Digest.parse(digest)
    return d.raw if d.algorithm == "sha1" else d.algorithm.encode() + b":" + d.raw


def digest_label(stored: bytes) -> str:
    """Inverse of :func:`digest_bytes`: ``sha1:BASE32`` (or ``sha256:…``)."""
    if len(stored) == 20:
        return Digest("sha1", stored).label()
    algo, _, raw = stored.partition(b":")
    return Digest(algo.decode(), raw).label()


def url_key(url: str) -> str:
    """The canonical URL key (:func:`webark.url.cdx_key`); the URL itself when it cannot
    be canonicalized (so odd URLs still match themselves)."""
    try:
        key = cdx_key(url)
    except Exception:  # canonicalization of arbitrary crawl input must not stop a build
        return url
    return key if key and key != "-" else url


def date_micros(date: str | datetime) -> int:
    """Capture time in microseconds since 1970-01-01 UTC, from a W3C-DTF string
    (``2014-01-27T17:12:00Z``), a 14-digit timestamp, or a datetime (naive = UTC).

    Raises:
        ValueError: a string that is neither.
    """
    if isinstance(date, str):
        s = date.strip()
        dt = from_timestamp14(s) if s.isdigit() else parse_w3c_date(s)
    else:
        dt = date if date.tzinfo is not None else date.replace(tzinfo=UTC)
    delta = dt - _EPOCH
    return (delta.days * 86400 + delta.seconds) * 1_000_000 + delta.microseconds


def _date_text(date: str | datetime) -> str:
    if isinstance(date, str):
        return date.strip()
    return format_w3c_date(date, 6 if date.microsecond else 0)


def _stored_record_id(record_id: str | None) -> str | bytes | None:
    """``<urn:uuid:…>`` (lowercase, as webark, Heritrix and warcio write them) as the 16
    uuid bytes, saving 31 bytes per original; any other id as text."""
    if record_id is None or len(record_id) != 47 or not record_id.startswith("<urn:uuid:"):
        return record_id
    try:
        u = uuid.UUID(record_id[10:46])
    except ValueError:
        return record_id
    return u.bytes if f"<urn:uuid:{u}>" == record_id else record_id


def _record_id(stored: str | bytes | None) -> str | None:
    if isinstance(stored, bytes):
        return f"<urn:uuid:{uuid.UUID(bytes=stored)}>"
    return stored


def _stored_date(text: str, ts: int) -> str | None:
    """NULL when ``text`` is the canonical form of ``ts`` (see the module docstring)."""
    if _CANONICAL_DATE.match(text):  # ts was computed from text: it is ts's canonical form
        return None
    return None if text == _ts_date(ts) else text


def _ts_date(ts: int) -> str:
    return format_w3c_date(_EPOCH + timedelta(microseconds=ts))


def _first(row: tuple[object, ...]) -> Any:
    return row[0]


def _first_two(row: tuple[object, ...]) -> Any:
    return row[:2]


class SqliteDedupIndex:
    """A :class:`~webark.dedup.DedupIndex` and :class:`~webark.dedup.FetchHistory` in one
    SQLite file. Use :func:`open_index`.

    Args:
        path: the database file (created with its schema when missing); ``":memory:"``
            for tests.
        prefer: ``"earliest"`` or ``"latest"`` original when several have the same
            digest (see the module docstring). Stored in a new file; an existing file
            keeps its own choice (a different ``prefer`` raises ``ValueError``).
        commit_every: additions per transaction (durability vs speed; 1 = every add).
        cache_mib: SQLite page cache in MiB (the bound on memory use).
        readonly: open an existing file for lookups only.

    Not thread-safe: use one instance per thread (WAL lets readers in other processes
    run while one writer adds).
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        prefer: Prefer | None = None,
        commit_every: int = 1000,
        cache_mib: int = 32,
        readonly: bool = False,
    ):
        self.path = os.fspath(path)
        self.commit_every = max(1, commit_every)
        self._pending = 0
        if readonly:
            uri = f"file:{self.path}?mode=ro"
            self._db = sqlite3.connect(uri, uri=True, isolation_level=None)
        else:
            self._db = sqlite3.connect(self.path, isolation_level=None)
        self._db.execute(f"PRAGMA cache_size = {-1024 * cache_mib}")
        self.readonly = readonly
        if not readonly:
            self._db.execute("PRAGMA journal_mode = WAL")
            self._db.execute("PRAGMA synchronous = NORMAL")
            self._db.executescript(_SCHEMA)
        try:
            self.prefer: Prefer = self._check_meta(prefer, readonly)
        except ValueError:
            self._db.close()
            raise
        better = "<" if self.prefer == "earliest" else ">"
        self._sql_by_url = (
            "INSERT INTO by_url VALUES (?, ?, ?, ?, ?, ?, ?, ?) "
            "ON CONFLICT (urlkey, digest) DO UPDATE SET ts = excluded.ts, url = excluded.url,"
            " date = excluded.date, record_id = excluded.record_id,"
            " file_id = excluded.file_id, offset = excluded.offset"
            f" WHERE excluded.ts {better} by_url.ts"
        )
        self._sql_by_digest = (
            "INSERT INTO by_digest VALUES (?, ?, ?) ON CONFLICT (digest) DO UPDATE SET"
            f" urlkey = excluded.urlkey, ts = excluded.ts WHERE excluded.ts {better} by_digest.ts"
        )
        self._sql_last = (
            "INSERT INTO last VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (urlkey) DO UPDATE SET"
            " url = excluded.url, digest = excluded.digest, date = excluded.date,"
            " ts = excluded.ts, etag = excluded.etag, last_modified = excluded.last_modified"
            " WHERE excluded.ts >= last.ts"
        )
        self._files: dict[str, int] = {}

    # -- helpers ------------------------------------------------------------------------
    def _check_meta(self, prefer: Prefer | None, readonly: bool) -> Prefer:
        schema = self._meta("schema")
        if schema is not None and schema != SCHEMA_VERSION:
            raise ValueError(f"{self.path}: dedup index schema {schema}, expected {SCHEMA_VERSION}")
        stored = self._meta("prefer")
        if stored is None:
            stored = prefer or "earliest"
            if not readonly:
                self._db.execute(
                    "INSERT INTO meta VALUES ('prefer', ?), ('schema', ?)",
                    (stored, SCHEMA_VERSION),
                )
        elif prefer is not None and prefer != stored:
            raise ValueError(f"{self.path} prefers the {stored} original, not the {prefer}")
        if stored not in ("earliest", "latest"):
            raise ValueError(f"{self.path}: unknown preference {stored!r}")
        return "earliest" if stored == "earliest" else "latest"

    def _meta(self, key: str) -> str | None:
        try:
            row = self._db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        except sqlite3.OperationalError:  # read-only open of a file without schema
            return None
        return None if row is None else str(row[0])

    def _begin(self) -> None:
        if not self._db.in_transaction:
            self._db.execute("BEGIN")

    def _file_id(self, name: str | None) -> int | None:
        if name is None:
            return None
        fid = self._files.get(name)
        if fid is None:
            self._db.execute("INSERT OR IGNORE INTO files (name) VALUES (?)", (name,))
            row = self._db.execute("SELECT id FROM files WHERE name = ?", (name,)).fetchone()
            fid = int(row[0])
            if len(self._files) > 100_000:  # bound memory on pathological inputs
                self._files.clear()
            self._files[name] = fid
        return fid

    def _original(self, urlkey: str, dig: bytes) -> tuple[Original, str | None, int | None] | None:
        row = self._db.execute(
            "SELECT url, date, ts, record_id, files.name, offset FROM by_url"
            " LEFT JOIN files ON files.id = by_url.file_id"
            " WHERE urlkey = ? AND digest = ?",
            (urlkey, dig),
        ).fetchone()
        if row is None:
            return None
        url, date, ts, record_id, fname, offset = row
        original = Original(url, date or _ts_date(ts), _record_id(record_id), digest_label(dig))
        return original, fname, offset

    # -- DedupIndex ---------------------------------------------------------------------
    def lookup(self, url: str, digest: str) -> DedupHit | None:
        """See :meth:`webark.dedup.DedupIndex.lookup`. An unparseable ``digest`` finds
        nothing (returns None)."""
        try:
            dig = digest_bytes(digest)
        except DigestError:
            return None
        key = url_key(url)
        found = self._original(key, dig)
        if found is not None:
            return DedupHit(found[0], True, found[1], found[2])
        row = self._db.execute("SELECT urlkey FROM by_digest WHERE digest = ?", (dig,)).fetchone()
        if row is None:
            return None
        found = self._original(str(row[0]), dig)
        if found is None:  # cannot happen: both rows are written in one transaction
            log.warning("%s: by_digest points at a missing by_url row", self.path)
            return None
        return DedupHit(found[0], str(row[0]) == key, found[1], found[2])

    def add(
        self,
        url: str,
        digest: str,
        date: str | datetime,
        record_id: str | None = None,
        warc_filename: str | None = None,
        offset: int | None = None,
        *,
        etag: str | None = None,
        last_modified: str | None = None,
    ) -> None:
        """See :meth:`webark.dedup.DedupIndex.add`. ``date`` may also be a datetime or a
        14-digit timestamp; it is stored as given (W3C-DTF) for ``WARC-Refers-To-Date``.

        Raises:
            ValueError: ``digest`` is not a digest or ``date`` not a date.
        """
        self.add_many([(url, digest, date, record_id, warc_filename, offset, etag, last_modified)])

    def add_many(
        self,
        rows: Iterable[
            tuple[
                str,
                str,
                str | datetime,
                str | None,
                str | None,
                int | None,
                str | None,
                str | None,
            ]
        ],
    ) -> int:
        """Add many originals: ``(url, digest, date, record_id, warc_filename, offset,
        etag, last_modified)`` tuples, as :meth:`add` would. Returns the number added.

        Raises:
            ValueError: a bad digest or date (nothing of this call is added).
        """
        by_url: list[tuple[object, ...]] = []
        by_digest: list[tuple[object, ...]] = []
        last: list[tuple[object, ...]] = []
        n = 0
        self._begin()
        for url, digest, date, record_id, fname, offset, etag, lastmod in rows:
            dig = digest_bytes(digest)
            ts = date_micros(date)
            text = _stored_date(_date_text(date), ts)
            key = url_key(url)
            by_url.append(
                (
                    key,
                    dig,
                    ts,
                    url,
                    text,
                    _stored_record_id(record_id),
                    self._file_id(fname),
                    offset,
                )
            )
            by_digest.append((dig, key, ts))
            last.append((key, url, dig, text, ts, etag, lastmod))
            n += 1
        if n > 1:
            # key order touches each B-tree page once per batch (stable sorts: rows with
            # equal keys keep their order, so ties resolve as if added one by one)
            by_url.sort(key=_first_two)
            by_digest.sort(key=_first)
            last.sort(key=_first)
        self._db.executemany(self._sql_by_url, by_url)
        self._db.executemany(self._sql_by_digest, by_digest)
        self._db.executemany(self._sql_last, last)
        self._pending += n
        if self._pending >= self.commit_every:
            self.flush()
        return n

    def note_capture(
        self,
        url: str,
        digest: str,
        date: str | datetime,
        *,
        etag: str | None = None,
        last_modified: str | None = None,
    ) -> None:
        """See :meth:`webark.dedup.FetchHistory.note_capture`: update only the last
        capture of ``url`` (e.g. after writing a revisit, which is not an original but is
        the URL's newest capture)."""
        dig = digest_bytes(digest)
        ts = date_micros(date)
        self._begin()
        self._db.execute(
            self._sql_last,
            (url_key(url), url, dig, _stored_date(_date_text(date), ts), ts, etag, last_modified),
        )
        self._pending += 1
        if self._pending >= self.commit_every:
            self.flush()

    def last_capture(self, url: str) -> LastCapture | None:
        """See :meth:`webark.dedup.FetchHistory.last_capture`."""
        row = self._db.execute(
            "SELECT url, digest, date, ts, etag, last_modified FROM last WHERE urlkey = ?",
            (url_key(url),),
        ).fetchone()
        if row is None:
            return None
        u, dig, date, ts, etag, lastmod = row
        return LastCapture(u, digest_label(dig), date or _ts_date(ts), etag, lastmod)

    # -- housekeeping -------------------------------------------------------------------
    def counts(self) -> dict[str, int]:
        """Rows per table: ``{"by_url": …, "by_digest": …, "last": …, "files": …}``."""
        return {
            t: int(self._db.execute(f"SELECT count(*) FROM {t}").fetchone()[0])
            for t in ("by_url", "by_digest", "last", "files")
        }

    def flush(self) -> None:
        """Commit pending additions."""
        if self._db.in_transaction:
            self._db.execute("COMMIT")
        self._pending = 0

    def close(self) -> None:
        """Commit, checkpoint the WAL into the main file, and close."""
        self.flush()
        if not self.readonly:
            try:
                self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            except sqlite3.OperationalError as e:  # another reader holds the WAL
                log.debug("%s: checkpoint skipped: %s", self.path, e)
        self._db.close()

    def __enter__(self) -> SqliteDedupIndex:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


def open_index(
    path: str | os.PathLike[str],
    *,
    prefer: Prefer | None = None,
    readonly: bool = False,
    commit_every: int = 1000,
    cache_mib: int = 32,
) -> SqliteDedupIndex:
    """Open (or create) the dedup index at ``path``; see :class:`SqliteDedupIndex`.

    >>> with open_index(":memory:") as idx:
    ...     idx.add("http://example.com/", "sha1:B2LTWWPUOYAH7UIPQ7ZUPQ4VMBSVC36A",
    ...             "2014-01-27T17:12:00Z")
    ...     hit = idx.lookup("http://www.example.com", "sha1:B2LTWWPUOYAH7UIPQ7ZUPQ4VMBSVC36A")
    >>> hit.exact_url, hit.original.date
    (True, '2014-01-27T17:12:00Z')
    """
    return SqliteDedupIndex(
        path, prefer=prefer, readonly=readonly, commit_every=commit_every, cache_mib=cache_mib
    )
