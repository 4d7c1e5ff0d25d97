"""CdxLine ⇄ text for cdx11, cdx9, cdxj and ng; reading peers' files back."""

from __future__ import annotations

import json

import pytest
from cdx_support import CORPUS

from webark.cdx.formats import (
    CDX11_HEADER,
    NG_HEADER,
    detect_format,
    format_cdx9,
    format_cdx11,
    format_cdxj,
    format_line,
    format_ng,
    formatter,
    header,
    iter_lines,
    ng_datetime,
    ng_digest,
    ng_key,
    parse_cdx,
    parse_cdxj,
    parse_line,
    parse_ng,
    sort_key,
)
from webark.cdx.line import CdxLine

LINE = CdxLine(
    urlkey="com,example)/",
    timestamp="20170306040206",
    url="http://example.com/",
    mime="text/html",
    status="200",
    digest="sha1:G7HRM7BGOKSKMSXZAHMUQTTV53QOFSMK",
    length=1242,
    offset=784,
    filename="example.warc.gz",
    record_type="response",
    date="2017-03-06T04:02:06Z",
)


def test_cdx11_and_cdx9_text() -> None:
    assert format_cdx11(LINE) == (
        "com,example)/ 20170306040206 http://example.com/ text/html 200 "
        "G7HRM7BGOKSKMSXZAHMUQTTV53QOFSMK - - 1242 784 example.warc.gz"
    )
    assert format_cdx9(LINE) == (
        "com,example)/ 20170306040206 http://example.com/ text/html 200 "
        "G7HRM7BGOKSKMSXZAHMUQTTV53QOFSMK - 784 example.warc.gz"
    )
    # unknowns are "-"; other digest labels are kept
    bare = CdxLine(
        urlkey="k", timestamp="20200101000000", url="u", digest="sha256:ab", length=-1, offset=-1
    )
    assert format_cdx11(bare) == "k 20200101000000 u - - sha256:ab - - - - -"


def test_cdxj_text_is_json_dumps() -> None:
    extra = {"requestBody": 'a="b"&c=\\é', "method": "POST"}
    line = CdxLine(**{**{f: getattr(LINE, f) for f in LINE.__slots__}, "extra": extra})
    text = format_cdxj(line)
    key, ts, blob = text.split(" ", 2)
    expected = {
        "url": "http://example.com/",
        "mime": "text/html",
        "status": "200",
        "digest": "sha1:G7HRM7BGOKSKMSXZAHMUQTTV53QOFSMK",
        "length": "1242",
        "offset": "784",
        "filename": "example.warc.gz",
        **extra,
    }
    assert blob == json.dumps(expected)
    assert (key, ts) == ("com,example)/", "20170306040206")
    # replace_fields: only the named keys, in order, absent ones left out
    assert format_cdxj(line, ["method", "mime", "warc-type"]) == (
        'com,example)/ 20170306040206 {"method": "POST", "mime": "text/html"}'
    )


@pytest.mark.parametrize("fmt", ["cdx11", "cdx9", "cdxj", "ng"])
def test_round_trip(fmt: str) -> None:
    text = format_line(LINE, fmt)  # type: ignore[arg-type]
    back = parse_line(text, fmt)  # type: ignore[arg-type]
    assert detect_format(text) == fmt
    assert format_line(back, fmt) == text  # type: ignore[arg-type]
    assert back.url == LINE.url and back.offset == LINE.offset
    assert back.filename == LINE.filename
    if fmt != "cdx9":
        assert back.length == LINE.length
    if fmt == "ng":
        assert back.urlkey == back.surt == "http://(com,example,)/"
        assert back.timestamp == LINE.timestamp and back.date == LINE.date
        assert back.record_type == "response" and back.status == "200"


def test_ng_line() -> None:
    assert format_ng(LINE) == (
        "http://(com,example,)/ 2017-03-06T04:02:06Z http://example.com/ "
        "sha1:G7HRM7BGOKSKMSXZAHMUQTTV53QOFSMK response example.warc.gz 784 "
        '{"status": 200, "mime": "text/html", "length": 1242}'
    )
    assert header("ng") == NG_HEADER and header("cdx11") == CDX11_HEADER
    assert header("cdxj") is None


@pytest.mark.parametrize(
    ("date", "ts", "expected"),
    [
        ("2017-03-06T04:03:48Z", "", "2017-03-06T04:03:48Z"),
        ("2020-04-12T18:42:50.696509Z", "", "2020-04-12T18:42:50.696509Z"),
        ("2008-10-29T05:21:46-0700", "", "2008-10-29T12:21:46Z"),
        ("2008-12-31T23:30:00-01:00", "", "2009-01-01T00:30:00Z"),
        ("2019-08-15T01:02", "", "2019-08-15T01:02Z"),
        ("", "20140216050221", "2014-02-16T05:02:21Z"),
        ("2008-10-294T05:21:46-0700", "", "-"),
    ],
)
def test_ng_datetime(date: str, ts: str, expected: str) -> None:
    assert ng_datetime(date, ts) == expected


def test_ng_datetime_sorts_byte_wise_in_time_order() -> None:
    """A coarser date sorts after the finer ones it covers (``Z`` > ``.`` and ``:``)."""
    dates = [
        "2020-04-12T18:42:50Z",
        "2020-04-12T18:42:50.5Z",
        "2020-04-12T18:42:50.25Z",
        "2020-04-12T18:42Z",
        "2020-04-12T18:41:59Z",
        "2020-04-12T18:43:00Z",
    ]
    assert sorted(dates) == [
        "2020-04-12T18:41:59Z",
        "2020-04-12T18:42:50.25Z",
        "2020-04-12T18:42:50.5Z",
        "2020-04-12T18:42:50Z",
        "2020-04-12T18:42Z",
        "2020-04-12T18:43:00Z",
    ]


@pytest.mark.parametrize(
    ("digest", "expected"),
    [
        ("sha1:G7HRM7BGOKSKMSXZAHMUQTTV53QOFSMK", "sha1:G7HRM7BGOKSKMSXZAHMUQTTV53QOFSMK"),
        ("G7HRM7BGOKSKMSXZAHMUQTTV53QOFSMK", "sha1:G7HRM7BGOKSKMSXZAHMUQTTV53QOFSMK"),
        ("sha1:da39a3ee5e6b4b0d3255bfef95601890afd80709", "sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ"),
        ("SHA-1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ", "sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ"),
        ("-", "-"),
        ("monkeypowah!", "sha1:monkeypowah!"),
    ],
)
def test_ng_digest(digest: str, expected: str) -> None:
    assert ng_digest(digest) == expected


def test_ng_key_folds_post_and_escapes() -> None:
    post = CdxLine(
        urlkey="x",
        timestamp="20140610000859",
        url="http://httpbin.org/post",
        method="POST",
        extra={"requestBody": "foo=bar"},
    )
    assert ng_key(post) == "http://(org,httpbin,)/post?__wb_method=post&foo=bar"
    odd = CdxLine(urlkey="x", timestamp="t", url="urn:X-wpull:log")
    assert ng_key(odd) == "urn:X-wpull:log"
    spaced = format_ng(
        CdxLine(urlkey="x", timestamp="t", url="file:///a b", filename="my file.warc")
    )
    assert spaced.split(" ", 7)[:7] == [
        "file:///a%20b",
        "-",
        "file:///a%20b",
        "-",
        "response",
        "my%20file.warc",
        "-",
    ]


def test_parse_cdx_with_header_letters() -> None:
    text = (CORPUS / "pywb" / "cdx" / "iana.cdx").read_text().splitlines()
    lines = list(iter_lines(text))
    assert len(lines) == len(text) - 1 == 171
    revisits = [ln for ln in lines if ln.mime == "warc/revisit"]
    assert len(revisits) == 123
    assert all(ln.status == "-" and ln.length > 0 for ln in revisits)
    first = lines[0]
    assert (first.urlkey, first.timestamp, first.length, first.offset) == (
        "org,iana)/",
        "20140126200624",
        2258,
        334,
    )
    assert [format_cdx11(ln) for ln in lines] == text[1:]


def test_parse_cdx9_and_unknown_letters() -> None:
    text = (CORPUS / "cdxj-indexer" / "expected-index" / "example.warc.gz.cdx09.cdx").read_text()
    lines = list(iter_lines(text.splitlines()))
    assert [ln.offset for ln in lines] == [784, 2635]
    assert all(ln.length == -1 for ln in lines)
    custom = parse_cdx("k 2020 u X", ["N", "b", "a", "Z"])
    assert custom.extra == {"Z": "X"}
    with pytest.raises(ValueError):
        parse_cdx("too few fields")


def test_parse_cdxj_gold_round_trip() -> None:
    for path in sorted((CORPUS / "cdxj-indexer" / "expected-index").glob("*.cdxj")):
        for text in path.read_text().splitlines():
            line = parse_cdxj(text)
            fields = list(json.loads(text.split(" ", 2)[2]))
            # default key order, or cdxj-indexer's replace_fields (first key not url)
            out = (
                format_cdxj(line)
                if fields[:1] == ["url"] or not fields
                else format_cdxj(line, fields)
            )
            assert out == text, path.name


def test_parse_errors() -> None:
    with pytest.raises(ValueError):
        parse_cdxj('k 2020 ["not", "an", "object"]')
    with pytest.raises(ValueError):
        parse_ng("a b c")
    with pytest.raises(ValueError, match="line 2"):
        list(iter_lines(["k 20200101000000 {}", "broken"], "cdxj"))
    with pytest.raises(ValueError):
        formatter("cdx7")  # type: ignore[arg-type]


def test_iter_lines_skips_meta_and_detects() -> None:
    ng = [NG_HEADER, format_ng(LINE), "", "!meta 0 {}"]
    assert [ln.surt for ln in iter_lines(ng)] == ["http://(com,example,)/"]
    assert len(list(iter_lines([format_cdxj(LINE)]))) == 1


def test_sort_key_is_byte_order() -> None:
    lines = ["b", "a b", "a", "é", "Z", "a\udcff"]
    assert sorted(lines, key=sort_key) == sorted(
        lines, key=lambda s: s.encode("utf-8", "surrogateescape")
    )
    assert sorted(lines, key=sort_key)[:3] == ["Z", "a", "a b"]
