"""Pages of the replay app: home, collection, capture calendar and URL lists, search
redirects, the app's own files, the diff view; the resolution API still answers beside
them."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from replay_support import build_collections
from starlette.testclient import TestClient

from index_stores import StoreChoice
from webark.apps.replay.app import create_server
from webark.apps.replay.calendar import build_calendar
from webark.apps.replay.diff import side_by_side, visible_lines
from webark.apps.replay.paths import fix_url, parse_target
from webark.index.collection import Collection
from webark.index.source import key_range
from webark.rewrite.client import client_script


@pytest.fixture(scope="module")
def colls(
    tmp_path_factory: pytest.TempPathFactory, corpus: Path, index_store: StoreChoice
) -> Path:
    return build_collections(tmp_path_factory.mktemp("replay"), corpus, index_store.init)


@pytest.fixture(scope="module")
def client(colls: Path) -> Iterator[TestClient]:
    with TestClient(create_server(colls)) as c:
        yield c


def test_home_html_and_api_json(client: TestClient) -> None:
    r = client.get("/", headers={"Accept": "text/html,application/xhtml+xml"})
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/html")
    assert '<a href="/pywb/">pywb</a>' in r.text and '<a href="/site/">site</a>' in r.text
    assert 'action="/_webark/search"' in r.text
    r = client.get("/")  # the resolution API's JSON list, unchanged
    assert r.json()["collections"][0] == {
        "name": "pywb", "cdx": "/pywb/cdx", "timemap": "/pywb/timemap/link/"
    }  # fmt: skip
    assert client.get("/openapi.json").json()["openapi"].startswith("3.")


def test_collection_page(client: TestClient) -> None:
    r = client.get("/site", follow_redirects=False)
    assert r.status_code == 301 and r.headers["location"] == "/site/"
    r = client.get("/site/")
    assert r.status_code == 200 and "Collection site" in r.text
    assert 'href="/site/*/http://site.test/chain.txt"' in r.text
    assert "301 captures" in r.text  # chain.txt: the original and 300 revisits


def test_capture_calendar_counts(client: TestClient, colls: Path) -> None:
    url = "http://www.iana.org/_css/2013.1/screen.css"
    with Collection.open(colls / "pywb") as c:
        lines = list(c.source().scan(key_range(url, "exact")))
    r = client.get(f"/pywb/*/{url}")
    assert r.status_code == 200
    assert f"{len(lines)} captures between 2014-01-26 20:06:25 UTC and 2014-01-27 17:12:39 UTC" \
        in r.text  # fmt: skip
    jan26 = sum(1 for x in lines if x.timestamp.startswith("20140126"))
    cell = re.search(r'<td class="has" title="(\d+) captures"><a href="([^"]+)">26</a>', r.text)
    assert cell is not None and int(cell.group(1)) == jan26
    assert cell.group(2) == f"/pywb/20140126200625/{url}"  # the day's first capture
    assert '<a href="#y2014">2014 <span class="count">17</span></a>' in r.text
    assert r.text.count('<a href="/pywb/2014012') == len(lines) + 2  # list + 2 day cells
    assert f'href="/pywb/timemap/link/{url}"' in r.text
    assert f'href="/pywb/diff/20140126200625/20140126200653/{url}"' in r.text


def test_prefix_and_domain_url_lists(client: TestClient) -> None:
    r = client.get("/pywb/*/http://www.iana.org/_css/*")
    assert r.status_code == 200
    for u in ("http://www.iana.org/_css/2013.1/screen.css",
              "http://www.iana.org/_css/2013.1/print.css"):  # fmt: skip
        assert f'<a href="/pywb/*/{u}">{u}</a>' in r.text
    assert "http://www.iana.org/domains" not in r.text
    r = client.get("/site/*/*.site.test")
    assert r.status_code == 200 and "http://site.test/video.bin" in r.text
    r = client.get("/site/*/http://site.test/none.html")
    assert r.status_code == 404 and "Not in archive" in r.text


def test_capture_list_keeps_the_query_string(client: TestClient) -> None:
    r = client.get("/site/*/http://site.test/page?v=2")
    assert r.status_code == 200 and "1 capture between" in r.text
    assert 'href="/site/20200402000000/http://site.test/page?v=2"' in r.text


def test_search_redirects(client: TestClient) -> None:
    def loc(**params: str) -> str:
        r = client.get("/_webark/search", params=params, follow_redirects=False)
        assert r.status_code == 303
        return r.headers["location"]

    assert loc(coll="site", url="site.test/chain.txt") == "/site/*/http://site.test/chain.txt"
    assert loc(coll="site", url="site.test/*") == "/site/*/site.test/*"
    assert loc(coll="site", url="http://site.test/a/", ts="2020-01-01") == (
        "/site/20200101/http://site.test/a/"
    )
    r = client.get("/site/", params={"url": "site.test/chain.txt"}, follow_redirects=True)
    assert r.status_code == 200 and "Captures of" in r.text


def test_app_files(client: TestClient) -> None:
    r = client.get("/_webark/client.js")
    assert r.status_code == 200 and r.text == client_script()
    assert r.headers["content-type"].startswith("text/javascript")
    r = client.get("/_webark/static/banner.js")
    assert r.status_code == 200 and "attachShadow" in r.text
    assert client.get("/_webark/static/webark.css").status_code == 200
    assert client.get("/_webark/static/../replay_app.py").status_code == 404
    assert client.get("/_webark/nothing").status_code == 404


def test_diff_view(client: TestClient) -> None:
    r = client.get("/site/diff/20200301/20200302/http://site.test/news.html")
    assert r.status_code == 200
    assert "2 lines added, removed or changed" in r.text
    assert ('<tr class="chg"><td class="ln">3</td><td class="l">The river is high.</td>'
            '<td class="ln">3</td><td class="r">The river is low.</td></tr>') in r.text  # fmt: skip
    assert '<td class="r">Sports: home team won.</td>' in r.text
    assert "not text" not in r.text  # script content is not visible text
    r = client.get("/site/diff/2020/2020/http://site.test/video.bin")
    assert r.status_code == 400 and "HTML" in r.text


def test_visible_lines_and_side_by_side() -> None:
    a = visible_lines(b"<title>T</title><p>one <b>two</b></p><div>x<br>y</div><style>z</style>")
    assert a == ["T", "one two", "x", "y"]
    b = [*a[:1], *(f"l{i}" for i in range(20)), "end"]
    c = [*a[:1], *(f"l{i}" for i in range(20)), "END"]
    rows, changed = side_by_side(b, c)
    assert changed == 1 and [r.kind for r in rows][-1] == "chg"
    assert any(r.kind == "skip" and r.count == 18 for r in rows)


def test_paths_and_calendar_units() -> None:
    t = parse_target("/c/20140101id_/http:/a.org/x%20y", "q=1&b=2")
    assert t is not None and (t.kind, t.timestamp, t.modifier) == ("memento", "20140101", "id_")
    assert t.url == "http://a.org/x%20y?q=1&b=2"
    assert fix_url("http%3A%2F%2Fa.org%2F") == "http://a.org/"
    assert fix_url("localhost:8080/") == "http://localhost:8080/"
    cal = build_calendar([_L("20140131235959"), _L("20140131000000"), _L("20140201")])
    assert cal.total == 3 and [m.count for m in cal.years[0].months.values()] == [2, 1]
    assert cal.years[0].months[1].days[31] == (2, "20140131235959")


class _L:
    def __init__(self, ts: str):
        self.timestamp, self.url, self.status, self.mime, self.digest = ts, "u", "200", "m", "d"
        self.urlkey = "k"
