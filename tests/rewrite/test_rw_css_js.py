"""Stylesheets and scripts: real corpus payloads and the literal forms that matter."""

from __future__ import annotations

import re
from pathlib import Path

from webark.rewrite.css import css_unescape, rewrite_css, rewrite_css_bytes
from webark.rewrite.js import rewrite_js, rewrite_js_bytes
from webark.rewrite.mime import media_type
from webark.rewrite.urls import UrlRewriter
from webark.warc.reader import ArchiveReader

TS = "20140126200624"
P = f"/coll/{TS}"


def rw(url: str, modifier: str = "") -> UrlRewriter:
    return UrlRewriter("/coll/", TS, url, modifier)


def test_iana_screen_css(corpus: Path) -> None:
    rec = next(r for r in ArchiveReader(corpus / "pywb/warcs/iana.warc.gz") if r.type == "response"
               and r.target_uri == "http://www.iana.org/_css/2013.1/screen.css")
    body = rec.payload()
    out = rewrite_css_bytes(body, rw("http://www.iana.org/_css/2013.1/screen.css", "cs_"))
    assert (f'url("{P}im_/http://www.iana.org/_css/2013.1/fonts/OpenSans-Light.ttf")'.encode()
            in out)
    assert f"url({P}im_/http://www.iana.org/_img/2011.1/icons/icon_alert.png)".encode() in out
    assert not re.search(rb'url\(\s*["\']?/_', out)
    # only the URLs changed: removing the inserted prefixes gives the payload back
    assert out.replace(f"{P}im_/http://www.iana.org".encode(), b"") == body


def test_all_corpus_stylesheets(corpus_payloads: list) -> None:
    sheets = [p for p in corpus_payloads if media_type(p.content_type) == "text/css"]
    assert len(sheets) >= 3
    for p in sheets:
        out = rewrite_css_bytes(p.body, rw(p.url, "cs_"), charset=p.charset)
        left = [m for m in re.findall(rb"url\(\s*[\"']?([^\"')]+)", out)
                if not m.startswith((b"/coll/", b"data:", b"#"))]
        assert not left, f"{p.path} @ {p.offset}: {left[:3]}"


def test_css_forms() -> None:
    r = rw("http://a.org/css/site.css", "cs_")
    src = ("@import url(base.css);\n@import 'print.css' print;\n@import \"x.css\";\n"
           "@font-face{src:url('f.woff2') format('woff2'),url(  \"f.woff\"  )}\n"
           "a{background:URL(//cdn.a.org/i.png) no-repeat}\n"
           "b{background-image:image-set('a.png' 1x, \"b.png\" 2x, url(c.png) 3x)}\n"
           "c{background:url(data:image/png;base64,AAA=)} d{behavior:url(#default#VML)}\n"
           f"e{{background:url({P}im_/http://a.org/done.png)}}")
    b = "http://a.org/css/"
    assert rewrite_css(src, r) == (
        f"@import url({P}cs_/{b}base.css);\n@import '{P}cs_/{b}print.css' print;\n"
        f"@import \"{P}cs_/{b}x.css\";\n"
        f"@font-face{{src:url('{P}im_/{b}f.woff2') format('woff2'),"
        f"url(  \"{P}im_/{b}f.woff\"  )}}\n"
        f"a{{background:URL({P}im_/http://cdn.a.org/i.png) no-repeat}}\n"
        f"b{{background-image:image-set('{P}im_/{b}a.png' 1x, \"{P}im_/{b}b.png\" 2x, "
        f"url({P}im_/{b}c.png) 3x)}}\n"
        "c{background:url(data:image/png;base64,AAA=)} d{behavior:url(#default#VML)}\n"
        f"e{{background:url({P}im_/http://a.org/done.png)}}")
    plain = "p { color: red; content: 'no urls here' }"
    assert rewrite_css(plain, r) is plain


def test_js_literals() -> None:
    r = rw("http://a.org/app.js", "js_")
    src = ('var a = "http://cdn.a.org/x.js", b = \'https://api.a.org/v1?q=\' + q;\n'
           "var c = `https://t.a.org/${p}`; var d = \"see http://x.org\"; // http://c.org/\n"
           'var ns = "http://www.w3.org/2000/svg"; var e = "https:\\/\\/j.a.org\\/p";\n'
           "var f = 'http://' + host; var g = \"//proto.rel/x\"; var h = /https?:\\/\\//;\n"
           f'var done = "{P}/http://a.org/";')
    assert rewrite_js(src, r) == (
        f'var a = "{P}/http://cdn.a.org/x.js", b = \'{P}/https://api.a.org/v1?q=\' + q;\n'
        f"var c = `{P}/https://t.a.org/${{p}}`; var d = \"see http://x.org\"; // http://c.org/\n"
        'var ns = "http://www.w3.org/2000/svg"; '
        'var e = "\\/coll\\/20140126200624\\/https:\\/\\/j.a.org\\/p";\n'
        "var f = 'http://' + host; var g = \"//proto.rel/x\"; var h = /https?:\\/\\//;\n"
        f'var done = "{P}/http://a.org/";')


def test_js_modifier_follows_navigation_modes() -> None:
    src = 'location.href = "http://a.org/next";'
    assert rewrite_js(src, rw("http://a.org/", "mp_")) == f'location.href = "{P}mp_/http://a.org/next";'
    assert rewrite_js(src, rw("http://a.org/", "js_")) == f'location.href = "{P}/http://a.org/next";'


def test_corpus_scripts(corpus_payloads: list) -> None:
    scripts = [p for p in corpus_payloads if "javascript" in media_type(p.content_type)]
    assert len(scripts) >= 5
    for p in scripts:
        out = rewrite_js_bytes(p.body, rw(p.url, "js_"), charset=p.charset)
        # removing the inserted prefixes gives the payload back: nothing else changed
        assert out.replace(f"{P}/".encode(), b"").replace(b"\\/coll\\/20140126200624\\/", b"") \
            == p.body, f"{p.path} @ {p.offset}"
        rest = out.replace(b'"http://www.w3.org/', b"")
        assert not re.search(rb"""["'`]https?://[\w.-]""", rest), f"{p.path} @ {p.offset}"


def test_css_escapes_are_undone_before_rewriting() -> None:
    """``url(\\/\\/cdn…)`` is ``//cdn…`` to the browser (CSS Syntax §4.3.7): rewritten as
    that, not as a path with backslashes (which made ``http://cdn.org//x.png``)."""
    r = UrlRewriter("/c/", "2014", "http://a.org/css/site.css")
    css = (r"b{background:url(\/\/cdn.org\/x.png)} c{background:url('\2f img/y.png')}"
           r" d{background:url(\2f img/m.png)} e{background:url(plain.png)}"
           r' f{background:url("q\"uote.png")} @import "\69 mp.css";')  # fmt: skip
    assert rewrite_css(css, r) == (
        "b{background:url(/c/2014im_/http://cdn.org/x.png)}"
        " c{background:url('/c/2014im_/http://a.org/img/y.png')}"
        " d{background:url(/c/2014im_/http://a.org/img/m.png)}"
        " e{background:url(/c/2014im_/http://a.org/css/plain.png)}"
        ' f{background:url("/c/2014im_/http://a.org/css/q%22uote.png")}'
        ' @import "/c/2014cs_/http://a.org/css/imp.css";'
    )
    assert css_unescape(r"\31 0\25") == "10%" and css_unescape("none") == "none"
    assert css_unescape("\\0") == "\ufffd"
