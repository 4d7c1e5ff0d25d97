"""Search the python-docs crawl (Debian's python3-doc, 530 pages, crawled once per
session by :mod:`python_docs_site`): phrases from known pages find those pages first,
snippets highlight the words, the result's link opens the capture; on both backends.
And the same crawl in a SQLite and a PostgreSQL collection: identical CDX server
answers.

The known pages and phrases are those of Python 3.11's documentation; each phrase is
first checked to be in the page as served (so a new docs version fails with a clear
message rather than a wrong rank).
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from index_stores import StoreChoice
from pg_cluster import PgCluster
from webark.apps.replay.app import create_server
from webark.index.collection import Collection
from webark.search import open_search
from webark.search.backend import SearchIndex
from webark.search.build import build_search

#: (page, query): the page must be the first hit.
KNOWN = [
    # a sentence of the page's text, unique to it
    ("library/functions.html",
     '"The Python interpreter has a number of functions and types built into it"'),
    ("tutorial/controlflow.html", '"Besides the while statement just introduced"'),
    # phrases also in the module index, the library index, contents.html and the
    # pages that link to these modules: the page whose title it is comes first
    ("library/itertools.html", '"Functions creating iterators for efficient looping"'),
    ("library/hashlib.html", '"Secure hashes and message digests"'),
    # words, not a phrase
    ("library/unittest.mock.html", "mock object library"),
]


@dataclass
class Docs:
    coll: Collection
    index: SearchIndex
    origin: str
    root: Path
    colls: Path


@pytest.fixture(scope="module")
def docs(python_docs_crawl: dict[str, Any], tmp_path_factory: pytest.TempPathFactory,
         index_store: StoreChoice) -> Iterator[Docs]:  # fmt: skip
    colls = tmp_path_factory.mktemp("pydocs-search") / "colls"
    coll = index_store.init(colls / "pydocs")
    res = list(coll.add(python_docs_crawl["summary"].warcs, "in-place"))
    assert res and all(r.status == "indexed" for r in res), res
    index = open_search(coll, create=True)
    report = build_search(coll, index, jobs=2)
    assert report.failed == {} and report.problems == []
    assert report.documents >= 530  # every page (the seed "/" and index.html both)
    yield Docs(coll, index, python_docs_crawl["origin"], python_docs_crawl["root"], colls)
    index.close()
    coll.close()


def _visible(path: Path) -> str:
    text = re.sub(r"<[^>]+>", " ", path.read_text("utf-8"))
    return " ".join(html.unescape(text).split())


@pytest.mark.parametrize(("page", "query"), KNOWN)
def test_known_pages_come_first(docs: Docs, page: str, query: str) -> None:
    words = query.strip('"')
    assert words in _visible(docs.root / page), f"{page} no longer says {words!r}"
    res = docs.index.search(query, limit=5)
    assert res.hits, query
    assert res.hits[0].url == f"{docs.origin}/{page}", [h.url for h in res.hits]
    marked = {t.lower() for t, on in res.hits[0].snippet + res.hits[0].title_parts if on}
    assert marked, res.hits[0]
    for w in words.lower().split():
        if len(w) > 5:  # short words may be stop words (not indexed, so not marked)
            assert any(w[:5] in m for m in marked), (w, marked)


def test_phrase_is_not_a_bag_of_words(docs: Docs) -> None:
    """The words of a phrase in another order are not the phrase."""
    hits = docs.index.search('"available always that it into built"').hits
    assert f"{docs.origin}/library/functions.html" not in [h.url for h in hits]


def test_the_link_opens_the_capture(docs: Docs) -> None:
    with TestClient(create_server(docs.colls)) as client:
        r = client.get("/pydocs/search", params={"q": KNOWN[2][1]})
        assert r.status_code == 200
        m = re.search(r'<a class="title" href="([^"]+)">(.*?)</a>', r.text, re.S)
        assert m, r.text[:2000]
        assert m.group(1).endswith(f"/{docs.origin}/library/itertools.html")
        assert "<mark>" in m.group(2)  # the title's words are highlighted
        assert "<mark>" in r.text.split('class="snippet"', 1)[1].split("</p>", 1)[0]
        page = client.get(html.unescape(m.group(1)))
        assert page.status_code == 200
        title = re.search(r"<title>(.*?)</title>", page.text, re.S)
        assert title and title.group(1).startswith("itertools — Functions creating iterators")
        j = client.get("/pydocs/search", params={"q": "mock object library", "output": "json"})
        first = j.json()["hits"][0]
        assert first["url"].endswith("/library/unittest.mock.html")
        assert "<mark>" in first["snippet"]
        assert client.get(first["replay"]).status_code == 200


#: CDX queries compared between the SQLite and PostgreSQL collections of the crawl.
CDX_QUERIES = [
    {"url": "{o}/library/functions.html"},
    {"url": "{o}/library/", "matchType": "prefix", "limit": "50"},
    {"url": "{o}/", "matchType": "host", "fl": "urlkey,timestamp,status,digest,length,offset"},
    {"url": "{o}/", "matchType": "host", "sort": "reverse", "limit": "30"},
    {"url": "{o}/library/asyncio.html", "closest": "20300101", "limit": "1", "sort": "closest"},
    {"url": "{o}/_static/*", "filter": "mime:text/css", "output": "json"},
    {"url": "{o}/", "matchType": "host", "collapse": "digest", "filter": "!status:200"},
    {"url": "{o}/searchindex.js", "output": "link"},
    {"url": "", "matchType": "range", "pageSize": "5", "page": "1"},
    {"url": "", "matchType": "range", "showNumPages": "true"},
]


def test_sqlite_and_postgres_answer_the_same(python_docs_crawl: dict[str, Any],
                                             tmp_path: Path, pg: PgCluster) -> None:  # fmt: skip
    warcs = python_docs_crawl["summary"].warcs
    colls = tmp_path / "colls"
    for choice, name in ((StoreChoice("sqlite"), "sq"), (StoreChoice("postgres", pg), "pg")):
        coll = choice.init(colls / name)
        assert all(r.status == "indexed" for r in coll.add(warcs, "in-place"))
        coll.close()
    origin = python_docs_crawl["origin"]
    digest = None
    with TestClient(create_server(colls)) as client:
        for q in CDX_QUERIES:
            params = {k: v.replace("{o}", origin) for k, v in q.items()}
            a = client.get("/sq/cdx", params=params)
            b = client.get("/pg/cdx", params=params)
            assert a.status_code == b.status_code == 200, (params, a.text, b.text)
            same = a.text.replace("/sq/", "/pg/").replace('collection="sq"', 'collection="pg"')
            assert same == b.text, params
            assert a.text.strip(), params
            if digest is None and params.get("output") == "json":
                digest = json.loads(a.text.splitlines()[0])["digest"]
        assert digest
        a, b = client.get("/sq/cdx", params={"digest": digest}), client.get(
            "/pg/cdx", params={"digest": digest})  # fmt: skip
        assert a.text == b.text and a.text.strip()
        page = f"/{{}}/2030/{origin}/library/functions.html"
        ra, rb = client.get(page.format("sq")), client.get(page.format("pg"))
        assert ra.status_code == rb.status_code == 200
        assert ra.text.replace("/sq/", "/pg/") == rb.text
