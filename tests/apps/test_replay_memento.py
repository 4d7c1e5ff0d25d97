"""Memento (RFC 7089) in replay: TimeGate with Accept-Datetime (and 400 for a bad one),
Memento-Datetime and Link headers of mementos, the redirect to a capture's own
timestamp, and "Not in archive" (404, no live web)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from replay_support import build_collections
from starlette.testclient import TestClient

from index_stores import StoreChoice
from webark.apps.replay.app import create_server
from webark.apps.replay.memento import BadAcceptDatetime, MementoLinks, parse_accept_datetime

BASE = "http://testserver/pywb/"


@pytest.fixture(scope="module")
def client(
    tmp_path_factory: pytest.TempPathFactory, corpus: Path, index_store: StoreChoice
) -> Iterator[TestClient]:
    colls = build_collections(tmp_path_factory.mktemp("replay"), corpus, index_store.init)
    with TestClient(create_server(colls)) as c:
        yield c


def links(value: str) -> dict[str, tuple[str, str]]:
    """``Link`` header → {rel: (uri, datetime or '')}: one entry per rel word, except
    ``memento``, which names the entry whose only relation is ``memento``."""
    out: dict[str, tuple[str, str]] = {}
    for part in value.split(", <"):
        uri, _, params = part.lstrip("<").partition(">")
        attrs = dict(
            (k.strip(), v.strip().strip('"'))
            for k, _, v in (p.partition("=") for p in params.split(";") if "=" in p)
        )
        words = attrs["rel"].split()
        for rel in words:
            if rel != "memento" or words == ["memento"]:
                out[rel] = (uri, attrs.get("datetime", ""))
    return out


def test_timegate_without_accept_datetime_goes_to_latest(client: TestClient) -> None:
    r = client.get("/pywb/http://www.iana.org/", follow_redirects=False)
    assert r.status_code == 302
    assert r.headers["vary"] == "accept-datetime"
    assert r.headers["location"] == BASE + "20140127171238/http://www.iana.org/"
    ln = links(r.headers["link"])
    assert ln["original"] == ("http://www.iana.org/", "")
    assert ln["timemap"][0] == BASE + "timemap/link/http://www.iana.org/"
    assert ln["memento"] == (BASE + "20140127171238/http://www.iana.org/",
                             "Mon, 27 Jan 2014 17:12:38 GMT")  # fmt: skip


def test_timegate_honours_accept_datetime(client: TestClient) -> None:
    r = client.get("/pywb/http://www.iana.org/", follow_redirects=False,
                   headers={"Accept-Datetime": "Sun, 26 Jan 2014 21:00:00 GMT"})  # fmt: skip
    assert r.status_code == 302
    assert r.headers["location"] == BASE + "20140126200624/http://www.iana.org/"
    # a modifier after the collection is kept
    r = client.get("/pywb/id_/http://www.iana.org/", follow_redirects=False,
                   headers={"Accept-Datetime": "Mon, 27 Jan 2014 17:00:00 GMT"})  # fmt: skip
    assert r.headers["location"] == BASE + "20140127171238id_/http://www.iana.org/"


@pytest.mark.parametrize("bad", ["2014-01-26", "yesterday", "Sun, 26 Jan 2014 21:00:00 CET",
                                 "Sun, 32 Jan 2014 21:00:00 GMT"])  # fmt: skip
def test_timegate_bad_accept_datetime_is_400(client: TestClient, bad: str) -> None:
    r = client.get("/pywb/http://www.iana.org/", headers={"Accept-Datetime": bad},
                   follow_redirects=False)  # fmt: skip
    assert r.status_code == 400
    assert "Accept-Datetime" in r.text and r.headers["vary"] == "accept-datetime"


def test_parse_accept_datetime() -> None:
    assert parse_accept_datetime("Thu, 30 Jan 2014 20:06:24 GMT") == "20140130200624"
    with pytest.raises(BadAcceptDatetime, match="Accept-Datetime"):
        parse_accept_datetime("Thu, 30 Jan 2014")


def test_memento_headers(client: TestClient) -> None:
    r = client.get("/pywb/20140126200653/http://www.iana.org/_css/2013.1/screen.css",
                   follow_redirects=False)  # fmt: skip
    assert r.status_code == 200
    assert r.headers["memento-datetime"] == "Sun, 26 Jan 2014 20:06:53 GMT"
    ln = links(r.headers["link"])
    u = "http://www.iana.org/_css/2013.1/screen.css"
    assert ln["original"] == (u, "")
    assert ln["timegate"] == (BASE + u, "")
    assert ln["first"] == (BASE + "20140126200625/" + u, "Sun, 26 Jan 2014 20:06:25 GMT")
    assert ln["prev"] == ln["first"]
    assert ln["next"] == (BASE + "20140126200706/" + u, "Sun, 26 Jan 2014 20:07:06 GMT")
    assert ln["last"] == (BASE + "20140127171239/" + u, "Mon, 27 Jan 2014 17:12:39 GMT")
    assert ln["memento"] == (BASE + "20140126200653/" + u, "Sun, 26 Jan 2014 20:06:53 GMT")


def test_link_header_merges_relations() -> None:
    h = MementoLinks("http://a.org/", "http://h/c/", "20140101000000", "",
                     first="20140101000000", last="20140101000000").header()  # fmt: skip
    assert h.endswith('<http://h/c/20140101000000/http://a.org/>; rel="first last memento"; '
                      'datetime="Wed, 01 Jan 2014 00:00:00 GMT"')  # fmt: skip


def test_inexact_timestamp_redirects_to_the_capture(client: TestClient) -> None:
    for asked in ("2014", "201401262007", "20140126200700"):
        r = client.get(f"/pywb/{asked}/http://www.iana.org/_css/2013.1/screen.css",
                       follow_redirects=False)  # fmt: skip
        assert r.status_code == 302, asked
    r = client.get("/pywb/20140126200700cs_/http://www.iana.org/_css/2013.1/screen.css",
                   follow_redirects=False)  # fmt: skip
    assert r.headers["location"] == (
        BASE + "20140126200706cs_/http://www.iana.org/_css/2013.1/screen.css"
    )
    # the query string of the original URL is kept (raw, as sent)
    r = client.get("/pywb/2014/http://example.com?example=1", follow_redirects=False)
    assert r.status_code == 302
    assert r.headers["location"] == BASE + "20140103030321/http://example.com?example=1"


def test_not_in_archive(client: TestClient) -> None:
    r = client.get("/pywb/2014/http://www.iana.org/no/such/page.html", follow_redirects=False)
    assert r.status_code == 404
    assert "Not in archive" in r.text and "never fetches anything from the live web" in r.text
    # similar URLs: same host
    assert 'href="/pywb/20140127171238/http://www.iana.org/"' in r.text  # its last capture
    assert 'http://www.iana.org/_css/2013.1/screen.css' in r.text
    # cache-busting or other query strings: the same path's other URLs are offered
    r = client.get("/site/2020/http://site.test/page?v=3&_=1507495059747")
    assert r.status_code == 404
    assert 'href="/site/20200401000000/http://site.test/page?v=1"' in r.text
    assert 'href="/site/20200402000000/http://site.test/page?v=2"' in r.text
    r = client.get("/pywb/http://no-such-host.example/", follow_redirects=False)
    assert r.status_code == 404 and "Nothing similar" in r.text
    r = client.get("/nope/2014/http://www.iana.org/", follow_redirects=False)
    assert r.status_code == 404 and "No such collection" in r.text


def test_timemap_of_the_api_is_linked_and_still_served(client: TestClient) -> None:
    r = client.get("/pywb/timemap/link/http://www.iana.org/")
    assert r.status_code == 200 and r.headers["content-type"] == "application/link-format"
    assert BASE + "20140126200624/http://www.iana.org/" in r.text
    r = client.get("/pywb/cdx", params={"url": "http://www.iana.org/", "output": "json"})
    assert r.status_code == 200 and len(r.text.splitlines()) == 3
