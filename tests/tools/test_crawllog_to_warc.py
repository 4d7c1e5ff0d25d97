"""crawl.log → revisit WARCs on the corpus's real Heritrix logs, and on a crawl made by
the test itself on 127.0.0.1 (whose own revisit records tell what the originals are)."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from click.testing import CliRunner

from webark.cli.main import cli
from webark.crawl.controller import CrawlController
from webark.crawl.job import job_from_mapping
from webark.index.collection import Collection
from webark.index.locations import LocationResolver, PrefixLocator
from webark.index.sorted_file import SortedCdxFile
from webark.tools.crawllog_to_warc import convert_crawl_logs
from webark.tools.crawllog_to_warc_originals import OriginalFinder
from webark.warc.check import check_file
from webark.warc.reader import ArchiveReader
from webark.warc.record import WarcRecord

NAS = "crawllog/netarchivesuite"
REVISIT_PROFILE = "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest"


def duplicate_lines(path: Path) -> list[str]:
    """Lines with a DeDuplicator/H3 duplicate annotation, found by plain text splitting
    (independent of webark.crawllog): the annotations column is the 12th field."""
    out = []
    for raw in path.read_bytes().decode("utf-8", "replace").splitlines():
        fields = raw.split()
        if len(fields) < 12:
            continue
        tokens = fields[11].split(",")
        if any(t.startswith(("duplicate:", "warcRevisit:", "unwritten:")) for t in tokens):
            out.append(raw)
    return out


def records(paths: list[str]) -> list[WarcRecord]:
    return [rec for p in paths for rec in ArchiveReader(p)]


def warcio_check(paths: list[str]) -> subprocess.CompletedProcess[str]:
    exe = Path(sys.executable).with_name("warcio")
    return subprocess.run([str(exe), "check", *paths], capture_output=True, text=True)


@pytest.mark.parametrize(("name", "expected"), [("crawl-9.log", 122), ("idna-crawl.log", 90)])
def test_one_revisit_per_duplicate_line(corpus: Path, tmp_path: Path, name: str,
                                        expected: int) -> None:
    log = corpus / NAS / name
    dups = duplicate_lines(log)
    assert len(dups) == expected
    report = convert_crawl_logs([log], tmp_path / "out")
    assert report.revisits == expected and report.metadata == expected
    assert report.unresolved == expected and report.resolved == 0
    assert report.malformed == 0 and not report.skipped
    assert report.by_kind == {"origin": expected}
    recs = records(report.warcs)
    revisits = [r for r in recs if r.type == "revisit"]
    metas = [r for r in recs if r.type == "metadata"]
    assert len(revisits) == len(metas) == expected
    for raw, rev, meta in zip(dups, revisits, metas, strict=True):
        f = raw.split()
        assert rev.target_uri == f[3]
        # WARC-Date is the fetch-begin time of column 9, at second precision
        ts = f[8].split("+")[0]
        assert rev.headers.date_str == (
            f"{ts[0:4]}-{ts[4:6]}-{ts[6:8]}T{ts[8:10]}:{ts[10:12]}:{ts[12:14]}Z"
        )
        assert rev.headers.payload_digest == f[9]  # already sha1:BASE32 in these logs
        assert rev.headers.profile == REVISIT_PROFILE
        assert rev.content_length == 0 and rev.headers.content_type is None
        assert rev.headers.refers_to is None and rev.headers.refers_to_target_uri is None
        assert meta.headers.concurrent_to == [rev.record_id]
        fields = dict(
            line.split(": ", 1) for line in meta.block.read_all().decode().split("\r\n") if line
        )
        assert fields["crawlLogLine"] == raw
        assert fields["via"] == f[5]
        assert fields["hopsFromSeed"] == f[4]
    for p in report.warcs:
        assert check_file(p).ok
    res = warcio_check(report.warcs)
    assert res.returncode == 0, res.stdout + res.stderr


def test_warcinfo_names_sources_with_sha1_and_counts(corpus: Path, tmp_path: Path) -> None:
    logs = [corpus / NAS / "crawl-9.log", corpus / NAS / "oldjob-11-crawl.log"]
    report = convert_crawl_logs(logs, tmp_path / "out")
    info = next(iter(ArchiveReader(report.warcs[0])))
    assert info.type == "warcinfo"
    text = info.block.read_all().decode()
    for log in logs:
        sha1 = base64.b32encode(hashlib.sha1(log.read_bytes()).digest()).decode()
        assert f"crawlLog: {log}\r\n" in text
        assert f"crawlLogSha1: sha1:{sha1}\r\n" in text
    assert "crawlLogCounts: lines=219 duplicates=122 malformed=0" in text
    # oldjob-11: 1,988 lines of Heritrix 1.x (unprefixed Base32 digests), no duplicates
    assert "crawlLogCounts: lines=1988 duplicates=0 malformed=0" in text
    assert "webark crawllog to-warc" in text
    assert report.not_duplicate == (219 - 122) + 1988


def test_rotation_by_size(corpus: Path, tmp_path: Path) -> None:
    report = convert_crawl_logs([corpus / NAS / "crawl-9.log"], tmp_path / "out",
                                max_size=20_000)
    assert len(report.warcs) > 3
    total = 0
    for p in report.warcs:
        assert Path(p).stat().st_size <= 20_000
        recs = list(ArchiveReader(p))
        assert recs[0].type == "warcinfo"
        # a revisit and its metadata record are never split across files
        types = [r.type for r in recs[1:]]
        assert types == ["revisit", "metadata"] * (len(types) // 2)
        total += types.count("revisit")
    assert total == 122
    assert warcio_check(report.warcs).returncode == 0


def test_malformed_lines_reported_and_processing_continues(corpus: Path,
                                                           tmp_path: Path) -> None:
    bad = corpus / NAS / "invalid-crawl.log"
    report = convert_crawl_logs([bad, corpus / NAS / "crawl-9.log"], tmp_path / "out")
    assert report.malformed == 3
    assert [p.split(": ", 1)[0] for p in report.problems] == [
        f"{bad}:2", f"{bad}:3", f"{bad}:4"
    ]
    assert "size is not a number" in report.problems[0]
    assert report.revisits == 122  # the next log was converted


def test_no_duplicates_writes_nothing(corpus: Path, tmp_path: Path) -> None:
    report = convert_crawl_logs([corpus / "crawllog/ukwa/h3-crawl.log"], tmp_path / "out")
    assert report.revisits == 0 and report.warcs == []
    assert report.not_duplicate == 76


def test_cli(corpus: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    res = runner.invoke(cli, ["crawllog", "to-warc", str(corpus / NAS / "crawl-9.log"),
                              "-o", str(tmp_path / "a"), "--prefix", "NAS9", "--no-metadata"])
    assert res.exit_code == 0, res.output
    assert res.output.startswith("122 revisit records (0 with their original")
    warcs = sorted((tmp_path / "a").iterdir())
    assert len(warcs) == 1 and warcs[0].name.startswith("NAS9-")
    assert [r.type for r in ArchiveReader(warcs[0])].count("metadata") == 0
    res = runner.invoke(cli, ["crawllog", "to-warc", str(corpus / NAS / "invalid-crawl.log"),
                              "-o", str(tmp_path / "b")])
    assert res.exit_code == 1
    assert "invalid-crawl.log:3: field 4 (uri)" in res.output


# --- originals resolved from an index: a real dedup crawl on loopback -----------------

SAME = b"<html><body><p>same payload on every page</p></body></html>"


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        if self.path == "/":
            body = b"".join(b'<a href="/p/%d.html">p</a>' % i for i in range(1, 5))
        elif self.path.startswith("/p/"):
            body = SAME
        else:
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture(scope="module")
def dedup_crawl(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A crawl with dedup on: /p/1..4.html share one payload, so three are revisits."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        job_dir = tmp_path_factory.mktemp("crawl") / "job"
        job = job_from_mapping({
            "seeds": [f"http://127.0.0.1:{server.server_address[1]}/"],
            "job_dir": str(job_dir), "contact": ["archive@example.org"],
            "allow_private": True, "min_delay": 0.0, "max_delay": 0.0, "dedup": True,
        })
        # in a thread of its own: immune to an event loop another test left running
        crawl = threading.Thread(target=lambda: asyncio.run(CrawlController(job).run()))
        crawl.start()
        crawl.join(120)
        assert not crawl.is_alive()
    finally:
        server.shutdown()
        server.server_close()
    yield job_dir


def crawler_revisits(job_dir: Path) -> dict[str, WarcRecord]:
    out = {}
    for p in sorted((job_dir / "warcs").iterdir()):
        for rec in ArchiveReader(p):
            if rec.type == "revisit":
                out[rec.target_uri or ""] = rec
    return out


def assert_same_references(ours: list[WarcRecord], theirs: dict[str, WarcRecord],
                           with_id: bool) -> None:
    assert len(ours) == len(theirs) == 3
    for rec in ours:
        ref = theirs[rec.target_uri or ""]
        assert rec.headers.refers_to_target_uri == ref.headers.refers_to_target_uri
        assert rec.headers.refers_to_date == ref.headers.refers_to_date
        assert rec.headers.payload_digest == ref.headers.payload_digest
        assert rec.headers.date_str == ref.headers.date_str
        assert rec.headers.refers_to == (ref.headers.refers_to if with_id else None)


def test_originals_from_collection(dedup_crawl: Path, tmp_path: Path) -> None:
    log = dedup_crawl / "logs" / "crawl.log"
    assert len(duplicate_lines(log)) == 3
    coll = Collection.init(tmp_path / "coll")
    added = list(coll.add(sorted((dedup_crawl / "warcs").iterdir())))
    assert [r.status for r in added] == ["indexed"]
    finder = OriginalFinder(coll.source(), coll.resolver())
    report = convert_crawl_logs([log], tmp_path / "out", finder=finder)
    coll.close()
    assert report.revisits == report.resolved == report.with_record_id == 3
    ours = [r for r in records(report.warcs) if r.type == "revisit"]
    # the crawler's own revisit records name the same originals (its index is in the
    # collection too: revisits found by digest are not taken as originals)
    assert_same_references(ours, crawler_revisits(dedup_crawl), with_id=True)
    for p in report.warcs:
        assert check_file(p).ok
    assert warcio_check(report.warcs).returncode == 0


def test_originals_from_sorted_cdx_via_cli(dedup_crawl: Path, tmp_path: Path) -> None:
    warcs = dedup_crawl / "warcs"
    cdx = tmp_path / "crawl.cdxj"
    runner = CliRunner()
    res = runner.invoke(cli, ["index", "-o", str(cdx), str(warcs)])
    assert res.exit_code == 0, res.output
    log = dedup_crawl / "logs" / "crawl.log"
    res = runner.invoke(cli, ["crawllog", "to-warc", str(log), "-o", str(tmp_path / "out"),
                              "--cdx", str(cdx)])
    assert res.exit_code == 0, res.output
    assert res.output.startswith("3 revisit records (3 with their original, 0 with WARC-Refers-To")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["crawl.cdxj", "out"]  # side index
    # was built in a temporary folder, not beside the user's file
    ours = [r for r in records(sorted(map(str, (tmp_path / "out").iterdir())))
            if r.type == "revisit"]
    assert_same_references(ours, crawler_revisits(dedup_crawl), with_id=False)
    # with --warcs the record ids are read from the WARCs
    finder = OriginalFinder(SortedCdxFile(cdx), LocationResolver([PrefixLocator(warcs)]))
    report = convert_crawl_logs([log], tmp_path / "out2", finder=finder)
    assert report.with_record_id == 3
