"""Pages in other encodings come back byte for byte, except the rewritten values.

Each case builds a page whose bytes outside the URLs are not UTF-8 (or not valid at
all), rewrites it and checks the exact expected bytes: the only difference is the
archive prefix put in front of each URL, and non-ASCII characters inside URLs keep
their original bytes (the browser percent-encodes them in the page's encoding)."""

from __future__ import annotations

import pytest

from webark.rewrite.charset import css_charset, html_charset, python_codec, to_bytes, to_text
from webark.rewrite.css import rewrite_css_bytes
from webark.rewrite.html import rewrite_html
from webark.rewrite.js import rewrite_js_bytes
from webark.rewrite.urls import UrlRewriter

TS = "20140126200624"
P = f"/coll/{TS}".encode()
BASE = "http://example.jp/dir/"


def rw() -> UrlRewriter:
    return UrlRewriter("/coll/", TS, BASE + "page.html")


def test_shift_jis_page_with_backslash_trail_bytes() -> None:
    # 表 and ソ end in 0x5C ('\\' in ASCII), which a byte-as-ASCII view would take for
    # a path separator; 能 is 0x94 0x5C.
    text = "表示ソフト能力"
    sjis = text.encode("shift_jis")
    assert b"\\" in sjis
    body = (b'<html><head><meta charset="Shift_JIS"><title>' + sjis + b"</title></head>"
            b'<body><a href="search?q=' + sjis + b'">' + sjis + b"</a>"
            b"<img src='/img/" + sjis + b".png'></body></html>")
    out = rewrite_html(body, rw())
    assert out == (b'<html><head><meta charset="Shift_JIS"><title>' + sjis + b"</title></head>"
                   b'<body><a href="' + P + b"/" + BASE.encode() + b"search?q=" + sjis + b'">'
                   + sjis + b"</a><img src='" + P + b"im_/http://example.jp/img/" + sjis
                   + b".png'></body></html>")


def test_iso_8859_1_declared_in_header() -> None:
    body = ("<p>Café crème – voilà</p><a href='menu-été.html?plat=crêpe'>é</a>"
            "<link rel=stylesheet href=style.css>").encode("iso-8859-1", "replace")
    out = rewrite_html(body, rw(), charset="ISO-8859-1")
    exp = ("<p>Café crème – voilà</p><a href='/coll/20140126200624/http://example.jp/dir/"
           "menu-été.html?plat=crêpe'>é</a><link rel=stylesheet href=/coll/20140126200624cs_/"
           "http://example.jp/dir/style.css>").encode("iso-8859-1", "replace")
    assert out == exp


def test_windows_1252_undeclared_bytes_survive() -> None:
    # smart quotes 0x93/0x94, euro 0x80, and 0x81 (undefined in windows-1252)
    body = b'<p>\x93quoted\x94 \x80 \x81</p><a href="/x\x92y">\x85</a>'
    out = rewrite_html(body, rw())
    assert out == b'<p>\x93quoted\x94 \x80 \x81</p><a href="' + P + b'/http://example.jp/x\x92y">\x85</a>'


def test_invalid_utf8_declared_utf8() -> None:
    body = (b"<meta charset=utf-8><p>ok \xc3\xa9 bad \xff\xfe \xc3 \xed\xa0\x80</p>"
            b'<a href="a\xffb">x</a>')
    out = rewrite_html(body, rw(), charset="utf-8")
    assert out == (b'<meta charset=utf-8><p>ok \xc3\xa9 bad \xff\xfe \xc3 \xed\xa0\x80</p><a href="'
                   + P + b'/http://example.jp/dir/a\xffb">x</a>')


def test_meta_http_equiv_charset_and_bom() -> None:
    cyr = "Новости".encode("windows-1251")
    body = (b'<meta http-equiv="Content-Type" content="text/html; charset=windows-1251">'
            b'<a href="/news?t=' + cyr + b'">' + cyr + b"</a>")
    assert html_charset(body) == "cp1251"
    out = rewrite_html(body, rw())
    assert out == body.replace(b'href="/news', b'href="' + P + b"/http://example.jp/news")
    bom = b"\xef\xbb\xbf<a href=x>\xe2\x82\xac</a>"
    assert html_charset(bom, "iso-8859-1") == "utf-8"  # the BOM wins (WHATWG)
    assert rewrite_html(bom, rw(), charset="iso-8859-1") \
        == b"\xef\xbb\xbf<a href=" + P + b"/http://example.jp/dir/x>\xe2\x82\xac</a>"


def test_cp932_duplicates_fall_back_to_bytes() -> None:
    # NEC row 13 0x87 0x90 decodes to U+2252, which cp932 encodes as 0x81 0xE0: no
    # round trip, so the page is handled byte by byte.
    body = b"<p>\x87\x90</p><a href='x.html'>a</a>"
    view = to_text(body, python_codec("windows-31j"))
    assert view.codec == "latin-1"
    assert to_bytes(view.text, view.codec) == body
    out = rewrite_html(body, rw(), charset="windows-31j")
    assert out == b"<p>\x87\x90</p><a href='" + P + b"/http://example.jp/dir/x.html'>a</a>"


@pytest.mark.parametrize(("label", "codec"), [
    ("UTF-8", "utf-8"), ("gb2312", "gbk"), ("Shift_JIS", "shift_jis"), ("EUC-JP", "euc_jp"),
    ("iso-8859-1", "iso8859-1"), ("Big5_Solaris", None), ("", None), (None, None),
])
def test_labels(label: str | None, codec: str | None) -> None:
    assert python_codec(label) == codec


def test_stylesheet_and_script_encodings() -> None:
    css = '@charset "iso-8859-1";\n/* café */ p{background:url(caf\xe9.png)}'.encode("latin-1")
    assert css_charset(css) == "iso8859-1"
    out = rewrite_css_bytes(css, rw())
    assert out == css.replace(b"url(caf", b"url(" + P + b"im_/http://example.jp/dir/caf")
    js = 'var s = "\u00fcber"; var u = "http://cdn.example.org/a.js";'.encode("latin-1")
    out = rewrite_js_bytes(js, rw(), charset="iso-8859-1")
    assert out == js.replace(b'"http://cdn', b'"' + P + b"/http://cdn")
    assert rewrite_js_bytes(b"var x = 1; // nothing\xff", rw()) == b"var x = 1; // nothing\xff"


def test_corpus_pages_in_other_encodings(html_payloads: list) -> None:
    """The corpus has real EUC-JP, GB2312 and windows-1251 pages; they must come back
    identical except for rewritten spans, and decode in their charset as before."""
    seen: set[str] = set()
    for p in html_payloads:
        cs = (p.charset or "").lower()
        if cs not in ("euc-jp", "gb2312", "windows-1251", "iso-8859-1"):
            continue
        seen.add(cs)
        out = rewrite_html(p.body, UrlRewriter("/coll/", TS, p.url), charset=p.charset)
        codec = python_codec(cs)
        assert codec is not None
        before = p.body.decode(codec, "replace")
        after = out.decode(codec, "replace")
        # same number of undecodable / replaced characters: nothing was damaged
        assert before.count("\ufffd") == after.count("\ufffd"), f"{p.path} @ {p.offset}"
    assert seen >= {"euc-jp", "gb2312", "windows-1251"}
