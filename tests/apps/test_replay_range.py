"""Range requests on archived payloads (RFC 9110 §14): 206 with Content-Range, 416 with
``bytes */len``, several ranges or bad syntax → 200 full; on an uncompressed WARC (read
by seeking) and a gzipped one."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from replay_support import BIG, VIDEO, build_collections
from starlette.testclient import TestClient

from webark.apps.replay_app import create_server
from webark.apps.replay_range import ByteRange, Unsatisfiable, parse_range
from webark.warc.reader import read_record_at

VIDEO_URL = "/site/20200701000000{}/http://site.test/video.bin"


@pytest.fixture(scope="module")
def colls(tmp_path_factory: pytest.TempPathFactory, corpus: Path) -> Path:
    return build_collections(tmp_path_factory.mktemp("replay"), corpus)


@pytest.fixture(scope="module")
def client(colls: Path) -> Iterator[TestClient]:
    with TestClient(create_server(colls)) as c:
        yield c


@pytest.mark.parametrize("mod", ["id_", ""])  # video is not rewritten in either mode
@pytest.mark.parametrize(
    ("spec", "start", "end"),
    [("bytes=0-0", 0, 0), ("bytes=10-19", 10, 19), ("bytes=99990-", 99990, 99999),
     ("bytes=-25", 99975, 99999), ("bytes=50000-200000", 50000, 99999),
     ("bytes = 5 - 9", 5, 9)],
)  # fmt: skip
def test_range_206(client: TestClient, mod: str, spec: str, start: int, end: int) -> None:
    r = client.get(VIDEO_URL.format(mod), headers={"Range": spec})
    assert r.status_code == 206
    assert r.headers["content-range"] == f"bytes {start}-{end}/100000"
    assert r.headers["content-length"] == str(end - start + 1)
    assert r.content == VIDEO[start : end + 1]
    assert r.headers["content-type"] == "video/mp4"
    assert r.headers["memento-datetime"] == "Wed, 01 Jul 2020 00:00:00 GMT"


@pytest.mark.parametrize("spec", ["bytes=100000-", "bytes=200000-300000", "bytes=-0"])
def test_range_416(client: TestClient, spec: str) -> None:
    r = client.get(VIDEO_URL.format("id_"), headers={"Range": spec})
    assert r.status_code == 416
    assert r.headers["content-range"] == "bytes */100000"
    assert r.content == b""


@pytest.mark.parametrize("spec", [None, "bytes=0-1,5-6", "items=0-5", "bytes=9-3", "bytes=x-"])
def test_full_response_without_a_usable_range(client: TestClient, spec: str | None) -> None:
    headers = {"Range": spec} if spec else {}
    r = client.get(VIDEO_URL.format("id_"), headers=headers)
    assert r.status_code == 200
    assert r.headers["accept-ranges"] == "bytes" and "content-range" not in r.headers
    assert r.headers["content-length"] == "100000" and r.content == VIDEO


def test_range_on_compressed_warc_and_head(client: TestClient, colls: Path) -> None:
    payload = read_record_at(colls / "pywb" / "warcs" / "iana.warc.gz", 334).payload()
    url = "/pywb/20140126200624id_/http://www.iana.org/"
    r = client.get(url, headers={"Range": "bytes=100-199"})
    assert r.status_code == 206 and r.content == payload[100:200]
    assert r.headers["content-range"] == f"bytes 100-199/{len(payload)}"
    h = client.head(VIDEO_URL.format("id_"), headers={"Range": "bytes=0-9"})
    assert h.status_code == 206 and h.headers["content-length"] == "10"


def test_rewritten_html_ignores_range(client: TestClient) -> None:
    r = client.get("/pywb/20140126200624/http://www.iana.org/", headers={"Range": "bytes=0-9"})
    assert r.status_code == 200 and "content-range" not in r.headers and len(r.content) > 10


def test_range_on_the_corpus_uncompressed_warc(client: TestClient, colls: Path) -> None:
    payload = read_record_at(colls / "pywb" / "warcs" / "example.warc", 460).payload()
    r = client.get("/pywb/20140103030321id_/http://example.com?example=1",
                   headers={"Range": "bytes=-20"})  # fmt: skip
    assert r.status_code == 206 and r.content == payload[-20:]
    n = len(payload)
    assert r.headers["content-range"] == f"bytes {n - 20}-{n - 1}/{n}"


def test_parse_range() -> None:
    assert parse_range("bytes=0-", 10) == ByteRange(0, 9, 10)
    assert parse_range("bytes=-100", 10) == ByteRange(0, 9, 10)
    assert parse_range("bytes=3-3", 10) == ByteRange(3, 3, 10)
    assert parse_range(None, 10) is None
    with pytest.raises(Unsatisfiable) as e:
        parse_range("bytes=0-", 0)
    assert e.value.content_range() == "bytes */0"


def test_uncompressed_warc_range_is_read_by_seeking(client: TestClient) -> None:
    from webark.apps.replay_select import Chosen, select_capture

    server = client.app
    ctx = server.collections.get("site")  # type: ignore[attr-defined]
    sel = select_capture(ctx, "http://site.test/video.bin", "20200701000000")
    assert isinstance(sel, Chosen)
    at = sel.capture.payload_file_offset()
    assert at is not None  # payload_range reads the file there, nothing before it
    with open(sel.capture.payload_record.path, "rb") as f:  # type: ignore[union-attr]
        f.seek(at + 1234)
        assert f.read(16) == VIDEO[1234:1250]


def test_big_payload_streamed_whole_and_in_ranges(client: TestClient) -> None:
    url = "/site/20200701000000id_/http://site.test/big.bin"
    with client.stream("GET", url) as r:
        assert r.status_code == 200 and r.headers["content-length"] == str(len(BIG))
        pieces = list(r.iter_raw())
    assert b"".join(pieces) == BIG and len(pieces) > 1
    r = client.get(url, headers={"Range": "bytes=1000-2500000"})
    assert r.status_code == 206 and r.content == BIG[1000:2500001]
    assert r.headers["content-range"] == f"bytes 1000-2500000/{len(BIG)}"
