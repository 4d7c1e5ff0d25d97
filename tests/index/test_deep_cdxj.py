"""One deeply nested CDXJ line (issue 20 item 6): a sorted CDXJ dropped into a
collection's ``indexes/`` has, between two good lines of ``http://example.com?example=1``, a line
whose JSON nests 100,000 arrays. ``json.loads`` of it raised RecursionError, which was
a 500 for every replay and CDX query over that key range and a traceback in
``collection query`` and ``dedup build --from-cdx``. It is now skipped with a warning,
like any other unreadable line, and the good lines around it are answered."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from starlette.testclient import TestClient

from webark.apps.replay.app import create_server
from webark.cdx.formats import parse_cdxj, parse_line, parse_ng
from webark.cli.main import cli
from webark.index.capture_select import captures
from webark.index.collection import Collection
from webark.index.sorted_file import SortedCdxFile

DEPTH = 100_000
URL = "http://example.com?example=1"  # example.warc.gz: 20140103030321 at offset 333
DIGEST = "sha1:B2LTWWPUOYAH7UIPQ7ZUPQ4VMBSVC36A"


def _line(ts: str, extra: str = "") -> str:
    head = json.dumps({"url": URL, "mime": "text/html", "status": "200",
                       "digest": DIGEST, "length": "1043", "offset": "333",
                       "filename": "example.warc.gz"})  # fmt: skip
    return f"com,example)/?example=1 {ts} {head[:-1]}{extra}}}\n"


DEEP = _line("20140101000000", ', "x": ' + "[" * DEPTH + "]" * DEPTH)


@pytest.fixture(scope="module")
def coll(tmp_path_factory: pytest.TempPathFactory, corpus: Path) -> Path:
    root = tmp_path_factory.mktemp("deep") / "colls"
    c = Collection.init(root / "web")
    with c:
        assert [r.status for r in c.add([corpus / "pywb/warcs/example.warc.gz"])] == ["indexed"]
    # the real capture is at 20140103030321; two more lines (same record) around the deep one
    lines = [_line("20130101000000"), DEEP, _line("20150101000000")]
    (c.indexes_dir / "planted.cdxj").write_text("".join(lines))
    return root / "web"


def test_parsers_raise_value_error_not_recursion_error() -> None:
    with pytest.raises(ValueError, match="nested"):
        parse_cdxj(DEEP)
    with pytest.raises(ValueError, match="nested"):
        parse_line(DEEP)
    ng = "com,example)/ 2014-01-01T00:00:00Z http://example.com/ - response a.warc 0 "
    with pytest.raises(ValueError, match="nested"):
        parse_ng(ng + "[" * DEPTH + "]" * DEPTH)


def test_sorted_file_skips_the_line_with_a_warning(
    coll: Path, caplog: pytest.LogCaptureFixture
) -> None:
    src = SortedCdxFile(coll / "indexes" / "planted.cdxj")
    with caplog.at_level(logging.WARNING):
        got = [x.timestamp for x in captures(src, URL)]
    assert got == ["20130101000000", "20150101000000"]
    assert any("nested" in r.getMessage() for r in caplog.records), caplog.text


@pytest.fixture(scope="module")
def client(coll: Path) -> Iterator[TestClient]:
    with TestClient(create_server(coll.parent), raise_server_exceptions=True) as c:
        yield c


def test_replay_over_the_key_range(client: TestClient) -> None:
    r = client.get(f"/web/20140103030321id_/{URL}")
    assert r.status_code == 200 and b"Example Domain" in r.content
    r = client.get(f"/web/*/{URL}")
    assert r.status_code == 200 and "20140103030321" in r.text


def test_cdx_api_over_the_key_range(client: TestClient) -> None:
    r = client.get("/web/cdx", params={"url": URL, "output": "json"})
    assert r.status_code == 200
    stamps = [json.loads(x)["timestamp"] for x in r.text.splitlines()]
    assert "20140103030321" in stamps and "20150101000000" in stamps
    assert "20140101000000" not in stamps


def test_collection_query_cli(coll: Path) -> None:
    res = CliRunner().invoke(cli, ["collection", "query", str(coll), URL])
    assert res.exception is None or isinstance(res.exception, SystemExit), res.exception
    assert res.exit_code == 0, res.output
    stamps = [line.split(" ")[1] for line in res.stdout.splitlines()]
    assert stamps == ["20130101000000", "20140103030321", "20140103030341", "20150101000000"]


def test_dedup_build_from_cdx(coll: Path, tmp_path: Path) -> None:
    planted = coll / "indexes" / "planted.cdxj"
    res = CliRunner().invoke(
        cli, ["dedup", "build", str(tmp_path / "d.sqlite"), "--from-cdx", str(planted)]
    )
    assert res.exception is None or isinstance(res.exception, SystemExit), res.exception
    assert res.exit_code == 0, res.output
    assert f"{planted}:2: skipped" in res.stderr and "nested" in res.stderr
