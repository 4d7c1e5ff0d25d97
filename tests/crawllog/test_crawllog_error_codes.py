"""``CrawlLogError.code``: programs tell a crawl.log.gz cut short (``cut-gzip``) from a
bad line (``bad-line``) by this code, not by the wording of the message."""

from __future__ import annotations

import gzip
from pathlib import Path

from webark.crawllog import CrawlLogError, iter_crawl_log
from webark.crawllog.parse import BAD_LINE, CUT_GZIP, CUT_GZIP_CODE


def _damaged_log(corpus: Path, tmp_path: Path, *, cut: bool) -> Path:
    """crawl-9.log (219 lines) after 3 lines that are not crawl.log lines, gzipped,
    cut 200 bytes before its end when ``cut``."""
    text = (corpus / "crawllog/netarchivesuite/crawl-9.log").read_bytes()
    data = gzip.compress(b"not a crawl.log line\n" * 3 + text)
    path = tmp_path / "crawl.log.gz"
    path.write_bytes(data[:-200] if cut else data)
    return path


def test_codes_of_bad_lines_and_of_the_cut(corpus: Path, tmp_path: Path) -> None:
    items = list(iter_crawl_log(_damaged_log(corpus, tmp_path, cut=True)))
    errors = [x for _, x in items if isinstance(x, CrawlLogError)]
    assert [e.code for e in errors[:3]] == [BAD_LINE] * 3
    assert [e.line_number for e in errors[:3]] == [1, 2, 3]
    last_number, last = items[-1]
    assert isinstance(last, CrawlLogError) and last.code == CUT_GZIP_CODE
    assert last.line_number == last_number
    # the message for people is unchanged
    assert last.reason.startswith(f"{CUT_GZIP} after line {last_number - 1} ")
    assert [e.code for e in errors].count(CUT_GZIP_CODE) == 1


def test_whole_gzip_has_no_cut_code(corpus: Path, tmp_path: Path) -> None:
    items = list(iter_crawl_log(_damaged_log(corpus, tmp_path, cut=False)))
    errors = [x for _, x in items if isinstance(x, CrawlLogError)]
    assert [e.code for e in errors] == [BAD_LINE] * 3
    assert sum(1 for _, x in items if not isinstance(x, CrawlLogError)) == 219


def test_located_copy_keeps_the_code() -> None:
    err = CrawlLogError("whatever", code=CUT_GZIP_CODE)
    assert err.located("x.log", 7, 120).code == CUT_GZIP_CODE
    assert CrawlLogError("bad").code == BAD_LINE
