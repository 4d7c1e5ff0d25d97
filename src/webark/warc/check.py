"""``webark warc check``: validate (W)ARC files the way JWAT does (warc.md "A good
validator checks"), reading every record with the careful parser.

Checked per record: the framing (version line, Content-Length vs block, two CRLFs after
the block, gzip/zstd member validity — from :mod:`webark.warc.framing`), typed fields and
the per-type must/must-not matrix (:mod:`webark.warc.validate_fields`), the block digest,
and the payload digest under both readings of the spec: over the transfer-decoded body
(WARC 1.1, warc-specifications issue 22) and over the chunked bytes (what wget, warcio
and wpull wrote); the result says which one matched.
"""

from __future__ import annotations

import hashlib
import os
from collections import Counter
from dataclasses import dataclass, field

from webark.core.digests import Digest
from webark.core.errors import DigestError
from webark.warc.payload import dechunk
from webark.warc.reader import ArchiveReader
from webark.warc.record import Problem, WarcRecord
from webark.warc.validate_fields import field_problems, field_warnings


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

    def to_json(self) -> dict[str, object]:
        return {
            "path": self.path, "ok": self.ok, "records": len(self.records),
            "errors": len(self.errors), "types": dict(self.counts),
            "file_problems": [p.to_json() for p in self.file_problems],
            "record_reports": [r.to_json() for r in self.records],
        }


def _digest_of(data: bytes, algorithm: str) -> bytes:
    return hashlib.new(algorithm, data).digest()


def check_block_digest(rec: WarcRecord) -> DigestResult | None:
    """Compare WARC-Block-Digest with the digest of the block bytes."""
    value = rec.headers.block_digest
    if value is None:
        return None
    try:
        d = Digest.parse(value)
    except DigestError as e:
        return DigestResult("WARC-Block-Digest", "invalid", detail=str(e))
    if rec.block.in_memory:
        actual = _digest_of(rec.block.read_all(), d.algorithm)
    else:
        h = hashlib.new(d.algorithm)
        with rec.block.open() as f:
            while chunk := f.read(1 << 20):
                h.update(chunk)
        actual = h.digest()
    if actual == d.raw:
        return DigestResult("WARC-Block-Digest", "ok")
    return DigestResult("WARC-Block-Digest", "mismatch",
                        detail=f"header {value}, block is {Digest(d.algorithm, actual).label()}")


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
    if rec.headers.truncated:
        return DigestResult("WARC-Payload-Digest", "unverifiable",
                            detail=f"record is truncated ({rec.headers.truncated})")
    block = rec.block.read_all()
    head = rec.http
    body = block[head.head_length :] if head is not None else block
    candidates: list[tuple[str, bytes]] = []
    if head is not None and head.is_chunked:
        decoded, ok = dechunk(body)
        if ok:
            candidates.append(("transfer-decoded", decoded))
        candidates.append(("chunked-bytes" if ok else "dechunked-body-under-chunked-header",
                           body))
    else:
        candidates.append(("transfer-decoded", body))
    for reading, data in candidates:
        if _digest_of(data, d.algorithm) == d.raw:
            return DigestResult("WARC-Payload-Digest", "ok", reading=reading)
    actual = Digest(d.algorithm, _digest_of(candidates[0][1], d.algorithm)).label()
    return DigestResult("WARC-Payload-Digest", "mismatch",
                        detail=f"header {value}, payload is {actual}")


def check_file(path: str | os.PathLike[str], verify_digests: bool = True) -> FileReport:
    """Check one (W)ARC file; never raises for bad content (only OSError)."""
    reader = ArchiveReader(path, careful=True)
    report = FileReport(os.fspath(path))
    first = True
    for rec in reader:
        rr = RecordReport(rec.offset, rec.length, rec.type, rec.target_uri,
                          problems=list(rec.forgiven))
        report.counts[rec.type or "(none)"] += 1
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
        first = False
        if verify_digests and not rec.is_arc:
            for res in (check_block_digest(rec), check_payload_digest(rec)):
                if res is None:
                    continue
                rr.digests.append(res)
                if res.status in ("mismatch", "invalid"):
                    rr.problems.append(Problem(
                        "error", f"{res.field.lower()}-{res.status}", res.detail,
                        report.path, rec.offset))
                elif res.reading == "chunked-bytes":
                    rr.problems.append(Problem(
                        "warning", "payload-digest-over-chunked-bytes",
                        "WARC-Payload-Digest matches the chunked bytes, not the "
                        "transfer-decoded payload (wget/warcio convention)",
                        report.path, rec.offset))
                elif res.reading == "dechunked-body-under-chunked-header":
                    rr.problems.append(Problem(
                        "warning", "dechunked-body-under-chunked-header",
                        "the HTTP head says Transfer-Encoding: chunked but the body was "
                        "stored de-chunked (the block is not the bytes on the wire)",
                        report.path, rec.offset))
        report.records.append(rr)
    # problems not attached to a record (stream level, trailing garbage)
    attached = {id(p) for r in report.records for p in r.problems}
    report.file_problems = [p for p in reader.problems if id(p) not in attached]
    if not report.records and not report.file_problems:
        report.file_problems.append(Problem("error", "no-records", "no record found",
                                            report.path, None))
    return report
