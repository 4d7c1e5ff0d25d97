"""Fuzzy matches in the replay app (issue 17): the rule is named in a header, the
redirect goes where the page needs it, and a near miss never turns into another kind
of resource than the page asked for (Sec-Fetch-Dest, modifier, extension). Also: a
WebSocket handshake is refused."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from replay_support import _capture, _ok, when
from starlette.testclient import TestClient
from starlette.websockets import WebSocketDisconnect

from webark.apps.replay.app import FUZZY_HEADER, create_server
from webark.index.collection import Collection
from webark.warc.writer import WarcWriter

T = when("2022-05-01 00:00:00")
TS = "20220501000000"
S = "http://site.test/"


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    root = tmp_path_factory.mktemp("fuzzy")
    w = WarcWriter(root / "w", prefix="FUZZY")
    with w:
        _capture(w, S + "app.js?v=1", _ok(b"var a = 1;", "application/javascript"), T)
        # a version parameter whose only capture is an error page served as HTML
        _capture(w, S + "logo.png?v=1", _ok(b"<title>oops</title>"), T)
        _capture(w, S + "font.woff2?_=1600000000000", _ok(b"wOF2", "application/octet-stream"), T)
        _capture(w, S + "docs/index.html", _ok(b"<title>docs</title><a href='a.html'>a</a>"), T)
        _capture(w, S + "search.html", _ok(b"<title>search</title>"), T)
    coll = Collection.init(root / "colls" / "fz")
    with coll:
        assert all(r.status == "indexed" for r in coll.add([Path(p) for p in w.paths]))
    with TestClient(create_server(root / "colls")) as c:
        yield c


def test_header_names_the_rule_and_the_capture_is_served(client: TestClient) -> None:
    r = client.get(f"/fz/{TS}js_/{S}app.js?v=2", follow_redirects=False)
    assert r.status_code == 200 and r.text == "var a = 1;"
    assert r.headers[FUZZY_HEADER] == "version-param"
    assert f'<{S}app.js?v=1>; rel="original"' in r.headers["link"]
    # another timestamp: the redirect goes to the capture's own URL, and says why
    r = client.get(f"/fz/2021js_/{S}app.js?v=2", follow_redirects=False)
    assert r.status_code == 302 and r.headers[FUZZY_HEADER] == "version-param"
    assert r.headers["location"] == f"http://testserver/fz/{TS}js_/{S}app.js?v=1"
    # an exact match has no such header
    assert FUZZY_HEADER.lower() not in client.get(f"/fz/{TS}js_/{S}app.js?v=1").headers


def test_a_near_miss_keeps_the_resource_type(client: TestClient) -> None:
    # the page asks for an image; the only other version is an HTML error page
    for headers, mode in (({"Sec-Fetch-Dest": "image"}, ""), ({}, "im_"), ({}, "")):
        r = client.get(f"/fz/{TS}{mode}/{S}logo.png?v=2", headers=headers)
        assert r.status_code == 404, (headers, mode)
    # a script asked for as a stylesheet is not served either
    r = client.get(f"/fz/{TS}/{S}app.js?v=2", headers={"Sec-Fetch-Dest": "style"})
    assert r.status_code == 404
    # fonts are often application/octet-stream: accepted for a font
    r = client.get(f"/fz/{TS}/{S}font.woff2?_=1700000000000", headers={"Sec-Fetch-Dest": "font"})
    assert r.status_code == 200 and r.headers[FUZZY_HEADER] == "cache-buster"


def test_index_page_and_extra_parameters_redirect_as_a_page_needs(client: TestClient) -> None:
    # /docs/ is served at /docs/index.html: relative URLs the page builds must resolve there
    r = client.get(f"/fz/{TS}/{S}docs/", follow_redirects=False)
    assert r.status_code == 302 and r.headers[FUZZY_HEADER] == "index-page"
    assert r.headers["location"] == f"http://testserver/fz/{TS}/{S}docs/index.html"
    # search.html?q=… keeps its query in the address bar (the page's script reads it)
    r = client.get(f"/fz/2021/{S}search.html?q=warc", follow_redirects=False)
    assert r.status_code == 302 and r.headers[FUZZY_HEADER] == "extra-param"
    assert r.headers["location"] == f"http://testserver/fz/{TS}/{S}search.html?q=warc"


def test_websocket_handshake_is_refused(client: TestClient) -> None:
    url = f"/fz/{TS}/ws://site.test/socket"
    with pytest.raises(WebSocketDisconnect) as exc, client.websocket_connect(url) as ws:
        ws.receive_text()
    assert exc.value.code == 1008
