"""``webark revisits refs`` on pywb's deduplicated WARCs (checked against pywb's gold
CDX files) and on a recrawl written with webark's WarcWriter."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner
from reduplicate_recrawl import write_recrawl

from webark.cli.main import cli
from webark.index.collection import Collection
from webark.index.record_loader import RecordLoader
from webark.index.revisits import UrlCaptures
from webark.index.source import KeyRange
from webark.tools.reduplicate_resolve import RevisitRef, url_captures_in_order
from webark.tools.revisit_refs import harvest_of, lost_if, revisit_refs


def _gold(corpus: Path, name: str) -> list[list[str]]:
    """CDX11 lines of pywb's gold index: urlkey ts url mime status digest r M S V g."""
    text = (corpus / "pywb" / "cdx" / name).read_text()
    return [ln.split() for ln in text.splitlines()[1:] if ln.strip()]


@pytest.fixture(scope="module")
def pywb_coll(corpus: Path, tmp_path_factory: pytest.TempPathFactory):
    coll = Collection.init(tmp_path_factory.mktemp("refs") / "coll")
    res = list(coll.add([corpus / "pywb/warcs/iana.warc.gz", corpus / "pywb/warcs/dupes.warc.gz"]))
    assert all(r.status == "indexed" for r in res)
    yield coll
    coll.close()


def test_citations_match_pywb_gold_index(pywb_coll: Collection, corpus: Path) -> None:
    gold = _gold(corpus, "iana.cdx") + _gold(corpus, "dupes.cdx")
    revisits = [f for f in gold if f[3] == "warc/revisit"]
    # every revisit here has a same-URL original with its digest; the original of a
    # revisit is the latest such response not after it
    responses: dict[tuple[str, str], list[list[str]]] = {}
    for f in gold:
        if f[3] != "warc/revisit":
            responses.setdefault((f[0], f[5]), []).append(f)
    expect: Counter[tuple[str, int]] = Counter()
    for f in revisits:
        cands = [r for r in responses[(f[0], f[5])] if r[1] <= f[1]]
        best = max(cands, key=lambda r: r[1])
        expect[(best[10], int(best[9]))] += 1
    report = revisit_refs(pywb_coll.source(), RecordLoader(pywb_coll.resolver()))
    assert report.revisits == len(revisits) == 123 + 9
    assert not report.unresolved and report.empty_payload == 0
    assert {k: o.citations for k, o in report.originals.items()} == dict(expect)
    top = report.most_cited(3)
    assert [o.citations for o in top] == sorted(expect.values(), reverse=True)[:3]
    by_file: Counter[str] = Counter()
    for (name, _), n in expect.items():
        by_file[name] += n
    assert report.by_warc() == dict(by_file)


def test_lost_if_lists_captures_of_other_warcs(pywb_coll: Collection, corpus: Path) -> None:
    report = revisit_refs(pywb_coll.source())
    lost = lost_if(report, pywb_coll.source(), "iana.warc.gz")
    dupes_revisits = {int(f[9]) for f in _gold(corpus, "dupes.cdx")
                      if f[3] == "warc/revisit" and f[0].startswith("org,iana)")}
    assert {r.offset for r, _ in lost.lost} == dupes_revisits
    assert all(r.filename == "dupes.warc.gz" and o.filename == "iana.warc.gz"
               for r, o in lost.lost)
    assert not lost.recoverable
    # losing dupes.warc.gz costs nothing elsewhere: iana's revisits cite iana only
    assert not lost_if(report, pywb_coll.source(), "dupes.warc.gz").lost


def test_lost_if_listing_follows_top(pywb_coll: Collection) -> None:
    """`--top N --lost-if FILE` listed every lost capture whatever N was."""
    runner = CliRunner()
    base = ["revisits", "refs", str(pywb_coll.root), "--lost-if", "iana.warc.gz"]
    lost = lost_if(revisit_refs(pywb_coll.source()), pywb_coll.source(), "iana.warc.gz").lost
    assert len(lost) > 3
    text = runner.invoke(cli, [*base, "--top", "2"])
    assert text.exit_code == 0, text.output
    listed = [ln for ln in text.output.splitlines() if ln.startswith("  lost: ")]
    assert len(listed) == 2  # before: len(lost)
    assert f"  … {len(lost) - 2} more (--top N or --all lists them)" in text.output
    assert f"{len(lost)} captures in other WARCs would lose their payload" in text.output
    every = runner.invoke(cli, [*base, "--top", "1", "--all"])
    assert sum(ln.startswith("  lost: ") for ln in every.output.splitlines()) == len(lost)
    data = json.loads(runner.invoke(cli, [*base, "--top", "2", "--json"]).output)["lost_if"]
    assert data["lost_count"] == len(lost) and len(data["lost"]) == 2


def test_harvest_grouping() -> None:
    ref = RevisitRef("CRAWL2-20250501120002000-00000-1~h~0.warc.gz", 0, "http://a/", "a)/",
                     "20250501120002", "sha1:X")
    assert harvest_of(ref, "file") == ref.filename
    assert harvest_of(ref, "prefix") == "CRAWL2"
    assert harvest_of(ref, "year") == "2025"


def test_cli_refs_on_a_recrawl(tmp_path: Path) -> None:
    rc = write_recrawl(tmp_path)
    coll = Collection.init(tmp_path / "coll")
    list(coll.add([*rc.crawl1.glob("*.warc.gz"), *rc.crawl2.glob("*.warc.gz")]))
    coll.close()
    runner = CliRunner()
    res = runner.invoke(cli, ["revisits", "refs", str(tmp_path / "coll"), "--json",
                              "--group-by", "prefix", "--top", "50",
                              "--cited-more-than", "0", "-o", str(tmp_path / "cited.jsonl"),
                              "--lost-if", next(rc.crawl1.glob("*.warc.gz")).name])
    assert res.exit_code == 0, res.output
    data = json.loads(res.output)
    # every revisit of crawl 2 but the empty one and the one with no original
    assert data["revisits"] == len(rc.revisit_source) + 1
    assert data["empty_payload"] == 1
    assert [u["url"] for u in data["unresolved"]] == [rc.missing_uri]
    assert data["resolved"] == len(rc.revisit_source) - 1
    cited = {(o["url"], o["citations"]) for o in data["most_cited"]}
    expect = Counter(src for url, src in rc.revisit_source.items() if not src.endswith("empty"))
    assert cited == set(expect.items())
    assert all(o["harvests"] == {"CRAWL2": o["citations"]} for o in data["most_cited"])
    lines = [json.loads(x) for x in (tmp_path / "cited.jsonl").read_text().splitlines()]
    assert len(lines) == len(expect) and all(x["citations"] > 0 for x in lines)
    assert len(data["lost_if"]["lost"]) == len(rc.revisit_source) - 1
    every = json.loads(runner.invoke(cli, ["revisits", "refs", str(tmp_path / "coll"),
                                           "--json", "--top", "1", "--all"]).output)
    assert len(every["most_cited"]) == every["originals"] == len(expect)
    bad = runner.invoke(cli, ["revisits", "refs", str(tmp_path / "coll"), "--lost-if", "x.warc"])
    assert bad.exit_code == 2 and "no WARC of that name" in bad.output
    text = runner.invoke(cli, ["revisits", "refs", str(tmp_path / "coll")])
    assert text.exit_code == 0 and "1 unresolved" in text.output


@pytest.mark.parametrize("step", [1, 3, 17])
def test_ranged_url_scans_equal_one_scan_per_key(pywb_coll: Collection, step: int) -> None:
    source = pywb_coll.source()
    keys = sorted({line.urlkey for line in source.scan(KeyRange("", None))})[::step]
    keys.append("zz,not,indexed)/")
    got = dict(url_captures_in_order(source, keys, first_group=2))
    assert list(got) == keys
    for k in keys:
        want = UrlCaptures.read(source, k)
        assert got[k].all_lines == want.all_lines, k
        assert got[k].by_digest == want.by_digest and got[k].stamps == want.stamps
    assert not got["zz,not,indexed)/"].all_lines
