"""``webark reduplicate``: write a harvest again with every revisit made a full response.

Dedup makes a harvest depend on other WARCs; a reduplicated copy stands alone (seed:
"reduplicating a harvest needs a tool nobody has"). For each input WARC of the harvest
(:mod:`~webark.tools.reduplicate_harvest`) a series of output WARCs
``STEM-redup-NNNNN.warc.gz`` is written with :class:`~webark.warc.writer.WarcWriter`
(rotation by size, ``.open`` until closed, a warcinfo first that states the
provenance: input file, collection, software), holding, in input order:

* every non-revisit record (warcinfo, response, request, metadata, resource …)
  **byte for byte** — the same gzip member when input and output are both per-record
  gzip, else the same uncompressed record bytes recompressed;
* every resolved revisit as a full ``response``
  (:func:`~webark.tools.reduplicate_merge.merge_revisit`: revisit headers, original
  payload, digests recomputed and checked);
* every revisit without a usable original **unchanged**, listed in the report
  (file, offset, URI, date, digest, why) — nothing is dropped.

A record that cannot be cut out of its file as stored (whole-file gzip, ARC) is
written as read (same fields and block, new serialization) when the writer accepts it,
else listed as ``not_copied``; convert such inputs first (``webark warc recompress``).

Two strategies give the same output:

* ``sorted`` (default; seed: "record all the revisits, order them and then search the
  index in the same order"): read the harvest once to collect its revisits, resolve
  them all in index order (:func:`~webark.tools.reduplicate_resolve.resolve_sorted`),
  read their originals sorted by ``(WARC, offset)`` into a payload spool
  (:func:`~webark.tools.reduplicate_originals.load_originals`), then write;
* ``file-order``: resolve each revisit when it is met, with replay's per-record
  :class:`~webark.index.revisits.RevisitResolver` (index lookups and WARC reads in
  harvest order). The baseline of ``bench/reduplicate.py``.

Resumable (:mod:`~webark.tools.reduplicate_state`): finished inputs are skipped; an
input cut short is written again from its start.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from webark import __version__
from webark.cdx.line import CdxLine
from webark.core.errors import InvalidRecordError
from webark.core.timestamps import w3c_to_timestamp14
from webark.index.capture_select import exact_key
from webark.index.collection import Collection
from webark.index.record_loader import RecordLoader
from webark.index.revisits import RevisitResolver, is_empty_payload_digest
from webark.tools.reduplicate_harvest import HarvestWarc, warc_stem
from webark.tools.reduplicate_merge import Merged, OriginalPayload, merge_revisit
from webark.tools.reduplicate_originals import LoadedOriginal, PayloadSpool, load_originals
from webark.tools.reduplicate_resolve import How, RevisitRef, resolve_sorted
from webark.tools.reduplicate_state import RunState, leftover_outputs, output_prefix
from webark.warc.builders import WarcinfoFields
from webark.warc.reader import ArchiveReader, stored_record_bytes
from webark.warc.record import Block, WarcRecord
from webark.warc.serialize import Codec, codec_for
from webark.warc.writer import DEFAULT_MAX_SIZE, WarcWriter

Strategy = Literal["sorted", "file-order"]
#: Progress callback: ``(phase, done, total)``; phases ``collect`` and ``write`` count
#: bytes of input WARCs, ``resolve`` revisits, ``load`` originals.
Progress = Callable[[str, int, int], None]
REPORT_NAME = "reduplicate-report.json"
_GZIP_MAGIC = b"\x1f\x8b"


@dataclass(frozen=True, slots=True)
class ReduplicateOptions:
    """Options of :func:`reduplicate`.

    Attributes:
        compression: output codec (``gzip``, ``zstd``, ``none``).
        max_size: rotate output files before they pass this many bytes.
        strategy: ``sorted`` or ``file-order`` (module docstring).
        spool_dir: folder of the payload spool (default: the output folder).
    """

    compression: Codec = "gzip"
    max_size: int = DEFAULT_MAX_SIZE
    strategy: Strategy = "sorted"
    spool_dir: str | None = None


@dataclass
class InputReport:
    """Counts and findings for one input WARC (JSON: :meth:`to_json`).

    ``unresolved``: revisits kept unchanged (no usable original); ``unverified``:
    revisits converted whose payload did not match their digest; ``not_copied``:
    records that could not be copied (e.g. whole-file gzip records the writer refuses);
    ``read_errors``: what the reader reported as errors in the input (a damaged
    record is copied as read, or skipped if unreadable; the input needs a look).
    Each finding is a dict with ``file``, ``offset``, ``uri``, ``date``, ``digest`` and
    ``reason``."""

    name: str
    outputs: list[str] = field(default_factory=list)
    records: int = 0
    copied: int = 0
    revisits: int = 0
    converted: int = 0
    verified: int = 0
    empty_payload: int = 0
    rules: dict[str, int] = field(default_factory=dict)
    unresolved: list[dict[str, Any]] = field(default_factory=list)
    unverified: list[dict[str, Any]] = field(default_factory=list)
    not_copied: list[dict[str, Any]] = field(default_factory=list)
    read_errors: list[dict[str, Any]] = field(default_factory=list)
    resumed: bool = False

    def to_json(self) -> dict[str, Any]:
        return {
            "outputs": self.outputs, "records": self.records, "copied": self.copied,
            "revisits": self.revisits, "converted": self.converted,
            "verified": self.verified, "empty_payload": self.empty_payload,
            "rules": self.rules, "unresolved": self.unresolved,
            "unverified": self.unverified, "not_copied": self.not_copied,
            "read_errors": self.read_errors,
        }

    @classmethod
    def from_json(cls, name: str, d: dict[str, Any]) -> InputReport:
        keys = {f.name for f in dataclasses.fields(cls)} - {"name", "resumed"}
        return cls(name=name, resumed=True, **{k: v for k, v in d.items() if k in keys})


@dataclass
class ReduplicateReport:
    """The outcome of a run: one :class:`InputReport` per harvest WARC, in name order
    (finished inputs of earlier runs included, ``resumed``), ``reads`` of original
    records, and the output folder."""

    outdir: str
    strategy: str
    inputs: list[InputReport]
    original_reads: int = 0

    def total(self, name: str) -> int:
        """Sum of a count (``records``, ``revisits``…) or of a finding list's lengths."""
        out = 0
        for i in self.inputs:
            v = getattr(i, name)
            out += len(v) if isinstance(v, list) else int(v)
        return out

    @property
    def ok(self) -> bool:
        """No unresolved or unverified revisits, nothing left uncopied, no read
        errors in the inputs."""
        return not (self.total("unresolved") or self.total("unverified")
                    or self.total("not_copied") or self.total("read_errors"))

    def to_json(self) -> dict[str, Any]:
        keys = ("records", "copied", "revisits", "converted", "verified", "empty_payload",
                "unresolved", "unverified", "not_copied", "read_errors")
        return {
            "outdir": self.outdir, "strategy": self.strategy, "ok": self.ok,
            "totals": {k: self.total(k) for k in keys},
            "original_reads": self.original_reads,
            "inputs": {i.name: {**i.to_json(), "resumed": i.resumed} for i in self.inputs},
        }


def _finding(w: str, rec: WarcRecord, reason: str) -> dict[str, Any]:
    return {
        "file": w, "offset": rec.offset, "uri": rec.target_uri,
        "date": rec.headers.date_str, "digest": rec.headers.payload_digest,
        "reason": reason,
    }


def revisit_ref(name: str, rec: WarcRecord) -> RevisitRef:
    """The :class:`RevisitRef` of a revisit record read from WARC ``name``."""
    url = rec.target_uri or ""
    try:
        key = exact_key(url)
    except ValueError:
        key = url
    try:
        ts = w3c_to_timestamp14(rec.headers.date_str or "")
    except ValueError:
        ts = ""
    return RevisitRef(
        filename=name, offset=rec.offset, url=url, urlkey=key, timestamp=ts,
        digest=(rec.headers.payload_digest or "").strip(),
        refers_to_uri=rec.headers.refers_to_target_uri,
        refers_to_date=rec.headers.refers_to_date,
    )


def revisit_line(ref: RevisitRef) -> CdxLine:
    """A CDX line standing for a revisit (for the per-record resolver)."""
    return CdxLine(
        urlkey=ref.urlkey, timestamp=ref.timestamp, url=ref.url, mime="warc/revisit",
        digest=ref.digest or "-", offset=ref.offset, filename=ref.filename,
        record_type="revisit",
    )


def _empty_original(revisit: WarcRecord | None = None) -> OriginalPayload:
    """The payload of an empty-payload revisit: no body, no head; the original named
    by the revisit's own WARC-Refers-To fields (when it has them)."""
    h = revisit.headers if revisit is not None else None
    return OriginalPayload(
        h.refers_to if h else None, h.refers_to_target_uri if h else None,
        h.refers_to_date if h else None, None, Block(b""), False,
    )


def _from_loaded(lo: LoadedOriginal, spool: PayloadSpool) -> OriginalPayload:
    return OriginalPayload(
        record_id=lo.record_id, target_uri=lo.target_uri, date=lo.date, head=lo.head,
        body=spool.block(lo.body_at, lo.body_length), chunked=lo.chunked,
        truncated=lo.truncated, declared_chunked=lo.declared_chunked,
    )


def _from_record(rec: WarcRecord) -> OriginalPayload:
    h = rec.http
    start = h.head_length if h is not None else 0
    data = rec.block.read_all()
    return OriginalPayload(
        record_id=rec.record_id, target_uri=rec.target_uri, date=rec.headers.date_str,
        head=data[:start] if h is not None else None, body=Block(data[start:]),
        chunked=bool(h is not None and h.is_chunked and rec.payload_was_dechunked_ok),
        truncated=rec.headers.truncated, declared_chunked=bool(h is not None and h.is_chunked),
    )


class _Copier:
    """Copies records byte for byte into a writer (module docstring)."""

    def __init__(self, path: str, out_codec: Codec):
        self.fd = os.open(path, os.O_RDONLY)
        self.same_gzip = out_codec == "gzip" and codec_for(path) == "gzip"

    def close(self) -> None:
        os.close(self.fd)

    def copy(self, writer: WarcWriter, rec: WarcRecord) -> str | None:
        """Copy ``rec``; returns None, or why it could not be copied."""
        if self.same_gzip and rec.length > 0 and not rec.is_arc:
            member = os.pread(self.fd, rec.length, rec.offset)
            if len(member) == rec.length and member[:2] == _GZIP_MAGIC:
                writer.write_stored(member, encoded=True)
                return None
        raw = stored_record_bytes(rec)
        if raw is not None:
            if codec_for(rec.path) == "none":
                raw += b"\r\n\r\n"
            writer.write_stored(raw)
            return None
        try:  # no stored bytes (whole-file gzip, ARC): write the record as read
            writer.write(rec)
        except InvalidRecordError as exc:
            return f"cannot copy: {exc}"
        return None


def _provenance(w: HarvestWarc, collection: Collection, strategy: str) -> WarcinfoFields:
    return WarcinfoFields.for_this_host(
        robots=None,
        is_part_of=collection.config.name or collection.root.name,
        extra=(
            ("description", f"Reduplicated copy of {w.name}: non-revisit records copied "
             "byte for byte, revisit records replaced by full responses whose payload "
             "comes from their original (see WARC-Refers-To-Target-URI/-Date, "
             "WebArk-Original-Record-ID, WebArk-Reduplication)"),
            ("reduplicated-from", w.name),
            ("collection", str(collection.root.resolve())),
            ("reduplication-strategy", strategy),
            ("software-version", f"webark {__version__} reduplicate"),
        ),
    )


def reduplicate(
    collection: Collection,
    harvest: Sequence[HarvestWarc],
    outdir: str | os.PathLike[str],
    options: ReduplicateOptions | None = None,
    *,
    progress: Progress | None = None,
) -> ReduplicateReport:
    """Write the reduplicated harvest into ``outdir`` (module docstring) and its report
    (``outdir/reduplicate-report.json``).

    Args:
        collection: the collection whose index resolves the revisits.
        harvest: the WARCs to write again (from
            :func:`~webark.tools.reduplicate_harvest.select_harvest`).
        outdir: output folder (created); holds the state file for resuming.
        options: :class:`ReduplicateOptions`.
        progress: ``(phase, done, total)`` callback.

    Returns:
        The :class:`ReduplicateReport` (``ok`` False when revisits stayed unresolved or
        unverified).

    Raises:
        StateError: ``outdir`` holds the state of another collection.
        IndexUnavailable: the collection's index cannot be read.
        OSError: an input WARC cannot be read or an output written.
    """
    opts = options or ReduplicateOptions()
    out = Path(outdir)
    out.mkdir(parents=True, exist_ok=True)
    state = RunState(out, str(collection.root.resolve()))
    pending = [w for w in harvest if not state.is_done(w.name)]
    loader = RecordLoader(collection.resolver())
    source = collection.source()
    reports: dict[str, InputReport] = {
        w.name: InputReport.from_json(w.name, state.inputs[w.name])
        for w in harvest if w not in pending
    }
    tick = progress or (lambda phase, done, total: None)
    spool: PayloadSpool | None = None
    chosen: dict[tuple[str, int], tuple[OriginalPayload | LoadedOriginal, How]] = {}
    why: dict[tuple[str, int], str] = {}
    reads = 0
    try:
        if opts.strategy == "sorted" and pending:
            refs = list(_collect(pending, tick))
            resolutions = resolve_sorted(source, refs, progress=lambda d, t: tick("resolve", d, t))
            spool = PayloadSpool(opts.spool_dir or out)
            loaded = load_originals(resolutions.values(), loader, spool,
                                    progress=lambda d, t: tick("load", d, t))
            reads = loaded.reads
            chosen.update(loaded.chosen)
            # candidates that all failed to load: ask every rule for more, once
            failed = [r.revisit for key, r in resolutions.items()
                      if r.candidates and key not in loaded.chosen]
            if failed:
                again = resolve_sorted(source, failed, exhaustive=True)
                more = load_originals(again.values(), loader, spool)
                reads += more.reads
                chosen.update(more.chosen)
                loaded.failures.update(more.failures)
            for key, r in resolutions.items():
                if r.candidates and key not in chosen:
                    why[key] = "no usable original: " + "; ".join(
                        loaded.failures.get((c.filename, c.offset), "not tried")
                        for c, _ in r.candidates)
            for where, res in resolutions.items():
                if res.how == "empty-payload":
                    # no original needed; the revisit's own WARC-Refers-To* fields are
                    # taken when it is written (_empty_original(rec))
                    chosen[where] = (_empty_original(), "empty-payload")
        resolver = RevisitResolver(source, loader) if opts.strategy == "file-order" else None
        total_bytes = sum(os.path.getsize(w.path) for w in pending)
        done_bytes = 0
        for w in pending:
            base = done_bytes

            def write_tick(n: int, base: int = base) -> None:
                tick("write", base + n, total_bytes)

            rep, n_reads = _write_input(w, collection, out, opts, chosen, why, spool,
                                        resolver, write_tick)
            done_bytes += os.path.getsize(w.path)
            reads += n_reads
            state.finish(w.name, rep.to_json())
            reports[w.name] = rep
    finally:
        if spool is not None:
            spool.close()
    report = ReduplicateReport(str(out), opts.strategy,
                               [reports[w.name] for w in harvest], original_reads=reads)
    (out / REPORT_NAME).write_text(json.dumps(report.to_json(), indent=1) + "\n",
                                   encoding="utf-8")
    return report


def _collect(pending: Sequence[HarvestWarc], tick: Progress) -> Iterator[RevisitRef]:
    total = sum(os.path.getsize(w.path) for w in pending)
    base = 0
    for w in pending:
        for rec in ArchiveReader(w.path):
            if rec.type == "revisit":
                yield revisit_ref(w.name, rec)
            tick("collect", base + max(rec.offset, 0), total)
        base += os.path.getsize(w.path)
    tick("collect", total, total)


def _resolve_now(
    resolver: RevisitResolver, ref: RevisitRef, rec: WarcRecord
) -> tuple[OriginalPayload, How] | None:
    if ref.digest and is_empty_payload_digest(ref.digest):
        return _empty_original(rec), "empty-payload"
    found = resolver.original(revisit_line(ref), rec)
    if found is None:
        return None
    line, orig = found
    how: How = "url-digest" if line.urlkey == ref.urlkey else "digest"
    return _from_record(orig), how


def _write_input(
    w: HarvestWarc,
    collection: Collection,
    out: Path,
    opts: ReduplicateOptions,
    chosen: dict[tuple[str, int], tuple[OriginalPayload | LoadedOriginal, How]],
    no_original: dict[tuple[str, int], str],
    spool: PayloadSpool | None,
    resolver: RevisitResolver | None,
    tick: Callable[[int], None],
) -> tuple[InputReport, int]:
    """Write the outputs of one input WARC; returns its report and the number of
    original records read (file-order strategy)."""
    stem = warc_stem(w.name)
    for p in leftover_outputs(out, stem):
        p.unlink()
    rep = InputReport(w.name)
    writer = WarcWriter(
        out, prefix=output_prefix(stem), template="{prefix}-{serial:05d}{ext}",
        compression=opts.compression, max_size=opts.max_size,
        warcinfo=_provenance(w, collection, opts.strategy), allow_unknown_profile=True,
    )
    copier = _Copier(w.path, opts.compression)
    reads = 0
    try:
        reader = ArchiveReader(w.path)
        for rec in reader:
            rep.records += 1
            tick(max(rec.offset, 0))
            if rec.type != "revisit":
                why = copier.copy(writer, rec)
                if why is None:
                    rep.copied += 1
                else:
                    rep.not_copied.append(_finding(w.name, rec, why))
                continue
            rep.revisits += 1
            pick: tuple[OriginalPayload | LoadedOriginal, How] | None
            if resolver is not None:
                pick = _resolve_now(resolver, revisit_ref(w.name, rec), rec)
                reads += 1 if pick is not None and pick[1] != "empty-payload" else 0
            else:
                pick = chosen.get((w.name, rec.offset))
            if pick is None:
                reason = no_original.get((w.name, rec.offset), "no original in the index")
                rep.unresolved.append(_finding(w.name, rec, reason))
                copier.copy(writer, rec)
                continue
            orig, how = pick
            if how == "empty-payload":
                orig = _empty_original(rec)
            elif isinstance(orig, LoadedOriginal):
                assert spool is not None  # loaded originals live in the spool
                orig = _from_loaded(orig, spool)
            merged: Merged = merge_revisit(rec, orig, rule=how)
            try:
                writer.write(merged.record)
            except InvalidRecordError as exc:
                rep.unresolved.append(_finding(w.name, rec, f"response not writable: {exc}"))
                copier.copy(writer, rec)
                continue
            rep.converted += 1
            rep.rules[how] = rep.rules.get(how, 0) + 1
            if how == "empty-payload":
                rep.empty_payload += 1
            if merged.verified:
                rep.verified += 1
            else:
                rep.unverified.append(_finding(w.name, rec, merged.problem or "unverified"))
        tick(os.path.getsize(w.path))
        for prob in reader.problems:
            if prob.severity == "error":
                rep.read_errors.append({"file": w.name, "offset": prob.offset, "uri": None,
                                       "date": None, "digest": None, "reason": str(prob)})
    except BaseException:
        with contextlib.suppress(Exception):
            writer.close()
        raise
    finally:
        copier.close()
    writer.close()
    rep.outputs = [os.path.basename(p) for p in writer.paths]
    return rep, reads
