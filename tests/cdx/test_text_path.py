"""The text path of the indexer (``FileIndex.text_lines``, used by ``webark index``):
response records are written as CDXJ text without a CdxLine, and must give the very
lines of ``formatter(fmt)(line)`` for every line of ``FileIndex``; chunks of worker
processes travel encoded and decode back to the same lines."""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest
from cdx_support import CORPUS

from webark.cdx.formats import formatter
from webark.cdx.indexer import (
    PARALLEL_MIN_BYTES,
    FileIndex,
    IndexOptions,
    TextChunk,
    index_file_text,
)

ARCHIVES = sorted(
    p
    for p in CORPUS.rglob("*")
    if p.is_file() and p.name.endswith((".warc", ".warc.gz", ".arc", ".arc.gz", ".gz.bad"))
)

OPTION_SETS = {
    "default": {},
    "post-append": {"post_append": True},
    "all-post": {"all_records": True, "post_append": True},
    "responses": {"records": frozenset({"response"})},
    "no-response": {"records": frozenset({"revisit", "request"})},
    "fields": {"fields": ("referrer", "method", "http:content-length")},
}


@pytest.mark.parametrize("opts", list(OPTION_SETS), ids=list(OPTION_SETS))
@pytest.mark.parametrize("fmt", ["cdxj", "cdx11", "ng"])
def test_text_lines_equal_formatted_lines(opts: str, fmt: str) -> None:
    """Every corpus file (broken ones, ARC, POST captures, revisits, LF-only heads...):
    the text path writes what formatting the CdxLines writes, problems included."""
    checked = 0
    for path in ARCHIVES:
        o = IndexOptions.for_format(fmt, **OPTION_SETS[opts])  # type: ignore[arg-type]
        write = formatter(fmt, o.output_fields)  # type: ignore[arg-type]
        slow = FileIndex(path, o)
        want = [write(line) for line in slow]
        fast = FileIndex(path, o)
        got = list(fast.text_lines(fmt, o.output_fields))
        assert got == want, path
        assert [str(p) for p in fast.problems] == [str(p) for p in slow.problems], path
        checked += len(want)
    assert checked > 200


def test_text_path_writes_json_escapes() -> None:
    """A response whose URL needs JSON escaping (``"``, non-ASCII) goes through the
    general branch and is still identical."""
    path = CORPUS / "pywb/warcs/iana.warc.gz"
    o = IndexOptions()
    write = formatter("cdxj")
    lines = list(FileIndex(path, o).text_lines())
    assert lines == [write(line) for line in FileIndex(path, o)]
    assert all(' {"url": "' in ln for ln in lines)


def test_chunk_packs_and_unpacks() -> None:
    lines = ['com,example)/ 20200101000000 {"url": "http://example.com/"}', "caf\udce9 x"]
    chunk = TextChunk(list(lines), [], 2, 0, 10)
    chunk.pack()
    assert chunk.data == b'com,example)/ 20200101000000 {"url": "http://example.com/"}\ncaf\xe9 x\n'
    back = pickle.loads(pickle.dumps(chunk))
    assert back.data == chunk.data and back.lines == lines
    assert (back.records, back.start, back.end) == (2, 0, 10)
    # a line end inside a line: the lines stay as they are
    odd = TextChunk(["a\nb", "c"], [], 1, 0, 1)
    odd.pack()
    assert odd.lines == ["a\nb", "c"]


def _concat(src: Path, dest: Path, min_bytes: int) -> Path:
    data = src.read_bytes()
    with dest.open("wb") as f:
        n = 0
        while n < min_bytes:
            f.write(data)
            n += len(data)
    return dest


def test_parallel_progress_and_encoded_chunks(tmp_path: Path) -> None:
    """Two processes: this one's chunk as lines, the worker's encoded; together the
    bytes of one process, and progress ends at the file size."""
    big = _concat(
        CORPUS / "pywb/warcs/iana.warc.gz", tmp_path / "big.warc.gz", PARALLEL_MIN_BYTES + 1
    )
    seen: list[int] = []
    chunks = list(index_file_text(big, IndexOptions(), "cdxj", jobs=2, progress=seen.append))
    one = list(index_file_text(big, IndexOptions(), "cdxj", jobs=1))
    assert len(chunks) == 2
    assert chunks[0].data is None and chunks[1].data is not None
    assert b"".join(c.encoded() for c in chunks) == b"".join(c.encoded() for c in one)
    assert seen and max(seen) == big.stat().st_size
    assert not list(tmp_path.glob("webark-index-*"))
