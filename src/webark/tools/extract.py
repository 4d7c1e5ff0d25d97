"""``webark extract``: spin (W)ARC files out into a browsable file tree, as the seed's
2005 ``arc_extractor`` did — one file per captured URL under ``DIR/host/path``.

Three passes over the inputs, each streaming record by record:

1. **Survey** (:class:`CaptureSurvey`): every ``response`` with a 2xx status and every
   ``resource`` record is a capture; with ``include_revisits`` so is every ``revisit``
   whose payload digest matches a capture in the inputs (its content is the original's).
   Kept per URL: the latest capture (or all of them with ``all_captures``), plus one
   original location per payload digest for revisits — memory grows with the number
   of URLs, not of records.
2. **Plan** (:func:`plan_paths`): URL → safe path (:mod:`webark.tools.extract_paths`),
   then conflicts are settled: a file whose path another capture needs as a folder
   moves to ``path/index.html``; names that differ only in case (a problem on macOS and
   Windows) or that two URLs share get ``~2``, ``~3`` … before the extension; folder
   names take the case they were first seen with. With ``all_captures`` every capture
   is ``name.TIMESTAMP.ext`` (14-digit UTC WARC-Date).
3. **Write**: each (W)ARC is read again in file order and the planned records' payloads
   are written (HTTP transfer-coding removed, Content-Encoding gzip/deflate/br decoded
   — in memory, so a content-encoded payload costs its decoded size in RAM; others are
   copied 1 MiB at a time; a payload that does not decode is written as stored and
   flagged in the manifest).

Safety: paths are built from components that cannot contain ``/``, ``\\``, NUL, ``.`` or
``..``; every folder is opened relative to its parent's descriptor with ``O_NOFOLLOW``
and every file created with ``O_NOFOLLOW | O_EXCL``, so neither a hostile URL nor a
symlink planted in ``DIR`` can make the extractor write outside ``DIR``
(:class:`UnsafeOutput` is raised instead). Each file is written as
``_webark_partial_PID_N`` and renamed when complete, and the manifest is written last,
so an interrupted run leaves no cut file under a final name and no manifest.

The output folder must be new or empty; one that holds an earlier extract is replaced
only with ``replace`` (``--replace``), which overwrites or removes exactly the files the
earlier manifest lists and touches nothing else, so the new manifest describes the tree
(:mod:`webark.tools.extract_previous`).

The manifest ``DIR/_webark_manifest.csv`` (or ``.json``) maps each file to its URL,
14-digit timestamp, WARC-Date, record type, HTTP status, MIME type, source (W)ARC file
and record offset (for a revisit: the revisit's own file and offset, and the
original's in ``original_file``/``original_offset``), and ``truncated``: why a payload
is incomplete (``WARC-Truncated`` value, or ``file-ends-early`` for a block cut short),
empty when it is whole.
"""

from __future__ import annotations

import contextlib
import csv
import errno
import io
import json
import logging
import os
import stat
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import BinaryIO, Literal

from webark.core.errors import WebarkError
from webark.core.timestamps import to_timestamp14
from webark.index.source import digest_key
from webark.tools.extract_paths import (
    RESERVED_PREFIX,
    UnsupportedUrl,
    url_to_path,
    with_suffix_tag,
)
from webark.tools.extract_previous import (
    MANIFEST_FILES,
    MANIFEST_NAME,
    PENDING_NAME,
    OutputInUse,
    check_may_write,
    pending_json,
    previous_extract,
)
from webark.tools.problem_tally import ProblemTally
from webark.warc.reader import ArchiveReader
from webark.warc.record import WarcRecord

log = logging.getLogger(__name__)

PARTIAL_PREFIX = RESERVED_PREFIX + "_partial_"
"""Name prefix of a file being written (renamed when complete; left only by a crash)."""
ManifestFormat = Literal["csv", "json"]
MANIFEST_FIELDS = (
    "file", "url", "timestamp", "warc_date", "record_type", "status", "mime",
    "warc_file", "offset", "original_file", "original_offset", "bytes", "decoded",
    "truncated",
)

_CHUNK = 1 << 20


class UnsafeOutput(WebarkError):
    """Writing would follow a symlink or leave the output folder (e.g. a symlink or a
    file planted where the extractor needs a folder)."""


@dataclass(frozen=True, slots=True)
class Capture:
    """One capture to extract.

    Attributes:
        url: WARC-Target-URI.
        timestamp: 14-digit UTC time of WARC-Date; ``""`` when it does not parse
            (sorts before every date; ``undated`` in ``--all-captures`` names).
        warc_date: WARC-Date as written.
        record_type: ``response``, ``resource`` or ``revisit``.
        status: HTTP status (None for resource records).
        mime: MIME type of the payload (HTTP Content-Type without parameters, or the
            record's Content-Type for resource records), None when unknown.
        warc_file: the (W)ARC file of the record.
        offset: its offset there (as stored).
        digest: payload digest (normalized ``sha1:BASE32``), None when absent.
        source_file, source_offset: where the payload is read from (the record itself,
            or for a revisit its original).
        path: the planned relative path (components), set by :func:`plan_paths`.
    """

    url: str
    timestamp: str
    warc_date: str
    record_type: str
    status: int | None
    mime: str | None
    warc_file: str
    offset: int
    digest: str | None
    source_file: str
    source_offset: int
    path: tuple[str, ...] = ()

    @property
    def is_html(self) -> bool:
        return self.mime in ("text/html", "application/xhtml+xml")


@dataclass
class ExtractReport:
    """What :func:`extract` did.

    Attributes:
        records: records read in the survey.
        captures: captures found (responses 2xx, resources, usable revisits).
        files: files written.
        bytes: payload bytes written.
        skipped: records not extracted, by reason (``not-2xx``, ``no-http-status``
            (e.g. ``dns:`` responses), ``unsupported-url``, ``revisit``,
            ``revisit-unresolved``, ``older-capture``, ``same-file-url`` (another URL
            that maps to the same file, e.g. ``/`` and ``/index.html``: the latest
            capture of the two is written), ``no-url``).
        not_decoded: files written as stored because their Content-Encoding did not
            decode.
        removed: files of the earlier extract (``replace``) that this run does not
            write, removed.
        problems: reader problems (broken records, kind = their code), empty files
            (``empty-file``) and incomplete payloads (``truncated-payload``): all
            counted per kind, the first
            :data:`~webark.tools.problem_tally.MAX_LISTED` kept as text with file @
            offset (:class:`~webark.tools.problem_tally.ProblemTally`).
        truncated: files written from records whose payload is incomplete
            (``WARC-Truncated``, or a block cut short); the manifest's ``truncated``
            column says why.
        manifest: path of the manifest written.
    """

    records: int = 0
    captures: int = 0
    files: int = 0
    bytes: int = 0
    skipped: dict[str, int] = field(default_factory=dict)
    not_decoded: int = 0
    problems: ProblemTally = field(default_factory=ProblemTally)
    truncated: int = 0
    removed: int = 0
    manifest: str = ""

    def skip(self, reason: str) -> None:
        self.skipped[reason] = self.skipped.get(reason, 0) + 1

    def to_json(self) -> dict[str, object]:
        """The ``--json`` report: the attributes above, ``problems`` as the listed text
        plus ``problem_counts``, ``problems_total`` and ``problems_not_listed``."""
        out: dict[str, object] = {k: v for k, v in vars(self).items() if k != "problems"}
        out.update(self.problems.to_json())
        return out


def _mime(rec: WarcRecord) -> str | None:
    if rec.http is not None:
        return rec.http.mime
    ct = rec.headers.content_type
    return ct.split(";", 1)[0].strip().lower() if ct else None


def _capture(rec: WarcRecord, path: str) -> Capture | None:
    url = rec.target_uri
    if not url:
        return None
    date = rec.date  # None when WARC-Date does not parse (ClueWeb09: 2008-10-294T…)
    digest = rec.headers.payload_digest
    return Capture(
        url=url,
        timestamp=to_timestamp14(date) if date is not None else "",
        warc_date=rec.headers.date_str or "",
        record_type=rec.type,
        status=rec.http_status,
        mime=_mime(rec),
        warc_file=path,
        offset=rec.offset,
        digest=digest_key(digest) if digest else None,
        source_file=path,
        source_offset=rec.offset,
    )


def same_file_key(url: str) -> str:
    """What makes two URLs one file of the tree: ``http://example.com``,
    ``https://example.com/`` and ``http://example.com:80/`` are one page (scheme,
    default port and the empty path do not matter); the latest capture of any of them
    is the one extracted."""
    try:
        return "/".join(url_to_path(url))
    except UnsupportedUrl:
        return url


class CaptureSurvey:
    """Pass 1: the captures to extract, per URL (see the module docstring)."""

    def __init__(self, *, all_captures: bool, include_revisits: bool, report: ExtractReport):
        self.all_captures = all_captures
        self.include_revisits = include_revisits
        self.report = report
        self.by_url: dict[str, list[Capture]] = {}  # same_file_key -> captures
        self.originals: dict[str, tuple[str, int, str | None]] = {}
        self.revisits: list[Capture] = []

    def _keep(self, cap: Capture) -> None:
        key = same_file_key(cap.url)
        have = self.by_url.get(key)
        if have is None:
            self.by_url[key] = [cap]
        elif self.all_captures:
            have.append(cap)
        else:
            old = have[0]
            if (cap.timestamp, cap.record_type != "revisit") > (
                old.timestamp, old.record_type != "revisit"
            ):
                have[0] = cap
            # two URLs that land on one file (``/`` and ``/index.html``) are not two
            # captures of one URL: say so rather than "older"
            self.report.skip("older-capture" if old.url == cap.url else "same-file-url")

    def add_file(self, path: str) -> None:
        reader = ArchiveReader(path)
        before = self.report.records
        problems = self.report.problems
        errors_before = problems.total
        for rec in reader:
            self.report.records += 1
            if reader.problems:  # counted as they come, not kept (bounded memory)
                problems.add_reader_errors(reader.problems)
                reader.problems.clear()
            rtype = rec.type
            if rtype not in ("response", "resource", "revisit"):
                continue
            if rtype == "response":
                status = rec.http_status
                if status is None or not 200 <= status < 300:
                    self.report.skip("not-2xx" if status is not None else "no-http-status")
                    continue
            cap = _capture(rec, path)
            if cap is None:
                self.report.skip("no-url")
                continue
            if rtype == "revisit":
                if self.include_revisits:
                    self.revisits.append(cap)
                else:
                    self.report.skip("revisit")
                continue
            if cap.digest and cap.digest not in self.originals:
                self.originals[cap.digest] = (path, rec.offset, cap.mime)
            self._keep(cap)
        problems.add_reader_errors(reader.problems)
        reader.problems.clear()
        if self.report.records == before and problems.total == errors_before:
            problems.add("empty-file",
                         f"{path} @ 0: error: no WARC or ARC record found (empty file?)")

    def finish(self) -> list[Capture]:
        """Resolve revisits against the originals seen, then return every kept capture,
        sorted by URL then timestamp."""
        for cap in self.revisits:
            orig = self.originals.get(cap.digest) if cap.digest else None
            if orig is None:
                self.report.skip("revisit-unresolved")
                continue
            self._keep(replace(cap, source_file=orig[0], source_offset=orig[1],
                               mime=cap.mime or orig[2]))
        self.revisits = []
        out = [c for caps in self.by_url.values() for c in caps]
        out.sort(key=lambda c: (c.url, c.timestamp))
        return out


def plan_paths(captures: Sequence[Capture], *, all_captures: bool,
               report: ExtractReport) -> list[Capture]:
    """Pass 2: give every capture a unique, safe relative path (module docstring).
    Captures whose URL has no place in a tree are dropped (``unsupported-url``)."""
    wanted: list[tuple[tuple[str, ...], Capture]] = []
    for cap in captures:
        try:
            parts = url_to_path(cap.url, html=cap.is_html)
        except UnsupportedUrl:
            report.skip("unsupported-url")
            continue
        if all_captures:
            parts = (*parts[:-1], with_suffix_tag(parts[-1], cap.timestamp or "undated"))
        wanted.append((parts, cap))
    # folders every file needs, by case-folded path -> the spelling seen first
    folders: dict[tuple[str, ...], tuple[str, ...]] = {}
    for parts, _ in sorted(wanted, key=lambda w: w[0]):
        for i in range(1, len(parts)):
            key = tuple(p.casefold() for p in parts[:i])
            if key not in folders:
                parent = folders.get(key[:-1], ()) if i > 1 else ()
                folders[key] = (*parent, parts[i - 1])
    used: set[tuple[str, ...]] = set()
    out: list[Capture] = []
    moved: list[tuple[tuple[str, ...], Capture]] = []
    for parts, cap in wanted:
        folded = tuple(p.casefold() for p in parts)
        if folded in folders:  # another capture needs this name as a folder
            moved.append(((*parts, "index.html"), cap))
            continue
        out.append(_claim(parts, cap, folders, used))
    for parts, cap in moved:
        out.append(_claim(parts, cap, folders, used))
    return out


def _claim(parts: tuple[str, ...], cap: Capture,
           folders: dict[tuple[str, ...], tuple[str, ...]],
           used: set[tuple[str, ...]]) -> Capture:
    key = tuple(p.casefold() for p in parts[:-1])
    parent = folders.get(key, parts[:-1]) if key else ()
    name = parts[-1]
    n = 1
    candidate = (*parent, name)
    while (folded := tuple(p.casefold() for p in candidate)) in used or folded in folders:
        n += 1
        candidate = (*parent, with_suffix_tag(name, f"~{n}"))
    used.add(folded)
    return replace(cap, path=candidate)


# --- pass 3: writing -----------------------------------------------------------------


def _open_dir(parent_fd: int, name: str, create: bool) -> int:
    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW
    try:
        return os.open(name, flags, dir_fd=parent_fd)
    except FileNotFoundError:
        if not create:
            raise
        os.mkdir(name, 0o755, dir_fd=parent_fd)
        return os.open(name, flags, dir_fd=parent_fd)
    except OSError as e:
        if e.errno in (errno.ELOOP, errno.ENOTDIR):
            raise UnsafeOutput(
                f"{name!r} in the output folder is a symlink or a file, not a folder: "
                "refusing to write through it"
            ) from None
        raise


class TreeWriter:
    """Writes files under ``root`` by path components, never following symlinks.

    Args:
        root: the output folder (created; must not itself be a symlink).

    Raises:
        UnsafeOutput: ``root`` is a symlink, or a component on the way is.
    """

    def __init__(self, root: str | os.PathLike[str]):
        self.root = os.path.abspath(os.fspath(root))
        os.makedirs(self.root, exist_ok=True)
        if os.path.islink(self.root):
            raise UnsafeOutput(f"output folder {self.root} is a symlink")
        self._root_fd = os.open(self.root, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
        self._temp = 0

    def close(self) -> None:
        os.close(self._root_fd)

    @contextlib.contextmanager
    def open(self, parts: Sequence[str]) -> Iterator[BinaryIO]:
        """Create ``root/parts…`` for writing (replacing a regular file of that name
        from an earlier run, never a symlink), as a context manager.

        The bytes go to a temporary ``_webark_partial_N`` file beside the target (a name
        no URL maps to), renamed to the target only when the ``with`` block ends
        without an error: an interrupted run (Ctrl-C, full disk) never leaves a cut
        file under a name that looks finished.
        """
        _check_parts(parts)
        fd = self._root_fd
        opened: list[int] = []
        try:
            for name in parts[:-1]:
                fd = _open_dir(fd, name, create=True)
                opened.append(fd)
            name = parts[-1]
            try:
                st = os.lstat(name, dir_fd=fd)
            except FileNotFoundError:
                st = None
            if st is not None and not stat.S_ISREG(st.st_mode):
                raise UnsafeOutput(
                    f"{'/'.join(parts)} exists and is not a regular file (symlink?)"
                )
            self._temp += 1
            temp = f"{PARTIAL_PREFIX}{os.getpid()}_{self._temp}"
            with contextlib.suppress(FileNotFoundError):
                os.unlink(temp, dir_fd=fd)
            renamed = False
            try:  # from creation to rename: an interrupt anywhere leaves no partial file
                out = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW,
                              0o644, dir_fd=fd)
                with os.fdopen(out, "wb") as f:
                    yield f
                os.rename(temp, name, src_dir_fd=fd, dst_dir_fd=fd)
                renamed = True
            except BaseException:
                if not renamed:
                    with contextlib.suppress(OSError):
                        os.unlink(temp, dir_fd=fd)
                raise
        finally:
            for d in opened:
                os.close(d)


    def remove(self, parts: Sequence[str]) -> bool:
        """Delete the regular file ``root/parts…`` and then the folders on its way that
        this leaves empty (never ``root``), without following any symlink.

        Returns:
            True when a file was deleted; False when there is none (missing, or a
            symlink, folder or other non-regular file there or on the way: left alone).

        Raises:
            UnsafeOutput: a component is not a plain name (``..``, ``/``, NUL, empty).
        """
        _check_parts(parts)
        fd = self._root_fd
        opened: list[int] = []
        try:
            for name in parts[:-1]:
                try:
                    fd = _open_dir(fd, name, create=False)
                except (FileNotFoundError, UnsafeOutput):
                    return False
                opened.append(fd)
            try:
                st = os.lstat(parts[-1], dir_fd=fd)
            except FileNotFoundError:
                return False
            if not stat.S_ISREG(st.st_mode):
                return False
            os.unlink(parts[-1], dir_fd=fd)
            for i in range(len(opened) - 1, -1, -1):  # innermost folder first
                try:
                    os.rmdir(parts[i], dir_fd=opened[i - 1] if i else self._root_fd)
                except OSError:  # not empty (or gone): the folders above are not either
                    break
            return True
        finally:
            for d in opened:
                os.close(d)


def _check_parts(parts: Sequence[str]) -> None:
    if not parts:
        raise UnsafeOutput("empty path")
    for p in parts:
        if not p or p in (".", "..") or "/" in p or "\0" in p:
            raise UnsafeOutput(f"unsafe path component {p!r}")


def _payload(rec: WarcRecord) -> tuple[BinaryIO, bool]:
    """The payload with Content-Encoding undone, and whether decoding worked."""
    h = rec.http
    if h is not None and h.content_encoding and h.content_encoding != "identity":
        try:
            return rec.payload_stream(decode_content_encoding=True), True
        except ValueError:
            return rec.payload_stream(), False
    return rec.payload_stream(), True


Progress = Callable[[int, int], None]
"""``(files written, files planned)``."""


def _by_source(planned: Iterable[Capture]) -> dict[str, dict[int, list[Capture]]]:
    out: dict[str, dict[int, list[Capture]]] = {}
    for cap in planned:
        out.setdefault(cap.source_file, {}).setdefault(cap.source_offset, []).append(cap)
    return out


def _iter_needed(path: str, offsets: dict[int, list[Capture]]) -> Iterator[WarcRecord]:
    remaining = len(offsets)
    reader = ArchiveReader(path)
    for rec in reader:
        reader.problems.clear()  # reported by the survey; not kept twice
        if rec.offset in offsets:
            yield rec
            remaining -= 1
            if remaining == 0:
                return


def extract(
    warcs: Sequence[str | os.PathLike[str]],
    outdir: str | os.PathLike[str],
    *,
    all_captures: bool = False,
    include_revisits: bool = False,
    manifest_format: ManifestFormat = "csv",
    replace: bool = False,
    progress: Progress | None = None,
) -> ExtractReport:
    """Extract ``warcs`` into ``outdir`` (see the module docstring).

    ``outdir`` must be new or empty, or hold an earlier extract and ``replace`` be True
    (:mod:`webark.tools.extract_previous`): then the files the earlier manifest (or an
    interrupted run's pending list) names are overwritten or, when this run does not
    write them, removed; nothing else in ``outdir`` is deleted or overwritten. The
    pending list ``_webark_pending.json`` is written before anything else changes and
    removed after the manifest, so an interrupted run can be finished with ``replace``.

    Returns:
        An :class:`ExtractReport`.

    Raises:
        OutputInUse: ``outdir`` is not empty and holds no earlier extract; or holds one
            and ``replace`` is False; or a file to write is there unlisted (checked
            after the survey, before anything is changed).
        UnsafeOutput: the output folder holds a symlink or file where a folder is
            needed (nothing is written through it).
        OSError: a (W)ARC cannot be read or a file cannot be written.
    """
    report = ExtractReport()
    survey = CaptureSurvey(all_captures=all_captures, include_revisits=include_revisits,
                           report=report)
    paths = [os.fspath(w) for w in warcs]
    for p in paths:
        survey.add_file(p)
    captures = survey.finish()
    report.captures = len(captures)
    planned = plan_paths(captures, all_captures=all_captures, report=report)
    prev = previous_extract(outdir)
    targets = {cap.path for cap in planned}
    check_may_write(prev, targets, replace=replace)
    tree = TreeWriter(outdir)
    rows: list[dict[str, object]] = []
    try:
        owned = prev.files if prev is not None else set()
        with tree.open([PENDING_NAME]) as f:  # first: what this run may leave behind
            f.write(pending_json(targets | owned))
        for name in MANIFEST_FILES:  # the earlier manifest no longer describes the tree
            tree.remove([name])
        for stale in sorted(owned - targets):
            report.removed += tree.remove(stale)
        for source, offsets in _by_source(planned).items():
            for rec in _iter_needed(source, offsets):
                cut = truncation(rec)
                for cap in offsets[rec.offset]:
                    stream, decoded = _payload(rec)
                    with stream, tree.open(cap.path) as out:
                        n = 0
                        while chunk := stream.read(_CHUNK):
                            out.write(chunk)
                            n += len(chunk)
                    report.files += 1
                    report.bytes += n
                    report.not_decoded += not decoded
                    if cut:
                        report.truncated += 1
                        report.problems.add(
                            "truncated-payload",
                            f"{cap.source_file} @ {cap.source_offset}: payload of {cap.url} "
                            f"is incomplete ({cut}); written as {'/'.join(cap.path)}, "
                            "flagged in the manifest's truncated column"
                        )
                    rows.append(_row(cap, n, decoded, cut))
                    if progress is not None:
                        progress(report.files, len(planned))
        rows.sort(key=lambda r: str(r["file"]))
        report.manifest = _write_manifest(tree, rows, manifest_format)
        tree.remove([PENDING_NAME])
    finally:
        tree.close()
    return report


def truncation(rec: WarcRecord) -> str:
    """Why ``rec``'s payload is incomplete, or ``""``: its ``WARC-Truncated`` value
    (WARC 1.1 §5.13: ``length``, ``time``, ``disconnect``, ``unspecified``), else
    ``file-ends-early`` when the block holds fewer bytes than its Content-Length (a
    cut file, as :mod:`webark.warc.convert` marks it)."""
    value = rec.headers.get("WARC-Truncated")
    if value:
        return value
    declared = rec.headers.content_length
    if declared is not None and declared > rec.block.size:
        return "file-ends-early"
    return ""


def _row(cap: Capture, size: int, decoded: bool, cut: str = "") -> dict[str, object]:
    revisit = cap.record_type == "revisit"
    return {
        "file": "/".join(cap.path),
        "url": cap.url,
        "timestamp": cap.timestamp,
        "warc_date": cap.warc_date,
        "record_type": cap.record_type,
        "status": cap.status if cap.status is not None else "",
        "mime": cap.mime or "",
        "warc_file": os.path.basename(cap.warc_file),
        "offset": cap.offset,
        "original_file": os.path.basename(cap.source_file) if revisit else "",
        "original_offset": cap.source_offset if revisit else "",
        "bytes": size,
        "decoded": decoded,
        "truncated": cut,
    }


def _write_manifest(tree: TreeWriter, rows: list[dict[str, object]],
                    fmt: ManifestFormat) -> str:
    name = f"{MANIFEST_NAME}.{fmt}"
    with tree.open([name]) as raw:
        if fmt == "json":
            raw.write(json.dumps(rows, indent=1, ensure_ascii=False).encode("utf-8"))
        else:
            text = io.TextIOWrapper(raw, encoding="utf-8", newline="")
            w = csv.DictWriter(text, fieldnames=MANIFEST_FIELDS)
            w.writeheader()
            w.writerows(rows)
            text.flush()
            text.detach()
    return os.path.join(tree.root, name)


__all__ = [
    "MANIFEST_FIELDS",
    "MANIFEST_NAME",
    "Capture",
    "CaptureSurvey",
    "ExtractReport",
    "OutputInUse",
    "TreeWriter",
    "UnsafeOutput",
    "extract",
    "plan_paths",
]
