"""HTML rewriting on real pages (corpus WARCs, Python docs) and on the constructs the
HTML Standard defines (srcset, base, meta refresh, raw text elements, comments)."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from webark.rewrite.html import rewrite_html
from webark.rewrite.urls import UrlRewriter

TS = "20140126200624"
P = f"/coll/{TS}"

# URL-bearing attributes (values must be archive URLs after rewriting when absolute).
URL_ATTRS = {"href", "src", "action", "formaction", "poster", "data", "background",
             "codebase", "cite", "longdesc", "icon", "manifest", "archive", "srcset",
             "imagesrcset", "xlink:href", "lowsrc"}
RAW_TEXT = {"textarea", "title", "xmp", "iframe", "noembed", "noframes", "script", "style"}
_SCRIPT_STYLE = re.compile(rb"<(script|style)\b[^>]*>.*?</\1\s*>", re.DOTALL | re.IGNORECASE)
_START_TAG = re.compile(rb"""<[a-zA-Z](?:[^>"']|"[^"]*"|'[^']*')*>""")


def rw_for(url: str, modifier: str = "") -> UrlRewriter:
    return UrlRewriter("/coll/", TS, url, modifier)


def rewrite(html: str, url: str = "http://example.com/dir/page.html", **kw: str) -> str:
    return rewrite_html(html.encode("utf-8"), rw_for(url), **kw).decode("utf-8")


class _Tags(HTMLParser):
    """The standard library's tokenizer, as an independent check: start tags with
    their attributes, outside raw text elements."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, list[tuple[str, str | None]]]] = []
        self.raw: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if self.raw is None:
            self.tags.append((tag, attrs))
            if tag in RAW_TEXT - {"script", "style"}:
                self.raw = tag

    def handle_endtag(self, tag: str) -> None:
        if tag == self.raw:
            self.raw = None


def tags_of(body: bytes) -> list[tuple[str, list[tuple[str, str | None]]]]:
    p = _Tags()
    p.feed(body.decode("latin-1"))
    p.close()
    return p.tags


def outside_tags(body: bytes) -> bytes:
    """Everything except start tags and script/style elements."""
    return _START_TAG.sub(b"<>", _SCRIPT_STYLE.sub(b"<s>", body))


def escaped_absolute_urls(tags: list[tuple[str, list[tuple[str, str | None]]]],
                          prefix: str = "/coll/") -> list[str]:
    """Absolute or scheme-relative http(s) URLs (with a host) in URL-bearing
    attributes that do not start with the archive prefix."""
    bad = []
    for tag, attrs in tags:
        for name, value in attrs:
            if name not in URL_ATTRS or not value:
                continue
            values = [c.split()[0] for c in value.split(", ") if c.strip()] \
                if name.endswith("srcset") else [value]
            bad += [f"<{tag} {name}={v!r}>" for v in values
                    if re.match(r"\s*(https?:)?//[^/\s]", v, re.I)
                    and not v.strip().startswith(prefix)]
    return bad


# -- real pages ------------------------------------------------------------------------
def test_iana_home_page(corpus: Path) -> None:
    from webark.warc.reader import ArchiveReader

    rec = next(r for r in ArchiveReader(corpus / "pywb/warcs/iana.warc.gz")
               if r.type == "response" and r.target_uri == "http://www.iana.org/")
    body = rec.payload()
    out = rewrite_html(body, rw_for("http://www.iana.org/"), charset="UTF-8",
                       head_insert="<!--webark-->")
    text = out.decode("utf-8")
    assert f'href="{P}cs_/http://www.iana.org/_css/2013.1/screen.css"' in text
    assert f'href="{P}cs_/http://www.iana.org/_css/2013.1/print.css"' in text
    assert f'href="{P}im_/http://www.iana.org/_img/bookmark_icon.ico"' in text
    assert f'src="{P}js_/http://www.iana.org/_js/2013.1/jquery.js"' in text
    assert f'<a href="{P}/http://www.iana.org/about/" class="avoid-break">' in text
    assert f'<a href="{P}/http://www.iana.org/domains">Domain Names</a>' in text
    assert text.startswith("<!doctype html>\n<html>\n<head><!--webark-->\n\t<title>")
    # an insert that would push the charset declarations out of the first 1024 bytes
    # goes after them
    big = "<!--" + "b" * 1000 + "-->"
    text = rewrite_html(body, rw_for("http://www.iana.org/"), head_insert=big).decode()
    assert text.startswith("<!doctype html>\n<html>\n<head>\n\t<title>")
    assert f'<meta http-equiv="Content-type" content="text/html; charset=utf-8" />{big}\n' in text
    assert outside_tags(out).replace(b"<!--webark-->", b"", 1) == outside_tags(body)


@pytest.fixture(scope="module")
def corpus_rewrites(html_payloads: list) -> list[tuple[object, bytes, list, list]]:
    """(payload, rewritten body, its tags before, its tags after) for every distinct
    HTML payload of the corpus, rewritten as the page of its own URL."""
    out = []
    for p in html_payloads:
        new = rewrite_html(p.body, rw_for(p.url), charset=p.charset)
        out.append((p, new, tags_of(p.body), tags_of(new)))
    assert len(out) >= 80
    return out


def test_no_absolute_url_escapes_in_any_corpus_page(corpus_rewrites: list) -> None:
    for p, _out, _before, after in corpus_rewrites:
        bad = escaped_absolute_urls(after)
        assert not bad, f"{p.path} @ {p.offset} ({p.url}): {bad[:5]}"


def test_corpus_pages_unchanged_outside_rewritten_values(corpus_rewrites: list) -> None:
    """Text, comments, doctype, end tags: byte-identical; every tag keeps its name,
    its attributes and their order; only URL-bearing values (and removed integrity
    attributes) differ — in every encoding the corpus has (UTF-8, ISO-8859-1,
    windows-1251, GB2312, EUC-JP, undeclared)."""
    for p, out, before, after in corpus_rewrites:
        where = f"{p.path} @ {p.offset}"
        assert outside_tags(out) == outside_tags(p.body), where
        assert [t for t, _ in before] == [t for t, _ in after], where
        for (tag, a1), (_, a2) in zip(before, after, strict=True):
            kept = [(n, v) for n, v in a1 if not (n == "integrity" and tag in ("script", "link"))]
            assert [n for n, _ in kept] == [n for n, _ in a2], f"{where} <{tag}>"
            for (name, v1), (_, v2) in zip(kept, a2, strict=True):
                if v1 != v2:
                    assert name in URL_ATTRS | {"style", "content", "srcdoc", "http-equiv"} \
                        or name.startswith("on"), f"{where} <{tag} {name}>: {v1!r} -> {v2!r}"


def test_python_docs_pages(pydocs_pages: list[Path]) -> None:
    for page in pydocs_pages:
        rel = page.relative_to("/usr/share/doc/python3/html").as_posix()
        url = f"http://127.0.0.1:8801/{rel}"
        body = page.read_bytes()
        out = rewrite_html(body, rw_for(url), head_insert="<script>/*x*/</script>")
        assert not escaped_absolute_urls(tags_of(out))
        assert outside_tags(out.replace(b"<script>/*x*/</script>", b"", 1)) == outside_tags(body)
        # every relative link became an archive URL of the page's site
        hrefs = [v for _, attrs in tags_of(out) for n, v in attrs if n == "href" and v]
        assert hrefs and all(h.startswith(("/coll/", "#", "mailto:", "file:")) for h in hrefs), rel
    stdtypes = rewrite_html(pydocs_pages[0].read_bytes(),
                            rw_for("http://127.0.0.1:8801/library/stdtypes.html")).decode()
    assert (f'<link rel="stylesheet" type="text/css" href="{P}cs_/http://127.0.0.1:8801'
            '/_static/pydoctheme.css') in stdtypes
    assert f'href="{P}/http://127.0.0.1:8801/library/functions.html#int"' in stdtypes


# -- constructs --------------------------------------------------------------------------
def test_attribute_kinds_and_modifiers() -> None:
    out = rewrite(
        '<link rel="stylesheet" href="s.css"><link rel="icon" href="/f.ico">'
        '<link rel=preload as=script href=p.js><link rel=canonical href="/c">'
        '<script src="j.js"></script><img src="i.png" longdesc="d.html">'
        '<iframe src="f.html"></iframe><frame src="fr.html"><embed src="e.swf">'
        '<object data="o.swf" codebase="/cb/"></object><video src="v.mp4" poster="p.jpg">'
        '<source src="v.webm"></video><audio src="a.mp3"></audio><form action="/post">'
        '<button formaction="b">x</button><input type=image src="in.png">'
        '<table background="t.gif"><td background=td.gif><blockquote cite="q.html">'
        '<body background="bg.png"><svg><image xlink:href="s.svg"/></svg>')
    base = "http://example.com/dir/"
    for expected in [
        f'href="{P}cs_/{base}s.css"', f'href="{P}im_/http://example.com/f.ico"',
        f"href={P}js_/{base}p.js", f'href="{P}/http://example.com/c"',
        f'src="{P}js_/{base}j.js"', f'src="{P}im_/{base}i.png"', f'longdesc="{P}/{base}d.html"',
        f'src="{P}if_/{base}f.html"', f'src="{P}if_/{base}fr.html"', f'src="{P}oe_/{base}e.swf"',
        f'data="{P}oe_/{base}o.swf"', f'codebase="{P}oe_/http://example.com/cb/"',
        f'src="{P}oe_/{base}v.mp4"', f'poster="{P}im_/{base}p.jpg"', f'src="{P}oe_/{base}v.webm"',
        f'src="{P}oe_/{base}a.mp3"', f'action="{P}/http://example.com/post"',
        f'formaction="{P}/{base}b"', f'src="{P}im_/{base}in.png"',
        f'background="{P}im_/{base}t.gif"',
        f"background={P}im_/{base}td.gif", f'cite="{P}/{base}q.html"',
        f'background="{P}im_/{base}bg.png"', f'xlink:href="{P}im_/{base}s.svg"',
    ]:
        assert expected in out, expected


def test_page_modifier_carries_to_links() -> None:
    rw = rw_for("http://example.com/", "mp_")
    out = rewrite_html(b'<a href="/a">a</a><img src="/i.png"><iframe src="/f"></iframe>', rw)
    assert out == (f'<a href="{P}mp_/http://example.com/a">a</a><img src="{P}im_/http://'
                   f'example.com/i.png"><iframe src="{P}if_/http://example.com/f"></iframe>').encode()


def test_srcset_candidates() -> None:
    out = rewrite('<img srcset="a.jpg 1x,b.jpg 2x, //c.org/c.jpg?w=1,2 300w, d.jpg,, e.jpg,f.jpg">'
                  '<picture><source srcset="p.webp" type="image/webp"><source src=x.jpg></picture>'
                  "<video controls><source src=v.webm></video>")
    b = "http://example.com/dir/"
    assert (f'srcset="{P}im_/{b}a.jpg 1x,{P}im_/{b}b.jpg 2x, {P}im_/http://c.org/c.jpg?w=1,2 300w, '
            f'{P}im_/{b}d.jpg,, {P}im_/{b}e.jpg,f.jpg"') in out
    assert f"<video controls><source src={P}oe_/{b}v.webm></video>" in out
    assert (f'<source srcset="{P}im_/{b}p.webp" type="image/webp">'
            f"<source src={P}im_/{b}x.jpg>") in out


def test_base_href_applies_to_later_urls() -> None:
    out = rewrite('<a href="before.html"></a><base href="http://static.example.net/v1/">'
                  '<base href="/ignored/"><a href="after.html"></a>')
    assert f'<a href="{P}/http://example.com/dir/before.html">' in out
    assert f'<base href="{P}/http://static.example.net/v1/">' in out
    assert '<base href="/ignored/">' in out
    assert f'<a href="{P}/http://static.example.net/v1/after.html">' in out


def test_meta_refresh_and_csp() -> None:
    out = rewrite('<meta http-equiv="refresh" content="5; url=/next.html">'
                  "<meta HTTP-EQUIV=Refresh content='0;URL=http://other.org/'>"
                  '<meta http-equiv="Content-Security-Policy" content="default-src \'self\'">'
                  '<meta name="description" content="http://not-a-link.example/">')
    assert f'content="5; url={P}/http://example.com/next.html"' in out
    assert f"content='0;URL={P}/http://other.org/'" in out
    assert '<meta http-equiv="X-Archive-Orig-Content-Security-Policy"' in out
    assert 'content="http://not-a-link.example/"' in out


def test_inline_style_style_element_and_scripts() -> None:
    out = rewrite('<div style="background:url(&quot;bg.png&quot;)"></div>'
                  "<style>@import 'x.css'; p{background:url(p.png)}</style>"
                  '<script>var a = "http://cdn.example.org/x.js", b = "/rel"; if (a<b) {}</script>'
                  '<script type="text/template"><img src="http://t.example.org/"></script>'
                  '<script type="application/json">{"u": "http://j.example.org/"}</script>'
                  '<a onclick="window.open(\'https://x.example.org/\')">x</a>')
    b = "http://example.com/dir/"
    assert f'style="background:url(&quot;{P}im_/{b}bg.png&quot;)"' in out
    assert f"<style>@import '{P}cs_/{b}x.css'; p{{background:url({P}im_/{b}p.png)}}</style>" in out
    assert f'var a = "{P}/http://cdn.example.org/x.js", b = "/rel"; if (a<b) {{}}' in out
    assert '<script type="text/template"><img src="http://t.example.org/"></script>' in out
    assert '{"u": "http://j.example.org/"}' in out
    assert f"onclick=\"window.open('{P}/https://x.example.org/')\"" in out


def test_integrity_removed_crossorigin_kept() -> None:
    out = rewrite('<script src="a.js" integrity="sha384-xyz"\n  crossorigin="anonymous"></script>'
                  "<link rel=stylesheet integrity='sha256-x' href=s.css>")
    b = "http://example.com/dir/"
    assert out == (f'<script src="{P}js_/{b}a.js"\n  crossorigin="anonymous"></script>'
                   f"<link rel=stylesheet href={P}cs_/{b}s.css>")


def test_entities_whitespace_and_quoting() -> None:
    out = rewrite('<a href=" /a?x=1&amp;y=2&copy=3 ">1</a><a href=\'/q?a="b"\'>2</a>'
                  '<a href=/u?a=1&amp;b=2>3</a><a href="&#47;&#x2F;h.org/p">4</a>')
    assert f'<a href="{P}/http://example.com/a?x=1&amp;y=2&amp;copy=3">1</a>' in out
    assert f"<a href='{P}/http://example.com/q?a=%22b%22'>2</a>" in out
    assert f"<a href={P}/http://example.com/u?a=1&amp;b=2>3</a>" in out
    assert f'<a href="{P}/http://h.org/p">4</a>' in out


def test_left_alone_values() -> None:
    src = ('<a href="#top">t</a><a href="javascript:void(0)">j</a><a href="mailto:a@b.c">m</a>'
           '<img src="data:image/gif;base64,R0lGOD=="><a href="tel:123">p</a><a href="">e</a>'
           f'<a href="{P}/http://already.org/">r</a><a name=x>n</a>')
    assert rewrite(src) == src


def test_markup_kept_byte_for_byte() -> None:
    src = ('<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0 Strict//EN">\n'
           '<!--[if lt IE 9]><script src="http://html5shiv.example/x.js"></script><![endif]-->'
           '<![CDATA[ <a href="/no"> ]]><?xml-stylesheet href="x"?><!----><!-->'
           '<p class=x>text &amp; &nbsp; &unknown; < 3 <3 </p><br/><a title="a>b" href="/y">'
           "<textarea><a href='/t'></textarea><title>x <a href=/t></title>")
    out = rewrite(src)
    assert out == src.replace('href="/y"', f'href="{P}/http://example.com/y"')


def test_head_insert_placement() -> None:
    ins = "<script>INS</script>"
    assert rewrite("<!doctype html><html lang=en><HEAD class=h><title>t</title>", head_insert=ins) \
        == f"<!doctype html><html lang=en><HEAD class=h>{ins}<title>t</title>"
    assert rewrite("<!doctype html><title>t</title><p>x", head_insert=ins) \
        == f"<!doctype html>{ins}<title>t</title><p>x"
    assert rewrite("<!-- c --><html><body>b", head_insert=ins) \
        == f"<!-- c --><html>{ins}<body>b"
    assert rewrite("just text", head_insert=ins) == f"{ins}just text"
    assert rewrite("", head_insert=ins) == ins
    assert rewrite("\ufefftext", head_insert=ins) == f"\ufeff{ins}text"
    assert rewrite("<head><title>t</title><meta charset=utf-8>", head_insert=ins) \
        == f"<head>{ins}<title>t</title><meta charset=utf-8>"
    late = "<head>" + "<!--" + "x" * 1100 + "-->" + "<meta charset=utf-8>"
    assert rewrite(late, head_insert=ins) == late.replace("<head>", f"<head>{ins}")


def test_srcdoc_is_a_document() -> None:
    out = rewrite('<iframe srcdoc="<p><img src=&quot;http://x.org/i.png&quot;></p>"></iframe>')
    assert out == f'<iframe srcdoc="<p><img src=&quot;{P}im_/http://x.org/i.png&quot;></p>"></iframe>'
    # links inside stay in the frame; a <base> inside does not change the page's base
    out = rewrite('<iframe srcdoc="<base href=http://b.org/><a href=x>"></iframe><a href=y>')
    assert out == (f'<iframe srcdoc="<base href={P}if_/http://b.org/><a href={P}if_/http://b.org/x>">'
                   f"</iframe><a href={P}/http://example.com/dir/y>")


def test_broken_markup_never_raises() -> None:
    for src in ["<a href='unterminated", "<script>var x = 1;", "<!-- open comment <a href=/x>",
                "<", "<a", "</", "<a href=/x", "<img src=/a.png\x00>", "<<a href=/q>>",
                "<style>p{background:url(x.png)", "\x00\xff"]:
        out = rewrite(src)
        assert isinstance(out, str)
    assert rewrite("<style>p{background:url(x.png)") \
        == f"<style>p{{background:url({P}im_/http://example.com/dir/x.png)"
    assert rewrite("<!-- open comment <a href=/x>") == "<!-- open comment <a href=/x>"


@pytest.mark.parametrize("modifier", ["", "mp_", "if_"])
def test_rewriting_twice_changes_nothing(html_payloads: list, modifier: str) -> None:
    p = next(x for x in html_payloads if x.url == "http://www.iana.org/")
    once = rewrite_html(p.body, rw_for(p.url, modifier))
    assert rewrite_html(once, rw_for(p.url, modifier)) == once
