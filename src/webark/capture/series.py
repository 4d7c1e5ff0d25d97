"""The WARC files of a capture back end: one series of files per WARC prefix.

A series is a :class:`~webark.warc.writer.WarcWriter` (warcinfo first, rotation at
``max_size``, ``….warc.gz.open`` while written, optional hybrid compression into
uncompressed ``.warc`` files for already-compressed media) wrapped for asyncio
(:class:`~webark.warc.writer.AsyncWarcWriter`). warcprox keeps one writer per
``warc-prefix`` for the same reason: a client (a Brozzler job, a person recording) gets
files of its own. All series of one back end share one
:class:`~webark.warc.builders.RecordBuilder` (WARC version, digest algorithm, clock and
record ids), so records can be built before the series is chosen.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path

from webark.core.errors import ConfigError
from webark.warc.builders import RecordBuilder, WarcinfoFields
from webark.warc.serialize import Codec
from webark.warc.writer import DEFAULT_MAX_SIZE, AsyncWarcWriter, WarcWriter

__all__ = ["BadWarcPrefix", "SeriesConfig", "WarcSeries"]

_PREFIX = re.compile(r"^[^/\\\x00-\x1f]{1,100}$")


class BadWarcPrefix(ConfigError):
    """A WARC prefix that cannot be part of a file name (empty, ``/``, ``\\``, control
    characters, ``.``/``..``, over 100 characters)."""


@dataclass(frozen=True, slots=True)
class SeriesConfig:
    """How the back end's WARC files are written.

    Attributes:
        directory: where the files go.
        prefix: the default WARC prefix (file names ``{prefix}-{timestamp17}-…``).
        max_size: rotate before a file would pass this many bytes (10^9).
        compression: ``gzip`` (per record, default), ``zstd`` or ``none``.
        hybrid: already-compressed media (video, audio, images, archives) to separate
            uncompressed ``.warc`` files (replay seeks in them for range requests).
        warcinfo: the warcinfo block of every file (``is_part_of`` etc.).
    """

    directory: Path
    prefix: str = "WEBARK"
    max_size: int = DEFAULT_MAX_SIZE
    compression: Codec = "gzip"
    hybrid: bool = False
    warcinfo: WarcinfoFields = field(default_factory=WarcinfoFields.for_this_host)


def check_prefix(prefix: str) -> str:
    """``prefix`` if it can start a WARC file name.

    Raises:
        BadWarcPrefix: otherwise (the message says why).
    """
    if not _PREFIX.match(prefix) or prefix in (".", ".."):
        raise BadWarcPrefix(
            f"WARC prefix {prefix!r} cannot start a file name: 1-100 characters, "
            "no '/', '\\' or control characters"
        )
    return prefix


class WarcSeries:
    """The series of WARC files of one back end, by prefix (module docstring).

    Args:
        config: the default series' settings (every series shares them, with its own
            prefix).
        builder: the record builder of every series.
    """

    def __init__(self, config: SeriesConfig, builder: RecordBuilder | None = None) -> None:
        self.config = config
        self.builder = builder or RecordBuilder()
        self._writers: dict[str, AsyncWarcWriter] = {}
        self._closed_sizes: dict[str, int] = {}
        check_prefix(config.prefix)

    def writer(self, prefix: str | None = None,
               warcinfo_extra: tuple[tuple[str, str], ...] = ()) -> AsyncWarcWriter:  # fmt: skip
        """The writer of the series ``prefix`` (the default one for None), created on
        first use; ``warcinfo_extra`` pairs go into that series' warcinfo records when
        this call creates it.

        Raises:
            BadWarcPrefix: ``prefix`` cannot start a file name.
        """
        name = self.config.prefix if prefix is None else prefix
        w = self._writers.get(name)
        if w is None:
            check_prefix(name)
            c = self.config
            info = c.warcinfo
            if warcinfo_extra:
                info = replace(info, extra=(*info.extra, *warcinfo_extra))
            w = AsyncWarcWriter(WarcWriter(
                c.directory, prefix=name, max_size=c.max_size, compression=c.compression,
                hybrid=c.hybrid, warcinfo=info, builder=self.builder,
            ))  # fmt: skip
            self._writers[name] = w
        return w

    @property
    def prefixes(self) -> tuple[str, ...]:
        """The prefixes written so far."""
        return tuple(self._writers)

    @property
    def paths(self) -> list[str]:
        """Final paths of every file started, series by series (a file still open is
        renamed to its path on close)."""
        return [p for w in self._writers.values() for p in w.writer.paths]

    def bytes_on_disk(self) -> int:
        """Bytes of the series' files on disk (closed ones and the ``.open`` ones); a
        closed file's size is stat'ed once."""
        total = 0
        for path in self.paths:
            if path in self._closed_sizes:
                total += self._closed_sizes[path]
                continue
            try:
                total += os.stat(path + ".open").st_size
                continue
            except FileNotFoundError:
                pass
            try:
                size = os.stat(path).st_size
            except FileNotFoundError:
                continue
            self._closed_sizes[path] = size  # a closed WARC no longer changes
            total += size
        return total

    def __iter__(self) -> Iterator[AsyncWarcWriter]:
        return iter(self._writers.values())

    async def aclose(self) -> None:
        """Finish every series (rename ``.open`` files). Idempotent."""
        for w in self._writers.values():
            await w.close()
