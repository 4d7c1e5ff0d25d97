"""`webark stats` and `webark extract` on a WARC with many broken records: the first
100 problems are listed (file @ offset), every one is counted per kind, and the output
says how many were not listed. The WARC is made in tmp_path from a real record of the
corpus, damaged (its Content-Length made unreadable), then repeated."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

from click.testing import CliRunner

from webark.cli.main import cli
from webark.tools.problem_tally import MAX_LISTED, ProblemTally
from webark.tools.stats import archive_stats

BROKEN = 250


def damaged_warc(corpus: Path, tmp_path: Path) -> tuple[Path, list[int]]:
    """example.warc.gz's warcinfo and response (offsets 0 and 333), BROKEN copies of
    the response with ``Content-Length: x1610``, the response again. Returns the file
    and the offsets of the broken members."""
    src = (corpus / "pywb/warcs/example.warc.gz").read_bytes()
    member = src[333:333 + 1043]
    raw = gzip.decompress(member)
    assert b"\r\nContent-Length: 1610\r\n" in raw
    bad = gzip.compress(raw.replace(b"Content-Length: 1610", b"Content-Length: x1610"),
                        mtime=0)
    start = 333 + 1043
    offsets = [start + i * len(bad) for i in range(BROKEN)]
    path = tmp_path / "damaged.warc.gz"
    path.write_bytes(src[:start] + bad * BROKEN + member)
    return path, offsets


def test_stats_lists_100_counts_all(corpus: Path, tmp_path: Path) -> None:
    warc, offsets = damaged_warc(corpus, tmp_path)
    res = CliRunner().invoke(cli, ["stats", "--json", str(warc)])
    assert res.exit_code == 1
    got = json.loads(res.stdout)
    assert got["records"] == 3  # warcinfo + the two whole responses
    assert got["captures"]["captures"] == 2
    assert got["problem_counts"] == {"bad-content-length": BROKEN}
    assert got["problems_total"] == BROKEN
    assert got["problems_not_listed"] == BROKEN - MAX_LISTED
    assert len(got["problems"]) == MAX_LISTED
    assert got["problems"][0] == (
        f"{warc} @ {offsets[0]}: error: bad-content-length: Content-Length missing or "
        "invalid: 'x1610'; skipping the record")
    assert [p.split(" @ ")[1].split(":")[0] for p in got["problems"]] == [
        str(o) for o in offsets[:MAX_LISTED]]
    lines = res.stderr.splitlines()
    assert len(lines) == MAX_LISTED + 1
    assert lines[-1] == (f"… {BROKEN - MAX_LISTED} more problems not listed (the first "
                         f"{MAX_LISTED} are); all {BROKEN} by kind: bad-content-length "
                         f"{BROKEN}")
    # the library gives the same
    result = archive_stats([warc])
    assert result.problems.total == BROKEN and len(result.problems.listed) == MAX_LISTED


def test_extract_lists_100_counts_all(corpus: Path, tmp_path: Path) -> None:
    warc, offsets = damaged_warc(corpus, tmp_path)
    res = CliRunner().invoke(cli, ["extract", "--json", str(warc), "-o",
                                   str(tmp_path / "out")])
    assert res.exit_code == 1
    got = json.loads(res.stdout)
    assert got["files"] == 1 and got["records"] == 3
    assert got["problem_counts"] == {"bad-content-length": BROKEN}
    assert got["problems_not_listed"] == BROKEN - MAX_LISTED
    assert len(got["problems"]) == MAX_LISTED
    assert got["problems"][-1].startswith(f"{warc} @ {offsets[MAX_LISTED - 1]}: error: ")
    lines = res.stderr.splitlines()
    assert len(lines) == MAX_LISTED + 1
    assert lines[-1].startswith(f"… {BROKEN - MAX_LISTED} more problems not listed")
    # text output: same cap
    res = CliRunner().invoke(cli, ["extract", str(warc), "-o", str(tmp_path / "out2")])
    assert res.exit_code == 1 and len(res.stderr.splitlines()) == MAX_LISTED + 1


def test_tally_keeps_counts_exact() -> None:
    t = ProblemTally(limit=3)
    for i in range(10):
        t.add("a" if i % 2 else "b", f"p{i}")
    assert t.listed == ["p0", "p1", "p2"]
    assert dict(t.counts) == {"a": 5, "b": 5} and t.total == 10 and t.not_listed == 7
    assert t.summary() == ("… 7 more problems not listed (the first 3 are); all 10 by "
                           "kind: a 5, b 5")
    few = ProblemTally()
    few.add("a", "only")
    assert few.summary() is None and few.to_json()["problems_not_listed"] == 0
    assert not ProblemTally()
