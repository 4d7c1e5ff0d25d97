"""Read ZipNum indexes (the Internet Archive's sharded compressed CDX, as read by pywb's
``ZipNumIndexSource`` and OpenWayback's ``ZiplinesSearchResultSource``).

A ZipNum index is three kinds of files:

* shards (``*.cdx.gz``): sorted CDX lines cut into blocks of N lines (3000 at IA),
  each block one gzip member, the members concatenated;
* the summary ``.idx``: one line per block, sorted,
  ``urlkey timestamp<TAB>shard<TAB>offset<TAB>length[<TAB>block_no]`` — the key of the
  block's first line, the shard name, the byte offset and compressed length of the
  block in that shard (IA's older summaries have no block number);
* the location file ``.loc``: ``shard<TAB>location[<TAB>location…]`` lines; locations
  are tried in order until one opens (pywb: "x-bad-path-to-ignore-x" in its sample is
  skipped); relative paths are relative to the ``.idx`` file's folder.

A query binary-searches the summary (:class:`~webark.index.sorted_file.SortedLines`) for
the first block whose key is ``>= start``, steps back one block (the previous block can
end with lines of the start key), reads and decompresses blocks one at a time while the
block keys are ``< end``, and keeps the lines inside the range. ``reverse=True`` walks
the summary backwards and yields each block's lines reversed. Memory: one block.

Only local files are read (plain paths or ``file://`` URLs); shards on HTTP(S) servers
(pywb reads them with range requests) are not supported and raise
:class:`~webark.index.source.IndexUnavailable`.
"""

from __future__ import annotations

import logging
import os
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import BinaryIO

from webark.cdx.line import CdxLine
from webark.index.sorted_file import SortedLines, parse_cdx_text
from webark.index.source import IndexUnavailable, KeyRange, digest_key, in_time

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class ZipNumBlock:
    """One line of the summary: ``key`` (``"urlkey timestamp"`` of the block's first CDX
    line), ``shard`` name, ``offset`` and ``length`` (bytes, compressed) in the shard,
    ``block_no`` (or -1 when the summary has none)."""

    key: str
    shard: str
    offset: int
    length: int
    block_no: int = -1

    def to_line(self) -> str:
        """The summary line (without line end); :meth:`parse` reads it back."""
        tail = f"\t{self.block_no}" if self.block_no >= 0 else ""
        return f"{self.key}\t{self.shard}\t{self.offset}\t{self.length}{tail}"

    @classmethod
    def parse(cls, raw: bytes) -> ZipNumBlock:
        """Parse one summary line. Raises ValueError for a malformed line."""
        f = raw.rstrip(b"\r").decode("utf-8", "surrogateescape").split("\t")
        if len(f) not in (4, 5):
            raise ValueError(f"not a ZipNum summary line: {raw[:200]!r}")
        return cls(f[0], f[1], int(f[2]), int(f[3]), int(f[4]) if len(f) == 5 else -1)


def _decompress_member(data: bytes, what: str) -> bytes:
    d = zlib.decompressobj(zlib.MAX_WBITS | 16)
    try:
        out = d.decompress(data) + d.flush()
    except zlib.error as exc:
        raise IndexUnavailable(f"{what}: bad gzip block: {exc}") from exc
    if not d.eof:
        raise IndexUnavailable(f"{what}: truncated gzip block")
    return out


class ZipNumIndex:
    """A ZipNum index behind the :class:`~webark.index.source.IndexSource` protocol.

    Args:
        idx_path: the summary ``.idx`` file.
        loc_path: the location file (default: ``idx_path`` with ``.loc`` instead of
            ``.idx``).

    Raises (from :meth:`scan` / :meth:`by_digest`, when iteration reaches them):
        IndexUnavailable: summary or location file unreadable, a shard without location
            ("No Locations Found" in pywb), no location of a shard opens, a block is not
            valid gzip.
    """

    def __init__(
        self, idx_path: str | os.PathLike[str], loc_path: str | os.PathLike[str] | None = None
    ):
        self.idx_path = os.fspath(idx_path)
        if loc_path is None:
            base, _ = os.path.splitext(self.idx_path)
            loc_path = base + ".loc"
        self.loc_path = os.fspath(loc_path)
        self.summary = SortedLines(self.idx_path)
        self._loc: dict[str, list[str]] | None = None
        self._loc_sig: tuple[int, int] | None = None

    def __repr__(self) -> str:
        return f"ZipNumIndex({self.idx_path!r})"

    # -- locations ---------------------------------------------------------------------

    def locations(self) -> dict[str, list[str]]:
        """Shard name → candidate paths, from the ``.loc`` file (re-read when it changes).

        Raises:
            IndexUnavailable: the location file cannot be read.
        """
        try:
            st = os.stat(self.loc_path)
            sig = (st.st_size, st.st_mtime_ns)
            if self._loc is None or sig != self._loc_sig:
                base = os.path.dirname(os.path.abspath(self.idx_path))
                loc: dict[str, list[str]] = {}
                with open(self.loc_path, encoding="utf-8") as f:
                    for line in f:
                        parts = line.rstrip("\r\n").split("\t")
                        if not parts[0]:
                            continue
                        loc.setdefault(parts[0], []).extend(
                            self._resolve(p, base) for p in parts[1:] if p
                        )
                self._loc, self._loc_sig = loc, sig
        except OSError as exc:
            raise IndexUnavailable(f"{self.loc_path}: {exc}") from exc
        return self._loc

    @staticmethod
    def _resolve(location: str, base: str) -> str:
        if location.startswith("file://"):
            return location[len("file://") :]
        if "://" in location:
            return location  # kept, refused when opened
        return os.path.join(base, location)

    def _open_shard(self, shard: str) -> BinaryIO:
        locs = self.locations().get(shard)
        if not locs:
            raise IndexUnavailable(f"{self.idx_path}: no location for shard {shard!r}")
        errors = []
        for loc in locs:
            if "://" in loc:
                errors.append(f"{loc}: only local shards are supported")
                continue
            try:
                return open(loc, "rb")
            except OSError as exc:
                errors.append(str(exc))
        raise IndexUnavailable(f"shard {shard!r}: no location could be opened: {'; '.join(errors)}")

    # -- blocks ------------------------------------------------------------------------

    def blocks(self, rng: KeyRange, reverse: bool = False) -> Iterator[ZipNumBlock]:
        """The summary lines of the blocks that may hold lines of ``rng`` (the block
        before the first key ``>= start`` included), in order or reversed. This is
        pywb's ``showPagedIndex`` list; the paging of the resolution API counts these.

        Raises:
            IndexUnavailable: the summary cannot be read or has a malformed line.
        """
        start = rng.start.encode("utf-8", "surrogateescape")
        end = rng.end.encode("utf-8", "surrogateescape") if rng.end is not None else None
        try:
            with self.summary.open() as h:
                s = self.summary.find(h, start)
                s = self.summary.previous_line(h, s)  # the block before may hold start
                if not reverse:
                    for _, raw in self.summary.forward(h, s):
                        b = self._parse_block(raw)
                        if end is not None and b.key.encode("utf-8", "surrogateescape") >= end:
                            return
                        yield b
                else:
                    e = self.summary.find(h, end) if end is not None else h.size
                    for raw in self.summary.backward(h, s, e):
                        yield self._parse_block(raw)
        except OSError as exc:
            raise IndexUnavailable(f"{self.idx_path}: {exc}") from exc

    def _parse_block(self, raw: bytes) -> ZipNumBlock:
        try:
            return ZipNumBlock.parse(raw)
        except ValueError as exc:
            raise IndexUnavailable(f"{self.idx_path}: {exc}") from exc

    def read_block(self, block: ZipNumBlock, f: BinaryIO | None = None) -> list[bytes]:
        """The CDX lines (raw, without newline) of one block.

        Raises:
            IndexUnavailable: shard missing, short read, bad gzip.
        """
        own = f is None
        fh = self._open_shard(block.shard) if f is None else f
        try:
            fh.seek(block.offset)
            data = fh.read(block.length)
        except OSError as exc:
            raise IndexUnavailable(f"shard {block.shard!r}: {exc}") from exc
        finally:
            if own:
                fh.close()
        what = f"shard {block.shard!r} @ {block.offset}"
        if len(data) != block.length:
            raise IndexUnavailable(f"{what}: short read ({len(data)} of {block.length} bytes)")
        text = _decompress_member(data, what)
        return [ln.rstrip(b"\r") for ln in text.split(b"\n") if ln]

    # -- IndexSource -------------------------------------------------------------------

    def scan(self, rng: KeyRange, reverse: bool = False) -> Iterator[CdxLine]:
        """See :meth:`IndexSource.scan`."""
        start = rng.start.encode("utf-8", "surrogateescape")
        end = rng.end.encode("utf-8", "surrogateescape") if rng.end is not None else None
        timed = rng.from_ts is not None or rng.to_ts is not None
        shards: dict[str, BinaryIO] = {}
        try:
            for block in self.blocks(rng, reverse):
                f = shards.get(block.shard)
                if f is None:
                    f = shards[block.shard] = self._open_shard(block.shard)
                lines = self.read_block(block, f)
                if reverse:
                    lines.reverse()
                for raw in lines:
                    if raw < start or (end is not None and raw >= end):
                        continue
                    line = self._parse(raw)
                    if line is not None and (not timed or in_time(rng, line.timestamp)):
                        yield line
        finally:
            for f in shards.values():
                f.close()

    def by_digest(self, digest: str) -> Iterator[CdxLine]:
        """See :meth:`IndexSource.by_digest`. ZipNum has no digest index: this
        decompresses every block (O(index size)); build a digest index elsewhere
        (e.g. load the lines into a :class:`~webark.index.sqlite_store.SqliteStore`)
        when revisits must be resolved against a large ZipNum index."""
        want = digest_key(digest)
        for line in self.scan(KeyRange("", None)):
            if digest_key(line.digest) == want:
                yield line

    def _parse(self, raw: bytes) -> CdxLine | None:
        if raw[:1] in (b" ", b"!"):
            return None
        try:
            return parse_cdx_text(raw.decode("utf-8", "surrogateescape"))
        except ValueError as exc:
            log.warning("%s: skipping unreadable CDX line %r: %s", self.idx_path, raw[:120], exc)
            return None
