"""Full-text search on both backends (the ``index_store`` fixture: a SQLite collection
searches with SQLite FTS5, a PostgreSQL one with PostgreSQL): building, ranking,
snippets, query syntax, incremental updates, export, the search page of the replay app
and the CLI. Inputs: pywb's iana.warc.gz, dupes.warc.gz and example.warc.gz from the
corpus, and the small site of :mod:`search_support`."""

from __future__ import annotations

import json
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner
from search_support import write_more, write_site
from starlette.testclient import TestClient

from http_wait import webark_serve_process
from index_stores import StoreChoice
from webark.apps.replay.app import create_server
from webark.cli.main import cli
from webark.index.collection import Collection
from webark.search import find_search, open_search
from webark.search.backend import SearchIndex
from webark.search.build import build_search, plan
from webark.search.query import EmptyQuery

CORPUS_WARCS = ["iana.warc.gz", "dupes.warc.gz", "example.warc.gz"]


@dataclass
class Built:
    coll: Collection
    index: SearchIndex
    site: Path
    colls: Path


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory, corpus: Path,
          index_store: StoreChoice) -> Iterator[Built]:  # fmt: skip
    d = tmp_path_factory.mktemp("search")
    site = write_site(d / "w")
    coll = index_store.init(d / "colls" / "site")
    warcs = [corpus / "pywb/warcs" / n for n in CORPUS_WARCS] + [site]
    assert [r.status for r in coll.add(warcs)] == ["indexed"] * 4
    index = open_search(coll, create=True)
    report = build_search(coll, index)
    # iana: 16 HTML pages; dupes: 1 (the rest are revisits); example: 1; site: 5 (the
    # image, its revisit and the 404 make none)
    assert report.added == {"iana.warc.gz": 16, "dupes.warc.gz": 1, "example.warc.gz": 1,
                            site.name: 5}  # fmt: skip
    assert report.failed == {} and report.problems == []
    yield Built(coll, index, site, d / "colls")
    index.close()
    coll.close()


def _text(parts: tuple[tuple[str, bool], ...]) -> str:
    return "".join(t for t, _ in parts)


def _marked(parts: tuple[tuple[str, bool], ...]) -> list[str]:
    return [t.lower() for t, on in parts if on]


def test_hit_snippet_and_captures(built: Built) -> None:
    res = built.index.search("river")
    urls = [h.url for h in res.hits]
    # news.html (two captures, both say river), gz.html, secret.html: one hit per URL
    assert sorted(urls) == ["http://site.test/gz.html", "http://site.test/news.html",
                            "http://site.test/secret.html"]  # fmt: skip
    assert res.total == 3
    news = next(h for h in res.hits if h.url.endswith("news.html"))
    assert news.captures == 2 and news.title == "Daily news"
    assert news.wayback_date in ("20200301000000", "20200302000000")
    assert "river" in _marked(news.snippet)
    assert "The river is" in _text(news.snippet)
    assert news.source_file_path == built.site.name and news.status_code == 200


def test_title_ranks_first(built: Built) -> None:
    """The page whose title is the query comes before pages that only mention it."""
    res = built.index.search("root zone database")
    assert res.hits[0].url == "http://www.iana.org/domains/root/db"
    assert res.hits[0].title == "IANA — Root Zone Database"
    assert {"root", "zone", "database"} <= set(_marked(res.hits[0].title_parts))
    res = built.index.search("harbour OR \"daily news\"")
    assert res.hits[0].url == "http://site.test/news.html"


def test_phrases_negation_or_and_stems(built: Built) -> None:
    s = built.index.search
    assert [h.url for h in s('"river is low"').hits] == ["http://site.test/news.html"]
    assert s('"low river"').hits == ()
    gz_news = {"http://site.test/gz.html", "http://site.test/news.html"}
    # news.html is kept: its 2020-03-02 capture does not say "storm"
    assert {h.url for h in s("river -storm -crossing").hits} == gz_news
    assert {h.url for h in s("bloom OR calm").hits} == gz_news
    assert [h.url for h in s("rivers").hits if h.url.endswith("gz.html")]  # English stems
    assert [h.url for h in s("Donau").hits] == ["http://site.test/de.html"]
    de = s("Donau").hits[0]
    assert de.content_language == "de" and de.title == "Die Flüsse Europas"
    with pytest.raises(EmptyQuery):
        s("-river")


def test_pages_of_results(built: Built) -> None:
    whole = built.index.search("iana", limit=50)
    assert whole.total == len(whole.hits) >= 15
    pages = [built.index.search("iana", limit=4, offset=o) for o in range(0, whole.total, 4)]
    assert [h.url for p in pages for h in p.hits] == [h.url for h in whole.hits]
    assert all(p.total == whole.total for p in pages)
    past = built.index.search("iana", limit=4, offset=whole.total + 10)
    assert past.hits == () and past.total == whole.total


def test_documents_and_export(built: Built) -> None:
    docs = list(built.index.documents())
    assert len(docs) == built.index.count() == 23
    assert [d.source_file_path for d in docs] == sorted(d.source_file_path for d in docs)
    r = CliRunner().invoke(cli, ["search", "export", str(built.coll.root), "--format",
                                 "opensearch", "--index", "web"])  # fmt: skip
    assert r.exit_code == 0, r.output
    lines = [json.loads(x) for x in r.stdout.splitlines()]
    assert len(lines) == 46
    for action, doc in zip(lines[::2], lines[1::2], strict=True):
        assert action == {"index": {"_index": "web", "_id": doc["id"]}}
        assert doc["collection"] == "site" and isinstance(doc["wayback_date"], int)
    assert {d["url"] for d in lines[1::2]} == {d.url for d in docs}


def test_incremental_add_and_remove(tmp_path: Path, corpus: Path,
                                    index_store: StoreChoice) -> None:  # fmt: skip
    coll = index_store.init(tmp_path / "c")
    list(coll.add([corpus / "pywb/warcs/example.warc.gz"]))
    index = open_search(coll, create=True)
    assert build_search(coll, index).added == {"example.warc.gz": 1}
    more = write_more(tmp_path / "w")
    list(coll.add([more]))
    assert plan(coll, index) == ([(more.name, more.stat().st_size)], [])
    report = build_search(coll, index)
    assert report.added == {more.name: 1} and report.removed == {}
    assert [h.url for h in index.search("harbour tide").hits] == ["http://site.test/harbour.html"]
    coll.remove([more.name])
    report = build_search(coll, index)
    assert report.removed == {more.name: 1} and report.added == {}
    assert index.search("harbour").hits == ()
    assert plan(coll, index) == ([], [])
    index.close()
    coll.close()


def test_collection_add_updates_the_search_index(tmp_path: Path, corpus: Path,
                                                 index_store: StoreChoice) -> None:  # fmt: skip
    """`collection add` / `remove` keep a search index that exists up to date; a
    collection without one gets none."""
    run = CliRunner().invoke
    coll = index_store.init(tmp_path / "c")
    root = str(coll.root)
    r = run(cli, ["collection", "add", root, str(corpus / "pywb/warcs/example.warc.gz")])
    assert r.exit_code == 0, r.output
    assert find_search(coll) is None  # not built: not made by add
    r = run(cli, ["search", "build", root, "--json"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout.splitlines()[0])["added"] == {"example.warc.gz": 1}
    more = write_more(tmp_path / "w")
    r = run(cli, ["collection", "add", root, str(more), "--no-progress"])
    assert r.exit_code == 0 and "search index: 1 documents from 1 WARCs added" in r.output
    r = run(cli, ["search", "query", root, "harbour", "--json", "--base", "http://h:8080/"])
    hits = json.loads(r.stdout)["hits"]
    assert [h["replay"] for h in hits] == [
        "http://h:8080/c/20200401000000/http://site.test/harbour.html"]
    r = run(cli, ["collection", "remove", root, more.name])
    assert r.exit_code == 0
    r = run(cli, ["search", "query", root, "harbour", "--json"])
    assert json.loads(r.stdout)["hits"] == []
    r = run(cli, ["search", "query", root, "--", "-harbour"])
    assert r.exit_code == 2 and "nothing to search for" in r.output
    r = run(cli, ["search", "build", root])
    assert r.exit_code == 0 and "search index up to date" in r.output
    coll.close()


def test_search_page_links_to_the_capture(built: Built) -> None:
    with TestClient(create_server(built.colls)) as client:
        r = client.get("/site/search", params={"q": '"river is high"'})
        assert r.status_code == 200
        assert "<mark>river</mark>" in r.text.lower() or "<mark>river is high</mark>" in r.text
        link = "/site/20200301000000/http://site.test/news.html"
        assert f'href="{link}"' in r.text
        assert 'href="/site/*/http://site.test/news.html"' in r.text  # the other captures
        page = client.get(link)
        assert page.status_code == 200 and "The river is high after the storm." in page.text
        j = client.get("/site/search", params={"q": "river", "output": "json"}).json()
        assert j["total"] == 3 and j["hits"][0]["replay"].startswith("http://testserver/site/")
        assert client.get("/site/search", params={"q": "-x"}).status_code == 400
        assert client.get("/site/search").status_code == 200  # the form
        assert 'action="/site/search"' in client.get("/site/").text


def test_search_page_applies_access_rules(built: Built, tmp_path: Path) -> None:
    rules = tmp_path / "rules.yaml"
    rules.write_text("- surt: http://(test,site,)/secret.html\n  policy: exclude\n")
    with TestClient(create_server(built.colls, access_rules=rules)) as client:
        j = client.get("/site/search", params={"q": "river", "output": "json"}).json()
        assert {h["url"] for h in j["hits"]} == {"http://site.test/gz.html",
                                                 "http://site.test/news.html"}  # fmt: skip
        assert "Secret plans" not in client.get("/site/search", params={"q": "crossing"}).text


def test_no_search_index_yet(tmp_path: Path, corpus: Path, index_store: StoreChoice) -> None:
    coll = index_store.init(tmp_path / "colls" / "empty")
    list(coll.add([corpus / "pywb/warcs/example.warc.gz"]))
    coll.close()
    with TestClient(create_server(tmp_path / "colls")) as client:
        r = client.get("/empty/search", params={"q": "example"})
        assert r.status_code == 404 and "webark search build" in r.text
    r = CliRunner().invoke(cli, ["search", "query", str(coll.root), "example"])
    assert r.exit_code == 1 and "search build" in r.output


def test_many_first_queries_at_once(built: Built) -> None:
    """16 clients query a fresh server at once: each gets its answer (the search index
    is opened once; an index opened twice by racing threads was closed under the other
    thread's query: 'Cannot operate on a closed database', and workers died of SIGSEGV)."""
    with webark_serve_process(str(built.colls), "--workers", "1") as (base, proc):

        def ask(i: int) -> tuple[int, int]:
            r = httpx.get(f"{base}site/search", params={"q": "river", "output": "json"},
                          timeout=60)  # fmt: skip
            return r.status_code, len(r.json().get("hits", [])) if r.status_code == 200 else -1

        with ThreadPoolExecutor(16) as pool:
            got = list(pool.map(ask, range(48)))
        assert got == [(200, 3)] * 48
        assert proc.poll() is None
