"""``webark warc check``: validate (W)ARC files the way JWAT does (warc.md "A good
validator checks"), reading every record with the careful parser.

Checked per record: the framing (version line, Content-Length vs block, two CRLFs after
the block, gzip/zstd member validity — from :mod:`webark.warc.framing`), typed fields and
the per-type must/must-not matrix (:mod:`webark.warc.validate_fields`), the block digest,
and the payload digest under both readings of the spec: over the transfer-decoded body
(WARC 1.1, warc-specifications issue 22) and over the chunked bytes (what wget, warcio
and wpull wrote); the result says which one matched. The payload digest of a segmented
record covers the reassembled payload (WARC 1.1 §7): it is verified when every segment is
in the file (up to :data:`REASSEMBLE_LIMIT` bytes), else reported ``unverifiable``.

Checked per file: NUL bytes and garbage between compressed members (from
:mod:`webark.warc.streams`) and WARC-Record-IDs used twice (``duplicate-record-id``).
The ids seen are kept as 16-byte keys (the UUID of a ``urn:uuid:`` id, a 128-bit BLAKE2
hash of any other) with the offset of their record: about 150 bytes of memory per
record, so 150 MB for a million records.
"""

from __future__ import annotations

import hashlib
import os
import uuid
from collections import Counter
from dataclasses import dataclass, field

from webark.core.digests import Digest
from webark.core.errors import DigestError
from webark.core.text import printable
from webark.warc.headers import WarcHeaders
from webark.warc.reader import ArchiveReader
from webark.warc.record import Block, Problem, WarcRecord
from webark.warc.validate_fields import field_problems, field_warnings

REASSEMBLE_LIMIT = 64 << 20
"""Segments of one record are kept in memory (to verify its payload digest) only up to
this many bytes in all."""


@dataclass
class DigestResult:
    """Outcome of one digest check: ``status`` is ``ok``, ``mismatch``, ``unverifiable``
    (e.g. a revisit's payload, which lives in another record) or ``invalid`` (the header
    value cannot be parsed); ``reading`` says which interpretation matched for payloads:
    ``"transfer-decoded"`` (the spec), ``"chunked-bytes"`` (wget/warcio compatibility) or
    ``"dechunked-body-under-chunked-header"`` (the body was stored de-chunked although the
    head still says chunked, warc.md interop bug 3)."""

    field: str
    status: str
    reading: str | None = None
    detail: str = ""


@dataclass
class RecordReport:
    """Problems and digest results of one record."""

    offset: int
    length: int
    type: str
    target_uri: str | None
    problems: list[Problem] = field(default_factory=list)
    digests: list[DigestResult] = field(default_factory=list)

    def to_json(self) -> dict[str, object]:
        return {
            "offset": self.offset, "length": self.length, "type": self.type,
            "target_uri": self.target_uri,
            "problems": [p.to_json() for p in self.problems],
            "digests": [d.__dict__ for d in self.digests],
        }


@dataclass
class FileReport:
    """Result of checking one file. ``ok`` is False when any error was found."""

    path: str
    records: list[RecordReport] = field(default_factory=list)
    file_problems: list[Problem] = field(default_factory=list)
    counts: Counter[str] = field(default_factory=Counter)

    @property
    def errors(self) -> list[Problem]:
        out = [p for p in self.file_problems if p.severity == "error"]
        for r in self.records:
            out += [p for p in r.problems if p.severity == "error"]
        return out

    @property
    def ok(self) -> bool:
        return not self.errors

    def _severity_count(self, severity: str) -> int:
        return sum(p.severity == severity for p in self.file_problems) + sum(
            p.severity == severity for r in self.records for p in r.problems)

    @property
    def record_count(self) -> int:
        """Records read (ARC and WARC)."""
        return len(self.records)

    @property
    def error_count(self) -> int:
        return self._severity_count("error")

    @property
    def warning_count(self) -> int:
        return self._severity_count("warning")

    @property
    def forgiven_count(self) -> int:
        return self._severity_count("forgiven")

    @property
    def digest_counts(self) -> Counter[str]:
        """Digest results by status: ``ok``, ``mismatch``, ``unverifiable``, ``invalid``."""
        return Counter(d.status for r in self.records for d in r.digests)

    @property
    def digests_verified(self) -> int:
        """Digests that matched (``digest_counts["ok"]``)."""
        return self.digest_counts["ok"]

    def to_json(self) -> dict[str, object]:
        return {
            "path": self.path, "ok": self.ok, "records": len(self.records),
            "errors": self.error_count, "warnings": self.warning_count,
            "forgiven": self.forgiven_count, "digests": dict(self.digest_counts),
            "types": dict(self.counts),
            "file_problems": [p.to_json() for p in self.file_problems],
            "record_reports": [r.to_json() for r in self.records],
        }


def check_block_digest(rec: WarcRecord) -> DigestResult | None:
    """Compare WARC-Block-Digest with the digest of the block bytes."""
    value = rec.headers.block_digest
    if value is None:
        return None
    try:
        d = Digest.parse(value)
    except DigestError as e:
        return DigestResult("WARC-Block-Digest", "invalid", detail=str(e))
    actual = rec.block.digest(d.algorithm)
    if actual == d.raw:
        return DigestResult("WARC-Block-Digest", "ok")
    return DigestResult("WARC-Block-Digest", "mismatch",
                        detail=f"header {value}, block is {Digest(d.algorithm, actual).label()}")


def is_segmented(headers: WarcHeaders) -> bool:
    """Whether the record is one segment of a segmented record (WARC 1.1 §7): a first
    segment or a continuation."""
    return "WARC-Segment-Number" in headers or headers.record_type == "continuation"


def check_payload_digest(rec: WarcRecord) -> DigestResult | None:
    """Compare WARC-Payload-Digest with the payload under both readings."""
    value = rec.headers.payload_digest
    if value is None:
        return None
    try:
        d = Digest.parse(value)
    except DigestError as e:
        return DigestResult("WARC-Payload-Digest", "invalid", detail=str(e))
    if rec.type == "revisit":
        return DigestResult("WARC-Payload-Digest", "unverifiable",
                            detail="a revisit's payload is in the original record")
    if is_segmented(rec.headers):
        return DigestResult("WARC-Payload-Digest", "unverifiable",
                            detail="the payload digest of a segmented record covers the "
                                   "reassembled payload (WARC 1.1 §7), not this segment")
    if rec.headers.truncated:
        return DigestResult("WARC-Payload-Digest", "unverifiable",
                            detail=f"record is truncated ({rec.headers.truncated})")
    return _compare_payload(rec, d, value)


def _compare_payload(rec: WarcRecord, d: Digest, value: str) -> DigestResult:
    candidates = rec.payload_digests(d.algorithm)
    for reading, raw in candidates:
        if raw == d.raw:
            return DigestResult("WARC-Payload-Digest", "ok", reading=reading)
    actual = Digest(d.algorithm, candidates[0][1]).label()
    return DigestResult("WARC-Payload-Digest", "mismatch",
                        detail=f"header {value}, payload is {actual}")


def record_id_key(record_id: str) -> bytes:
    """A 16-byte key for a WARC-Record-ID: the UUID of ``<urn:uuid:…>`` (so that case
    does not matter, RFC 4122), else a 128-bit BLAKE2b hash of the stripped value."""
    v = record_id.strip()
    low = v.lower()
    if low.startswith("<urn:uuid:") and low.endswith(">"):
        try:
            return uuid.UUID(v[10:-1]).bytes
        except ValueError:
            pass
    return hashlib.blake2b(v.encode("utf-8", "surrogateescape"), digest_size=16).digest()


@dataclass
class _Segments:
    """The segments of one segmented record met so far (WARC 1.1 §7)."""

    first: WarcRecord
    reports: list[tuple[RecordReport, WarcRecord]]
    blocks: list[bytes]
    size: int
    next_number: int = 2


def _reassembled(seg: _Segments, last: WarcRecord) -> WarcRecord:
    """The logical record of a complete set of segments: the first segment's fields
    without the segment ones, and the blocks joined."""
    fields = [(n, v) for n, v in seg.first.headers
              if not n.lower().startswith("warc-segment-")]
    return WarcRecord(WarcHeaders(fields), Block(b"".join(seg.blocks)), seg.first.version,
                      last.path)


class _SegmentTracker:
    """Reassembles segmented records within one file to verify payload digests."""

    def __init__(self, report: FileReport):
        self.report = report
        self.open: dict[str, _Segments] = {}
        self.held = 0

    def add(self, rec: WarcRecord, rr: RecordReport) -> None:
        h = rec.headers
        try:
            number = int((h.get("WARC-Segment-Number") or "").strip())
        except ValueError:
            return
        if number == 1 and rec.record_id:
            size = rec.block.size
            if self.held + size <= REASSEMBLE_LIMIT:
                self.open[rec.record_id.strip()] = _Segments(
                    rec, [(rr, rec)], [rec.block.read_all()], size)
                self.held += size
            return
        origin = (h.get("WARC-Segment-Origin-ID") or "").strip()
        seg = self.open.get(origin)
        if seg is None:
            return
        if number != seg.next_number or self.held + rec.block.size > REASSEMBLE_LIMIT:
            self._drop(origin)
            return
        seg.reports.append((rr, rec))
        seg.blocks.append(rec.block.read_all())
        seg.size += rec.block.size
        self.held += rec.block.size
        seg.next_number += 1
        total = h.get("WARC-Segment-Total-Length")
        if total is None:
            return
        self._drop(origin)
        if total.strip() != str(seg.size):
            rr.problems.append(Problem(
                "error", "segment-total-length-mismatch",
                f"WARC-Segment-Total-Length {total.strip()} but the {len(seg.blocks)} "
                f"segments have {seg.size} bytes", self.report.path, rec.offset))
            return
        whole = _reassembled(seg, rec)
        for seg_rr, seg_rec in seg.reports:
            value = seg_rec.headers.payload_digest
            if value is None:
                continue
            for i, res in enumerate(seg_rr.digests):
                if res.field != "WARC-Payload-Digest" or res.status != "unverifiable":
                    continue
                new = _compare_payload(whole, Digest.parse(value), value)
                new.detail = (f"reassembled from {len(seg.blocks)} segments"
                              + (f"; {new.detail}" if new.detail else ""))
                seg_rr.digests[i] = new
                _digest_problem(seg_rr, new, self.report.path, seg_rec.offset)

    def _drop(self, origin: str) -> None:
        seg = self.open.pop(origin, None)
        if seg is not None:
            self.held -= seg.size


def _digest_problem(rr: RecordReport, res: DigestResult, path: str, offset: int) -> None:
    """Add the problem a digest result means, if any, to the record's report."""
    if res.status in ("mismatch", "invalid"):
        rr.problems.append(Problem(
            "error", f"{res.field.lower()}-{res.status}", res.detail, path, offset))
    elif res.reading == "chunked-bytes":
        rr.problems.append(Problem(
            "warning", "payload-digest-over-chunked-bytes",
            "WARC-Payload-Digest matches the chunked bytes, not the "
            "transfer-decoded payload (wget/warcio convention)", path, offset))
    elif res.reading == "dechunked-body-under-chunked-header":
        rr.problems.append(Problem(
            "warning", "dechunked-body-under-chunked-header",
            "the HTTP head says Transfer-Encoding: chunked but the body was "
            "stored de-chunked (the block is not the bytes on the wire)", path, offset))



def check_file(path: str | os.PathLike[str], verify_digests: bool = True) -> FileReport:
    """Check one (W)ARC file; never raises for bad content (only OSError)."""
    reader = ArchiveReader(path, careful=True)
    report = FileReport(os.fspath(path))
    segments = _SegmentTracker(report)
    seen_ids: dict[bytes, int] = {}
    first = True
    for rec in reader:
        rtype = printable(rec.type)
        rr = RecordReport(rec.offset, rec.length, rtype, rec.target_uri,
                          problems=list(rec.forgiven))
        report.counts[rtype or "(none)"] += 1
        if not rec.is_arc:
            for code, message in field_problems(rec.version, rec.headers):
                rr.problems.append(Problem("error", code, message, report.path, rec.offset))
            for code, message in field_warnings(rec.version, rec.headers):
                rr.problems.append(Problem("warning", code, message, report.path, rec.offset))
            if first and rec.type != "warcinfo":
                rr.problems.append(Problem(
                    "warning", "warcinfo-not-first",
                    "the first record of the file is not a warcinfo record", report.path,
                    rec.offset))
            rid = rec.record_id
            if rid is not None and rid.strip():
                key = record_id_key(rid)
                earlier = seen_ids.get(key)
                if earlier is None:
                    seen_ids[key] = rec.offset
                else:
                    rr.problems.append(Problem(
                        "error", "duplicate-record-id",
                        f"WARC-Record-ID {rid.strip()} is also the id of the record at "
                        f"{earlier} (record ids are unique, WARC 1.1 §5.2)", report.path,
                        rec.offset))
        first = False
        if verify_digests and not rec.is_arc:
            for res in (check_block_digest(rec), check_payload_digest(rec)):
                if res is None:
                    continue
                rr.digests.append(res)
                _digest_problem(rr, res, report.path, rec.offset)
            if is_segmented(rec.headers):
                segments.add(rec, rr)
        report.records.append(rr)
    # problems not attached to a record (stream level, trailing garbage)
    attached = {id(p) for r in report.records for p in r.problems}
    report.file_problems = [p for p in reader.problems if id(p) not in attached]
    if not report.records and not report.file_problems:
        report.file_problems.append(Problem("error", "no-records", "no record found",
                                            report.path, None))
    return report
