"""crawl.log → WARC revisit records (``webark crawllog to-warc``).

ARC-era crawls deduplicated with Heritrix 1.x's DeDuplicator (and later Heritrix 3
crawls with ``unwritten:identicalDigest``) left *no record at all* of the URIs found to
be duplicates: the only trace is a crawl.log line annotated ``duplicate:…``. Replay and
statistics then miss those captures. This module writes, for each such line, a WARC
``revisit`` record (WARC 1.1 §6.7) so that the capture exists in the archive again.

What a written revisit holds, and why:

* ``WARC-Target-URI``: column 4 of the line.
* ``WARC-Date``: the **fetch-begin time** (column 9, ``yyyyMMddHHmmssSSS``), which is what
  Heritrix writes as the WARC-Date of the records of a capture (and what
  :mod:`webark.dedup.build` uses for crawl.log originals), at second precision; the log
  time (column 1, when the URI finished) only when column 9 is ``-``.
* ``WARC-Profile``: ``…/1.1/revisit/identical-payload-digest``; ``…/server-not-modified``
  for ``duplicate:server-not-modified`` / ``warcRevisit:notModified`` lines.
* ``WARC-Payload-Digest``: the line's digest (column 10) as ``sha1:BASE32`` (unprefixed
  Heritrix 1.x Base32, hex or Base64 values are converted).
* ``WARC-Refers-To-Target-URI``, ``WARC-Refers-To-Date`` and, when the original's WARC
  can be opened, ``WARC-Refers-To``: from the original found by digest in the given
  index (:mod:`webark.tools.crawllog_to_warc_originals`); left out when unresolved.
* ``WARC-IP-Address``: from an ``ip:`` annotation (Heritrix 3), when present.
* **Block: empty** (``Content-Length: 0``, hence no ``Content-Type``, WARC 1.1 §5.6 —
  the content type of an empty block means nothing). WARC 1.1 §6.7 allows a revisit
  block to be empty; the HTTP response headers were never recorded by an ARC-era
  crawl, and inventing a head from the log's status and MIME type would put bytes in
  the archive that no server sent. No ``WARC-Truncated`` either: nothing of the block
  was cut. The log's status, MIME type, size, via and hop path are kept in the
  concurrent metadata record.
* A ``metadata`` record (``application/warc-fields``, ``WARC-Concurrent-To`` the
  revisit; on by default) keeps the crawl.log line (``crawlLogLine``, byte for byte;
  an early 11-column Heritrix 1.x line is given in the 12-column layout) with
  ``via``, ``hopsFromSeed``, ``sourceTag``, ``fetchTimeMs`` (Heritrix's metadata
  field names) and the source log (``crawlLogFile``, ``crawlLogLineNumber``).

Every file starts with a ``warcinfo`` that says where the records come from: the tool
and its version, each crawl.log path with its SHA-1 and its line counts. The logs are
read twice: a first pass hashes them and counts lines (so the warcinfo can say it), the
second writes. Lines that are not duplicates are counted and skipped; lines that cannot
be parsed are reported with ``file:line`` and the conversion goes on.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from webark import __version__
from webark.core.digests import Digest
from webark.core.errors import DigestError, InvalidRecordError
from webark.core.timestamps import to_timestamp14
from webark.crawllog import (
    CrawlLogError,
    CrawlLogLine,
    DuplicateKind,
    format_line,
    iter_crawl_log,
)
from webark.tools.crawllog_to_warc_originals import OriginalFinder, Wanted
from webark.warc.builders import MetadataFields, Original, WarcinfoFields
from webark.warc.headers import WarcHeaders
from webark.warc.record import WarcRecord
from webark.warc.writer import DEFAULT_MAX_SIZE, WarcWriter

MAX_PROBLEMS = 1000
"""Malformed lines kept (with their messages) in a report; all are counted."""

DEFAULT_PREFIX = "CRAWLLOG-REVISITS"

INCOMPLETE_SUFFIX = ".incomplete"
"""Added to the WARCs of a conversion that was interrupted or failed part-way (the
records in them are whole, but lines after them were not converted)."""

_REFERS = ("WARC-Refers-To-Target-URI", "WARC-Refers-To-Date")


@dataclass
class LogSurvey:
    """First-pass facts about one crawl.log, written into the warcinfo.

    Attributes:
        path: the crawl.log as given.
        sha1: hex SHA-1 of its bytes as stored (of the ``.gz`` file for a gzipped log).
        size: its size in bytes.
        lines: lines read (good and malformed; blank lines and a leading ARC header not
            counted).
        duplicates: good lines with a duplicate annotation.
        malformed: lines that could not be parsed.
    """

    path: str
    sha1: str
    size: int
    lines: int = 0
    duplicates: int = 0
    malformed: int = 0


@dataclass
class ConversionReport:
    """What :func:`convert_crawl_logs` did.

    Attributes:
        logs: the first-pass survey of each input.
        revisits: revisit records written.
        metadata: metadata records written.
        resolved: revisits whose original was found in the index.
        unresolved: revisits written without WARC-Refers-To-* (no index, or no
            original captured no later than the duplicate).
        with_record_id: revisits with a WARC-Refers-To record id.
        not_duplicate: good lines skipped because they carry no duplicate annotation.
        skipped: duplicate lines that could not become a revisit, by reason
            (``no-digest``: identical-payload-digest needs one).
        malformed: lines that could not be parsed (counted).
        problems: messages (``file:line: …``) of the first :data:`MAX_PROBLEMS`
            malformed or skipped lines.
        by_kind: revisits written per duplicate annotation kind
            (:class:`~webark.crawllog.DuplicateKind` values).
        warcs: the WARC files written.
    """

    logs: list[LogSurvey] = field(default_factory=list)
    revisits: int = 0
    metadata: int = 0
    resolved: int = 0
    unresolved: int = 0
    with_record_id: int = 0
    not_duplicate: int = 0
    skipped: Counter[str] = field(default_factory=Counter)
    malformed: int = 0
    problems: list[str] = field(default_factory=list)
    by_kind: Counter[str] = field(default_factory=Counter)
    warcs: list[str] = field(default_factory=list)

    def problem(self, message: str) -> None:
        if len(self.problems) < MAX_PROBLEMS:
            self.problems.append(message)

    def to_json(self) -> dict[str, object]:
        """A JSON-ready summary (the CLI's ``--json`` output)."""
        out = dataclasses.asdict(self)
        out["logs"] = [dataclasses.asdict(s) for s in self.logs]
        out["skipped"] = dict(self.skipped)
        out["by_kind"] = dict(self.by_kind)
        return out


def _sha1_and_size(path: str) -> tuple[str, int]:
    h = hashlib.sha1()
    size = 0
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            h.update(chunk)
            size += len(chunk)
    return h.hexdigest(), size


def survey_crawl_log(path: str | os.PathLike[str]) -> LogSurvey:
    """First pass over a crawl.log: SHA-1, size and line counts (see :class:`LogSurvey`).

    Raises:
        OSError: the file cannot be read.
    """
    p = os.fspath(path)
    sha1, size = _sha1_and_size(p)
    survey = LogSurvey(p, sha1, size)
    for _, item in iter_crawl_log(p):
        survey.lines += 1
        if isinstance(item, CrawlLogError):
            survey.malformed += 1
        elif item.is_duplicate:
            survey.duplicates += 1
    return survey


def warcinfo_for(surveys: Sequence[LogSurvey], index: str | None) -> WarcinfoFields:
    """The warcinfo block of the converted WARCs: software, a description, and per
    crawl.log ``crawlLog`` (path), ``crawlLogSha1``, and ``crawlLogCounts`` (lines,
    duplicates, malformed), in input order; ``originalsIndex`` names the index used."""
    extra: list[tuple[str, str]] = [
        (
            "description",
            "Revisit records for URIs that crawl.logs mark as duplicates (Heritrix "
            "DeDuplicator / duplicate: annotations) but that no (W)ARC recorded; written "
            f"by webark crawllog to-warc {__version__}",
        ),
        ("tool", f"webark crawllog to-warc {__version__}"),
    ]
    if index:
        extra.append(("originalsIndex", index))
    for s in surveys:
        extra += [
            ("crawlLog", s.path),
            ("crawlLogSha1", f"sha1:{Digest.parse(s.sha1).base32()}"),
            (
                "crawlLogCounts",
                f"lines={s.lines} duplicates={s.duplicates} malformed={s.malformed} "
                f"bytes={s.size}",
            ),
        ]
    return WarcinfoFields.for_this_host(robots=None, extra=tuple(extra))


def revisit_date(line: CrawlLogLine) -> str:
    """The revisit's time as 14 digits: fetch-begin (column 9), else log time."""
    return to_timestamp14(line.fetch_began or line.timestamp)


def wanted_for(line: CrawlLogLine) -> Wanted | None:
    """The original to look for, or None when the line has no usable digest."""
    digest = line.digest_label
    if digest is None:
        return None
    dup = line.duplicate_of
    return Wanted(
        url=line.uri,
        digest=digest,
        timestamp=revisit_date(line),
        filename=dup.filename if dup else None,
        offset=dup.offset if dup else None,
    )


def _drop_unknown_original(record: WarcRecord) -> WarcRecord:
    """Remove the empty WARC-Refers-To-Target-URI/-Date the builder writes for an
    original that was not found (their values would be empty, which WARC forbids)."""
    fields = [(n, v) for n, v in record.headers if not (n in _REFERS and v == "")]
    return dataclasses.replace(record, headers=WarcHeaders(fields))


def records_for_line(
    writer: WarcWriter,
    line: CrawlLogLine,
    original: Original | None,
    *,
    source: tuple[str, int] | None = None,
    metadata: bool = True,
) -> tuple[WarcRecord, ...]:
    """The revisit (and metadata) records of one duplicate crawl.log line.

    Args:
        writer: supplies the record builder (version, digests, record ids).
        line: a line whose :attr:`~CrawlLogLine.duplicate_of` is set.
        original: the resolved original, or None.
        source: ``(crawl.log path, line number)`` for the metadata record.
        metadata: also make the concurrent metadata record.

    Raises:
        InvalidRecordError: identical-payload-digest line without a digest.
    """
    dup = line.duplicate_of
    not_modified = dup is not None and dup.kind == DuplicateKind.NOT_MODIFIED
    digest = line.digest_label
    if digest is None and not not_modified:
        raise InvalidRecordError(f"duplicate {line.uri} has no digest (column 10)")
    when = line.fetch_began or line.timestamp
    builder = writer.builder
    known = original is not None
    ref = original or Original(target_uri="", date="", payload_digest=digest)
    if ref.payload_digest is None:
        ref = dataclasses.replace(ref, payload_digest=digest)
    revisit = builder.revisit(
        line.uri,
        b"",
        ref,
        profile="server-not-modified" if not_modified else "identical-payload-digest",
        date=when,
        ip_address=line.ip,
    )
    if not known:
        revisit = _drop_unknown_original(revisit)
    if not metadata:
        return (revisit,)
    extra: list[tuple[str, str]] = [("crawlLogLine", format_line(line))]
    if source is not None:
        extra += [("crawlLogFile", source[0]), ("crawlLogLineNumber", str(source[1]))]
    fields = MetadataFields(
        via=line.via,
        hops_from_seed=line.hop_path or None,
        source_tag=line.source_tag,
        fetch_time_ms=line.fetch_duration_ms,
        extra=tuple(extra),
    )
    meta = builder.metadata(
        line.uri, fields, date=when, concurrent_to=[revisit.record_id or ""]
    )
    return (revisit, meta)


Progress = Callable[[str, int], None]
"""Progress callback: ``(crawl.log path, lines read so far in it)``."""


def convert_crawl_logs(
    paths: Iterable[str | os.PathLike[str]],
    outdir: str | os.PathLike[str],
    *,
    finder: OriginalFinder | None = None,
    index_name: str | None = None,
    prefix: str = DEFAULT_PREFIX,
    max_size: int = DEFAULT_MAX_SIZE,
    metadata: bool = True,
    writer_factory: Callable[..., WarcWriter] = WarcWriter,
    progress: Progress | None = None,
) -> ConversionReport:
    """Write revisit records for the duplicate lines of ``paths`` into WARCs in
    ``outdir`` (see the module docstring for what each record holds).

    Args:
        paths: crawl.logs (Heritrix 1.x or 3.x, plain or gzip), in order.
        outdir: output folder (created).
        finder: resolves originals by digest; None: revisits without WARC-Refers-To-*.
        index_name: what the finder searches (a path), for the warcinfo.
        prefix: WARC file-name prefix.
        max_size: rotate before a file would pass this many bytes.
        metadata: write a metadata record beside each revisit.
        writer_factory: makes the :class:`WarcWriter` (tests inject clocks here).
        progress: called every 1,000 lines.

    Returns:
        A :class:`ConversionReport`; no WARC is written when no line is a duplicate.

    Raises:
        OSError: a crawl.log cannot be read or a WARC cannot be written.
        IndexUnavailable: the index cannot be read.
        KeyboardInterrupt: passed on; as for any error raised while writing, the WARCs
            written so far are closed and renamed ``NAME.warc.gz.incomplete``
            (:data:`INCOMPLETE_SUFFIX`) so that no partial conversion looks finished.
    """
    report = ConversionReport()
    report.logs = [survey_crawl_log(p) for p in paths]
    if not any(s.duplicates for s in report.logs):
        for s in report.logs:
            report.malformed += s.malformed
            report.not_duplicate += s.lines - s.malformed
            _collect_problems(report, s.path)
        return report
    writer = writer_factory(
        outdir,
        prefix=prefix,
        max_size=max_size,
        warcinfo=warcinfo_for(report.logs, index_name),
    )
    try:
        for survey in report.logs:
            _convert_one(writer, survey.path, finder, metadata, report, progress)
    except BaseException:
        # interrupted (Ctrl-C) or failed: what was written is a valid WARC, but not the
        # whole conversion; it must not look finished, so it is renamed NAME.incomplete
        writer.close()
        for p in writer.paths:
            if os.path.exists(p):
                os.replace(p, p + INCOMPLETE_SUFFIX)
        raise
    writer.close()
    report.warcs = list(writer.paths)
    return report


def _collect_problems(report: ConversionReport, path: str) -> None:
    for _, item in iter_crawl_log(path):
        if isinstance(item, CrawlLogError):
            report.problem(str(item))


def _convert_one(
    writer: WarcWriter,
    path: str,
    finder: OriginalFinder | None,
    metadata: bool,
    report: ConversionReport,
    progress: Progress | None,
) -> None:
    for n, (number, item) in enumerate(iter_crawl_log(path), start=1):
        if progress is not None and n % 1000 == 0:
            progress(path, n)
        if isinstance(item, CrawlLogError):
            report.malformed += 1
            report.problem(str(item))
            continue
        dup = item.duplicate_of
        if dup is None:
            report.not_duplicate += 1
            continue
        wanted = wanted_for(item)
        original = finder.find(wanted) if finder is not None and wanted is not None else None
        try:
            records = records_for_line(
                writer, item, original, source=(path, number), metadata=metadata
            )
        except (InvalidRecordError, DigestError) as e:
            report.skipped["no-digest" if item.digest_label is None else "invalid"] += 1
            report.problem(f"{path}:{number}: skipped: {e}")
            continue
        writer.write(*records)
        report.revisits += 1
        report.metadata += len(records) - 1
        report.by_kind[str(dup.kind)] += 1
        if original is None:
            report.unresolved += 1
        else:
            report.resolved += 1
            report.with_record_id += original.record_id is not None
