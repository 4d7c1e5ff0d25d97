"""POST/PUT requests replayed by method and body (issue 17): the request a replayed page
sends is looked up under the key the indexer gave the capture of the same request
(``webark.cdx.post.method_url`` on both sides), on real captures: pywb's post-test WARC
(curl, form bodies) and cdxj-indexer's post-test-more (python-requests: a multipart
form, a JSON body, a chunked body without Content-Type), httpbin's echo of each body
being the proof that the right capture came back."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from webark.apps.replay.app import create_server
from webark.apps.replay.request_info import MAX_LOOKUP_BODY
from webark.index.collection import Collection, CollectionError
from webark.index.source import KeyRange
from webark.warc.http import parse_http_head
from webark.warc.payload import dechunk
from webark.warc.reader import ArchiveReader

WARCS = ["pywb/warcs/post-test.warc.gz", "cdxj-indexer/data/post-test-more.warc"]


def _posts(path: Path) -> list[tuple[str, str, str, bytes, bool]]:
    """(timestamp, URL, Content-Type, body as a client sends it, whether it was recorded
    chunked) of each POST request record of a WARC."""
    out = []
    for rec in ArchiveReader(path):
        if rec.type != "request":
            continue
        block = rec.block.read_all()
        head = parse_http_head(block, expect_request=True)
        assert head is not None
        if head.method != "POST":
            continue
        body = block[head.head_length :]
        if head.is_chunked:
            body = dechunk(body)[0]
        date = rec.headers.get("WARC-Date") or ""
        ts = "".join(c for c in date if c.isdigit())[:14]
        out.append((ts, rec.headers.target_uri, head.get("Content-Type") or "", body,
                    head.is_chunked))  # fmt: skip
    return out


@pytest.fixture(scope="module", params=["cdxj-indexer", "pywb"])
def served(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory,
           corpus: Path) -> Iterator[tuple[TestClient, str]]:  # fmt: skip
    """A collection of both WARCs, indexed the way of ``compat``, and its app."""
    colls = tmp_path_factory.mktemp(f"post-{request.param}")
    coll = Collection.init(colls / "posts", compat=request.param)
    with coll:
        for res in coll.add([corpus / w for w in WARCS]):
            assert res.status == "indexed", res
    with TestClient(create_server(colls)) as c:
        yield c, request.param


def test_posts_replay_their_own_answer(served: tuple[TestClient, str], corpus: Path) -> None:
    client, compat = served
    posts = [p for w in WARCS for p in _posts(corpus / w)]
    assert len(posts) == 6
    checked = 0
    for ts, url, ctype, body, chunked in posts:
        if compat == "pywb" and chunked:
            continue  # pywb keys a chunked body as recorded, chunk sizes and all
        r = client.post(f"/posts/{ts}/{url}", content=body, headers={"Content-Type": ctype},
                        follow_redirects=False)  # fmt: skip
        assert r.status_code == 200, (url, body, r.status_code, r.text[:200])
        echo = r.json()  # httpbin echoes what it was sent
        if ctype.startswith("application/x-www-form-urlencoded"):
            sent = dict(pair.split("=", 1) for pair in body.decode().split("&"))
            assert {k.lower(): v for k, v in echo["form"].items()} == {
                k.lower(): v.replace("+", " ") for k, v in sent.items()}, (echo, body)
        elif ctype.startswith("multipart/form-data"):
            assert echo["files"] == {"test": "some data", "another": "more^data"}, echo
        elif ctype.startswith("application/json"):
            assert echo["json"] == {"some": {"a": "json-data"}}
        else:
            assert echo["data"].encode() == body
        checked += 1
    assert checked == (6 if compat == "cdxj-indexer" else 5)


def test_another_body_or_method_is_not_in_archive(served: tuple[TestClient, str]) -> None:
    client, _ = served
    form = {"Content-Type": "application/x-www-form-urlencoded"}
    r = client.post("/posts/2014/http://httpbin.org/post", content=b"foo=bar&test=abd",
                    headers=form)  # fmt: skip
    assert r.status_code == 404 and "Not in archive" in r.text
    # the same body, another method; and a GET: the POST captures answer neither
    assert client.put("/posts/2014/http://httpbin.org/post", content=b"foo=bar&test=abc",
                      headers=form).status_code == 404  # fmt: skip
    assert client.get("/posts/2014/http://httpbin.org/post").status_code == 404
    # the answer comes at once, whatever the timestamp (a redirect would become a GET)
    r = client.post("/posts/2030/http://httpbin.org/post", content=b"foo=bar&test=abc",
                    headers=form, follow_redirects=False)  # fmt: skip
    assert r.status_code == 200 and r.headers["memento-datetime"].endswith("2014 00:08:59 GMT")


def test_body_limits_and_other_methods(served: tuple[TestClient, str]) -> None:
    client, _ = served
    r = client.post("/posts/2014/http://httpbin.org/post", content=b"x" * (MAX_LOOKUP_BODY + 1))
    assert r.status_code == 413
    r = client.request("DELETE", "/posts/2014/http://httpbin.org/post")
    assert r.status_code == 405 and r.headers["allow"] == "GET, HEAD, POST, PUT"
    r = client.post("/posts/*/http://httpbin.org/post", content=b"a=1")  # not a memento
    assert r.status_code == 405


def test_collection_config_can_keep_posts_unfolded(tmp_path: Path, corpus: Path) -> None:
    """``post_append = false`` in collection.toml: POST captures keyed by URL alone (as
    collections were indexed before), so replay cannot tell them apart by body; a value
    other than true/false is refused."""
    coll = Collection.init(tmp_path / "c")
    toml = coll.root / "collection.toml"
    text = toml.read_text()
    assert "post_append = true" in text
    toml.write_text(text.replace("post_append = true", "post_append = 1"))
    with pytest.raises(CollectionError, match="post_append"):
        Collection.open(tmp_path / "c")
    toml.write_text(text.replace("post_append = true", "post_append = false"))
    with Collection.open(tmp_path / "c") as c:
        assert c.config.post_append is False
        assert [r.status for r in c.add([corpus / WARCS[0]])] == ["indexed"]
        keys = {x.urlkey for x in c.source().scan(KeyRange("", None))}
    assert keys == {"org,httpbin)/post", "org,httpbin)/post?foo=bar"}
