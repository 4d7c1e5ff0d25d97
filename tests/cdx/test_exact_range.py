"""ranges.exact_range, the pure (file, byte range) → lines function the Spark jobs map:
the chunks of any cut of a file concatenate to the whole file's lines, problems
included, also when a cut falls inside a broken record (the range is then re-read from
the file's start)."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from webark.cdx.indexer import FileIndex, IndexOptions, exact_range, split_points


@pytest.mark.parametrize("name", ["iana.warc.gz", "example-extra.warc", "post-test.warc.gz",
                                  "example.arc.gz"])
def test_ranges_concatenate_to_the_whole_file(corpus: Path, name: str) -> None:
    path = corpus / "pywb/warcs" / name
    o = IndexOptions(post_append=True)
    fi = FileIndex(path, o)
    want = list(fi.text_lines())
    size = path.stat().st_size
    cuts = [split_points(path, 4) or [0, size], [0, size // 3, 2 * size // 3, size]]
    for points in cuts:
        chunks = [exact_range(path, a, b, o) for a, b in itertools.pairwise(points)]
        assert [s for c in chunks for s in c.lines] == want, points
        assert [str(p) for c in chunks for p in c.problems] == [str(p) for p in fi.problems]
        assert sum(c.records for c in chunks) == fi.records_read
