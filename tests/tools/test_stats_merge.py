"""StatsCollector.merge (used by the Spark stats job): collectors of single files merged
in input order give exactly the statistics of one collector reading all the files."""

from __future__ import annotations

from pathlib import Path

from webark.tools.stats import StatsCollector


def test_merged_collectors_equal_one_collector(corpus: Path) -> None:
    files = sorted(p for p in (corpus / "pywb/warcs").iterdir() if ".warc" in p.name)
    files.append(corpus / "pywb/warcs/example.arc.gz")
    one = StatsCollector()
    merged = StatsCollector()
    for p in files:
        one.add_file(p)
        part = StatsCollector()
        part.add_file(p)
        merged.merge(part)
    a, b = one.finish().to_json(), merged.finish().to_json()
    assert a == b
    assert a["captures"]["revisits"] > 0 and a["urls"] > 50 and a["problems_total"] > 0
    assert a["unresolved_revisits"] < a["captures"]["revisits"]
