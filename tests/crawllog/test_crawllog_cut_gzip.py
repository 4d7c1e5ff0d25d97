"""A crawl.log.gz cut short (copied while Heritrix was still writing it) or damaged: the
lines before the damage are read, then one error names the file and where it stopped;
``webark dedup build`` keeps the originals of those lines."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from webark.crawllog import CrawlLogError, iter_crawl_log
from webark.dedup.build import load
from webark.dedup.sqlite_dedup import open_index


@pytest.fixture
def cut_log(corpus: Path, tmp_path: Path) -> tuple[Path, list[str]]:
    text = (corpus / "crawllog/netarchivesuite/crawl-9.log").read_bytes()
    whole = gzip.compress(text)
    cut = tmp_path / "crawl.log.gz"
    cut.write_bytes(whole[: len(whole) * 2 // 3])
    return cut, text.decode("utf-8", "replace").splitlines()


def test_lines_before_the_cut_then_one_error(cut_log: tuple[Path, list[str]]) -> None:
    path, all_lines = cut_log
    items = list(iter_crawl_log(path))
    good = [(n, x) for n, x in items if not isinstance(x, CrawlLogError)]
    errors = [(n, x) for n, x in items if isinstance(x, CrawlLogError)]
    assert len(errors) == 1 and items[-1] == errors[0]
    n, err = errors[0]
    assert err.path == str(path) and err.line_number == n
    assert f"cut short after line {n - 1}" in str(err)
    # what was read is the file's start, line for line
    assert 0.3 * len(all_lines) < len(good) < len(all_lines)
    assert [x.uri for _, x in good] == [ln.split()[3] for ln in all_lines[: len(good)]]


def test_dedup_build_keeps_the_lines_before_the_cut(
    cut_log: tuple[Path, list[str]], tmp_path: Path
) -> None:
    path, _ = cut_log
    good = [x for _, x in iter_crawl_log(path) if not isinstance(x, CrawlLogError)]
    with open_index(tmp_path / "dedup.sqlite") as idx:
        report = load(idx, "crawl-log", path)
        assert report.skipped["error"] == 1
        assert report.loaded > 0
        assert report.loaded <= sum(1 for x in good if x.status == 200)
        assert idx.counts()["by_url"] == report.loaded
