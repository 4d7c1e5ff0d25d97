"""Writing WARC files: :class:`WarcWriter` (rotation, naming, ``.open`` files, per-record
compression, warcinfo first) and :class:`AsyncWarcWriter` for asyncio code.

Files (DESIGN.md "Formats → WARC", Heritrix 3 and warcprox behaviour):

- named by a template, default ``{prefix}-{timestamp17}-{serial:05d}-{pid}~{host}~{port}{ext}``
  (Heritrix's ``${prefix}-${timestamp17}-${serialno}-${heritrix.pid}~${heritrix.hostname}~
  ${heritrix.port}``), written as ``NAME.open`` and renamed to ``NAME`` when finished;
  after an I/O error (a full disk) the file is cut back to its last complete record
  and finished under its final name (``NAME.invalid`` only if it cannot be cut), and
  the next write starts a new file;
- each file starts with a warcinfo record (WARC 1.1 §6.1) naming it in WARC-Filename, and
  every record the writer completes gets ``WARC-Warcinfo-ID`` (§5.14);
- compression per record (WARC 1.1 Annex D): ``gzip`` (default, one gzip member per
  record, mtime 0, by isal at :data:`~webark.warc.serialize.GZIP_LEVEL`), ``zstd`` (one
  frame per record with Frame_Content_Size and Content_Checksum, no dictionary: IIPC
  warc-zstd proposal, ``.warc.zst``) or ``none`` — the bytes of
  :mod:`webark.warc.serialize`, shared with ``warc recompress``;
- rotation by size: the next file is started *before* a write would make the current one
  pass ``max_size`` bytes on disk, unless the current file holds only its warcinfo
  (then the record is written there: a record is never split, WARC 1.1 §7 forbids
  segmenting what fits in a new file);
- optional hybrid compression ("To ZIP or not to ZIP"): captures of already-compressed
  media (:func:`is_already_compressed`) go to a second series of uncompressed ``.warc``
  files, with their own warcinfo, so replay can seek for range requests.

Crash safety: the records of one ``write()`` call are serialized and compressed first,
then written with ``os.write`` loops (no user-space buffer to flush), so a process killed
at any moment leaves every record of earlier calls complete and readable; only the last
record can be cut short. With ``fsync=True`` each write is also forced to disk (survives a
power cut). Memory: a group under 1 MiB is compressed in memory and written with one
``os.write`` loop; a larger block is compressed 1 MiB at a time from a view of the block
(or reads of a block spooled to disk), its output kept in memory up to 16 MiB and then in
a temporary file, and written piece by piece (an uncompressed one straight from the
block): writing an N-byte block costs about min(N, 16 MiB) of extra memory.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
import socket
import tempfile
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import BinaryIO

import zstandard
from isal import isal_zlib

from webark.core.errors import InvalidRecordError, WebarkError
from webark.warc.builders import RecordBuilder, WarcinfoFields
from webark.warc.check import check_block_digest, check_payload_digest
from webark.warc.headers import WarcHeaders
from webark.warc.record import SPOOL_LIMIT, WarcRecord
from webark.warc.serialize import GZIP_LEVEL, Codec, compress_member, serialize
from webark.warc.validate_fields import KNOWN_PROFILES, field_problems

EXTENSIONS: dict[str, str] = {"gzip": ".warc.gz", "zstd": ".warc.zst", "none": ".warc"}
DEFAULT_TEMPLATE = "{prefix}-{timestamp17}-{serial:05d}-{pid}~{host}~{port}{ext}"
"""File-name template; fields: prefix, timestamp17 (``YYYYMMDDhhmmssSSS``, UTC),
timestamp14, serial, pid, host, port, ext (``.warc.gz``, ``.warc.zst`` or ``.warc``)."""
OPEN_SUFFIX = ".open"
INVALID_SUFFIX = ".invalid"
DEFAULT_MAX_SIZE = 10**9
"""Rotate before a file would pass 1 GB (10^9 bytes), as Heritrix and DESIGN.md."""

_TRAILER = b"\r\n\r\n"
_PIECE = 1 << 20

_MEDIA_COMPRESSED = frozenset(
    {
        "application/zip",
        "application/gzip",
        "application/x-gzip",
        "application/x-7z-compressed",
        "application/x-rar-compressed",
        "application/vnd.rar",
        "application/x-bzip2",
        "application/x-xz",
        "application/zstd",
        "application/x-zstd",
        "application/pdf",
        "application/java-archive",
        "application/vnd.android.package-archive",
        "application/ogg",
        "application/mp4",
        "font/woff",
        "font/woff2",
        "application/font-woff",
        "application/x-font-woff",
    }
)
_IMAGE_UNCOMPRESSED = frozenset(
    {
        "image/svg+xml",
        "image/bmp",
        "image/x-ms-bmp",
        "image/x-icon",
        "image/vnd.microsoft.icon",
        "image/tiff",
        "image/x-portable-anymap",
    }
)


def is_already_compressed(media_type: str | None) -> bool:
    """True for payloads that gzip cannot shrink much and that replay may need to seek in:
    ``video/*``, ``audio/*``, ``image/*`` except the uncompressed or textual formats (SVG,
    BMP, ICO, TIFF, PNM), archives (zip, gzip, 7z, rar, bzip2, xz, zstd, jar, apk, any
    ``+zip`` type, OOXML and ODF documents), WOFF fonts, and PDF (its streams are already
    Flate-compressed — gzip saves a few percent — and pdf.js reads it by byte ranges).

    Content-Encoding is not considered: a gzip- or br-encoded HTML page stays in the
    compressed series (its headers still compress and nobody seeks in it).

    Args:
        media_type: an HTTP Content-Type value (parameters are ignored) or None.
    """
    if not media_type:
        return False
    mt = media_type.split(";", 1)[0].strip().lower()
    if mt.startswith(("video/", "audio/")):
        return True
    if mt.startswith("image/"):
        return mt not in _IMAGE_UNCOMPRESSED
    return (
        mt in _MEDIA_COMPRESSED
        or mt.endswith("+zip")
        or mt.startswith(
            (
                "application/vnd.openxmlformats-officedocument.",
                "application/vnd.oasis.opendocument.",
            )
        )
    )


def _check(record: WarcRecord, allow_unknown_profile: bool = False) -> None:
    """Raise InvalidRecordError for a record that would make the file invalid: field
    rules, Content-Length against the block, a revisit profile outside
    :data:`~webark.warc.validate_fields.KNOWN_PROFILES` (unless allowed), an ``application/http``
    request or response whose block is not an HTTP message, and supplied digests that do
    not match (checked as ``webark warc check`` does; builder records remember their
    digests, so this costs no second hashing for them)."""
    problems = field_problems(record.version, record.headers)
    declared = record.headers.get("Content-Length")
    if declared is not None and declared.strip().isdigit() and int(declared) != record.block.size:
        problems.append(
            (
                "content-length-mismatch",
                f"Content-Length {declared.strip()} but the block has {record.block.size} bytes",
            )
        )
    rtype = record.type
    profile = (record.headers.profile or "").strip()
    if rtype == "revisit" and profile and profile not in KNOWN_PROFILES and not (
        allow_unknown_profile
    ):
        problems.append(
            (
                "unknown-profile",
                f"unknown revisit profile {profile!r} (known: the identical-payload-digest "
                "and server-not-modified profiles of WARC 1.1 §6.7 and earlier drafts; "
                "WarcWriter(allow_unknown_profile=True) writes others)",
            )
        )
    content_type = (record.headers.content_type or "").lower()
    if (
        rtype in ("response", "request")
        and "application/http" in content_type
        and record.http is None
    ):
        what = "empty" if record.block.size == 0 else f"not an HTTP {rtype}"
        problems.append(
            (
                "not-http",
                f"Content-Type {record.headers.content_type!r} but the block is {what}",
            )
        )
    if not problems:  # digests last: the block is hashed unless its digest is remembered
        for res in (check_block_digest(record), check_payload_digest(record)):
            if res is not None and res.status in ("mismatch", "invalid"):
                problems.append(
                    (
                        f"{res.field.lower()}-{res.status}",
                        f"{res.detail} (a supplied digest must match the block)",
                    )
                )
    if problems:
        what = f"{record.type or '?'} record {record.record_id or ''}".rstrip()
        if record.target_uri:
            what += f" for {record.target_uri}"
        details = "; ".join(f"{code}: {msg}" for code, msg in problems)
        raise InvalidRecordError(f"refusing to write {what}: {details}")


def _with_warcinfo_id(record: WarcRecord, warcinfo_id: str) -> WarcRecord:
    """The record with WARC-Warcinfo-ID inserted before its digests/Content-* fields."""
    fields = list(record.headers.fields)
    tail = ("warc-block-digest", "warc-payload-digest", "content-type", "content-length")
    at = next((i for i, (n, _) in enumerate(fields) if n.lower() in tail), len(fields))
    fields.insert(at, ("WARC-Warcinfo-ID", warcinfo_id))
    return dataclasses.replace(record, headers=WarcHeaders(fields))


def _stream_compressor(
    codec: Codec, total: int
) -> Callable[[bytes | memoryview | None], bytes | memoryview]:
    """Piecewise :func:`~webark.warc.serialize.compress_member` (same codec settings) for
    a record of ``total`` bytes: call with each piece, then with None to finish."""
    if codec == "none":
        return lambda data: data if data is not None else b""
    if codec == "zstd":
        cctx = zstandard.ZstdCompressor(level=3, write_content_size=True, write_checksum=True)
        zobj = cctx.compressobj(size=total)
        return lambda data: zobj.compress(data) if data is not None else zobj.flush()
    gobj = isal_zlib.compressobj(GZIP_LEVEL, isal_zlib.DEFLATED, 16 + isal_zlib.MAX_WBITS)
    return lambda data: gobj.compress(data) if data is not None else gobj.flush()


Stored = list[bytes | memoryview] | BinaryIO
"""The stored bytes of one record: buffers in memory, or a temporary file at position 0."""


class _Spool:
    """Collects compressed output in memory and moves it to a temporary file once it
    passes :data:`~webark.warc.record.SPOOL_LIMIT` bytes."""

    def __init__(self) -> None:
        self.parts: list[bytes | memoryview] = []
        self.size = 0
        self.file: BinaryIO | None = None

    def write(self, data: bytes | memoryview) -> None:
        if not data:
            return
        if self.file is None and self.size + len(data) > SPOOL_LIMIT:
            self.file = tempfile.TemporaryFile(prefix="webark-member-")  # noqa: SIM115
            for part in self.parts:
                self.file.write(part)
            self.parts = []
        if self.file is not None:
            self.file.write(data)
        else:
            self.parts.append(data)
        self.size += len(data)

    def result(self) -> Stored:
        if self.file is None:
            return self.parts
        self.file.seek(0)
        return self.file


def _encode(record: WarcRecord, codec: Codec) -> Stored:
    """The stored bytes of ``record``: one gzip member / zstd frame of its serialization
    (WARC 1.1 §4).

    Small records are serialized and compressed in one go. A larger block is never
    copied whole: uncompressed, the stored bytes are the header, the block itself (a
    view) and CRLF CRLF; compressed, the block is fed to the compressor 1 MiB at a
    time (a view of an in-memory block, reads of a spooled one) and the output is kept
    in memory up to 16 MiB, then in a temporary file. So writing a block of N bytes
    needs about min(N, 16 MiB) of extra memory, not several copies of N."""
    block = record.block
    if block.in_memory and block.size <= _PIECE:
        return [compress_member(serialize(record), codec)]
    head = record.headers.to_bytes(record.version)
    if codec == "none" and block.in_memory:
        return [head, memoryview(block.read_all()), _TRAILER]
    step = _stream_compressor(codec, len(head) + block.size + len(_TRAILER))
    out = _Spool()
    out.write(step(head))
    if block.in_memory:
        view = memoryview(block.read_all())
        for i in range(0, block.size, _PIECE):
            out.write(step(view[i : i + _PIECE]))
    else:
        with block.open() as f:
            while piece := f.read(_PIECE):
                out.write(step(piece))
    out.write(step(_TRAILER))
    out.write(step(None))
    return out.result()


def _size(data: Stored) -> int:
    if isinstance(data, list):
        return sum(len(p) for p in data)
    return os.fstat(data.fileno()).st_size


def _close(data: Stored) -> None:
    if not isinstance(data, list):
        data.close()


def _write_all(fd: int, data: bytes | memoryview) -> int:
    view = memoryview(data)
    done = 0
    while done < len(view):
        done += os.write(fd, view[done:])
    return done


@dataclass
class _OpenFile:
    path: str  # final name, without .open
    fd: int
    warcinfo_id: str | None
    bytes_written: int = 0
    only_warcinfo: bool = True


class _Series:
    """One sequence of files (the main series, or the uncompressed one of hybrid mode)."""

    def __init__(self, owner: WarcWriter, compression: Codec):
        self.owner = owner
        self.codec = compression
        self.ext = EXTENSIONS[compression]
        self.serial = 0
        self.current: _OpenFile | None = None
        self.paths: list[str] = []

    # -- files ------------------------------------------------------------------------
    def _name(self) -> str:
        o = self.owner
        now = o.builder.clock()
        ts14 = now.strftime("%Y%m%d%H%M%S")
        return o.template.format(
            prefix=o.prefix,
            timestamp17=f"{ts14}{now.microsecond // 1000:03d}",
            timestamp14=ts14,
            serial=self.serial,
            pid=os.getpid(),
            host=o.host,
            port=o.port,
            ext=self.ext,
        )

    def _open(self, first: WarcRecord | None) -> _OpenFile:
        """Create ``NAME.open`` (never overwriting) and write its warcinfo, unless the
        caller's group starts with its own warcinfo (``first``)."""
        while True:
            path = os.path.join(self.owner.directory, self._name())
            self.serial += 1
            if os.path.exists(path):
                continue
            try:
                fd = os.open(path + OPEN_SUFFIX, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            except FileExistsError:
                continue
            break
        self.paths.append(path)
        if first is not None and first.type == "warcinfo":
            self.current = _OpenFile(path, fd, None)
            return self.current
        info = self.owner.builder.warcinfo(self.owner.warcinfo, os.path.basename(path))
        self.current = _OpenFile(path, fd, info.record_id)
        try:
            self._put(self.current, [_encode(info, self.codec)])
        except OSError:
            self.fail(0)
            raise
        return self.current

    def close(self) -> None:
        cur, self.current = self.current, None
        if cur is None:
            return
        if self.owner.fsync:
            os.fsync(cur.fd)
        os.close(cur.fd)
        os.rename(cur.path + OPEN_SUFFIX, cur.path)
        if self.owner.fsync:
            _fsync_dir(os.path.dirname(cur.path) or ".")

    def fail(self, complete: int | None = None) -> None:
        """After an I/O error (a full disk, most often) while writing at offset
        ``complete``, the end of the last complete record: cut the file back there and
        finish it as a valid WARC under its final name; a file left with no record at
        all is removed. When it cannot be cut (or ``complete`` is None) it is closed and
        renamed ``NAME.invalid`` (best effort): it may end in a partial record."""
        cur, self.current = self.current, None
        if cur is None:
            return
        if complete is not None:
            try:
                os.ftruncate(cur.fd, complete)
                cur.bytes_written = complete
            except OSError:
                complete = None
        with contextlib.suppress(OSError):
            os.close(cur.fd)
        if complete == 0:
            with contextlib.suppress(OSError):
                os.unlink(cur.path + OPEN_SUFFIX)
                self.paths.remove(cur.path)
                return
        if complete is not None:
            with contextlib.suppress(OSError):
                os.rename(cur.path + OPEN_SUFFIX, cur.path)
                return
        with contextlib.suppress(OSError):
            os.rename(cur.path + OPEN_SUFFIX, cur.path + INVALID_SUFFIX)
        self.paths[self.paths.index(cur.path)] = cur.path + INVALID_SUFFIX

    # -- records ----------------------------------------------------------------------
    def _put(self, cur: _OpenFile, encoded: Sequence[Stored]) -> None:
        small = all(isinstance(e, list) for e in encoded) and sum(map(_size, encoded)) <= _PIECE
        if small:  # the usual case: one write for the group
            parts = [p for e in encoded for p in e]
            cur.bytes_written += _write_all(cur.fd, b"".join(parts))
        else:
            for e in encoded:
                if isinstance(e, list):
                    for part in e:
                        cur.bytes_written += _write_all(cur.fd, part)
                    continue
                with e:
                    while piece := e.read(_PIECE):
                        cur.bytes_written += _write_all(cur.fd, piece)
        if self.owner.fsync:
            os.fsync(cur.fd)

    def _prepare(
        self, cur: _OpenFile, records: Sequence[WarcRecord]
    ) -> tuple[list[WarcRecord], list[Stored]]:
        linked = []
        info_id = cur.warcinfo_id
        for r in records:
            if r.type == "warcinfo":
                info_id = r.record_id
            elif self.owner.link_warcinfo and info_id and "WARC-Warcinfo-ID" not in r.headers:
                r = _with_warcinfo_id(r, info_id)
            linked.append(r)
        return linked, [_encode(r, self.codec) for r in linked]

    def write(self, records: Sequence[WarcRecord]) -> list[WarcRecord]:
        cur = self.current or self._open(records[0])
        linked, encoded = self._prepare(cur, records)
        total = sum(_size(e) for e in encoded)
        if not cur.only_warcinfo and cur.bytes_written + total > self.owner.max_size:
            self.close()
            cur = self._open(records[0])
            for e in encoded:
                _close(e)
            linked, encoded = self._prepare(cur, records)
        offset = cur.bytes_written
        try:
            sizes = [_size(e) for e in encoded]
            self._put(cur, encoded)
        except OSError:
            self.fail(offset)
            raise
        cur.only_warcinfo = False
        for r in linked:
            if r.type == "warcinfo":
                cur.warcinfo_id = r.record_id
        out = []
        # lengths as the reader and CDX lines give them: the member for compressed files,
        # the record without its CRLF CRLF terminator for uncompressed ones
        terminator = 4 if self.codec == "none" else 0
        for r, size in zip(linked, sizes, strict=True):
            out.append(dataclasses.replace(r, path=cur.path, offset=offset,
                                           length=size - terminator))
            offset += size
        return out

    def write_stored(self, member: bytes) -> tuple[str, int, int]:
        cur = self.current or self._open(None)
        if not cur.only_warcinfo and cur.bytes_written + len(member) > self.owner.max_size:
            self.close()
            cur = self._open(None)
        offset = cur.bytes_written
        try:
            self._put(cur, [[member]])
        except OSError:
            self.fail(offset)
            raise
        cur.only_warcinfo = False
        return cur.path, offset, len(member) - (4 if self.codec == "none" else 0)


def _fsync_dir(path: str) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class WarcWriter:
    """Writes WARC records to a rotating series of files in ``directory``.

    Usage::

        with WarcWriter("warcs", prefix="CRAWL", warcinfo=WarcinfoFields.for_this_host(
                operator="Web Archive <archive@example.org>")) as w:
            w.write(*w.builder.exchange(url, response_bytes, request_bytes,
                                        ip_address="93.184.216.34"))

    Args:
        directory: where the files go (created, with its parents, when missing).
        prefix: first part of the file names.
        compression: ``"gzip"`` (default), ``"zstd"`` or ``"none"``.
        max_size: rotate before a file would pass this many bytes on disk (default 10^9).
        template: file-name template (see :data:`DEFAULT_TEMPLATE`; must contain
            ``{ext}``).
        warcinfo: the block of every file's warcinfo record (default:
            :meth:`WarcinfoFields.for_this_host`).
        builder: version, digest algorithm, clock and record ids of the records the
            writer makes (warcinfo) and that callers make with :attr:`builder`.
        hybrid: route captures of already-compressed media to uncompressed ``.warc``
            files: True for :func:`is_already_compressed`, or a predicate on the HTTP
            Content-Type (resource/conversion: the record's Content-Type). Ignored with
            ``compression="none"``.
        fsync: ``os.fsync`` after every write, on close and the directory after rename.
        link_warcinfo: add WARC-Warcinfo-ID to records that lack it (default True).
        host: host name in file names (default: this machine's, ``/`` replaced).
        port: port number in file names (Heritrix's web UI port; default 0).
        allow_unknown_profile: write revisit records whose WARC-Profile is none of
            the known profiles (WARC 1.1 §6.7.3 allows others; refused by default, as
            a typo there makes a revisit unresolvable).

    Raises:
        ValueError: a bad template, max_size or compression.
    """

    def __init__(
        self,
        directory: str | os.PathLike[str],
        *,
        prefix: str = "WEBARK",
        compression: Codec = "gzip",
        max_size: int = DEFAULT_MAX_SIZE,
        template: str = DEFAULT_TEMPLATE,
        warcinfo: WarcinfoFields | None = None,
        builder: RecordBuilder | None = None,
        hybrid: bool | Callable[[str | None], bool] = False,
        fsync: bool = False,
        link_warcinfo: bool = True,
        host: str | None = None,
        port: int = 0,
        allow_unknown_profile: bool = False,
    ):
        if compression not in EXTENSIONS:
            raise ValueError(f"unknown compression {compression!r}")
        if max_size <= 0:
            raise ValueError("max_size must be positive")
        if "{ext}" not in template:
            raise ValueError("the file-name template must contain {ext}")
        try:
            template.format(
                prefix="", timestamp17="", timestamp14="", serial=0, pid=0, host="", port=0, ext=""
            )
        except (KeyError, IndexError, ValueError) as e:
            raise ValueError(f"bad file-name template {template!r}: {e!r}") from e
        self.directory = os.fspath(directory)
        os.makedirs(self.directory, exist_ok=True)
        self.prefix = prefix
        self.compression: Codec = compression
        self.max_size = max_size
        self.template = template
        self.builder = builder or RecordBuilder()
        self.warcinfo = warcinfo or WarcinfoFields.for_this_host()
        self.fsync = fsync
        self.link_warcinfo = link_warcinfo
        self.host = (host or socket.gethostname()).replace("/", "-")
        self.port = port
        self.allow_unknown_profile = allow_unknown_profile
        self._lock = threading.Lock()
        self._closed = False
        self._main = _Series(self, compression)
        self._media: _Series | None = None
        self._hybrid: Callable[[str | None], bool] | None = None
        if hybrid and compression != "none":
            self._hybrid = is_already_compressed if hybrid is True else hybrid
            self._media = _Series(self, "none")

    # -- state ------------------------------------------------------------------------
    @property
    def bytes_written(self) -> int:
        """Bytes on disk in the current file of the main series (0 when none is open)."""
        cur = self._main.current
        return cur.bytes_written if cur else 0

    @property
    def current_path(self) -> str | None:
        """The ``.open`` path of the current main-series file, or None."""
        cur = self._main.current
        return cur.path + OPEN_SUFFIX if cur else None

    @property
    def paths(self) -> list[str]:
        """Final paths of every file started, in order (main series, then the
        uncompressed one); a file still open is renamed to its path on close."""
        return self._main.paths + (self._media.paths if self._media else [])

    @property
    def closed(self) -> bool:
        return self._closed

    # -- writing ----------------------------------------------------------------------
    def _series_for(self, records: Sequence[WarcRecord]) -> _Series:
        if self._media is None or self._hybrid is None:
            return self._main
        for r in records:
            if r.type == "response":
                return self._media if self._hybrid(r.http.mime if r.http else None) else self._main
            if r.type in ("resource", "conversion"):
                return self._media if self._hybrid(r.headers.content_type) else self._main
        return self._main

    def write(self, *records: WarcRecord) -> list[WarcRecord]:
        """Write the records of one capture, together, in one file.

        Every record is checked first (:func:`~webark.warc.validate_fields.field_problems`,
        Content-Length against the block, the revisit profile, an ``application/http``
        block that must be an HTTP message, and WARC-Block-Digest / WARC-Payload-Digest
        against the block): if one is invalid nothing is written.
        Records without WARC-Warcinfo-ID get the id of the file's warcinfo. A file is
        opened (with its warcinfo) on the first write; if the group would make the
        current file pass ``max_size`` the next file is started first. A group that
        starts with a warcinfo record opening a new file replaces the writer's own
        warcinfo there (copying a file keeps it byte for byte).

        Returns:
            The records as written: with WARC-Warcinfo-ID, ``path`` (final file name),
            ``offset`` and ``length`` (bytes as stored, i.e. compressed).

        Raises:
            InvalidRecordError: a record would make the WARC invalid (message lists the
                problems, e.g. ``missing-field: revisit record without WARC-Profile``,
                ``warc-block-digest-mismatch: …``, ``not-http: …``,
                ``unknown-profile: …``).
            WebarkError: the writer is closed.
            OSError: the file could not be written (e.g. ``ENOSPC``): none of these
                records is in it; it is cut back to its last complete record and
                finished (renamed ``….invalid`` when it cannot be cut), and the next
                write starts a new file.
        """
        if not records:
            return []
        for r in records:
            _check(r, self.allow_unknown_profile)
        with self._lock:
            if self._closed:
                raise WebarkError("write to a closed WarcWriter")
            return self._series_for(records).write(records)

    def write_stored(self, data: bytes, *, encoded: bool = False) -> tuple[str, int, int]:
        """Write one record given as its exact bytes, unchecked and unchanged (copy
        tools such as ``webark reduplicate`` keep records byte for byte this way).

        Args:
            data: the record as it appears uncompressed in a file: version line, fields,
                CRLF, block, CRLF CRLF (:func:`~webark.warc.reader.stored_record_bytes`
                plus CRLF CRLF for an uncompressed source); with ``encoded=True``, those
                bytes already compressed in this writer's codec (one or more gzip
                members / zstd frames; copied as they are).

        Returns:
            ``(final path, offset, length)`` of the record as stored (length as
            :meth:`write` gives it). Goes to the main series, with rotation.

        Raises:
            WebarkError: the writer is closed. OSError: as for :meth:`write`.
        """
        member = data if encoded else compress_member(data, self.compression)
        with self._lock:
            if self._closed:
                raise WebarkError("write to a closed WarcWriter")
            return self._main.write_stored(member)

    def close(self) -> None:
        """Finish the current files (rename ``.open`` away). Idempotent."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            for series in (self._main, self._media):
                if series is not None:
                    series.close()

    def __enter__(self) -> WarcWriter:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


class AsyncWarcWriter:
    """A :class:`WarcWriter` for many asyncio tasks: an ``asyncio.Lock`` orders the calls
    and the file work runs in a thread (``asyncio.to_thread``), so the event loop never
    blocks on compression or disk and the records of one capture stay together.

    A task cancelled while its write runs does not interrupt that write (the thread
    finishes it); the WarcWriter's own lock keeps the next write from overlapping it.
    """

    def __init__(self, writer: WarcWriter):
        self.writer = writer
        self._lock = asyncio.Lock()

    @property
    def builder(self) -> RecordBuilder:
        return self.writer.builder

    async def write(self, *records: WarcRecord) -> list[WarcRecord]:
        """As :meth:`WarcWriter.write`, without blocking the event loop."""
        async with self._lock:
            return await asyncio.to_thread(self.writer.write, *records)

    async def close(self) -> None:
        """As :meth:`WarcWriter.close`."""
        async with self._lock:
            await asyncio.to_thread(self.writer.close)

    async def __aenter__(self) -> AsyncWarcWriter:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()
