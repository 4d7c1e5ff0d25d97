"""CDX/CDXJ loaders on damaged and hostile lines: :func:`parse_line` (any format) and
:func:`parse_cdx_text` read a line or refuse it with ``ValueError`` (what every reader
catches to skip a line with a warning), a sorted file of such lines is scanned without
an exception, and ``dedup build``'s CDX reader reports bad lines as skips. Inputs:
random text, corpus lines (pywb's CDX11, CDXJ) with characters replaced, and JSON
blocks nested deeply (issue 20 item 6)."""

from __future__ import annotations

import contextlib
import os
import tempfile

import pytest
from fuzz_support import FUZZ, TIMEOUT
from hypothesis import example, given
from hypothesis import strategies as st

from corpus_location import CORPUS
from webark.cdx.formats import parse_line
from webark.dedup.build import Skip, cdx_originals
from webark.index.capture_select import captures
from webark.index.sorted_file import SortedCdxFile, parse_cdx_text

pytestmark = pytest.mark.timeout(TIMEOUT)


def _lines(rel: str) -> list[str]:
    text = (CORPUS / rel).read_text(encoding="utf-8", errors="surrogateescape")
    return [x for x in text.splitlines() if x and not x.startswith((" CDX", "CDX", "!"))][:60]


REAL = _lines("pywb/cdx/iana.cdx") + _lines("pywb/cdxj/iana.cdxj")


@st.composite
def mutated(draw: st.DrawFn) -> str:
    line = draw(st.sampled_from(REAL))
    for _ in range(draw(st.integers(1, 4))):
        at = draw(st.integers(0, len(line)))
        cut = draw(st.integers(0, 3))
        line = line[:at] + draw(st.text(max_size=4)) + line[at + cut :]
    return line


#: JSON nested 1 to 100,000 deep (a few depths: a deep string is large to keep around)
NESTED = st.builds(lambda n, c: "com,a)/ 20200101000000 {\"x\": " + c * n + "}",
                   st.sampled_from([1, 30, 1000, 5000, 100_000]),
                   st.sampled_from(["[", "{\"a\":"]))  # fmt: skip
LINES = st.one_of(mutated(), st.text(max_size=200), NESTED)
#: lines of a file: the deepest nesting left out (one per file is enough, above)
FILE_LINES = st.one_of(mutated(), st.text(max_size=200), NESTED.filter(lambda s: len(s) < 10**4))


@FUZZ
@given(LINES)
@example("com,a)/ 20200101000000 {\"x\": " + "[" * 100_000 + "}")  # RecursionError before
@example('com,a)/ 20200101000000 {"offset": [1], "length": 1e400}')
def test_a_line_is_read_or_refused_with_value_error(text: str) -> None:
    for parse in (parse_line, parse_cdx_text):
        try:
            line = parse(text)
        except ValueError:
            continue
        assert isinstance(line.urlkey, str) and isinstance(line.offset, int)


@FUZZ
@given(st.lists(FILE_LINES, min_size=1, max_size=30))
def test_sorted_file_and_dedup_reader_never_raise(lines: list[str]) -> None:
    raw = sorted(x.replace("\n", " ").replace("\r", " ").encode("utf-8", "surrogatepass")
                 for x in lines)  # fmt: skip
    fd, path = tempfile.mkstemp(prefix="webark-fuzz-", suffix=".cdxj")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(b"\n".join(raw) + b"\n")
        src = SortedCdxFile(path)
        for url in ("http://www.iana.org/", "com,a)/", "*.org"):
            # ValueError: a URL the index cannot look up (not the lines' fault)
            with contextlib.suppress(ValueError):
                list(captures(src, url, "domain" if url.startswith("*") else "exact"))
        items = list(cdx_originals(path))
        assert all(isinstance(i, Skip) or i.digest for i in items)
    finally:
        os.unlink(path)
