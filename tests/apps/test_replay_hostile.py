"""Replay under attack and over a damaged archive: hostile request targets (path
traversal, NUL, backslashes, absurd timestamps, odd URLs), pathological HTML and
mislabelled charsets, WARCs deleted/truncated/corrupted after indexing (503 "Capture
damaged"), revisits without any original, odd Range and Accept-Datetime values, and many
requests at once on a real ``webark serve`` process. Never a 5xx or a traceback for bad
input, nothing
sent to the live web (the Content-Security-Policy of every memento confines the page
to the replay server), and the server stays up."""

from __future__ import annotations

import re
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest
from replay_hostile import HUGE_LINE, MISLABELLED, ODD_URLS, PATHOLOGICAL, build_hostile
from replay_support import build_collections
from starlette.testclient import TestClient

from http_wait import wait_until_serving
from index_stores import StoreChoice
from webark.apps.replay.app import create_server
from webark.apps.replay.paths import clamp_timestamp
from webark.apps.replay.render import RAW_CSP, REPLAY_CSP

IANA = "http://www.iana.org/"


@pytest.fixture(scope="module")
def colls(
    tmp_path_factory: pytest.TempPathFactory, corpus: Path, index_store: StoreChoice
) -> Path:
    root = tmp_path_factory.mktemp("hostile")
    build_collections(root, corpus, index_store.init)  # pywb + site
    build_hostile(root)
    return root / "colls"


@pytest.fixture(scope="module")
def client(colls: Path) -> Iterator[TestClient]:
    with TestClient(create_server(colls), raise_server_exceptions=True) as c:
        yield c


# -- request targets -----------------------------------------------------------------
TRAVERSAL = [
    "/../../etc/passwd", "/%2e%2e/%2e%2e/etc/passwd", "/..%2f..%2fetc%2fpasswd",
    "/pywb%2f..%2f..%2f/2014/" + IANA, "/..%5c..%5cwindows/2014/" + IANA,
    "/pywb%00/2014/" + IANA, "/%00/", "/./2014/" + IANA, "/.hidden/", "/_webark/static/../../x",
    "/_webark/static/%2e%2e/%2e%2e/pyproject.toml", "/_webark/static/..%2freplay_app.py",
    "/_webark/static/banner.js%00.txt", "/_webark/static/\\..\\x", "/pywb/%2e%2e/cdx?url=x",
    "/" + "a" * 5000 + "/", "/pywb/2014/http://www.iana.org/../../../../etc/passwd",
    "/pywb/2014/file:///etc/passwd", "/pywb/id_/file:///etc/passwd",
]  # fmt: skip


@pytest.mark.parametrize("path", TRAVERSAL)
def test_traversal_is_a_clean_404_or_400(client: TestClient, path: str) -> None:
    r = client.get(path, follow_redirects=False)
    assert r.status_code in (302, 400, 404), (path, r.status_code)
    assert b"root:" not in r.content and b"[project]" not in r.content
    assert b"Traceback" not in r.content
    if r.status_code == 302:  # only ever to another archival URL of the same server
        assert r.headers["location"].startswith("http://testserver/pywb/")


@pytest.mark.parametrize(("ts", "clamped"), [
    ("0", "00010101000000"), ("2014", "20140101000000"), ("20141399", "20141231000000"),
    ("20140231", "20140228000000"), ("99999999999999", "99991231235959"),
    ("123456789012345678901234567890", "12341231231234"), ("00000000000000", "00010101000000"),
])  # fmt: skip
def test_clamp_timestamp(ts: str, clamped: str) -> None:
    assert clamp_timestamp(ts) == clamped


@pytest.mark.parametrize("ts", ["0", "00000000000000", "20141399", "99999999999999",
                                "1" * 40, "20140231", "2014022930"])  # fmt: skip
def test_absurd_timestamps_redirect_to_a_real_capture(client: TestClient, ts: str) -> None:
    # pywb's leniency: the closest capture to what the digits mean, at its own URL
    r = client.get(f"/pywb/{ts}/{IANA}", follow_redirects=False)
    assert r.status_code == 302
    assert re.search(r"/pywb/\d{14}/http://www\.iana\.org/$", r.headers["location"])
    r = client.get(f"/pywb/diff/{ts}/2014/{IANA}")
    assert r.status_code == 200


@pytest.mark.parametrize("head", ["abc", "2014abc", "-1", "2014-01-01", "%32%30%31%34"])
def test_letters_in_the_timestamp_are_part_of_the_url(client: TestClient, head: str) -> None:
    # like pywb: not a timestamp, so /coll/{head}/... is a TimeGate for a URL with no capture
    r = client.get(f"/pywb/{head}/{IANA}", follow_redirects=False)
    assert r.status_code == 404 and "Not in archive" in r.text


@pytest.mark.parametrize("url", [
    "http://[::1/", "http://[fe80::1%25eth0]/", "http://www.iana.org:99999/",
    "http://www.iana.org:-1/", "http://a:b@www.iana.org/", "http://www.iana.org/%",
    "http://www.iana.org/%zz%", "http://www.iana.org/%ff%fe", "http://..", "http://-.com/",
    "http://999.999.999.999/", "http:\\\\www.iana.org\\", "http://%00/", "*.", "*", ":",
    "http://" + "a" * 30000 + ".com/", IANA + "x" * 30000,
    IANA + "?" + "&".join(f"a{i}={i}" for i in range(3000)),
])  # fmt: skip
@pytest.mark.parametrize("prefix", ["/pywb/2014/", "/pywb/", "/pywb/*/", "/pywb/2014id_/",
                                    "/pywb/diff/2014/2015/", "/pywb/timemap/link/"])  # fmt: skip
def test_odd_urls_never_fail(client: TestClient, prefix: str, url: str) -> None:
    r = client.get(prefix + url, follow_redirects=False)
    assert r.status_code in (200, 302, 400, 404), (prefix, url[:80], r.status_code)


@pytest.mark.parametrize("value", [
    "garbage", "Thu, 31 Feb 2014 20:06:24 GMT", "Thu, 30 Jan 0000 20:06:24 GMT",
    "Thu, 30 Jan 99999 20:06:24 GMT", "Thu, 30 Jan 2014 99:99:99 GMT",
    "Thu, 30 Jan 2014 20:06:24 +0100", "2014-01-30T20:06:24Z", "A" * 20000,
    "Thu, 30 Jan 2014 20:06:24 GMT, Fri, 31 Jan 2014 20:06:24 GMT",
])  # fmt: skip
def test_bad_accept_datetime_is_400(client: TestClient, value: str) -> None:
    r = client.get(f"/pywb/{IANA}", headers={"Accept-Datetime": value}, follow_redirects=False)
    assert r.status_code == 400 and "Accept-Datetime" in r.text
    assert r.headers["vary"] == "accept-datetime"


# -- pathological captures -------------------------------------------------------------
MODES = ["", "id_", "if_", "mp_", "js_", "cs_", "im_", "oe_"]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", [*PATHOLOGICAL, *MISLABELLED])
def test_pathological_pages_replay(client: TestClient, name: str, mode: str) -> None:
    r = client.get(f"/hostile/2021{mode}/http://site.test/{name}", follow_redirects=True)
    assert r.status_code == 200, (name, mode)
    assert r.headers["content-security-policy"] == (RAW_CSP if mode == "id_" else REPLAY_CSP)
    if mode == "id_":  # the archived bytes, untouched
        body = PATHOLOGICAL.get(name) or MISLABELLED[name][1]
        assert r.content == body


def test_pathological_markup_is_rewritten_where_the_browser_would_load(
    client: TestClient,
) -> None:
    html = client.get("/hostile/20210101000002/http://site.test/nested-scripts.html").content
    assert b'src="http://live.example/i.png"' not in html  # after the scripts: rewritten
    assert b"/hostile/20210101000002im_/http://live.example/i.png" in html
    # an unclosed comment runs to the end of the document: the link before it is rewritten
    html = client.get("/hostile/20210101000001/http://site.test/unclosed-comment.html").content
    assert b'href="/hostile/20210101000001/http://site.test/a"' in html
    # the page's bytes outside rewritten values survive a wrong charset label
    html = client.get("/hostile/20210101000007/http://site.test/utf8-but-cp1252.html").content
    assert b"caf\xe9 \x93quoted\x94" in html


def test_a_10_mb_single_line_page(client: TestClient) -> None:
    r = client.get("/hostile/20210101000000/http://site.test/huge-line.html")
    assert r.status_code == 200
    assert r.content.count(b'href="/hostile/20210101000000/http://site.test/p') == 10_000
    assert len(r.content) > len(HUGE_LINE)


@pytest.mark.parametrize("url", [*ODD_URLS, "http://b\u00fccher.example/idn.html"])
def test_odd_archived_urls_replay(client: TestClient, url: str) -> None:
    r = client.get(f"/hostile/2021/{url}", follow_redirects=True)
    assert r.status_code == 200 and b"<title>odd</title>" in r.content, url


# -- a damaged archive -----------------------------------------------------------------
@pytest.mark.parametrize("name", ["deleted.html", "corrupt.html", "truncated.html"])
@pytest.mark.parametrize("mode", ["", "id_"])
def test_damaged_storage_is_a_503_capture_damaged(client: TestClient, name: str, mode: str) -> None:
    # issue 20 item 7: a deleted WARC, bytes overwritten, a WARC cut in the middle of the
    # record; never a 404 "Not in archive" nor a 200 with what is left of the body
    r = client.get(f"/hostile/20210101000000{mode}/http://site.test/{name}")
    assert r.status_code == 503 and "Capture damaged" in r.text, r.text[-2000:]
    assert "Traceback" not in r.text and "zzzzzzzzzz" not in r.text


def test_revisit_without_original_is_not_in_archive(client: TestClient) -> None:
    r = client.get("/hostile/20210101000000/http://site.test/orphan.html")
    assert r.status_code == 404 and "Not in archive" in r.text
    assert "Traceback" not in r.text


def test_redirect_to_an_unarchived_live_url_stays_in_the_archive(client: TestClient) -> None:
    r = client.get("/hostile/20210101000016/http://site.test/away", follow_redirects=False)
    assert r.status_code == 302
    assert r.headers["location"] == "/hostile/20210101000016/http://live.example/elsewhere"
    r = client.get(r.headers["location"])
    assert r.status_code == 404 and "Not in archive" in r.text


def test_raw_archived_date_is_not_a_second_date_field(client: TestClient) -> None:
    r = client.get("/pywb/20140126200625id_/http://www.iana.org/_css/2013.1/screen.css")
    assert r.headers["x-archive-orig-date"] == "Sun, 26 Jan 2014 20:06:25 GMT"
    assert len(r.headers.get_list("date")) <= 1


# -- a real server process -----------------------------------------------------------
def _raw_get(port: int, target: bytes, headers: bytes = b"") -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=60) as s:
        s.sendall(b"GET " + target + b" HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
                  + headers + b"\r\n")  # fmt: skip
        data = b""
        while chunk := s.recv(65536):
            data += chunk
    return data


RAW_TARGETS = [
    b"/../../etc/passwd", b"/pywb/2014/http://www.iana.org/\x00", b"/pywb\\..\\x/",
    b"/pywb/2014/http://\xce\xbf\xcf\x85.gr/", b"/pywb/2014/http://www.iana.org/ x",
    b"/pywb/" + b"9" * 200 + b"/http://www.iana.org/", b"/pywb/2014/" + b"%" * 3000,
    b"*", b"/pywb/2014/http://www.iana.org/\x7f", b"/_webark/static/\xff",
]  # fmt: skip


def test_real_server_survives_hostile_requests(colls: Path) -> None:
    cmd = [sys.executable, "-c", "from webark.cli.main import main; main()", "serve",
           str(colls), "--port", "0"]  # fmt: skip
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        m = re.search(r"at http://127\.0\.0\.1:(\d+)/", proc.stdout.readline())
        assert m
        port = int(m.group(1))
        base = f"http://127.0.0.1:{port}"
        wait_until_serving(base)
        for target in RAW_TARGETS:
            status = _raw_get(port, target).split(b"\r\n", 1)[0]
            assert re.match(rb"HTTP/1\.1 (200|302|400|404) ", status), (target, status)
        huge = (b"bytes=0-" + b"9" * 400, b"bytes=" + b"0-0," * 4000)
        for value in (b"bytes=-0", b"bytes=5-1", *huge):
            status = _raw_get(port, b"/site/20200701000000id_/http://site.test/video.bin",
                              b"Range: " + value + b"\r\n").split(b"\r\n", 1)[0]  # fmt: skip
            assert re.match(rb"HTTP/1\.1 (200|206|416) ", status), (value[:40], status)
        paths = [
            "/hostile/2021/http://site.test/huge-line.html", "/hostile/2021/http://site.test/deep.html",
            "/pywb/2014/http://www.iana.org/", "/site/20200701000000id_/http://site.test/big.bin",
            "/hostile/2021/http://site.test/corrupt.html", "/pywb/*/http://www.iana.org/",
            "/pywb/cdx?url=www.iana.org/&matchType=prefix", "/pywb/0/http://www.iana.org/",
            "/hostile/2021/http://site.test/bad-headers.js",
            "/hostile/2021id_/http://site.test/bad-headers.js",
        ]  # fmt: skip

        def fetch(path: str) -> int:
            with httpx.Client(base_url=base, timeout=120) as c:
                return c.get(path, follow_redirects=True).status_code

        with ThreadPoolExecutor(16) as pool:
            codes = list(pool.map(fetch, paths * 6))
        assert all(c in (200, 503) for c in codes), codes
        assert codes.count(503) == 6  # the corrupt record (capture damaged), nothing else
        assert httpx.get(f"{base}/pywb/", timeout=10).status_code == 200  # still up
        assert proc.poll() is None
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            _, err = proc.communicate(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            _, err = proc.communicate()
    assert "Traceback" not in err, err[-3000:]


def test_query_fallback_keeps_the_asked_url(client: TestClient) -> None:
    # Sphinx's search.html?q=… was archived without a query: its script reads the query
    asked = "http://site.test/search.html?q=json&check_keywords=yes"
    r = client.get(f"/hostile/2021/{asked}", follow_redirects=False)
    assert r.status_code == 302
    assert r.headers["location"] == f"http://testserver/hostile/20210101000016/{asked}"
    r = client.get(r.headers["location"])
    assert r.status_code == 200 and b"<title>search</title>" in r.content
    # a program's query selects its content: no fallback for .php and the like
    r = client.get("/hostile/2021/http://site.test/list.php?page=2")
    assert r.status_code == 404
    assert client.get("/hostile/2021/http://site.test/list.php").status_code == 200


def test_query_fallback_never_uses_another_query(client: TestClient) -> None:
    # page?v=1 and page?v=2 are archived, page (no query) is not: v=3 is not in archive
    r = client.get("/site/2020/http://site.test/page?v=3")
    assert r.status_code == 404 and "Not in archive" in r.text
