"""POST/PUT request bodies folded into the URL key (pywb ``append_post``, cdxj-indexer
``post_append``): the canonicalization rules and the keys the peers' gold files have."""

from __future__ import annotations

import base64
import json

import pytest
from cdx_support import CORPUS

from webark.cdx.indexer import IndexOptions, index_file, index_records
from webark.cdx.post import (
    MAX_QUERY_LENGTH,
    append_method_query,
    canonical_body_query,
    json_body_query,
    method_url,
    multipart_fields,
)
from webark.warc.headers import WarcHeaders
from webark.warc.record import Block, WarcRecord


def test_form_urlencoded_is_unquoted() -> None:
    assert (
        canonical_body_query("application/x-www-form-urlencoded", b"foo=bar&test=abc")
        == "foo=bar&test=abc"
    )
    assert (
        canonical_body_query("application/x-www-form-urlencoded; charset=UTF-8", b"a=%5B%5D&b=x+y")
        == "a=[]&b=x y"
    )
    # not UTF-8: Base64
    assert (
        canonical_body_query("application/x-www-form-urlencoded", b"\xff") == "__wb_post_data=/w=="
    )


def test_multipart() -> None:
    body = (
        b'--XyZ\r\nContent-Disposition: form-data; name="test"; filename="test"\r\n'
        b'\r\nsome data\r\n--XyZ\r\nContent-Disposition: form-data; name="another"\r\n'
        b"\r\nmore^data\r\n--XyZ--\r\n"
    )
    assert multipart_fields("multipart/form-data; boundary=XyZ", body) == [
        ("test", b"some data"),
        ("another", b"more^data"),
    ]
    assert (
        canonical_body_query("multipart/form-data; boundary=XyZ", body)
        == "test=some+data&another=more%5Edata"
    )
    # no boundary: Base64 of the body
    assert (
        canonical_body_query("multipart/form-data", body)
        == "__wb_post_data=" + base64.b64encode(body).decode()
    )


def test_json_bodies() -> None:
    assert json_body_query(b'{"some": {"a": "json-data"}}') == "a=json-data"
    assert (
        json_body_query(b'{"a": 1, "b": {"a": 2, "c": [true, null, 1.0, 1.5]}}')
        == "a=1&a.2_=2&c=true&c.2_=null&c.3_=1&c.4_=1.5"
    )
    assert json_body_query(b'{"x": 1}\n{"y": "z"}\n') == "x=1&y=z"  # JSON lines
    assert canonical_body_query("application/json", b"{not json") == ""
    assert canonical_body_query("text/plain", b'{"q": "a b"}') == "q=a+b"
    assert canonical_body_query("text/plain", b"hello") == "__wb_post_data=aGVsbG8="
    with pytest.raises(ValueError):
        json_body_query(b"[1")


def test_binary_and_length_limit() -> None:
    assert canonical_body_query(None, b"\x00\x01") == "__wb_post_data=AAE="
    assert (
        canonical_body_query("application/octet-stream", b"x" * 10000)
        == ("__wb_post_data=" + base64.b64encode(b"x" * 10000).decode())[:MAX_QUERY_LENGTH]
    )


def test_append_method_query() -> None:
    assert (
        append_method_query("http://httpbin.org/post", "post", "a=1")
        == "http://httpbin.org/post?__wb_method=POST&a=1"
    )
    assert (
        append_method_query("http://httpbin.org/post?foo=bar", "PUT")
        == "http://httpbin.org/post?foo=bar&__wb_method=PUT"
    )


def _keys(name: str, **kw: object) -> list[tuple[str, str | None, str | None]]:
    path = next(
        p
        for p in (CORPUS / "pywb" / "warcs" / name, CORPUS / "cdxj-indexer" / "data" / name)
        if p.is_file()
    )
    return [
        (ln.urlkey, ln.method, ln.extra.get("requestBody"))
        for ln in index_file(path, IndexOptions(**kw))
    ]  # type: ignore[arg-type]


@pytest.mark.parametrize("compat", ["pywb", "cdxj-indexer"])
def test_post_test_warc_keys(compat: str) -> None:
    assert _keys("post-test.warc.gz", compat=compat, post_append=True) == [
        ("org,httpbin)/post?__wb_method=post&foo=bar&test=abc", "POST", "foo=bar&test=abc"),
        ("org,httpbin)/post?__wb_method=post&a=1&b=[]&c=3", "POST", "A=1&B=[]&C=3"),
        ("org,httpbin)/post?__wb_method=post&data=^&foo=bar", "POST", "data=^"),
    ]
    assert _keys("post-test.warc.gz", compat=compat)[0] == ("org,httpbin)/post", None, None)


def test_post_test_more_multipart_json_chunked() -> None:
    assert _keys("post-test-more.warc", post_append=True) == [
        (
            "org,httpbin)/post?__wb_method=post&another=more^data&test=some+data",
            "POST",
            "test=some+data&another=more%5Edata",
        ),
        ("org,httpbin)/post?__wb_method=post&a=json-data", "POST", "a=json-data"),
        # chunked body, no Content-Type: the de-chunked body, Base64
        (
            "org,httpbin)/post?__wb_method=post&__wb_post_data=c29tzwnodw5rlwvuy29kzwrkyxrh",
            "POST",
            "__wb_post_data=c29tZWNodW5rLWVuY29kZWRkYXRh",
        ),
    ]


def test_request_lines_share_the_folded_key() -> None:
    """pywb include_all + append_post: the request's line has its response's key."""
    path = CORPUS / "pywb" / "warcs" / "post-test.warc.gz"
    lines = list(index_file(path, IndexOptions(compat="pywb", all_records=True, post_append=True)))
    assert [ln.record_type for ln in lines] == ["response", "request"] * 3
    for resp, req in zip(lines[::2], lines[1::2], strict=True):
        assert resp.urlkey == req.urlkey and "__wb_method=post" in req.urlkey
        assert req.mime == "application/x-www-form-urlencoded" and req.status == "-"


def _pair(
    method: str,
    body: bytes,
    ctype: str,
    url: str = "http://example.com/api",
    request_first: bool = False,
) -> list[WarcRecord]:
    resp_id, req_id = "<urn:uuid:1>", "<urn:uuid:2>"
    resp = WarcRecord(
        WarcHeaders(
            [
                ("WARC-Type", "response"),
                ("WARC-Record-ID", resp_id),
                ("WARC-Target-URI", url),
                ("WARC-Date", "2024-01-02T03:04:05Z"),
                ("Content-Type", "application/http"),
                ("WARC-Payload-Digest", "sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ"),
            ]
        ),
        Block(b"HTTP/1.1 201 Created\r\nContent-Type: text/plain\r\n\r\n"),
        offset=0,
        length=100,
    )
    req_head = (
        f"{method} /api HTTP/1.1\r\nHost: example.com\r\nContent-Type: {ctype}\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    ).encode()
    req = WarcRecord(
        WarcHeaders(
            [
                ("WARC-Type", "request"),
                ("WARC-Record-ID", req_id),
                ("WARC-Target-URI", url),
                ("WARC-Date", "2024-01-02T03:04:05Z"),
                ("Content-Type", "application/http"),
                ("WARC-Concurrent-To", resp_id),
            ]
        ),
        Block(req_head + body),
        offset=100,
        length=100,
    )
    return [resp, req]


@pytest.mark.parametrize("compat", ["pywb", "cdxj-indexer"])
def test_put_json_is_folded(compat: str) -> None:
    recs = _pair("PUT", json.dumps({"id": 7, "ok": True}).encode(), "application/json")
    lines = list(
        index_records(
            recs,
            "t.warc",
            IndexOptions(
                compat=compat,  # type: ignore[arg-type]
                post_append=True,
            ),
        )
    )
    assert lines[0].urlkey == "com,example)/api?__wb_method=put&id=7&ok=true"
    assert lines[0].method == "PUT" and lines[0].extra["requestBody"] == "id=7&ok=true"


def test_other_methods() -> None:
    """pywb marks any non-GET method (``__wb_method=delete``); cdxj-indexer folds only
    POST and PUT; GET is never folded."""
    recs = _pair("DELETE", b"", "text/plain")
    pywb = list(index_records(recs, "t", IndexOptions(compat="pywb", post_append=True)))
    cdxj = list(index_records(recs, "t", IndexOptions(post_append=True)))
    assert pywb[0].urlkey == "com,example)/api?__wb_method=delete"
    assert cdxj[0].urlkey == "com,example)/api"
    get = list(
        index_records(
            _pair("GET", b"", "text/plain"), "t", IndexOptions(compat="pywb", post_append=True)
        )
    )
    assert get[0].urlkey == "com,example)/api" and get[0].method is None


def test_unpaired_request_is_not_folded() -> None:
    resp, req = _pair("POST", b"a=1", "application/x-www-form-urlencoded")
    other = WarcRecord(
        WarcHeaders(
            [(n, "<urn:uuid:9>" if n == "WARC-Concurrent-To" else v) for n, v in req.headers]
        ),
        req.block,
        offset=100,
        length=100,
    )
    lines = list(
        index_records([resp, other], "t", IndexOptions(post_append=True, all_records=True))
    )
    assert [ln.urlkey for ln in lines] == ["com,example)/api"] * 2


def test_method_url_is_the_indexer_key() -> None:
    """The replay lookup key of a request (``method_url`` of what a client sends: the
    de-chunked body) is the key the indexer wrote for its capture, for every POST of
    both peers' sample WARCs, in both flavours (pywb keys a chunked body as recorded)."""
    from webark.url import cdx_key
    from webark.warc.http import parse_http_head
    from webark.warc.payload import dechunk
    from webark.warc.reader import ArchiveReader

    checked = 0
    for name in ("pywb/warcs/post-test.warc.gz", "cdxj-indexer/data/post-test-more.warc"):
        for compat in ("cdxj-indexer", "pywb"):
            opts = IndexOptions(compat=compat, post_append=True)  # type: ignore[arg-type]
            keys = {x.urlkey for x in index_file(CORPUS / name, opts)}
            for rec in ArchiveReader(CORPUS / name):
                if rec.type != "request":
                    continue
                block = rec.block.read_all()
                head = parse_http_head(block, expect_request=True)
                assert head is not None and head.method is not None
                body = block[head.head_length :]
                if head.is_chunked:
                    if compat == "pywb":
                        continue
                    body = dechunk(body)[0]
                url = method_url(rec.headers.target_uri, head.method, head.get("Content-Type"),
                                 body, compat=compat)  # fmt: skip
                assert url is not None and cdx_key(url) in keys, (name, compat, url, keys)
                checked += 1
    assert checked == 11
    assert method_url("http://a.org/", "GET", None, b"", compat="pywb") is None
    assert method_url("http://a.org/", "DELETE", None, b"") is None
    assert method_url("http://a.org/", "DELETE", None, b"x", compat="pywb") == (
        "http://a.org/?__wb_method=DELETE")
