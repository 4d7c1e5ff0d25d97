"""/{collection}/cdx, TimeMaps, errors and the home page, over an in-memory source and
over collection folders (sorted CDXJ — the raw fast path —, merged files, SQLite)."""

from __future__ import annotations

import base64
import json
import time
from urllib.parse import unquote_plus

import pytest
from cdx_api_support import D1, D2, D3
from starlette.testclient import TestClient

Q = dict[str, str]


def get(c: TestClient, params: Q | list[tuple[str, str]], coll: str = "mem"):  # type: ignore[no-untyped-def]
    return c.get(f"/{coll}/cdx", params=params)


def jl(c: TestClient, coll: str = "mem", **params: str) -> list[dict[str, str]]:
    r = get(c, {**params, "output": "json"}, coll)
    assert r.status_code == 200, r.text
    assert r.headers["content-type"] == "application/x-ndjson"
    return [json.loads(x) for x in r.text.splitlines() if x]


def ts(c: TestClient, coll: str = "mem", **params: str) -> list[str]:
    return [x["timestamp"] for x in jl(c, coll, **params)]


# --- match types and time ranges ----------------------------------------------------------
def test_exact(client: TestClient) -> None:
    got = jl(client, url="http://example.com/")
    assert [x["timestamp"] for x in got] == [
        "20100101000000", "20120615120000", "20140101000000", "20140101000100",
        "20160229235959", "20180101000000", "20200101000000",
    ]  # fmt: skip
    assert got[0] == {
        "urlkey": "com,example)/", "timestamp": "20100101000000", "url": "http://example.com/",
        "mime": "text/html", "status": "200", "digest": D1, "length": "1000", "offset": "0",
        "filename": "a.warc.gz",
    }  # fmt: skip


def test_exact_by_surt_key_and_www_and_https(client: TestClient) -> None:
    a = ts(client, url="com,example)/")
    assert a == ts(client, url="https://www.example.com/") == ts(client, url="example.com")
    assert len(a) == 7


@pytest.mark.parametrize(
    ("params", "n"),
    [
        ({"url": "example.com", "matchType": "host"}, 20),
        ({"url": "example.com/*"}, 20),
        ({"url": "example.com", "matchType": "domain"}, 23),
        ({"url": "*.example.com"}, 23),
        ({"url": "sub.example.com", "matchType": "domain"}, 3),
        ({"url": "example.com/a", "matchType": "prefix"}, 4),
        ({"url": "example.com/a/", "matchType": "prefix"}, 1),
        ({"url": "com,example)/n", "matchType": "range"}, 6 + 1 + 1 + 2 + 1 + 1 + 2),
        ({"url": "", "matchType": "range"}, 27),
        ({"url": "example.com/nothing-here"}, 0),
    ],
)
def test_match_types(client: TestClient, params: Q, n: int) -> None:
    assert len(jl(client, **params)) == n


def test_prefix_order_is_cdx_order(client: TestClient) -> None:
    keys = [x["urlkey"] for x in jl(client, url="example.com", matchType="host")]
    assert keys == sorted(keys)
    assert keys[0] == "com,example)/" and keys[-1] == "com,example)/redirect"


def test_from_to(client: TestClient) -> None:
    assert ts(client, url="example.com", **{"from": "2014", "to": "2016"}) == [
        "20140101000000", "20140101000100", "20160229235959"]  # fmt: skip
    assert ts(client, url="example.com", to="201401010000") == [
        "20100101000000", "20120615120000", "20140101000000"]  # fmt: skip
    # to=2016 is the last second of 2016; from=20160229235959 inclusive
    assert ts(client, url="example.com", **{"from": "20160229235959"})[0] == "20160229235959"
    host = ts(client, url="example.com", matchType="host", **{"from": "2019"})
    assert host == ["20200101000000", "20210101000000"]


def test_exact_time_range_is_narrowed_not_filtered(client: TestClient, mem) -> None:  # type: ignore[no-untyped-def]
    # one scan with from/to inside the key range (the source sees the narrowed range)
    seen = []
    orig = mem.scan

    def spy(rng, reverse=False):  # type: ignore[no-untyped-def]
        seen.append(rng)
        return orig(rng, reverse)

    mem.scan = spy
    ts(client, url="example.com", **{"from": "2014"})
    assert seen[0].start == "com,example)/ 20140101000000" and seen[0].end == "com,example)/!"


# --- sorting ------------------------------------------------------------------------------
def test_reverse(client: TestClient) -> None:
    assert ts(client, url="example.com", sort="reverse", limit="2") == [
        "20200101000000", "20180101000000"]  # fmt: skip
    host = jl(client, url="example.com", matchType="host", sort="reverse")
    assert host[0]["urlkey"] == "com,example)/redirect"
    assert len(host) == 20


def test_closest(client: TestClient) -> None:
    assert ts(client, url="example.com", closest="20150101000000", limit="3") == [
        "20140101000100", "20140101000000", "20160229235959"]  # fmt: skip
    # sort=closest spelled out (IA) gives the same
    assert ts(client, url="example.com", closest="20150101000000", sort="closest", limit="3") == [
        "20140101000100", "20140101000000", "20160229235959"]  # fmt: skip
    # all captures, ordered by distance
    assert len(ts(client, url="example.com", closest="2015")) == 7


def test_closest_partial_timestamp_is_the_end_of_its_period(client: TestClient) -> None:
    # closest=2014 → 20141231235959 (warcio's timestamp_to_sec pads up)
    assert ts(client, url="example.com", closest="2014", limit="1") == ["20140101000100"]
    assert ts(client, url="example.com", closest="2016", limit="1") == ["20160229235959"]


def test_closest_tie_goes_to_the_earlier(client: TestClient) -> None:
    # 2012-06-01 and 2013-06-01 are 365 days apart; 2012-11-30 12:00 is exactly between
    assert ts(client, url="example.com/news", closest="20121130120000", limit="2") == [
        "20120601000000", "20130601000000"]  # fmt: skip
    assert ts(client, url="example.com/news", closest="20121130120001", limit="1") == [
        "20130601000000"]  # fmt: skip


def test_closest_with_from_to(client: TestClient) -> None:
    assert ts(client, url="example.com", closest="2015", to="2013") == [
        "20120615120000", "20100101000000"]  # fmt: skip
    assert ts(client, url="example.com", closest="2010", **{"from": "2017"}) == [
        "20180101000000", "20200101000000"]  # fmt: skip


def test_closest_limit_1_reads_two_lines(client: TestClient, mem) -> None:  # type: ignore[no-untyped-def]
    before = mem.scans
    assert ts(client, url="example.com/news", closest="20130601", limit="1") == ["20130601000000"]
    assert mem.scans - before == 2  # one scan each way from the split point


# --- limit, filter, fl, outputs -------------------------------------------------------------
def test_limit(client: TestClient) -> None:
    assert len(jl(client, url="example.com", matchType="host", limit="5")) == 5


@pytest.mark.parametrize(
    ("flt", "expected"),
    [
        (["mime:revisit"], ["20140101000100", "20180101000000"]),  # contains
        (["mimetype:revisit"], ["20140101000100", "20180101000000"]),  # IA field name
        (["=status:"], ["20140101000100", "20180101000000"]),  # exact; absent is ""
        (["!=status:200"], ["20140101000100", "20180101000000"]),
        (["~url:https"], ["20140101000000"]),  # regex, anchored at the start
        (["~url:example"], []),  # re.match: not a search
        (["~url:.*www"], ["20120615120000"]),
        (["~original:http://(www\\.)?example"], ["20100101000000", "20120615120000",
                                                 "20140101000100", "20160229235959",
                                                 "20180101000000", "20200101000000"]),
        ([f"digest:{D3[5:]}"], ["20160229235959", "20180101000000"]),
        (["!digest:AAAA", "!digest:BBBB"], ["20160229235959", "20180101000000"]),  # all must match
        (["20140101000100"], ["20140101000100"]),  # whole line, contains
        (["!~.*revisit"], ["20100101000000", "20120615120000", "20140101000000",
                           "20160229235959", "20200101000000"]),
        (["nosuchfield:200"], []),  # absent field is "" (pywb)
    ],
)  # fmt: skip
def test_filters(client: TestClient, flt: list[str], expected: list[str]) -> None:
    params = [("url", "example.com"), ("output", "json")] + [("filter", f) for f in flt]
    r = get(client, params)
    assert r.status_code == 200
    assert [json.loads(x)["timestamp"] for x in r.text.splitlines()] == expected


def test_fl_json_and_cdx_and_cdxj(client: TestClient) -> None:
    r = get(client, {"url": "example.com/redirect", "fl": "timestamp,statuscode,original",
                     "output": "json"})  # fmt: skip
    assert r.text == ('{"timestamp": "20150505050505", "status": "302", '
                      '"url": "http://example.com/redirect"}\n')  # fmt: skip
    r = get(client, {"url": "example.com/redirect", "fl": "urlkey,timestamp,status,redirect",
                     "output": "cdx"})  # fmt: skip
    assert r.text == "com,example)/redirect 20150505050505 302 -\n"
    r = get(client, {"url": "example.com/redirect", "fl": "status,length"})
    assert r.text == 'com,example)/redirect 20150505050505 {"status": "302", "length": "1000"}\n'


def test_output_cdx_is_cdx11(client: TestClient) -> None:
    r = get(client, {"url": "example.com/redirect", "output": "cdx"})
    assert r.headers["content-type"].startswith("text/plain")
    assert r.text == (
        "com,example)/redirect 20150505050505 http://example.com/redirect text/html 302 "
        "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA - - 1000 1100 a.warc.gz\n"
    )


def test_output_cdxj_default(client: TestClient) -> None:
    r = get(client, {"url": "example.com/redirect"})
    assert r.text.startswith('com,example)/redirect 20150505050505 {"url": ')
    assert get(client, {"url": "example.com/redirect", "output": "text"}).text == r.text


def test_output_link(client: TestClient) -> None:
    r = get(client, {"url": "example.com/news", "output": "link", "limit": "2"})
    assert r.headers["content-type"] == "application/link-format"
    assert r.text == (
        '<http://testserver/mem/20100601000000/http://example.com/news>; rel="memento"; '
        'datetime="Tue, 01 Jun 2010 00:00:00 GMT"; collection="mem",\n'
        '<http://testserver/mem/20110601000000/http://example.com/news>; rel="memento"; '
        'datetime="Wed, 01 Jun 2011 00:00:00 GMT"; collection="mem"\n'
    )


# --- collapse -------------------------------------------------------------------------------
def test_collapse(client: TestClient) -> None:
    host = jl(client, url="example.com", matchType="host", collapse="urlkey")
    assert [x["urlkey"] for x in host] == [
        "com,example)/", "com,example)/a", "com,example)/a/b", "com,example)/b?x=1&y=2",
        "com,example)/feed.xml", "com,example)/news", "com,example)/redirect"]  # fmt: skip
    assert ts(client, url="example.com/news", collapse="timestamp:3") == ["20100601000000"]
    assert ts(client, url="example.com", collapse="digest") == [
        "20100101000000", "20140101000000", "20160229235959", "20200101000000"]  # fmt: skip
    # two rules: a line is kept only if each rule keeps it (chained, as IA)
    both = get(client, [("url", "example.com/*"), ("collapse", "urlkey"),
                        ("collapse", "timestamp:4"), ("output", "json")])  # fmt: skip
    assert [json.loads(x)["timestamp"][:4] for x in both.text.splitlines()] == [
        "2010", "2011", "2015", "2021", "2010", "2015"]  # fmt: skip


def test_collapse_time_includes_status(client: TestClient) -> None:
    assert ts(client, url="example.com", collapseTime="4") == [
        "20100101000000", "20120615120000", "20140101000000", "20140101000100",
        "20160229235959", "20180101000000", "20200101000000"]  # fmt: skip
    assert ts(client, url="example.com", collapseTime="2") == [
        "20100101000000", "20140101000100", "20160229235959", "20180101000000",
        "20200101000000"]  # fmt: skip


# --- paging and resume keys -----------------------------------------------------------------
def test_show_num_pages_and_pages(client: TestClient) -> None:
    base = {"url": "example.com", "matchType": "host", "pageSize": "6"}
    assert get(client, {**base, "showNumPages": "true"}).text == "4\n"
    r = get(client, {**base, "showNumPages": "true", "output": "json"})
    assert r.json() == {"pages": 4, "pageSize": 6, "blocks": 20}
    allts = [(x["urlkey"], x["timestamp"]) for x in jl(client, **base)]
    pages = [[(x["urlkey"], x["timestamp"]) for x in jl(client, **base, page=str(i))]
             for i in range(5)]  # fmt: skip
    assert [len(p) for p in pages] == [6, 6, 6, 2, 0]
    assert [x for p in pages for x in p] == allts
    assert len(jl(client, **base, page="1", limit="2")) == 2


def _walk(c: TestClient, params: Q, page: int, output: str = "json") -> tuple[list[str], int]:
    """Follow resume keys to the end; returns the lines and the number of requests."""
    out: list[str] = []
    key = None
    n = 0
    while True:
        p = {**params, "limit": str(page), "showResumeKey": "true", "output": output}
        if key is not None:
            p["resumeKey"] = key
        r = get(c, p)
        n += 1
        assert r.status_code == 200, r.text
        text = r.text
        if output == "json":
            rows = text.splitlines()
            if rows and '"resumeKey"' in rows[-1]:
                key = unquote_plus(json.loads(rows[-1])["resumeKey"])
                out += rows[:-1]
                continue
            return out + rows, n
        if "\n\n" in text:
            body, k = text.split("\n\n")
            out += body.splitlines()
            key = unquote_plus(k.strip())
            continue
        return out + text.splitlines(), n


@pytest.mark.parametrize(
    "params",
    [
        {"url": "example.com", "matchType": "host"},
        {"url": "example.com", "matchType": "host", "sort": "reverse"},
        {"url": "example.com", "matchType": "domain", "collapse": "urlkey"},
        {"url": "example.com", "matchType": "domain", "filter": "!=status:200"},
        {"url": "example.com/a"},  # two lines in the same second
        {"url": "example.com/a", "sort": "reverse"},
        {"url": "", "matchType": "range", "from": "2015"},
    ],
)
@pytest.mark.parametrize("page", [1, 2, 5])
def test_resume_keys_walk_the_whole_result(client: TestClient, params: Q, page: int) -> None:
    full = get(client, {**params, "output": "json"}).text.splitlines()
    got, n = _walk(client, params, page)
    assert got == full
    assert n == max(1, -(-len(full) // page))  # no key after the last full page


def test_resume_keys_text_output(client: TestClient) -> None:
    params = {"url": "example.com", "matchType": "host"}
    full = get(client, params).text.splitlines()
    got, _ = _walk(client, params, 3, output="cdxj")
    assert got == full


def test_no_resume_key_when_nothing_is_left(client: TestClient) -> None:
    r = get(client, {"url": "example.com", "limit": "7", "showResumeKey": "true"})
    assert "\n\n" not in r.text and len(r.text.splitlines()) == 7


# --- digest -----------------------------------------------------------------------------
def test_lookup_by_digest(client: TestClient) -> None:
    got = jl(client, digest=D2)
    assert [(x["urlkey"], x["timestamp"]) for x in got] == [
        ("com,example)/", "20140101000000"), ("com,example)/", "20140101000100"),
        ("com,example)/a", "20110101000000"), ("com,example)/a", "20150101000000"),
        ("com,example)/feed.xml", "20210101000000"), ("com,example,sub)/page", "20130303030303"),
        ("com,example,sub)/page", "20170303030303")]  # fmt: skip
    # any encoding of the same hash, with or without the label
    raw = base64.b32decode(D2[5:])
    assert len(jl(client, digest=raw.hex())) == 7
    assert len(jl(client, digest=D2[5:])) == 7
    assert len(jl(client, digest=base64.b64encode(raw).decode())) == 7
    assert ts(client, digest=D2, **{"from": "2015"}) == [
        "20150101000000", "20210101000000", "20170303030303"]  # fmt: skip


def test_digest_with_url_is_a_filter(client: TestClient) -> None:
    assert ts(client, url="example.com", digest=D3) == ["20160229235959", "20180101000000"]
    assert ts(client, url="example.com", digest=D3, closest="2019", limit="1") == [
        "20180101000000"]  # fmt: skip


# --- errors -----------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("params", "name"),
    [
        ({}, "url"),
        ({"url": "example.com", "matchType": "nope"}, "matchType"),
        ({"url": "example.com", "from": "20x"}, "from"),
        ({"url": "example.com", "limit": "0"}, "limit"),
        ({"url": "example.com", "filter": "~url:("}, "filter"),
        ({"url": "example.com", "output": "xml"}, "output"),
        ({"url": "example.com/*", "closest": "2015"}, "closest"),
        ({"url": "http://exa\x01mple.com/"}, "url"),
    ],
)
def test_400_names_the_parameter(client: TestClient, params: Q, name: str) -> None:
    r = get(client, params)
    assert r.status_code == 400
    body = r.json()
    assert body["param"] == name and body["status"] == 400
    assert body["error"].startswith(name + ":")


def test_404_unknown_collection(client: TestClient) -> None:
    r = get(client, {"url": "example.com"}, coll="nope")
    assert r.status_code == 404 and "nope" in r.json()["error"]


@pytest.mark.parametrize("params", [{"url": "example.com"}, {"url": "example.com/*"},
                                    {"url": "example.com", "closest": "2015", "limit": "1"},
                                    {"digest": D1}])  # fmt: skip
def test_503_when_the_backend_is_down(client: TestClient, params: Q) -> None:
    r = get(client, params, coll="down")
    assert r.status_code == 503
    assert "unavailable" in r.json()["error"] and r.json()["status"] == 503


def test_503_when_the_backend_fails_before_the_first_chunk(client: TestClient) -> None:
    r = get(client, {"url": "example.com/*"}, coll="flaky")
    assert r.status_code == 503


def test_bad_parameter_wins_over_a_down_backend(client: TestClient) -> None:
    assert get(client, {"url": "example.com", "limit": "x"}, coll="down").status_code == 400


# --- TimeMap --------------------------------------------------------------------------------
def test_timemap(client: TestClient) -> None:
    r = client.get("/mem/timemap/link/http://example.com/news")
    assert r.status_code == 200
    assert r.headers["content-type"] == "application/link-format"
    lines = r.text.splitlines()
    assert lines[0] == '<http://example.com/news>; rel="original",'
    assert lines[1] == (
        '<http://testserver/mem/timemap/link/http://example.com/news>; rel="self"; '
        'type="application/link-format"; from="Tue, 01 Jun 2010 00:00:00 GMT"; '
        'until="Mon, 01 Jun 2015 00:00:00 GMT",'
    )
    assert lines[2] == '<http://testserver/mem/http://example.com/news>; rel="timegate",'
    assert lines[3] == (
        '<http://testserver/mem/20100601000000/http://example.com/news>; rel="first memento"; '
        'datetime="Tue, 01 Jun 2010 00:00:00 GMT"; collection="mem",'
    )
    assert lines[-1].startswith('<http://testserver/mem/20150601000000/http://example.com/news>;'
                                ' rel="last memento"')  # fmt: skip
    assert not lines[-1].endswith(",") and len(lines) == 3 + 6


def test_timemap_single_memento_and_query_string(client: TestClient) -> None:
    r = client.get("/mem/timemap/link/http://example.com/b?y=2&x=1")
    assert r.status_code == 200
    assert 'rel="first last memento"' in r.text
    assert '<http://example.com/b?y=2&x=1>; rel="original"' in r.text


def test_timemap_merged_scheme_slashes(client: TestClient) -> None:
    assert client.get("/mem/timemap/link/http:/example.com/news").status_code == 200


def test_timemap_errors(client: TestClient) -> None:
    assert client.get("/mem/timemap/link/http://nowhere.example/").status_code == 404
    assert client.get("/nope/timemap/link/http://example.com/").status_code == 404
    assert client.get("/down/timemap/link/http://example.com/").status_code == 503
    r = client.get("/mem/timemap/link/")
    assert r.status_code == 400 and r.json()["param"] == "url"


# --- home, openapi ------------------------------------------------------------------------
def test_home(client: TestClient) -> None:
    r = client.get("/")
    assert r.json() == {"collections": [
        {"name": n, "cdx": f"/{n}/cdx", "timemap": f"/{n}/timemap/link/"}
        for n in ("down", "flaky", "mem")]}  # fmt: skip
    r = client.get("/", headers={"accept": "text/html"})
    assert r.headers["content-type"].startswith("text/html") and "/mem/cdx" in r.text


def test_openapi_served(client: TestClient) -> None:
    spec = client.get("/openapi.json").json()
    assert spec["openapi"].startswith("3.")
    assert set(spec["paths"]) == {"/", "/{collection}/cdx", "/{collection}/timemap/link/{url}"}
    names = {p["name"] for p in spec["paths"]["/{collection}/cdx"]["get"]["parameters"]}
    assert {"url", "matchType", "from", "to", "closest", "sort", "limit", "filter", "fl",
            "output", "collapse", "page", "pageSize", "showNumPages", "resumeKey",
            "showResumeKey", "digest"} <= names  # fmt: skip


def test_head_goes_through_starlette(client: TestClient) -> None:
    r = client.head("/mem/cdx", params={"url": "example.com"})
    assert r.status_code == 200 and r.content == b""


# --- collection folders: every store answers the same -----------------------------------
QUERIES: list[Q] = [
    {"url": "example.com"},
    {"url": "example.com", "matchType": "host"},
    {"url": "*.example.com", "sort": "reverse"},
    {"url": "example.com", "closest": "20150101", "limit": "3"},
    {"url": "example.com/news", "closest": "20121130120000"},
    {"url": "example.com/*", "collapse": "urlkey"},
    {"url": "example.com/*", "filter": "!=status:200"},
    {"url": "example.com/*", "limit": "4", "showResumeKey": "true"},
    {"url": "example.com/*", "from": "2015", "to": "2016"},
    {"url": "", "matchType": "range", "pageSize": "10", "page": "1"},
    {"digest": D2},
]


@pytest.mark.parametrize("coll", ["cdxj", "split", "store"])
@pytest.mark.parametrize("output", ["json", "cdxj", "cdx", "link"])
def test_stores_agree_with_memory(dir_client: TestClient, client: TestClient, coll: str,
                                  output: str) -> None:  # fmt: skip
    for params in QUERIES:
        if output == "link" and "showResumeKey" in params:
            continue
        p = {**params, "output": output}
        want = get(client, p).text.replace("/mem/", f"/{coll}/").replace('"mem"', f'"{coll}"')
        got = get(dir_client, p, coll)
        assert got.status_code == 200, got.text
        if output == "json":
            assert [json.loads(x) for x in got.text.splitlines()] == [
                json.loads(x) for x in want.splitlines()], params  # fmt: skip
        else:
            assert got.text == want, (coll, params)


def test_folder_errors(dir_client: TestClient) -> None:
    assert get(dir_client, {"url": "a.com"}, "nothing").status_code == 503
    assert get(dir_client, {"url": "a.com"}, "dangling").status_code == 503
    assert get(dir_client, {"url": "a.com"}, "not-a-collection").status_code == 404
    assert get(dir_client, {"url": "a.com"}, "..").status_code == 404
    assert get(dir_client, {"url": "a.com"}, ".hidden").status_code == 404
    names = [c["name"] for c in dir_client.get("/").json()["collections"]]
    assert names == ["cdxj", "dangling", "iana", "iana-dupes", "nothing", "pywb", "split",
                     "store"]  # fmt: skip


def test_index_file_replaced_is_seen(colls_dir, lines) -> None:  # type: ignore[no-untyped-def]
    from webark.apps.cdx import sources as cdx_sources
    from webark.apps.cdx.api import create_app
    from webark.index.sorted_file import write_sorted_cdxj

    with TestClient(create_app(colls_dir)) as c:
        assert len(ts(c, "cdxj", url="example.com")) == 7
        write_sorted_cdxj(lines[:3], colls_dir / "cdxj" / "indexes" / "index.cdxj")
        time.sleep(cdx_sources.RECHECK_SECONDS + 0.05)  # files are stat'ed once a second
        assert len(ts(c, "cdxj", url="example.com")) == 3


# --- pywb parity: pywb's own doctests (pywb/warcserver/index/test/test_cdxops.py) on its
# --- test CDX folder (corpus/pywb/cdx), expected values transcribed --------------------------
def cdx(c: TestClient, params: Q | list[tuple[str, str]], coll: str = "iana") -> list[str]:
    """Classic CDX output (pywb's text output of an 11-field CDX source); ``iana`` is
    ``iana.cdx`` alone, the default source of pywb's doctests."""
    if isinstance(params, dict):
        params = list(params.items())
    r = get(c, [*params, ("output", "cdx")], coll)
    assert r.status_code == 200, r.text
    return r.text.splitlines()


def test_pywb_merge_of_sources(dir_client: TestClient) -> None:
    assert cdx(dir_client, {"url": "http://iana.org/"}, "iana-dupes") == [
        "org,iana)/ 20140126200624 http://www.iana.org/ text/html 200 OSSAPWJ23L56IYVRW3GFEAR4MCJMGPTB - - 2258 334 iana.warc.gz",  # noqa: E501
        "org,iana)/ 20140127171238 http://iana.org unk 302 3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ - - 343 1858 dupes.warc.gz",  # noqa: E501
        "org,iana)/ 20140127171238 http://www.iana.org/ warc/revisit - OSSAPWJ23L56IYVRW3GFEAR4MCJMGPTB - - 536 2678 dupes.warc.gz",  # noqa: E501
    ]


def test_pywb_limit(dir_client: TestClient) -> None:
    got = cdx(dir_client, {"url": "http://iana.org/_css/2013.1/fonts/opensans-bold.ttf",
                           "limit": "3"})  # fmt: skip
    assert [x.split()[1] for x in got] == ["20140126200625", "20140126200654", "20140126200706"]


def test_pywb_from_to(dir_client: TestClient) -> None:
    got = cdx(dir_client, {"url": "http://example.com/", "from": "2013", "to": "2013"}, "pywb")
    assert got == [
        "com,example)/ 20130729195151 http://test@example.com/ warc/revisit - "
        "B2LTWWPUOYAH7UIPQ7ZUPQ4VMBSVC36A - - 591 355 example-url-agnostic-revisit.warc.gz"
    ]
    got = cdx(dir_client, {"url": "http://example.com/", "from": "2014"}, "pywb")
    assert [x.split()[1] for x in got] == ["20140127171200", "20140127171251"]
    assert cdx(dir_client, {"url": "http://example.com/", "to": "2012"}, "pywb") == []


def test_pywb_closest(dir_client: TestClient) -> None:
    url = "http://iana.org/_css/2013.1/fonts/opensans-bold.ttf"
    got = cdx(dir_client, {"url": url, "closest": "20140126200826", "fl": "timestamp",
                           "limit": "10"})  # fmt: skip
    assert got == ["20140126200826", "20140126200816", "20140126200805", "20140126200912",
                   "20140126200738", "20140126200930", "20140126200718", "20140126200706",
                   "20140126200654", "20140126200625"]  # fmt: skip
    # equal distance: the earlier first
    for closest, want in (("20140126200700", ["20140126200654", "20140126200706"]),
                          ("20140126200659", ["20140126200654", "20140126200706"]),
                          ("20140126200701", ["20140126200706", "20140126200654"])):  # fmt: skip
        assert cdx(dir_client, {"url": url, "closest": closest, "limit": "2",
                                "fl": "timestamp"}) == want  # fmt: skip
    got = cdx(dir_client, {"url": "http://iana.org/dnssec", "closest": "20140126201307"})
    assert [x.split()[1] for x in got] == ["20140126201307", "20140126201306"]


DOMAINS_HTML = ["20140126200825", "20140126201248", "20140126201127", "20140126201239",
                "20140126201054", "20140126200912", "20140126200927", "20140126200928",
                "20140126201227"]  # fmt: skip


@pytest.mark.parametrize("flt", ["mimetype:html", "~mimetype:.*/html$", "=mimetype:text/html"])
def test_pywb_filters_on_prefix(dir_client: TestClient, flt: str) -> None:
    got = cdx(dir_client, {"url": "http://iana.org/domains", "matchType": "prefix", "filter": flt})
    assert [x.split()[1] for x in got] == DOMAINS_HTML


@pytest.mark.parametrize(
    ("flt", "n"),
    [("statuscode:200", 1), ("status:200", 1), ("screen.css 20140126200625", 1), ("blah:200", 0)],
)
def test_pywb_filters_exact_url(dir_client: TestClient, flt: str, n: int) -> None:
    got = cdx(dir_client, {"url": "http://iana.org/_css/2013.1/screen.css", "filter": flt})
    assert len(got) == n
    if n:
        assert got[0] == (
            "org,iana)/_css/2013.1/screen.css 20140126200625 "
            "http://www.iana.org/_css/2013.1/screen.css text/css 200 "
            "BUAEPXZNN44AIX3NLXON4QDV6OY2H5QD - - 8754 41238 iana.warc.gz"
        )


@pytest.mark.parametrize(
    ("params", "want"),
    [
        ([("url", "http://example.com*"), ("filter", "=urlkey:com,example)/?example=1")],
         ["20140103030321", "20140103030341"]),
        ([("url", "http://example.com"), ("matchType", "prefix"),
          ("filter", "!=urlkey:com,example)/?example=1"),
          ("filter", "!=urlkey:com,example)/?example=2"),
          ("filter", "!=urlkey:com,example)/?example=3")],
         ["20130729195151", "20140127171200", "20140127171251"]),
        ([("url", "http://example.com"), ("matchType", "prefix"), ("filter", "urlkey:example=1")],
         ["20140103030321", "20140103030341"]),
        ([("url", "http://example.com"), ("matchType", "prefix"), ("filter", "!urlkey:example=")],
         ["20130729195151", "20140127171200", "20140127171251"]),
        ([("url", "http://example.com"), ("matchType", "prefix"),
          ("filter", "~urlkey:.*example=1$")], ["20140103030321", "20140103030341"]),
        ([("url", "http://example.com"), ("matchType", "prefix"),
          ("filter", "!~urlkey:.*example=[0-9]$")],
         ["20130729195151", "20140127171200", "20140127171251"]),
        ([("url", "http://iana.org/_css/2013.1/screen.css"), ("collapseTime", "11")],
         ["20140126200625", "20140126200653", "20140126201054"]),
    ],
)  # fmt: skip
def test_pywb_filter_and_collapse_cases(dir_client: TestClient, params: list[tuple[str, str]],
                                        want: list[str]) -> None:  # fmt: skip
    coll = "iana" if "iana.org" in params[0][1] else "pywb"
    assert [x.split()[1] for x in cdx(dir_client, params, coll)] == want


def test_d_constants_are_distinct() -> None:
    assert len({D1, D2, D3}) == 3
