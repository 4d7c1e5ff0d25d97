"""Replay of archived content: rewritten HTML/CSS (title, links, head insert, banner),
``id_`` byte identity with the payload, content codings, charsets, revisits (URL-agnostic
original, a 300-revisit chain), fall-through past self-redirects and lost WARCs."""

from __future__ import annotations

import gzip
from collections.abc import Iterator
from pathlib import Path

import pytest
from replay_support import CHAIN, CHAIN_BODY, GZ_HTML, LATIN1_BODY, NM_BODY, build_collections
from starlette.testclient import TestClient

from index_stores import StoreChoice
from webark.apps.replay.app import create_server
from webark.warc.reader import read_record_at


@pytest.fixture(scope="module")
def colls(
    tmp_path_factory: pytest.TempPathFactory, corpus: Path, index_store: StoreChoice
) -> Path:
    return build_collections(tmp_path_factory.mktemp("replay"), corpus, index_store.init)


@pytest.fixture(scope="module")
def client(colls: Path) -> Iterator[TestClient]:
    with TestClient(create_server(colls)) as c:
        yield c


def test_html_rewritten_with_title_links_and_banner(client: TestClient) -> None:
    r = client.get("/pywb/20140126200624/http://www.iana.org/", follow_redirects=False)
    assert r.status_code == 200
    assert r.headers["content-type"] == "text/html; charset=UTF-8"
    html = r.text
    assert "<title>Internet Assigned Numbers Authority</title>" in html
    # stylesheets, scripts, images and links point into the archive at this capture
    assert 'href="/pywb/20140126200624cs_/http://www.iana.org/_css/2013.1/screen.css"' in html
    assert 'src="/pywb/20140126200624js_/http://www.iana.org/_js/2013.1/jquery.js"' in html
    assert 'href="/pywb/20140126200624/http://www.iana.org/domains"' in html
    assert 'href="http://www.iana.org/' not in html and 'src="http://' not in html
    # head insert right after <head>: client config, client script, banner data + script
    head = html.split("<head>", 1)[1]
    assert head.startswith(
        '<script>window.__webark = {"prefix": "/pywb/", "timestamp": "20140126200624", '
        '"url": "http://www.iana.org/", "modifier": ""};</script>'
        '<script src="/_webark/client.js"></script>'
    )
    assert '"date":"2014-01-26 20:06:24 UTC"' in head
    assert '"captures":"/pywb/*/http://www.iana.org/"' in head
    assert '"next":{"href":"/pywb/20140127171238/http://www.iana.org/"' in head
    assert '"prev":null' in head
    assert '<script src="/_webark/static/banner.js" defer></script>' in head
    # the recorded Content-Length (-1 here) and chunking are not applied
    assert r.headers["content-length"] == str(len(r.content))
    assert r.headers["x-archive-orig-transfer-encoding"] == "chunked"


def test_no_banner_in_iframe_and_raw_modes(client: TestClient) -> None:
    r = client.get("/pywb/20140126200624if_/http://www.iana.org/")
    assert r.status_code == 200
    assert "window.__webark = " in r.text and "__webark_banner" not in r.text
    assert 'href="/pywb/20140126200624if_/http://www.iana.org/domains"' in r.text
    r = client.get("/pywb/20140126200624id_/http://www.iana.org/")
    assert "__webark" not in r.text and "banner.js" not in r.text


def test_id_mode_is_byte_identical_to_the_payload(client: TestClient, colls: Path) -> None:
    cases = [
        ("20140126200624", "http://www.iana.org/", "iana.warc.gz", 334),
        ("20140126200625", "http://www.iana.org/_css/2013.1/screen.css", "iana.warc.gz", 41238),
    ]
    for ts, url, warc, offset in cases:
        rec = read_record_at(colls / "pywb" / "warcs" / warc, offset)
        r = client.get(f"/pywb/{ts}id_/{url}")
        assert r.status_code == 200
        assert r.content == rec.payload()
        assert rec.http is not None
        assert r.headers["content-type"] == rec.http.get("Content-Type")
        assert r.headers["server"] == rec.http.get("Server")
        assert "memento-datetime" in r.headers


def test_id_mode_keeps_content_encoding_default_mode_decodes(client: TestClient) -> None:
    url = "/site/20200501000000{}/http://site.test/gz.html"
    with client.stream("GET", url.format("id_")) as raw:
        assert raw.headers["content-encoding"] == "gzip"
        stored = b"".join(raw.iter_raw())  # the bytes sent, not decoded by the client
    assert stored == gzip.compress(GZ_HTML, mtime=0)
    page = client.get(url.format(""))
    assert "content-encoding" not in page.headers
    assert page.headers["x-archive-orig-content-encoding"] == "gzip"
    assert "<title>Gzipped page</title>" in page.text
    assert 'src="/site/20200501000000im_/http://site.test/img/logo.png"' in page.text


def test_css_rewritten(client: TestClient) -> None:
    r = client.get("/pywb/20140126200625cs_/http://www.iana.org/_css/2013.1/screen.css")
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/css")
    assert "url(/pywb/20140126200625im_/http://www.iana.org/_img/" in r.text.replace('"', "")
    assert "__webark" not in r.text


def test_non_utf8_page_bytes_kept(client: TestClient) -> None:
    r = client.get("/site/20200501000000/http://site.test/latin1.html")
    assert r.headers["content-type"] == "text/html; charset=iso-8859-1"
    body = r.content
    assert b"<title>Caf\xe9 cr\xe8me</title>" in body
    assert b"<p>D\xe9j\xe0 vu \xe0 la caf\xe9t\xe9ria</p>" in body
    assert b'href="/site/20200501000000/http://site.test/menu.html"' in body
    assert body.endswith(LATIN1_BODY.split(b'<a href="/menu.html">')[1])


def test_revisit_with_original_at_another_url(client: TestClient, colls: Path) -> None:
    # written here: ?v=2 is a revisit of ?v=1 (same digest, other query string)
    r = client.get("/site/20200402000000id_/http://site.test/page?v=2")
    assert r.status_code == 200
    assert r.content == b"<html><title>Page</title><p>same payload, two URLs</p></html>"
    # pywb's sample: the revisit of http://test@example.com/ has its original at
    # http://example.iana.org/ in another WARC (URL-agnostic dedup)
    r = client.get("/pywb/20130729195151id_/http://test@example.com/")
    assert r.status_code == 200
    orig = read_record_at(colls / "pywb" / "warcs" / "example-url-agnostic-orig.warc.gz", 353)
    assert r.content == orig.payload() and b"<title>Example Domain</title>" in r.content


def test_revisit_chain_of_300_each_replays_the_original_payload(client: TestClient) -> None:
    for i in range(CHAIN + 1):  # the original at 00:00, then one revisit per minute
        ts = f"20200201{i // 60:02d}{i % 60:02d}00"
        r = client.get(f"/site/{ts}id_/http://site.test/chain.txt", follow_redirects=False)
        assert r.status_code == 200, (ts, r.status_code)
        assert r.content == CHAIN_BODY
        assert r.headers["memento-datetime"].endswith("GMT")


def test_self_redirect_pair_falls_through(client: TestClient) -> None:
    # /a/ at 00:00:00 redirects to /a, /a at 00:00:05 back to /a/; /a/ at 00:01:00 is a page
    for path in ("20200101000000/http://site.test/a/", "20200101000005/http://site.test/a"):
        r = client.get(f"/site/{path}", follow_redirects=False)
        assert r.status_code == 302
        assert r.headers["location"] == "http://testserver/site/20200101000100/http://site.test/a/"
    r = client.get("/site/20200101000005/http://site.test/a")  # followed
    assert r.status_code == 200 and "<title>A</title>" in r.text
    assert str(r.url) == "http://testserver/site/20200101000100/http://site.test/a/"


def test_lost_warc_falls_through_to_next_closest(
    client: TestClient, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level("WARNING", logger="webark.apps.replay.select"):
        r = client.get("/site/20200610000000/http://site.test/gone.html", follow_redirects=False)
    assert r.status_code == 302
    assert r.headers["location"].endswith("/site/20200601000000/http://site.test/gone.html")
    assert any("SITE-LOST-" in m and "not found" in m for m in caplog.messages)
    r = client.get(r.headers["location"])
    assert "gone: the far one" in r.text


def test_redirect_capture_points_into_archive(client: TestClient) -> None:
    # example.warc: http://www.iana.org/domains/example answered 302 (Location absolute)
    r = client.get("/pywb/20140128051539/http://www.iana.org/domains/example",
                   follow_redirects=False)  # fmt: skip
    assert r.status_code == 302
    assert r.headers["location"].startswith("/pywb/20140128051539/http")
    raw = client.get("/pywb/20140128051539id_/http://www.iana.org/domains/example",
                     follow_redirects=False)  # fmt: skip
    assert raw.status_code == 302
    assert raw.headers["location"].startswith("/pywb/20140128051539id_/http")


def test_cache_busting_parameters_fuzzy_match(client: TestClient) -> None:
    # archived with _=1507495059747; asked with another cache-buster
    r = client.get("/site/2020/http://site.test/api?q=1&_=1600000000000", follow_redirects=False)
    assert r.status_code == 302
    assert r.headers["location"].endswith(
        "/site/20200801000000/http://site.test/api?q=1&_=1507495059747"
    )
    # archived without the parameter; same timestamp: served at once
    r = client.get("/site/20200801000000id_/http://site.test/data.json?_=1600000000123")
    assert r.status_code == 200 and r.content == b'{"b": 2}'
    # other parameters must still match
    r = client.get("/site/2020/http://site.test/api?q=2&_=1600000000000", follow_redirects=False)
    assert r.status_code == 404


def test_server_not_modified_revisit_replays_the_original_freshened(client: TestClient) -> None:
    """A 304 stored as a server-not-modified revisit replays as the original 200 with
    its body, the 304's fields replacing the original's (RFC 9111 §4.3.4); before,
    replay served the empty 304 itself."""
    raw = client.get("/site/20200902000000id_/http://site.test/nm.html")
    assert raw.status_code == 200
    assert raw.content == NM_BODY
    assert raw.headers["cache-control"] == "max-age=3600"  # from the 304
    assert raw.headers["x-old"] == "kept"  # from the original
    assert raw.headers["content-type"] == "text/html; charset=utf-8"
    page = client.get("/site/20200902000000/http://site.test/nm.html")
    assert page.status_code == 200 and b"<p>same</p>" in page.content
    latest = client.get("/site/http://site.test/nm.html", follow_redirects=True)
    assert latest.status_code == 200 and b"<p>same</p>" in latest.content
