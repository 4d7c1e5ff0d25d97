"""progress-statistics.log lines (webark.crawllog.progress): Heritrix's own lines parse,
and webark's lines sit in Heritrix's columns."""

from __future__ import annotations

import math
from datetime import UTC, datetime

import pytest

from webark.crawllog.progress import (
    COLUMN_ENDS,
    LEGEND,
    ProgressEvent,
    ProgressLine,
    format_event,
    format_progress_line,
    parse_progress_line,
)

# Published by NetarchiveSuite (metadata WARCs of Heritrix 1.12 / 1.14 / 3.x crawls)
HERITRIX = """\
20080602165807 CRAWL RESUMED - Running
           timestamp  discovered      queued   downloaded       doc/s(avg)  KB/s(avg)   dl-failures   busy-thread   mem-use-KB  heap-size-KB   congestion   max-depth   avg-depth
2008-06-02T16:58:27Z         166          43          124         6.2(6.2)   157(157)             0             0        13831         33408            1          24          14
2008-06-02T16:58:47Z         243          33          211       4.35(5.28)     27(92)             0             2        17768         34048            1          30          16
2015-04-29T12:42:54Z         774         573          185        0.9(2.31)     49(41)            16             2        61249        270848            1         456         114
2013-05-22T08:29:55Z           4           0            4             1(1)       0(0)             0             0        23292         61824            \ufffd           0           0
20130522082955 CRAWL ENDED - Finished
"""  # noqa: E501


def test_heritrix_lines_parse() -> None:
    got = [parse_progress_line(ln) for ln in HERITRIX.splitlines()]
    assert got[0] == ProgressEvent(datetime(2008, 6, 2, 16, 58, 7, tzinfo=UTC), "RESUMED",
                                   "Running")  # fmt: skip
    assert got[1] is None  # the legend
    p = got[3]
    assert isinstance(p, ProgressLine)
    assert (p.discovered, p.queued, p.downloaded, p.docs_per_s, p.docs_per_s_avg) == (
        243, 33, 211, 4.35, 5.28)
    assert (p.kib_per_s, p.kib_per_s_avg, p.failures, p.busy_threads) == (27, 92, 0, 2)
    assert (p.mem_kib, p.heap_kib, p.congestion, p.max_depth, p.avg_depth) == (
        17768, 34048, 1.0, 30, 16)
    q = got[5]
    assert isinstance(q, ProgressLine) and math.isnan(q.congestion)  # U+FFFD: Java's NaN
    assert got[6] == ProgressEvent(datetime(2013, 5, 22, 8, 29, 55, tzinfo=UTC), "ENDED",
                                   "Finished")  # fmt: skip
    with pytest.raises(ValueError, match="not a progress-statistics line"):
        parse_progress_line("2008-06-02T16:58:27Z 166 43")


def test_format_matches_heritrix_columns() -> None:
    lines = HERITRIX.splitlines()
    assert lines[1] == LEGEND
    for text in lines[2:5]:  # Heritrix's lines, written again, are the same bytes
        p = parse_progress_line(text)
        assert isinstance(p, ProgressLine)
        assert format_progress_line(p) == text
    p = ProgressLine(datetime(2026, 12, 2, 15, 0, 0, tzinfo=UTC), 10**9, 5, 7, 0.0, 1 / 3,
                     0, 12, 1, 3, 2048, 4096, math.nan, 4, 2)  # fmt: skip
    text = format_progress_line(p)
    assert text.split() == ["2026-12-02T15:00:00Z", "1000000000", "5", "7", "0(0.33)", "0(12)",
                            "1", "3", "2048", "4096", "NaN", "4", "2"]  # fmt: skip
    assert [text.index(" 4096") + 5, len(text)] == [COLUMN_ENDS[8], COLUMN_ENDS[11]]
    back = parse_progress_line(text)
    assert isinstance(back, ProgressLine) and back.discovered == 10**9
    assert back.docs_per_s_avg == 0.33 and math.isnan(back.congestion)
    e = ProgressEvent(datetime(2026, 12, 2, 15, 0, 1, tzinfo=UTC), "ENDING", "Finished")
    assert format_event(e) == "20261202150001 CRAWL ENDING - Finished"
    assert parse_progress_line(format_event(e)) == e
