"""The CDX lines of one (W)ARC file, or of the records that start in a byte range of one.

:class:`FileIndex` reads the file with :class:`~webark.warc.reader.ArchiveReader` (which
resynchronises after broken records and reports them with file and offset) and maps the
records with :func:`~webark.cdx.core.index_records`.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import replace

from webark.cdx.core import RecordIndexer, index_records
from webark.cdx.line import CdxLine
from webark.cdx.options import IndexOptions
from webark.cdx.text import CdxjText
from webark.warc.reader import ArchiveReader
from webark.warc.record import Problem, WarcRecord

__all__ = ["FileIndex", "index_file"]


class FileIndex:
    """The CDX lines of one (W)ARC file; iterate to index it.

    ``FileIndex(path, options)`` reads the file with :class:`ArchiveReader` (which
    resynchronises after broken records) and yields :class:`CdxLine` s.

    Args:
        path: the file to read.
        options: :class:`IndexOptions`.
        filename: the ``filename`` to write (default ``options.file_name(path)``).
        offset_base: added to every offset (``path`` holds a part of a bigger file).
        display_path: the file name used in problem reports (default ``path``).
        start, end: index only the records that start in ``[start, end)`` (offsets stay
            those of the whole file; see :class:`ArchiveReader`; not for ARC files).

    Attributes (valid during and after iteration):
        problems: the reader's problems (broken records with file and offset) and the
            indexer's (records without a usable date).
        records_read: records the reader produced.
        lines: lines yielded.
        first_offset, last_offset, last_length: where the first and last records read
            are (-1 before any).
        reader: the :class:`ArchiveReader` (engine, format, compression).

    Iteration raises ``OSError`` only when the file cannot be read.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        options: IndexOptions | None = None,
        *,
        filename: str | None = None,
        offset_base: int = 0,
        display_path: str | None = None,
        start: int = 0,
        end: int | None = None,
    ):
        self.path = os.fspath(path)
        self.options = options or IndexOptions()
        self.filename = filename if filename is not None else self.options.file_name(self.path)
        self.offset_base = offset_base
        self.display_path = display_path or self.path
        self.reader = ArchiveReader(self.path, start=start, end=end)
        self.indexer_problems: list[Problem] = []
        self.lines = 0
        self.first_offset = self.last_offset = self.last_length = -1

    @property
    def problems(self) -> list[Problem]:
        base, where = self.offset_base, self.display_path
        out = [
            replace(p, path=where, offset=None if p.offset is None else p.offset + base)
            if (base or where != self.path)
            else p
            for p in self.reader.problems
        ]
        out += [replace(p, path=where) if where != self.path else p for p in self.indexer_problems]
        return out

    @property
    def records_read(self) -> int:
        return self.reader.records_read

    def _records(self) -> Iterator[WarcRecord]:
        base = self.offset_base
        for rec in self.reader:
            if self.first_offset < 0:
                self.first_offset = rec.offset + base
            self.last_offset = rec.offset + base
            self.last_length = rec.length
            yield rec

    def __iter__(self) -> Iterator[CdxLine]:
        for line in index_records(
            self._records(),
            self.filename,
            self.options,
            problems=self.indexer_problems,
            offset_base=self.offset_base,
        ):
            self.lines += 1
            yield line

    def text_lines(self, fmt: str = "cdxj", fields: tuple[str, ...] | None = None) -> Iterator[str]:
        """The lines as text: ``formatter(fmt, fields)(line)`` for every line of
        ``iter(self)``, in order, without a line end. Response and revisit records of
        plain CDXJ output are written without building a :class:`CdxLine` (a few µs
        less per record, see bench/README.md); the text is the same."""
        from webark.cdx.formats import formatter

        write = formatter(fmt, fields)  # type: ignore[arg-type]
        ix = RecordIndexer(self.filename, self.options, self.indexer_problems, self.offset_base)
        CdxjText.attach(ix, fmt, fields)
        for item in ix.run(self._records()):
            self.lines += 1
            yield item if type(item) is str else write(item)  # type: ignore[arg-type]


def index_file(path: str | os.PathLike[str], options: IndexOptions | None = None) -> FileIndex:
    """Index one (W)ARC file: ``for line in index_file("x.warc.gz"): …``.

    Returns a :class:`FileIndex` (iterable of :class:`CdxLine`, with ``problems``).
    The file name written is ``options.file_name(path)``.
    """
    return FileIndex(path, options)
