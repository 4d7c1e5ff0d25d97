"""The Spark jobs (webark.spark) on real corpus WARCs in local[2] mode, against the
single-machine commands they scale out: ``webark index --sort`` (byte-identical CDXJ),
the SQLite index store (the ZipNum shards answer the same queries), ``webark stats``
(same figures) and ``webark dedup build`` (same index). One Spark session for the
module (the JVM takes a while to start).

PySpark and Java come with ``WEBARK_SPARK=1 bash scripts/setup.sh`` (``.ci/run`` sets
it): without them these tests skip, and fail under CI=true."""

from __future__ import annotations

import importlib.util
import os
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from corpus_location import CORPUS
from system_packages import require
from webark.cdx.formats import format_cdxj
from webark.cdx.indexer import IndexOptions, index_file
from webark.cli.main import cli
from webark.dedup.build import load
from webark.dedup.sqlite_dedup import open_index
from webark.index.source import KeyRange, key_range
from webark.index.sqlite_store import SqliteStore
from webark.index.zipnum import ZipNumIndex
from webark.tools.stats import archive_stats

ARCHIVES = sorted(
    str(p) for p in CORPUS.rglob("*")
    if p.is_file() and p.name.endswith((".warc", ".warc.gz", ".arc", ".arc.gz"))
)
SETUP = "WEBARK_SPARK=1 bash scripts/setup.sh (pip install 'webark[spark]', Java 17)"


@pytest.fixture(scope="module")
def spark() -> Iterator[Any]:
    require(importlib.util.find_spec("pyspark") is not None, "PySpark", SETUP)
    require(bool(os.environ.get("JAVA_HOME") or shutil.which("java")), "Java", SETUP)
    from webark.spark.session import spark_session

    session = spark_session("local[2]", "webark tests", {"spark.ui.enabled": "false"},
                            quiet=True)
    yield session
    session.stop()


@pytest.fixture(scope="module")
def indexed(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    from webark.spark.cdx_job import run_index

    d = tmp_path_factory.mktemp("spark-index")
    # small ranges and blocks: files are cut into several tasks, shards into many blocks
    report, out = run_index(spark, ARCHIVES, cdx_path=str(d / "all.cdxj"),
                            zipnum_dir=str(d / "zipnum"), shards=3, block_lines=64,
                            split_bytes=16_384)
    return {"dir": d, "report": report, "out": out}


def test_index_job_is_byte_identical_to_webark_index(indexed: dict[str, Any],
                                                     tmp_path: Path) -> None:
    report, out = indexed["report"], indexed["out"]
    ref = tmp_path / "ref.cdxj"
    r = CliRunner().invoke(cli, ["index", "--sort", "-o", str(ref), *ARCHIVES])
    assert r.exit_code in (0, 1), r.output
    want = ref.read_bytes()
    assert len(want.splitlines()) > 1000
    assert Path(out.cdx).read_bytes() == want
    assert report.tasks > len(ARCHIVES)  # big files were split into ranges
    assert report.written == len(want.splitlines())
    # broken records: reported with file and offset, the rest indexed, exit status 1
    assert any("example-extra.warc @ 3207: error: content-length-mismatch" in p
               for p in report.problems.listed)
    assert report.errors > 0 and report.exit_status == 1


def test_zipnum_shards_answer_like_the_sqlite_store(indexed: dict[str, Any],
                                                   tmp_path: Path) -> None:
    out = indexed["out"]
    assert len(out.shards) == 3
    zn = ZipNumIndex(out.idx)
    store = SqliteStore(tmp_path / "s.sqlite3")
    for p in ARCHIVES:
        store.add_file(os.path.basename(p) + f"#{ARCHIVES.index(p)}",
                       list(index_file(p, IndexOptions(post_append=True))))

    def proj(lines: Any) -> list[str]:
        # the store holds each file under a unique name (some base names repeat)
        return sorted(format_cdxj(replace(x, filename=x.filename.split("#")[0]))
                      for x in lines)

    queries = [KeyRange("", None), key_range("http://www.iana.org/"),
               key_range("iana.org/_css/", "prefix"), key_range("example.com", "domain"),
               key_range("*.iana.org", None, "20140127"),
               key_range("http://httpbin.org/post", "prefix")]
    for rng in queries:
        want = proj(store.scan(rng))
        assert want, rng
        assert proj(zn.scan(rng)) == want, rng
        assert proj(zn.scan(rng, reverse=True)) == want


def test_collection_serves_the_zipnum_index(indexed: dict[str, Any], tmp_path: Path) -> None:
    """The shards dropped into a collection's indexes/ are one of its index sources."""
    from webark.index.collection import Collection

    coll = Collection.init(tmp_path / "c")
    for f in Path(indexed["out"].idx).parent.iterdir():
        shutil.copy(f, coll.indexes_dir / f.name)
    lines = list(coll.source().scan(key_range("http://www.iana.org/")))
    assert {x.filename for x in lines} >= {"iana.warc.gz"}
    assert all(x.urlkey == "org,iana)/" for x in lines) and len(lines) >= 3


def test_stats_job_equals_webark_stats(spark: Any) -> None:
    from webark.spark.stats_job import run_stats

    report, stats = run_stats(spark, ARCHIVES)
    want = archive_stats(ARCHIVES).to_json()
    assert stats.to_json() == want
    assert want["captures"]["captures"] > 500 and want["problems_total"] > 0
    assert report.exit_status == 1


def test_dedup_job_equals_dedup_build(spark: Any, tmp_path: Path) -> None:
    from webark.spark.dedup_job import run_dedup

    report, reports = run_dedup(spark, str(tmp_path / "spark.sqlite3"), ARCHIVES)
    with open_index(tmp_path / "one.sqlite3") as idx:
        for p in ARCHIVES:
            load(idx, "warc", p)

    def dump(p: Path) -> list[str]:
        with sqlite3.connect(p) as db:
            return list(db.iterdump())

    want = dump(tmp_path / "one.sqlite3")
    assert len(want) > 100
    assert dump(tmp_path / "spark.sqlite3") == want
    assert report.written == sum(r.loaded for r in reports) > 100


def test_captures_table_has_common_crawl_columns(spark: Any, tmp_path: Path) -> None:
    from webark.spark.captures_job import COLUMNS, capture_options, run_captures

    files = [str(CORPUS / "pywb/warcs/iana.warc.gz"), str(CORPUS / "pywb/warcs/dupes.warc.gz")]
    report = run_captures(spark, files, str(tmp_path / "t"), crawl="CC-TEST")
    df = spark.read.parquet(str(tmp_path / "t"))
    assert set(df.columns) == {c for c, _ in COLUMNS}
    captures = sum(1 for p in files for _ in index_file(p, capture_options()))
    assert captures == 171 + 12  # every response and revisit (no metadata records)
    assert df.count() == report.written == captures
    assert {r.subset for r in df.select("subset").distinct().collect()} >= {
        "warc", "revisit", "crawldiagnostics"}
    row = df.where("url = 'http://www.iana.org/' and warc_filename = 'iana.warc.gz'").collect()
    assert len(row) == 1
    r = row[0]
    line = next(x for x in index_file(files[0]) if x.url == "http://www.iana.org/")
    assert (r.url_surtkey, r.url_host_name, r.url_host_registered_domain, r.url_host_tld) == (
        "org,iana)/", "www.iana.org", "iana.org", "org")
    assert (r.fetch_status, r.content_mime_type, r.warc_record_offset, r.warc_record_length) == (
        200, "text/html", line.offset, line.length)
    assert r.content_digest == line.digest.removeprefix("sha1:")
    assert r.fetch_time.strftime("%Y%m%d%H%M%S") == line.timestamp
    assert (r.crawl, r.url_protocol, r.url_path, r.warc_record_type) == (
        "CC-TEST", "http", "/", "response")


def test_cli_prints_ui_and_summary_and_exit_status(tmp_path: Path) -> None:
    """`webark spark stats` in its own process (its own JVM): the UI address first, the
    summary last, broken records on stderr, exit status 1."""
    require(importlib.util.find_spec("pyspark") is not None, "PySpark", SETUP)
    files = [str(CORPUS / "pywb/warcs/iana.warc.gz"), str(CORPUS / "pywb/warcs/example-extra.warc")]
    r = subprocess.run([str(Path(sys.executable).parent / "webark"), "spark", "stats", "--json",
                        "--master", "local[1]", *files], capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 1, r.stderr
    assert "UI at http://127.0.0.1:" in r.stderr
    assert "example-extra.warc @ 3207" in r.stderr
    last = r.stderr.strip().splitlines()[-1]
    assert last.startswith("spark stats: 2 files") and "errors" in last
    assert '"captures"' in r.stdout
