"""``webark wacz``: pack a crawl job, a collection or WARC files as a WACZ 1.1.1 file
(Web Archive Collection Zipped), the package ReplayWeb.page, pywb and Browsertrix read.

Layout of the zip (WACZ 1.1.1):

* ``archive/NAME`` — each WARC as it is stored, zip method *stored* (a replay tool reads
  records by byte range straight out of the zip);
* ``indexes/index.cdx.gz`` + ``indexes/index.idx`` — the CDXJ index of those WARCs
  (``webark index``'s CDXJ, the cdxj-indexer's bytes; ``filename`` is the name in
  ``archive/``), sorted, in gzip members of :data:`LINES_PER_BLOCK` lines
  (``index.cdx.gz``, stored), with the compressed-CDXJ summary ``index.idx``: a
  ``!meta 0 {"format": "cdxj-gzip-1.0", "filename": "index.cdx.gz"}`` line, then one
  line a block: its first key and timestamp, and ``{"offset", "length", "digest"}``;
* ``pages/pages.jsonl`` — the page list (:mod:`webark.search.pages`): the job's own when
  it has one, else made from the WARCs (with a job's crawl.log: seeds, depth, only
  pages reached as pages);
* ``logs/NAME`` — a job's crawl.log and other logs;
* ``datapackage.json`` — ``profile`` ``data-package``, ``wacz_version``, ``software``,
  ``created``, ``title``, ``mainPageURL``/``mainPageDate`` (the first seed's page) and
  ``resources``: ``name``, ``path``, ``hash`` (``sha256:`` hex) and ``bytes`` of every
  file above; ``datapackage-digest.json`` — the hash of ``datapackage.json``.

Everything is streamed: WARCs are copied into the zip once, hashed as they are copied;
the index lines are held in memory for the sort (about 300 bytes a capture). The WACZ
appears whole or not at all: it is written as ``OUT.partial`` and renamed.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import zlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import IO
from zipfile import ZIP_DEFLATED, ZIP_STORED, ZipFile, ZipInfo

from webark import __version__
from webark.cdx.formats import sort_key
from webark.cdx.indexer import FileIndex, IndexOptions
from webark.core.errors import WebarkError
from webark.search.pages import HopPaths, Page, pages_of_warcs, write_pages
from webark.tools.input_files import archive_inputs
from webark.warc.record import Problem

__all__ = ["LINES_PER_BLOCK", "WACZ_VERSION", "WaczError", "WaczReport", "WaczSource",
           "job_source", "resource_name", "source_of", "write_wacz"]  # fmt: skip

WACZ_VERSION = "1.1.1"
#: Index lines per gzip member of ``indexes/index.cdx.gz`` (py-wacz and cdxj-indexer
#: write 300; ReplayWeb.page reads one member per lookup).
LINES_PER_BLOCK = 300
_COPY = 1 << 20
_ZIP_EPOCH = (1980, 1, 1, 0, 0, 0)


class WaczError(WebarkError, ValueError):
    """The input cannot be packed (nothing to pack, two WARCs with one name, an output
    that exists)."""


@dataclass(frozen=True, slots=True)
class WaczSource:
    """What goes into a WACZ.

    Attributes:
        warcs: the (W)ARC files (their base names must differ: they become
            ``archive/NAME``).
        crawl_logs: crawl.log files of the crawl that wrote them (seeds and hop paths
            of the pages), may be empty.
        pages: a pages.jsonl to use as it is, or None to make one from the WARCs.
        logs: files for ``logs/``.
        title: the default title of the package.
        seeds: the crawl's seeds (the first one is the main page), may be empty.
    """

    warcs: tuple[Path, ...]
    crawl_logs: tuple[Path, ...] = ()
    pages: Path | None = None
    logs: tuple[Path, ...] = ()
    title: str = ""
    seeds: tuple[str, ...] = ()


@dataclass(slots=True)
class WaczReport:
    """What :func:`write_wacz` wrote: the file, its size (bytes), the WARCs, index
    lines, pages and the broken records met (file and offset; packed as they are)."""

    path: Path
    size: int = 0
    warcs: int = 0
    index_lines: int = 0
    pages: int = 0
    problems: list[Problem] = field(default_factory=list)


def job_source(job_dir: str | os.PathLike[str]) -> WaczSource:
    """The WACZ source of a ``webark crawl`` job folder: its finished WARCs
    (``warcs/``, not ``.open`` ones), ``logs/`` (crawl.log among them), its
    ``pages/pages.jsonl`` when the crawl wrote one, its seeds (``state/job.json``)."""
    root = Path(job_dir)
    warcs_dir, logs_dir = root / "warcs", root / "logs"
    warcs = tuple(Path(p) for p in archive_inputs([warcs_dir])) if warcs_dir.is_dir() else ()
    logs = tuple(sorted(p for p in logs_dir.iterdir() if p.is_file())) if logs_dir.is_dir() else ()
    crawl_logs = tuple(p for p in logs if p.name.startswith("crawl.log"))
    pages = root / "pages" / "pages.jsonl"
    seeds: tuple[str, ...] = ()
    job_json = root / "state" / "job.json"
    if job_json.is_file():
        try:
            seeds = tuple(str(s) for s in json.loads(job_json.read_text()).get("seeds", ()))
        except (ValueError, AttributeError):
            seeds = ()
    return WaczSource(warcs=warcs, crawl_logs=crawl_logs,
                      pages=pages if pages.is_file() else None, logs=logs,
                      title=root.resolve().name, seeds=seeds)  # fmt: skip


def source_of(paths: Sequence[str | os.PathLike[str]]) -> WaczSource:
    """The WACZ source of what a user names: one job folder (it has ``state/job.json``
    or ``logs/crawl.log``), or collections, folders and (W)ARC files (their WARCs, as
    :func:`~webark.tools.input_files.archive_inputs` finds them).

    Raises:
        FileNotFoundError, CollectionError: see ``archive_inputs``.
    """
    if len(paths) == 1:
        root = Path(paths[0])
        if (root / "state" / "job.json").is_file() or (root / "logs" / "crawl.log").is_file():
            return job_source(root)
    warcs = tuple(Path(p) for p in archive_inputs(paths))
    title = Path(paths[0]).resolve().name if len(paths) == 1 else "webark"
    return WaczSource(warcs=warcs, title=title)


def _check(source: WaczSource) -> None:
    if not source.warcs:
        raise WaczError("no WARC or ARC file to pack")
    names: dict[str, Path] = {}
    for p in source.warcs:
        other = names.setdefault(p.name, p)
        if other != p:
            raise WaczError(f"two WARCs named {p.name} ({other} and {p}): WACZ keeps one "
                            "archive/ folder, rename one of them")  # fmt: skip


_NAME_BAD = re.compile(r"[^-a-z0-9._/]")


def resource_name(path: str) -> str:
    """The Data Package ``name`` of a zip member: its base name, lowercase, with
    characters the Frictionless schema refuses (``^[-a-z0-9._/]+$``, e.g. ``~`` in
    WARC names) made ``-``. Names need not be unique (the ``path`` is the key)."""
    return _NAME_BAD.sub("-", os.path.basename(path).lower()) or "-"


class _Member:
    """Writes one zip member while counting and hashing its bytes (sha256)."""

    def __init__(self, zf: ZipFile, path: str, *, stored: bool, created: datetime,
                 size: int = 0) -> None:  # fmt: skip
        info = ZipInfo(path, date_time=max(_ZIP_EPOCH, created.timetuple()[:6]))
        info.compress_type = ZIP_STORED if stored else ZIP_DEFLATED
        info.external_attr = 0o644 << 16
        # the size to come decides whether the member gets ZIP64 fields: only members
        # that need them (over 4 GiB) get them, as other zip writers do; ReplayWeb.page
        # misreads small members whose local header has ZIP64 fields
        info.file_size = size
        self.path = path
        self._out: IO[bytes] = zf.open(info, "w")
        self._sha = hashlib.sha256()
        self.bytes = 0

    def write(self, data: bytes) -> None:
        self._sha.update(data)
        self.bytes += len(data)
        self._out.write(data)

    def close(self) -> dict[str, object]:
        """Finish the member; its datapackage ``resources`` entry."""
        self._out.close()
        return {"name": resource_name(self.path), "path": self.path,
                "hash": "sha256:" + self._sha.hexdigest(), "bytes": self.bytes}  # fmt: skip


def _copy_file(zf: ZipFile, src: Path, path: str, *, stored: bool,
               created: datetime) -> dict[str, object]:  # fmt: skip
    m = _Member(zf, path, stored=stored, created=created, size=src.stat().st_size)
    with open(src, "rb") as f:
        while chunk := f.read(_COPY):
            m.write(chunk)
    return m.close()


def _index_lines(source: WaczSource, problems: list[Problem]) -> list[str]:
    options = IndexOptions.for_format("cdxj")
    lines: list[str] = []
    for p in source.warcs:
        fi = FileIndex(p, options, filename=p.name)
        lines.extend(fi.text_lines("cdxj"))
        problems.extend(fi.problems)
    lines.sort(key=sort_key)
    return lines


def _write_index(zf: ZipFile, lines: Sequence[str], created: datetime) -> list[dict[str, object]]:
    """``indexes/index.cdx.gz`` and ``indexes/index.idx`` (module docstring)."""
    data = _Member(zf, "indexes/index.cdx.gz", stored=True, created=created)
    summary = [json.dumps({"format": "cdxj-gzip-1.0", "filename": "index.cdx.gz"})]
    idx = ["!meta 0 " + summary[0]]
    offset = 0
    for start in range(0, len(lines), LINES_PER_BLOCK):
        block = lines[start:start + LINES_PER_BLOCK]
        comp = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
        member = comp.compress("".join(x + "\n" for x in block).encode("utf-8", "surrogateescape"))
        member += comp.flush()
        data.write(member)
        key = block[0].split(" {", 1)[0]
        meta = {"offset": offset, "length": len(member),
                "digest": "sha256:" + hashlib.sha256(member).hexdigest()}  # fmt: skip
        idx.append(f"{key} {json.dumps(meta)}")
        offset += len(member)
    resources = [data.close()]
    m = _Member(zf, "indexes/index.idx", stored=False, created=created)
    m.write(("\n".join(idx) + "\n").encode("utf-8", "surrogateescape"))
    resources.append(m.close())
    return resources


def _main_page(pages_file: Path, seeds: Sequence[str]) -> tuple[str, str] | None:
    """(url, ts) of the first seed's page (else of the first page) in ``pages_file``."""
    first: tuple[str, str] | None = None
    with open(pages_file, encoding="utf-8") as f:
        next(f, None)  # the header
        for raw in f:
            try:
                page = json.loads(raw)
            except ValueError:
                continue
            here = (str(page.get("url", "")), str(page.get("ts", "")))
            if first is None:
                first = here
            if seeds and here[0] == seeds[0]:
                return here
    return first


def write_wacz(
    source: WaczSource,
    out: str | os.PathLike[str],
    *,
    title: str | None = None,
    description: str | None = None,
    with_text: bool = False,
    replace: bool = False,
    created: datetime | None = None,
    progress: Callable[[str], None] | None = None,
) -> WaczReport:
    """Write the WACZ of ``source`` to ``out`` (module docstring).

    Args:
        title, description: of the package (default: the source's title).
        with_text: put each page's visible text in pages.jsonl (``text``; ReplayWeb.page
            searches it); ignored when the job has its own pages.jsonl.
        replace: overwrite an existing ``out``.
        created: the package's ``created`` time (default now, UTC).
        progress: called with a short line before each step.

    Raises:
        WaczError: nothing to pack, two WARCs with one base name, ``out`` exists.
        OSError: a file cannot be read or written (no ``out`` is left behind).
    """
    _check(source)
    target = Path(out)
    if target.exists() and not replace:
        raise WaczError(f"{target} exists (give --replace to overwrite it)")
    when = (created or datetime.now(UTC)).astimezone(UTC).replace(microsecond=0)
    say = progress or (lambda _line: None)
    report = WaczReport(path=target)
    tmp = target.with_name(target.name + ".partial")
    workdir = target.with_name(target.name + ".pages.partial")
    try:
        say(f"indexing {len(source.warcs)} WARC(s)")
        lines = _index_lines(source, report.problems)
        report.index_lines = len(lines)
        pages_file = source.pages
        if pages_file is None:
            say("listing pages")
            hops = HopPaths(source.crawl_logs) if source.crawl_logs else None
            pages: Iterable[Page] = pages_of_warcs(source.warcs, hops=hops, with_text=with_text)
            write_pages(workdir, pages, has_text=with_text)
            pages_file = workdir
        with ZipFile(tmp, "w", allowZip64=True) as zf:
            resources: list[dict[str, object]] = []
            for p in source.warcs:
                say(f"archive/{p.name}")
                resources.append(_copy_file(zf, p, f"archive/{p.name}", stored=True, created=when))
            resources += _write_index(zf, lines, when)
            resources.append(_copy_file(zf, pages_file, "pages/pages.jsonl", stored=False,
                                        created=when))  # fmt: skip
            with open(pages_file, encoding="utf-8") as f:
                report.pages = max(0, sum(1 for _ in f) - 1)
            for p in source.logs:
                resources.append(_copy_file(zf, p, f"logs/{p.name}", stored=False, created=when))
            package: dict[str, object] = {"profile": "data-package", "resources": resources,
                                          "wacz_version": WACZ_VERSION,
                                          "software": f"webark {__version__}",
                                          "created": when.strftime("%Y-%m-%dT%H:%M:%SZ"),
                                          "title": title or source.title or "webark"}  # fmt: skip
            if description:
                package["description"] = description
            main = _main_page(pages_file, source.seeds)
            if main is not None:
                package["mainPageURL"], package["mainPageDate"] = main
            blob = json.dumps(package, indent=2).encode("utf-8")
            m = _Member(zf, "datapackage.json", stored=False, created=when)
            m.write(blob)
            m.close()
            digest = {"path": "datapackage.json",
                      "hash": "sha256:" + hashlib.sha256(blob).hexdigest()}  # fmt: skip
            m = _Member(zf, "datapackage-digest.json", stored=False, created=when)
            m.write(json.dumps(digest, indent=2).encode("utf-8"))
            m.close()
        with open(tmp, "rb+") as f:
            os.fsync(f.fileno())
        os.replace(tmp, target)
    finally:
        for leftover in (tmp, workdir):
            if leftover.exists():
                leftover.unlink()
    report.size = target.stat().st_size
    report.warcs = len(source.warcs)
    return report
