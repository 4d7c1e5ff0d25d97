"""``webark reduplicate`` on real deduplicated WARCs (pywb's dupes/iana/url-agnostic
files) and on a recrawl written with webark's own WarcWriter."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner
from reduplicate_recrawl import Recrawl, write_recrawl

from webark.cdx.indexer import FileIndex
from webark.cli.main import cli
from webark.index.collection import Collection
from webark.tools.reduplicate import ReduplicateOptions, reduplicate, revisit_ref
from webark.tools.reduplicate_harvest import HarvestError, select_harvest
from webark.tools.reduplicate_merge import ORIGINAL_ID_FIELD, STATUS_FIELD
from webark.tools.reduplicate_resolve import resolve_sorted
from webark.tools.reduplicate_state import STATE_NAME
from webark.warc.check import check_file
from webark.warc.reader import ArchiveReader, stored_record_bytes

PYWB = ("dupes.warc.gz", "iana.warc.gz", "example.warc.gz",
        "example-url-agnostic-orig.warc.gz", "example-url-agnostic-revisit.warc.gz")


def _collection(root: Path, files: list[Path]) -> Collection:
    coll = Collection.init(root)
    results = list(coll.add(files))
    assert all(r.status == "indexed" for r in results), results
    return coll


def _outputs(outdir: Path) -> list[Path]:
    return sorted(outdir.glob("*.warc.gz"))


def _captures(paths: list[Path]) -> Counter[tuple[str, str, str, str]]:
    """(urlkey, timestamp, status, digest) of every capture line (cdxj-indexer flavour)."""
    out: Counter[tuple[str, str, str, str]] = Counter()
    for p in paths:
        for line in FileIndex(p):
            if line.record_type in ("response", "revisit", "resource"):
                out[(line.urlkey, line.timestamp, line.status, line.digest)] += 1
    return out


@pytest.fixture(scope="module")
def pywb_run(corpus: Path, tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("redup-pywb")
    coll = _collection(root / "coll", [corpus / "pywb" / "warcs" / n for n in PYWB])
    harvest = select_harvest(coll, ["*"])
    report = reduplicate(coll, harvest, root / "out")
    yield coll, harvest, report, root / "out"
    coll.close()


def test_pywb_harvest_has_no_revisits_and_every_digest_verifies(pywb_run) -> None:
    _, harvest, report, out = pywb_run
    revisits_in = sum(1 for w in harvest for r in ArchiveReader(w.path) if r.type == "revisit")
    assert revisits_in == 9 + 123 + 1 + 1  # dupes, iana, example, url-agnostic
    assert report.ok and report.total("revisits") == revisits_in
    assert report.total("converted") == report.total("verified") == revisits_in
    outs = _outputs(out)
    assert len(outs) == len(PYWB)
    for w in harvest:
        p = out / (w.name.removesuffix(".warc.gz") + "-redup-00000.warc.gz")
        types = Counter(r.type for r in ArchiveReader(p))
        assert types["revisit"] == 0
        rep = check_file(p)
        assert rep.digest_counts["mismatch"] == 0
        # records copied byte for byte keep what was wrong with them (the ia-web-commons
        # record of example-url-agnostic-orig has a WARC/1.0 date with milliseconds);
        # nothing new is wrong
        assert sorted(e.code for e in rep.errors) == sorted(
            e.code for e in check_file(w.path).errors)
        converted = {r.offset for r in ArchiveReader(p) if STATUS_FIELD in r.headers}
        assert not [e for e in rep.errors if e.offset in converted]
    converted = [r for p in outs for r in ArchiveReader(p) if STATUS_FIELD in r.headers]
    assert len(converted) == revisits_in
    assert all(r.headers[STATUS_FIELD].startswith("verified;") for r in converted)
    assert all(r.headers.refers_to_target_uri and r.headers.refers_to_date for r in converted)
    assert all(r.headers.get(ORIGINAL_ID_FIELD, "").startswith("<urn:uuid:")
               for r in converted)


def test_pywb_output_passes_warcio_check(pywb_run) -> None:
    _, _, _, out = pywb_run
    proc = subprocess.run([sys.executable, "-m", "warcio.cli", "check", *map(str, _outputs(out))],
                          capture_output=True, text=True)
    if "No module named warcio.cli" in proc.stderr:
        warcio = shutil.which("warcio") or str(Path(sys.executable).with_name("warcio"))
        proc = subprocess.run([warcio, "check", *map(str, _outputs(out))],
                              capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_pywb_index_of_output_alone_equals_deduplicated_harvest(pywb_run) -> None:
    _, harvest, _, out = pywb_run
    before = _captures([Path(w.path) for w in harvest])
    after = _captures(_outputs(out))
    assert after == before
    assert sum(after.values()) == 12 + 171 + 3 + 1 + 1


def test_pywb_non_revisit_records_are_copied_byte_for_byte(pywb_run) -> None:
    _, harvest, _, out = pywb_run
    for w in harvest:
        out_file = out / (w.name.removesuffix(".warc.gz") + "-redup-00000.warc.gz")
        src = list(ArchiveReader(w.path))
        dst = list(ArchiveReader(out_file))
        assert dst[0].type == "warcinfo" and "reduplicated-from: " + w.name in (
            dst[0].block.read_all().decode())
        assert len(dst) == len(src) + 1
        for a, b in zip(src, dst[1:], strict=True):
            if a.type == "revisit":
                assert b.type == "response"
                assert b.record_id == a.record_id
                assert b.headers.date_str == a.headers.date_str
                assert b.http is not None and a.http is not None
                assert b.http.status == a.http.status
            else:
                assert stored_record_bytes(b) == stored_record_bytes(a)


def test_url_agnostic_revisit_takes_the_other_urls_payload(corpus: Path, tmp_path: Path) -> None:
    names = ("example-url-agnostic-orig.warc.gz", "example-url-agnostic-revisit.warc.gz")
    coll = _collection(tmp_path / "coll", [corpus / "pywb/warcs" / n for n in names])
    report = reduplicate(coll, select_harvest(coll, [names[1]]), tmp_path / "out")
    (rep,) = report.inputs
    assert rep.converted == rep.verified == 1 and "url-digest" not in rep.rules
    (resp,) = [r for r in ArchiveReader(_outputs(tmp_path / "out")[0]) if r.type == "response"]
    orig = next(r for r in ArchiveReader(corpus / "pywb/warcs" / names[0])
                if r.type == "response")
    assert resp.headers.refers_to_target_uri == orig.target_uri != resp.target_uri
    assert resp.headers[ORIGINAL_ID_FIELD] == orig.record_id
    assert resp.payload() == orig.payload()
    coll.close()


def test_unresolved_revisits_are_reported_and_kept(corpus: Path, tmp_path: Path) -> None:
    coll = _collection(tmp_path / "coll", [corpus / "pywb/warcs/dupes.warc.gz"])
    gold = [ln.split() for ln in (corpus / "pywb/cdx/dupes.cdx").read_text().splitlines()[1:]]
    # the revisits of iana.org pages have their originals in iana.warc.gz, absent here
    expect = {(int(f[9]), f[2], f[5]) for f in gold
              if f[3] == "warc/revisit" and f[0].startswith("org,iana)")}
    res = CliRunner().invoke(cli, ["reduplicate", str(tmp_path / "coll"), "dupes.warc.gz",
                                   "-o", str(tmp_path / "out"), "--json"])
    assert res.exit_code == 1, res.output
    data = json.loads(res.output)
    got = data["inputs"]["dupes.warc.gz"]["unresolved"]
    assert {(u["offset"], u["uri"].rstrip("/"), u["digest"].removeprefix("sha1:"))
            for u in got} == {(o, u.rstrip("/"), d) for o, u, d in expect}
    assert all(u["file"] == "dupes.warc.gz" for u in got)
    kept = [r for r in ArchiveReader(_outputs(tmp_path / "out")[0]) if r.type == "revisit"]
    assert sorted(r.offset for r in kept) != [] and len(kept) == len(expect)
    saved = json.loads((tmp_path / "out" / "reduplicate-report.json").read_text())
    assert saved["totals"]["unresolved"] == len(expect) and not saved["ok"]
    coll.close()


@pytest.fixture(scope="module")
def recrawl(tmp_path_factory: pytest.TempPathFactory) -> tuple[Recrawl, Collection]:
    root = tmp_path_factory.mktemp("redup-recrawl")
    rc = write_recrawl(root)
    coll = _collection(root / "coll", [*rc.crawl1.glob("*.warc.gz"), *rc.crawl2.glob("*.warc.gz")])
    return rc, coll


@pytest.mark.parametrize("strategy", ["sorted", "file-order"])
def test_recrawl_revisits_get_their_originals_payloads(recrawl, tmp_path: Path,
                                                       strategy: str) -> None:
    rc, coll = recrawl
    harvest = select_harvest(coll, ["CRAWL2-*"])
    assert [Path(w.path).parent.name for w in harvest] == ["warcs"]
    report = reduplicate(coll, harvest, tmp_path / "out",
                         ReduplicateOptions(strategy=strategy))  # type: ignore[arg-type]
    (inp,) = report.inputs
    assert inp.revisits == len(rc.revisit_source) + 1
    assert [u["uri"] for u in inp.unresolved] == [rc.missing_uri]
    assert inp.converted == len(rc.revisit_source) == inp.verified
    assert inp.empty_payload == 1 and not inp.unverified
    (out,) = _outputs(tmp_path / "out")
    assert check_file(out).ok
    records = list(ArchiveReader(out))
    responses = {r.target_uri: r for r in records if r.type == "response"}
    for url, src_url in rc.revisit_source.items():
        r = responses[url]
        assert r.payload() == rc.bodies[src_url], url
        assert r.headers.refers_to_target_uri == src_url
        assert r.headers[ORIGINAL_ID_FIELD] == rc.originals[src_url].record_id
    assert [r.type for r in records if r.target_uri == rc.missing_uri] == ["revisit", "request"]
    # 304: the stored response freshened with the 304's fields (RFC 9111 §4.3.4)
    nm = responses[rc.not_modified_uri]
    assert nm.http is not None and nm.http.status == 200
    assert nm.http.get("Cache-Control") == "max-age=60" and nm.http.get("ETag") == '"v1"'
    # same URL revisits keep their own headers
    assert responses["http://site.test/p0"].http.get("X-Visit") == "2"  # type: ignore[union-attr]
    # the chunked original keeps its framing under the revisit's chunked head
    ch = responses["http://site.test/chunked"]
    assert ch.http is not None and ch.http.is_chunked and ch.payload_was_dechunked_ok
    # index of the output alone = the deduplicated harvest, the 304 aside
    before = _captures([Path(w.path) for w in harvest])
    after = _captures([out])
    changed = {k for k in before if k[0] == "test,site)/p4"}
    assert {k for k in before if k not in changed} == {k for k in after if k[0] != "test,site)/p4"}
    assert [k[2] for k in changed] == ["304"]
    assert [k[2] for k in after if k[0] == "test,site)/p4"] == ["200"]


def test_resume_skips_finished_inputs_and_redoes_a_cut_one(recrawl, tmp_path: Path) -> None:
    rc, coll = recrawl
    harvest = select_harvest(coll, ["CRAWL*"])
    assert len(harvest) == 2
    out = tmp_path / "out"
    reduplicate(coll, harvest, out)
    _, second = harvest
    done = {p.name: p.stat().st_mtime_ns for p in _outputs(out)}
    # simulate a run killed while writing the second input
    state = json.loads((out / STATE_NAME).read_text())
    del state["inputs"][second.name]
    (out / STATE_NAME).write_text(json.dumps(state))
    cut_name = next(n for n in done if n.startswith("CRAWL2"))
    (out / cut_name).rename(out / (cut_name + ".open"))
    seen: list[str] = []
    report = reduplicate(coll, harvest, out,
                         progress=lambda ph, d, t: seen.append(ph))
    assert [i.resumed for i in report.inputs] == [True, False]
    assert not (out / (cut_name + ".open")).exists()
    after = {p.name: p.stat().st_mtime_ns for p in _outputs(out)}
    assert set(after) == set(done)
    first_out = next(n for n in done if n.startswith("CRAWL1"))
    assert after[first_out] == done[first_out]  # not written again
    assert after[cut_name] != done[cut_name]
    assert "write" in seen
    assert report.total("converted") == len(rc.revisit_source)


def test_time_range_and_job_selection(recrawl, tmp_path: Path) -> None:
    rc, coll = recrawl
    assert [w.name[:6] for w in select_harvest(coll, from_ts="2025")] == ["CRAWL2"]
    assert [w.name[:6] for w in select_harvest(coll, to_ts="2024")] == ["CRAWL1"]
    job = tmp_path / "job"
    shutil.copytree(rc.crawl2, job / "warcs")
    (job / "warcs" / "x.warc.gz.open").write_bytes(b"")
    (w,) = select_harvest(coll, job_dir=job)
    assert w.name.startswith("CRAWL2") and Path(w.path).parent == job / "warcs"
    with pytest.raises(HarvestError):
        select_harvest(coll, ["nothing-*"])
    with pytest.raises(HarvestError):
        select_harvest(coll)


def test_cli_reduplicate_and_rotation(recrawl, tmp_path: Path) -> None:
    _, coll = recrawl
    res = CliRunner().invoke(cli, ["reduplicate", str(coll.root), "--harvest-warcs",
                                   "CRAWL1-*", "-o", str(tmp_path / "o"),
                                   "--max-size", "2000"])
    assert res.exit_code == 0, res.output
    assert "0 unresolved" in res.output
    outs = _outputs(tmp_path / "o")
    assert len(outs) > 1  # rotated
    src = next(Path(w.path) for w in select_harvest(coll, ["CRAWL1-*"]))
    assert _captures(outs) == _captures([src])
    assert all(next(iter(ArchiveReader(p))).type == "warcinfo" for p in outs)


def test_missing_original_warc_falls_back_to_another_copy(tmp_path: Path) -> None:
    rc = write_recrawl(tmp_path)
    (crawl1,) = rc.crawl1.glob("*.warc.gz")
    replica = tmp_path / ("REPLICA-" + crawl1.name)
    shutil.copyfile(crawl1, replica)
    coll = _collection(tmp_path / "coll", [crawl1, replica, *rc.crawl2.glob("*.warc.gz")])
    harvest = select_harvest(coll, ["CRAWL2-*"])
    refs = [revisit_ref(w.name, r) for w in harvest for r in ArchiveReader(w.path)
            if r.type == "revisit"]
    firsts = {res.candidates[0][0].filename
              for res in resolve_sorted(coll.source(), refs).values() if res.candidates}
    assert crawl1.name in firsts <= {crawl1.name, replica.name}
    (coll.warcs_dir / crawl1.name).unlink()  # a copy some revisits try first is gone
    report = reduplicate(coll, harvest, tmp_path / "out1")
    (inp,) = report.inputs
    assert inp.converted == inp.verified == len(rc.revisit_source)
    assert [u["uri"] for u in inp.unresolved] == [rc.missing_uri]
    (out,) = _outputs(tmp_path / "out1")
    for r in ArchiveReader(out):
        if r.type == "response" and r.target_uri in rc.revisit_source:
            assert r.payload() == rc.bodies[rc.revisit_source[r.target_uri]]
    (coll.warcs_dir / replica.name).unlink()  # and now the other one
    report = reduplicate(coll, harvest, tmp_path / "out2")
    (inp,) = report.inputs
    assert inp.converted == 1  # the empty payload needs no original
    reasons = {u["uri"]: u["reason"] for u in inp.unresolved}
    assert len(reasons) == len(rc.revisit_source)
    assert all("not found" in reasons[u] for u in rc.revisit_source
               if not u.endswith("empty"))
    coll.close()
