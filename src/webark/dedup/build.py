"""Fill a dedup index outside any crawl (``webark dedup build``), so the first crawl
already benefits and one index can span many crawls (DESIGN.md seed "Dedup").

Three sources, each read lazily and reported per file:

* **crawl.logs** (Heritrix 1.x and 3.x, plain or gzip; :func:`crawl_log_originals`):
  lines with a payload digest whose status the policy accepts (200 by default) and that
  are not duplicates themselves (``duplicate:…``, ``warcRevisit:…``,
  ``unwritten:identicalDigest`` — a revisit is not an original). Heritrix 3 writes the
  WARC file name and offset in the JSON extra info (``warcFilename``,
  ``warcFileOffset``); they are kept. The capture date is the fetch-begin time (column
  9), which is what Heritrix writes as the record's WARC-Date, at second precision;
  the log time (column 1) when column 9 is ``-``. crawl.logs carry no record ids.
* **WARC/ARC files** (:func:`warc_originals`): ``response`` and ``resource`` records with
  a payload digest (for ``resource`` records without ``WARC-Payload-Digest``, the block
  digest, which is the payload digest there); ``revisit`` records are not originals.
  Record id, WARC-Date, file name and offset come from the record; status, MIME type,
  size, ``ETag`` and ``Last-Modified`` from its HTTP head.
* **CDX/CDXJ/ng files** (:func:`cdx_originals`): every line that is not a revisit
  (MIME ``warc/revisit`` or record type ``revisit``). No record ids, no payload sizes.
  Classic CDX in any layout (:mod:`webark.cdx.classic`: the `` CDX …`` header line when
  there is one, else CDX11, CDX9 or NetarchiveSuite's 7/8 fields); a layout without a
  payload digest (``k``), such as NetarchiveSuite's ARC CDX, gives no originals and is
  reported once for the file.

Everything passes through the same :class:`~webark.dedup.policy.DedupPolicy` the crawler
uses, so the index holds exactly what lookups would accept. Each source yields
:class:`Candidate` or :class:`Skip` items; :func:`load` adds candidates in batches and
returns a :class:`SourceReport` with counts per skip reason and the problems (bad
lines, broken records) with file and line number or byte offset.
"""

from __future__ import annotations

import gzip
import io
import logging
import os
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import IO, Literal, cast

from webark.cdx.classic import MAX_FILE_OFFSET, NAS_LETTERS, guess_letters, has_digest, parse_cdx
from webark.cdx.formats import detect_format, parse_line
from webark.cdx.line import CdxLine
from webark.core.digests import Digest
from webark.core.errors import DigestError
from webark.core.text import printable
from webark.core.timestamps import format_w3c_date, from_timestamp14
from webark.crawllog import CrawlLogError, CrawlLogLine, iter_crawl_log
from webark.crawllog.parse import CUT_GZIP_CODE
from webark.dedup.policy import DedupPolicy
from webark.dedup.sqlite_dedup import SqliteDedupIndex, date_micros, digest_bytes
from webark.warc.reader import ArchiveReader
from webark.warc.record import WarcRecord

log = logging.getLogger(__name__)

SourceKind = Literal["crawl-log", "warc", "cdx"]

_HEAD_BYTES = 1 << 16
_BATCH = 20_000
MAX_PROBLEMS = 1000
"""Problems kept per file in a :class:`SourceReport` (all are counted)."""
NO_DIGEST_LAYOUT = "no-digest-layout"
""":attr:`Skip.code` of the one error a CDX file whose layout has no payload digest
gives (its lines are then counted as ``no-digest`` skips)."""


@dataclass(frozen=True, slots=True)
class Candidate:
    """An original to add: the arguments of
    :meth:`~webark.dedup.sqlite_dedup.SqliteDedupIndex.add`, and the 1-based ``line`` it
    came from (crawl.log, CDX) for error reports."""

    url: str
    digest: str
    date: str
    record_id: str | None = None
    warc_filename: str | None = None
    offset: int | None = None
    etag: str | None = None
    last_modified: str | None = None
    line: int | None = None
    reading: str | None = None
    """Which reading of a chunked payload ``digest`` follows, when the record showed it
    (:func:`digest_reading`): ``"transfer-decoded"`` (WARC 1.1), ``"chunked-bytes"``
    (wget, warcio, wpull, warcprox); None when unknown (crawl.log, CDX) or not chunked."""

    def row(
        self,
    ) -> tuple[str, str, str, str | None, str | None, int | None, str | None, str | None]:
        return (
            self.url,
            self.digest,
            self.date,
            self.record_id,
            self.warc_filename,
            self.offset,
            self.etag,
            self.last_modified,
        )


@dataclass(frozen=True, slots=True)
class Skip:
    """An input item that is not added.

    Attributes:
        reason: ``"error"`` (unparseable line / broken record), ``"duplicate"``
            (crawl.log line annotated as a duplicate), ``"revisit"`` (revisit record or
            CDX line), ``"not-a-capture"`` (warcinfo, request, metadata … records), or a
            policy reason (``"status"``, ``"no-digest"``, ``"empty"``, ``"mime"``,
            ``"size"``).
        line: 1-based line number (crawl.log, CDX), when it applies.
        offset: byte offset (WARC record as stored; crawl.log line in a plain file).
        message: detail for ``"error"`` items (for people).
        code: for programs, what kind of error: ``""``, the
            :attr:`~webark.crawllog.CrawlLogError.code` of a crawl.log error
            (:data:`~webark.crawllog.parse.CUT_GZIP_CODE`: the file ends early), or
            :data:`NO_DIGEST_LAYOUT` (a CDX layout without payload digests).
    """

    reason: str
    line: int | None = None
    offset: int | None = None
    message: str = ""
    code: str = ""


@dataclass
class SourceReport:
    """What loading one file did.

    Attributes:
        path: the file.
        kind: ``"crawl-log"``, ``"warc"`` or ``"cdx"``.
        loaded: originals added to the index.
        skipped: items not added, per :attr:`Skip.reason`.
        problems: the first :data:`MAX_PROBLEMS` ``"error"`` skips, with location,
            plus the one that says the file ends early (always kept).
        cut_short: the file could not be read to its end (a crawl.log.gz cut short or
            damaged, :data:`~webark.crawllog.parse.CUT_GZIP_CODE`): what came before
            the damage was loaded.
        items: lines (crawl.log, CDX) or records (WARC) read, each loaded or skipped.
        no_digest_layout: the file is a CDX whose layout has no payload digest.
        readings: chunked originals per digest reading (:attr:`Candidate.reading`).
    """

    path: str
    kind: SourceKind
    loaded: int = 0
    skipped: Counter[str] = field(default_factory=Counter)
    problems: list[Skip] = field(default_factory=list)
    cut_short: bool = False
    items: int = 0
    no_digest_layout: bool = False
    readings: Counter[str] = field(default_factory=Counter)
    """Originals of chunked responses by the reading their digest follows (WARC input)."""

    @property
    def errors(self) -> int:
        return self.skipped["error"]

    @property
    def unusable(self) -> str:
        """Why nothing could be taken from the file at all (``""`` when something
        could): it holds no line or record, none could be read, or it has no payload
        digests. Such a file is an input error (exit status 1), not a file whose
        captures the policy happened to skip."""
        unit = "records" if self.kind == "warc" else "lines"
        if self.no_digest_layout:
            return "its CDX layout has no payload digest (k): no line can be an original"
        if self.items == 0:
            return f"no {unit}"
        if self.loaded == 0 and self.errors >= self.items:
            return f"none of its {self.items} {unit} could be read"
        return ""

    def where(self, s: Skip) -> str:
        """``path:line`` or ``path @ offset`` of a skip."""
        if s.line is not None:
            return f"{self.path}:{s.line}"
        if s.offset is not None:
            return f"{self.path} @ {s.offset}"
        return self.path


Item = Candidate | Skip


# -- crawl.log --------------------------------------------------------------------------
def _crawl_log_item(line: CrawlLogLine, number: int, policy: DedupPolicy) -> Item:
    if line.is_duplicate:
        return Skip("duplicate", number)
    decision = policy.decide(line.status, line.mime_type, line.size, line.digest_label)
    if decision.action != "lookup":
        if line.digest is not None and line.digest_label is None and decision.reason == "no-digest":
            return Skip("error", number, message=f"undecodable digest {line.digest!r}")
        return Skip(decision.reason, number)
    assert line.digest_label is not None  # decide() returned "lookup"
    when = line.fetch_began or line.timestamp
    extra = line.extra
    fname = extra.get("warcFilename")
    off = extra.get("warcFileOffset")
    return Candidate(
        url=line.uri,
        digest=line.digest_label,
        date=format_w3c_date(when),
        warc_filename=fname if isinstance(fname, str) else None,
        offset=off if isinstance(off, int) and not isinstance(off, bool) else None,
        line=number,
    )


def crawl_log_originals(
    path: str | os.PathLike[str], policy: DedupPolicy | None = None
) -> Iterator[Item]:
    """The originals of a Heritrix crawl.log (see the module docstring), one item per
    non-blank line (an ARC header line of NetarchiveSuite metadata logs is not counted).

    Raises:
        OSError: the file cannot be read.
    """
    policy = policy or DedupPolicy()
    for number, item in iter_crawl_log(path):
        if isinstance(item, CrawlLogError):
            what = f"field {item.field_number} ({item.field}): " if item.field else ""
            yield Skip("error", number, item.offset, what + item.reason, code=item.code)
        else:
            yield _crawl_log_item(item, number, policy)


# -- WARC -------------------------------------------------------------------------------
def _record_item(rec: WarcRecord, policy: DedupPolicy) -> Item:
    rtype = rec.type
    where = rec.offset if rec.offset >= 0 else None
    if rtype == "revisit":
        return Skip("revisit", offset=where)
    if rtype not in ("response", "resource"):
        return Skip("not-a-capture", offset=where)
    errors = [p for p in rec.forgiven if p.severity == "error"]
    if errors:
        return Skip("error", offset=where, message="; ".join(p.message for p in errors))
    url = rec.target_uri
    date = rec.headers.date_str
    if not url or not date:
        return Skip("error", offset=where, message="record without WARC-Target-URI or date")
    digest = rec.headers.payload_digest
    if digest is None and rtype == "resource":
        digest = rec.headers.block_digest
    status: int | None = None
    mime: str | None = None
    etag = lastmod = None
    size: int | None = rec.block.size
    head = rec.http if rtype == "response" else None
    if head is not None and not head.is_request:
        status = head.status
        mime = head.mime
        etag = head.get("ETag")
        lastmod = head.get("Last-Modified")
        size = rec.block.size - head.head_length
    else:
        ct = rec.headers.content_type
        mime = ct.split(";", 1)[0].strip().lower() if ct else None
    if digest is None and policy.decide(status, mime, size, "-").reason == "no-digest":
        # ARC files and some tools write no WARC-Payload-Digest: compute it (over the
        # transfer-decoded body, as webark's writer and the CDX indexer do)
        digest = Digest("sha1", rec.payload_digests("sha1")[0][1]).label()
    decision = policy.decide(status, mime, size, digest)
    if decision.action != "lookup" or digest is None:
        return Skip(decision.reason, offset=where)
    return Candidate(
        url=url,
        digest=digest,
        date=date.strip(),
        record_id=rec.record_id,
        warc_filename=os.path.basename(rec.path),
        offset=where,
        etag=etag,
        last_modified=lastmod,
        reading=digest_reading(rec, digest) if head is not None and head.is_chunked else None,
    )


def digest_reading(rec: WarcRecord, digest: str) -> str | None:
    """Which reading of the payload of ``rec`` (a chunked response) its stated
    ``digest`` follows: ``"transfer-decoded"``, ``"chunked-bytes"`` or
    ``"dechunked-body-under-chunked-header"`` (:meth:`WarcRecord.payload_digests`), None
    when it matches none (a wrong digest; the record is indexed as stated). The index
    keeps the digest as stated (a revisit must carry the original's digest); a recrawl
    looks a chunked response up under both readings (:mod:`webark.capture.dedup`)."""
    try:
        d = Digest.parse(digest)
    except DigestError:
        return None
    return next((name for name, raw in rec.payload_digests(d.algorithm) if raw == d.raw), None)


def warc_originals(
    path: str | os.PathLike[str], policy: DedupPolicy | None = None
) -> Iterator[Item]:
    """The originals of a WARC/ARC file (see the module docstring), one item per record,
    plus an ``"error"`` skip for each file-level problem the reader reports.

    Raises:
        OSError: the file cannot be read.
    """
    policy = policy or DedupPolicy()
    reader = ArchiveReader(path)
    seen = 0
    for rec in reader:
        item = _record_item(rec, policy)
        # framing problems found between records (resynchronisation) are errors too
        for p in reader.problems[seen:]:
            if p.severity == "error" and p.offset != rec.offset:
                yield Skip("error", offset=p.offset, message=f"{p.code}: {p.message}")
        seen = len(reader.problems)
        yield item
    for p in reader.problems[seen:]:
        if p.severity == "error":
            yield Skip("error", offset=p.offset, message=f"{p.code}: {p.message}")


# -- CDX --------------------------------------------------------------------------------
def _open_text(path: str | os.PathLike[str]) -> IO[str]:
    with open(path, "rb") as probe:
        gz = probe.read(2) == b"\x1f\x8b"
    raw = cast(IO[bytes], gzip.open(path, "rb") if gz else open(path, "rb"))  # noqa: SIM115
    return io.TextIOWrapper(raw, encoding="utf-8", errors="surrogateescape", newline="")


def _cdx_date(line: CdxLine) -> str:
    if line.date:
        return line.date
    return format_w3c_date(from_timestamp14(line.timestamp))


def _cdx_item(line: CdxLine, number: int, policy: DedupPolicy) -> Item:
    if line.mime == "warc/revisit" or line.record_type == "revisit":
        return Skip("revisit", number)
    if line.record_type not in ("response", "resource"):
        return Skip("not-a-capture", number)
    status = int(line.status) if line.status.isdigit() else None
    digest = None if line.digest in ("", "-") else line.digest
    decision = policy.decide(status, line.mime, None, digest)
    if decision.action != "lookup" or digest is None:
        return Skip(decision.reason, number)
    try:
        date = _cdx_date(line)
    except ValueError as e:
        return Skip("error", number, message=f"bad timestamp: {e}")
    return Candidate(
        url=line.url,
        digest=digest,
        date=date,
        warc_filename=None if line.filename in ("", "-") else line.filename,
        offset=None if line.offset < 0 else line.offset,
        line=number,
    )


def _no_digest_note(letters: Sequence[str], number: int) -> Skip:
    layout = " ".join(letters)
    nas = " (NetarchiveSuite's ARC CDX; its c is the MD5 of the whole ARC record)" \
        if tuple(letters[:7]) == NAS_LETTERS[:7] else ""
    return Skip(
        "error", number, code=NO_DIGEST_LAYOUT,
        message=f"CDX layout '{layout}'{nas} has no payload digest (k): its lines cannot be "
        "originals; build from the harvest's crawl.logs (-l) or its (W)ARC files (-w)",
    )


def cdx_originals(
    path: str | os.PathLike[str], policy: DedupPolicy | None = None
) -> Iterator[Item]:
    """The originals of a CDX (any layout of :mod:`webark.cdx.classic`, with or without
    `` CDX …`` header), CDXJ or ng file, plain or gzip: one item per data line (header,
    ``!`` and blank lines not counted). The layout of a headerless classic CDX is that
    of its first data line. A layout without a payload digest gives one ``error`` skip
    with code :data:`NO_DIGEST_LAYOUT`, then a ``no-digest`` skip per line.

    Raises:
        OSError: the file cannot be read.
    """
    policy = policy or DedupPolicy()
    letters: Sequence[str] | None = None
    fmt: str | None = None
    noted = False
    with _open_text(path) as fh:
        for number, raw in enumerate(fh, 1):
            text = raw.rstrip("\r\n")
            if not text.strip() or text.startswith("!"):
                continue
            if text.startswith((" CDX ", "CDX ")):
                letters = text.split()[1:]
                fmt = "cdx"
                continue
            try:
                fmt = fmt or detect_format(text)
                if fmt in ("cdx", "cdx11", "cdx9"):
                    fmt = "cdx"
                    if letters is None:
                        letters = guess_letters(text.split(" "))
                    if not has_digest(letters):
                        if not noted:
                            noted = True
                            yield _no_digest_note(letters, number)
                        yield Skip("no-digest", number)
                        continue
                    line = parse_cdx(text, letters)
                else:
                    line = parse_line(text, fmt)  # type: ignore[arg-type]
                yield _cdx_item(line, number, policy)
            except (ValueError, KeyError) as e:
                yield Skip("error", number, message=printable(str(e)))


# -- loading ----------------------------------------------------------------------------
SOURCES: dict[SourceKind, Callable[[str | os.PathLike[str], DedupPolicy | None], Iterator[Item]]]
SOURCES = {"crawl-log": crawl_log_originals, "warc": warc_originals, "cdx": cdx_originals}



def _checked(c: Candidate, kind: SourceKind) -> Item:
    """``c``, or an error skip when a value would make ``add_many`` (all or nothing per
    batch) fail: a bad digest or date, an offset SQLite cannot hold, text that is not
    UTF-8 (a CDX or crawl.log line with other bytes in a URL or file name)."""
    where = c.offset if kind == "warc" else None
    try:
        digest_bytes(c.digest)
        date_micros(c.date)
        if c.offset is not None and not 0 <= c.offset <= MAX_FILE_OFFSET:
            raise ValueError(f"offset {c.offset} is beyond any file")
        for what, value in (("URL", c.url), ("WARC file name", c.warc_filename),
                            ("record id", c.record_id), ("ETag", c.etag),
                            ("Last-Modified", c.last_modified)):
            if value is not None and not value.isascii():
                try:
                    value.encode("utf-8")
                except UnicodeEncodeError:
                    raise ValueError(
                        f"{what} is not UTF-8: '{printable(value)[:200]}'") from None
    except ValueError as e:
        return Skip("error", c.line, where, f"{printable(c.url)}: {e}")
    return c


def load(
    index: SqliteDedupIndex,
    kind: SourceKind,
    path: str | os.PathLike[str],
    policy: DedupPolicy | None = None,
    progress: Callable[[int], None] | None = None,
) -> SourceReport:
    """Add the originals of one file to ``index`` and commit.

    Args:
        index: the index to fill.
        kind: ``"crawl-log"``, ``"warc"`` or ``"cdx"``.
        path: the file.
        policy: which captures to index (default :class:`DedupPolicy()`).
        progress: called with the number of items read so far, every 1000 items.

    Raises:
        OSError: the file cannot be read (what was added before is kept).
    """
    return load_items(index, kind, path, SOURCES[kind](path, policy), progress)


def load_items(
    index: SqliteDedupIndex,
    kind: SourceKind,
    path: str | os.PathLike[str],
    items: Iterable[Item],
    progress: Callable[[int], None] | None = None,
) -> SourceReport:
    """:func:`load` of items already read from ``path`` (e.g. by Spark executors:
    ``list(warc_originals(path, policy))``): checked, added in batches, reported.

    Raises:
        OSError: reading ``items`` fails (what was added before is kept).
    """
    report = SourceReport(os.fspath(path), kind)
    batch: list[Candidate] = []
    n = 0
    for item in items:
        if isinstance(item, Skip) and item.code == NO_DIGEST_LAYOUT:
            # a note about the whole file, not one of its lines: always listed
            report.no_digest_layout = True
            report.problems.insert(0, item)
            continue
        n += 1
        if isinstance(item, Candidate):
            item = _checked(item, kind)
        if isinstance(item, Candidate):
            if item.reading:
                report.readings[item.reading] += 1
            batch.append(item)
            if len(batch) >= _BATCH:
                report.loaded += index.add_many(c.row() for c in batch)
                batch.clear()
        else:
            report.skipped[item.reason] += 1
            if item.reason == "error":
                log.info("%s: skipped: %s", report.where(item), item.message)
                if item.code == CUT_GZIP_CODE:
                    report.cut_short = True
                    report.problems.append(item)  # whatever the count: the user must know
                elif len(report.problems) < MAX_PROBLEMS:
                    report.problems.append(item)
        if progress is not None and n % 1000 == 0:
            progress(n)
    if batch:
        report.loaded += index.add_many(c.row() for c in batch)
    report.items = n
    index.flush()
    if progress is not None:
        progress(n)
    return report
