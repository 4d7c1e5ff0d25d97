"""Access rules in replay: ``exclude`` (as if not archived: 404, left out of capture
lists) and ``block`` (451), limited to capture-time ranges; server-wide rules
(``--access-rules``) and a collection's own ``access-rules.yaml``."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from replay_support import build_collections
from starlette.testclient import TestClient

from index_stores import StoreChoice
from webark.apps.replay.app import create_server

SERVER_RULES = """
- url: http://site.test/private/
  policy: exclude
  capture_to: "2015"
  note: captures before 2016 withdrawn
- surt: "http://(test,site,)/secret"
  policy: block
  capture_from: "2015-01"
  note: blocked at the owner's request
"""
COLLECTION_RULES = """
- url: http://site.test/news.html
  policy: exclude
"""


@pytest.fixture(scope="module")
def client(
    tmp_path_factory: pytest.TempPathFactory, corpus: Path, index_store: StoreChoice
) -> Iterator[TestClient]:
    root = tmp_path_factory.mktemp("replay")
    colls = build_collections(root, corpus, index_store.init)
    rules = root / "rules.yaml"
    rules.write_text(SERVER_RULES)
    (colls / "site" / "access-rules.yaml").write_text(COLLECTION_RULES)
    with TestClient(create_server(colls, access_rules=rules)) as c:
        yield c


def test_excluded_time_range_is_as_if_not_archived(client: TestClient) -> None:
    # the 2012 capture is excluded (capture_to 2015): a request for it gets the 2018 one
    r = client.get("/site/20120601000000/http://site.test/private/doc.html",
                   follow_redirects=False)  # fmt: skip
    assert r.status_code == 302
    assert r.headers["location"].endswith("/site/20180601000000/http://site.test/private/doc.html")
    r = client.get("/site/20180601000000id_/http://site.test/private/doc.html")
    assert r.status_code == 200 and b"2018-06-01" in r.content
    # the capture list shows only the allowed capture
    r = client.get("/site/*/http://site.test/private/doc.html")
    assert r.status_code == 200
    assert "20180601000000" in r.text and "20120601000000" not in r.text
    assert "1 capture " in r.text


def test_blocked_time_range_is_451(client: TestClient) -> None:
    r = client.get("/site/20160601000000/http://site.test/secret.html", follow_redirects=False)
    assert r.status_code == 451
    assert "blocked at the owner&#39;s request" in r.text
    # the 2014 capture is before the block
    r = client.get("/site/20140601000000id_/http://site.test/secret.html")
    assert r.status_code == 200 and b"2014-06-01" in r.content
    # nearest to 2015-12 is the 2016 capture: blocked
    r = client.get("/site/20151201/http://site.test/secret.html", follow_redirects=False)
    assert r.status_code == 451


def test_collection_rules_exclude_everything_of_a_url(client: TestClient) -> None:
    for path in ("/site/20200301000000/http://site.test/news.html",
                 "/site/http://site.test/news.html",
                 "/site/*/http://site.test/news.html",
                 "/site/diff/20200301/20200302/http://site.test/news.html"):  # fmt: skip
        r = client.get(path, follow_redirects=False)
        assert r.status_code == 404, path
    # and it is not offered as a similar URL
    r = client.get("/site/2020/http://site.test/nothing.html")
    assert r.status_code == 404
    assert "http://site.test/gz.html" in r.text and "news.html" not in r.text
    # other collections are not affected by the site's own rules
    r = client.get("/pywb/20140126200624id_/http://www.iana.org/")
    assert r.status_code == 200


def _cdx_urls_ts(client: TestClient, **params: str) -> list[tuple[str, str]]:
    r = client.get("/site/cdx", params={"output": "json", **params})
    assert r.status_code in (200, 404), r.text
    return [] if r.status_code == 404 else [
        (row["url"], row["timestamp"]) for row in map(json.loads, r.text.splitlines())
    ]


def test_cdx_api_hides_excluded_and_blocked_captures(client: TestClient) -> None:
    got = _cdx_urls_ts(client, url="http://site.test/", matchType="prefix")
    assert got, "the site collection answers prefix queries"
    urls = {u for u, _ in got}
    # exclude (capture_to 2015): the 2012 capture is gone, the 2018 one stays
    assert ("http://site.test/private/doc.html", "20180601000000") in got
    assert ("http://site.test/private/doc.html", "20120601000000") not in got
    # block (capture_from 2015-01): the 2016 capture is hidden, the 2014 one stays
    assert ("http://site.test/secret.html", "20140601000000") in got
    assert ("http://site.test/secret.html", "20160601000000") not in got
    # the collection's own rule excludes news.html altogether
    assert "http://site.test/news.html" not in urls
    assert _cdx_urls_ts(client, url="http://site.test/news.html") == []
    # exact and closest queries are filtered too
    assert _cdx_urls_ts(client, url="http://site.test/secret.html", closest="2016",
                        sort="closest", limit="1") == [
        ("http://site.test/secret.html", "20140601000000")]  # fmt: skip
    # other collections are not touched by the site's own rules
    r = client.get("/pywb/cdx", params={"url": "http://www.iana.org/"})
    assert r.status_code == 200 and len(r.text.splitlines()) == 3


def test_timemap_lists_only_allowed_mementos(client: TestClient) -> None:
    r = client.get("/site/timemap/link/http://site.test/secret.html")
    assert r.status_code == 200
    assert "/20140601000000/http://site.test/secret.html" in r.text
    assert "20160601000000" not in r.text
    r = client.get("/site/timemap/link/http://site.test/private/doc.html")
    assert r.status_code == 200
    assert "20180601000000" in r.text and "20120601000000" not in r.text
    # a URL whose captures are all excluded has no TimeMap
    r = client.get("/site/timemap/link/http://site.test/news.html")
    assert r.status_code == 404


def test_unusable_collection_rules_make_the_api_unavailable(
    tmp_path: Path, corpus: Path
) -> None:
    colls = build_collections(tmp_path, corpus)
    (colls / "site" / "access-rules.yaml").write_text("- url: http://site.test/\n  policy: hide\n")
    with TestClient(create_server(colls)) as c:
        r = c.get("/site/cdx", params={"url": "http://site.test/news.html"})
        assert r.status_code == 503 and "access rules" in r.json()["error"]
        assert c.get("/pywb/cdx", params={"url": "http://www.iana.org/"}).status_code == 200
