"""Range requests on archived payloads (RFC 9110 §14): 206 with Content-Range, 416 with
``bytes */len``, several ranges or bad syntax → 200 full; on an uncompressed WARC (read
by seeking) and a gzipped one."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from replay_support import BIG, VIDEO, build_collections
from starlette.testclient import TestClient

from index_stores import StoreChoice
from webark.apps.replay.app import create_server
from webark.apps.replay.range import ByteRange, Unsatisfiable, parse_range
from webark.warc.reader import read_record_at

VIDEO_URL = "/site/20200701000000{}/http://site.test/video.bin"


@pytest.fixture(scope="module")
def colls(
    tmp_path_factory: pytest.TempPathFactory, corpus: Path, index_store: StoreChoice
) -> Path:
    return build_collections(tmp_path_factory.mktemp("replay"), corpus, index_store.init)


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
    from webark.apps.replay.select import Chosen, select_capture

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


def test_etag_is_strong_and_stable_across_modes(client: TestClient) -> None:
    raw = client.get(VIDEO_URL.format("id_"))
    rewritten_mode = client.get(VIDEO_URL.format(""))
    etag = raw.headers["etag"]
    assert etag.startswith('"wa-') and etag.endswith('"') and len(etag) == 32
    assert rewritten_mode.headers["etag"] == etag  # same bytes, same tag
    other = client.get("/site/20200701000000id_/http://site.test/big.bin",
                       headers={"Range": "bytes=0-0"})  # fmt: skip
    assert other.headers["etag"] != etag


@pytest.mark.parametrize("mod", ["id_", ""])
def test_if_range_with_the_current_etag_gets_the_range(client: TestClient, mod: str) -> None:
    etag = client.head(VIDEO_URL.format(mod)).headers["etag"]
    r = client.get(VIDEO_URL.format(mod), headers={"Range": "bytes=10-19", "If-Range": etag})
    assert r.status_code == 206 and r.content == VIDEO[10:20]


@pytest.mark.parametrize("validator", [
    '"wa-somethingelse"',            # another entity tag
    "W/{etag}",                     # weak: never matches (RFC 9110 §13.1.5, strong comparison)
    "Wed, 01 Jul 2020 00:00:00 GMT",  # a date, but the response has no Last-Modified
    "not a validator",
])  # fmt: skip
def test_if_range_mismatch_sends_the_whole_payload(client: TestClient, validator: str) -> None:
    etag = client.head(VIDEO_URL.format("id_")).headers["etag"]
    headers = {"Range": "bytes=10-19", "If-Range": validator.format(etag=etag)}
    r = client.get(VIDEO_URL.format("id_"), headers=headers)
    assert r.status_code == 200 and "content-range" not in r.headers
    assert r.content == VIDEO


def test_if_range_mismatch_overrides_an_unsatisfiable_range(client: TestClient) -> None:
    r = client.get(VIDEO_URL.format("id_"),
                   headers={"Range": "bytes=999999-", "If-Range": '"old"'})  # fmt: skip
    assert r.status_code == 200 and r.content == VIDEO


def test_if_range_date_uses_the_archived_last_modified_in_id_mode(client: TestClient) -> None:
    # iana's screen.css was archived with Last-Modified: Tue, 19 Nov 2013 18:28:07 GMT
    url = "/pywb/20140126200625id_/http://www.iana.org/_css/2013.1/screen.css"
    full = client.get(url)
    assert full.headers["last-modified"] == "Tue, 19 Nov 2013 18:28:07 GMT"
    same = {"Range": "bytes=0-9", "If-Range": "Tue, 19 Nov 2013 18:28:07 GMT"}
    r = client.get(url, headers=same)
    assert r.status_code == 206 and r.content == full.content[:10]
    r = client.get(url, headers={**same, "If-Range": "Tue, 19 Nov 2013 18:28:08 GMT"})
    assert r.status_code == 200 and r.content == full.content
    # in rewriting mode the archived Last-Modified is X-Archive-Orig-: no date validator
    r = client.get(url.replace("id_", "im_"), headers=same)
    assert r.status_code == 200


@pytest.mark.parametrize("spec", [
    "bytes=0-99999999999999999999999999",     # an end past any payload: to the end
    "bytes=-99999999999999999999999999",      # a suffix longer than the payload: all of it
])  # fmt: skip
def test_huge_numbers_are_clamped(client: TestClient, spec: str) -> None:
    r = client.get(VIDEO_URL.format("id_"), headers={"Range": spec})
    assert r.status_code == 206 and r.headers["content-range"] == "bytes 0-99999/100000"
    assert r.content == VIDEO


@pytest.mark.parametrize("spec", [
    "bytes=99999999999999999999999-",  # a start past any payload
    "bytes=-0",
])  # fmt: skip
def test_unsatisfiable_extremes(client: TestClient, spec: str) -> None:
    r = client.get(VIDEO_URL.format("id_"), headers={"Range": spec})
    assert r.status_code == 416 and r.headers["content-range"] == "bytes */100000"


@pytest.mark.parametrize("spec", [
    "bytes=5-1", "bytes=--1", "bytes=-", "bytes=,,,,", "bytes=1-2-3", "bytes=0x10-20",
    "bytes=\u0663-\u0665",  # Arabic-Indic digits are not DIGIT (RFC 5234)
    "bytes=" + ",".join(f"{i}-{i}" for i in range(2000)),  # many ranges: 200, no multipart
])  # fmt: skip
def test_odd_ranges_get_the_whole_payload(spec: str) -> None:
    assert parse_range(spec, 100) is None


def test_if_range_rules() -> None:
    from datetime import UTC, datetime

    from webark.apps.replay.range import if_range_allows

    now = datetime(2026, 1, 1, tzinfo=UTC)
    lm = "Tue, 19 Nov 2013 18:28:07 GMT"
    assert if_range_allows(None, None, None)  # no If-Range: the range is served
    assert if_range_allows('"a"', '"a"', None)
    assert not if_range_allows('"a"', 'W/"a"', None)  # strong comparison
    assert not if_range_allows('W/"a"', '"a"', None)
    assert if_range_allows(lm, None, lm, now)
    assert not if_range_allows(lm, None, None, now)
    # a Last-Modified less than a second old is weak (§8.8.2.2): no match
    assert not if_range_allows(lm, None, lm, datetime(2013, 11, 19, 18, 28, 7, tzinfo=UTC))
