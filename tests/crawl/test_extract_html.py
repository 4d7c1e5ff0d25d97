"""HTML link extraction: the webarchive-commons link-extraction test pages (exact sets)
and small synthetic cases for each element/attribute."""

from __future__ import annotations

from pathlib import Path

import pytest

from webark.crawl.extract import Extractor, Link, decode_text, default_extractors, extract_links
from webark.crawl.extract.html import HtmlExtractor, html_links, parse_meta_refresh, parse_srcset
from webark.warc.http import parse_http_head
from webark.warc.payload import dechunk, decode_content
from webark.warc.reader import ArchiveReader

B = "http://example.org/dir/page.html"
# The last record of link-extraction-test.warc has no WARC-Target-URI.
NO_URI = "http://www.example.com/onclick.html"


def responses(path: Path) -> dict[str, tuple[bytes, tuple[tuple[str, str], ...]]]:
    """target URI -> (decoded entity body, HTTP headers) of every response record."""
    out = {}
    for rec in ArchiveReader(path):
        if rec.type != "response":
            continue
        block = rec.block.open().read()
        head = parse_http_head(block)
        assert head is not None
        body = block[head.head_length :]
        if head.is_chunked:
            body = dechunk(body)[0]
        body = decode_content(body, head.content_encoding)
        out[rec.target_uri or NO_URI] = (body, head.headers)
    return out


def links_of(html: str, url: str = B) -> set[tuple[str, str, str]]:
    return {(lk.hop, lk.context, lk.url) for lk in html_links(url, html)}


def urls(html: str, url: str = B) -> set[tuple[str, str]]:
    return {(lk.hop, lk.url) for lk in html_links(url, html)}


# ------------------------------------------------ webarchive-commons link extraction


@pytest.fixture(scope="module")
def wac(corpus: Path) -> dict[str, tuple[bytes, tuple[tuple[str, str], ...]]]:
    return responses(corpus / "webarchive-commons" / "link-extraction-test.warc")


def got(wac: dict, url: str) -> set[tuple[str, str, str]]:
    body, headers = wac[url]
    return {(lk.hop, lk.context, lk.url) for lk in extract_links(url, None, body, headers)}


def test_wac_has_seven_pages(wac: dict) -> None:
    assert len(wac) == 7


def test_wac_xhtml(wac: dict) -> None:
    # Heritrix would also emit base/@href (L http://www.example.com/), the "#anchor" as the
    # base URL itself, and longdesc as E.
    assert got(wac, "http://www.example.com/html4.html") == {
        ("R", "meta/@content", "http://www.example.com/redirected.html"),
        ("E", "body/@background", "http://www.example.com/background.jpg"),
        ("L", "a/@href", "http://www.example.com/a-href.html"),
        ("E", "img/@src", "http://www.example.com/image.png"),
        ("E", "img/@src", "http://www.example.com/image.gif"),
        ("L", "img/@longdesc", "http://example.com/image-description.html"),
        ("E", "object/@data", "http://www.example.com/helloworld.swf"),
        ("L", "q/@cite", "http://www.example.com/shakespeare.html"),
        ("L", "blockquote/@cite", "http://www.example.com/shakespeare-long.html"),
    }


def test_wac_html5_video(wac: dict) -> None:
    # "http:///www.example.com/video.html" (three slashes) is repaired by the WHATWG parser.
    ia = "https://archive.org/download/WebmVp8Vorbis/"
    assert got(wac, "http://www.example.com/link-extraction-test-html5-video.html") == {
        ("L", "link/@href", "http://www.example.com/video.html"),
        ("L", "link/@href", "http://www.example.com/video.rss"),
        ("E", "video/@poster", ia + "webmvp8.gif"),
        ("E", "source/@src", ia + "webmvp8.webm"),
        ("E", "source/@src", ia + "webmvp8_512kb.mp4"),
        ("E", "source/@src", ia + "webmvp8.ogv"),
    }


def test_wac_poor_html5(wac: dict) -> None:
    # Mixed-case tags and an unquoted attribute with spaces around "=".
    assert got(wac, "http://www.example.com/poor_html5.html") == {
        ("L", "a/@href", "http://www.example.com/"),
    }


def test_wac_fb_video(wac: dict) -> None:
    # The inline script only builds "//connect.facebook.net/..." by assignment: the string
    # is not a "+" operand and has no file extension -> protocol-relative absolute URL;
    # it carries a fragment and "xfbml=1&..." which are dropped with the fragment.
    # blockquote/@cite and a/@href repeat the data-href URL (deduplicated on url+hop).
    assert got(wac, "http://www.example.com/fb-video.html") == {
        ("X", "script string", "http://connect.facebook.net/en_US/sdk.js"),
        ("L", "div/@data-href", "https://www.facebook.com/facebook/videos/10153231379946729/"),
        ("L", "a/@href", "https://www.facebook.com/facebook/"),
    }


def test_wac_data_href(wac: dict) -> None:
    # Heritrix ignores data-href; we follow URL-like data-href values as L.
    # "//venobox-destination" (no dot in host) and href="#" are not extracted.
    yt = "http://www.youtube.com/v/itTskyFLSS8&rel=0&autohide=1&showinfo=0"
    fb = "https://www.facebook.com/"
    assert got(wac, "http://www.example.com/data-href.examples.html") == {
        ("E", "link/@href", "http://www.example.com/standard.css"),
        ("L", "link/@data-href", "http://www.example.com/green.css"),
        ("L", "link/@data-href", "http://www.example.com/blue.css"),
        ("L", "div/@data-href", fb + "elegantthemes/videos/10153760379211923/"),
        ("L", "div/@data-href", fb + "facebook/videos/10153231379946729/"),
        ("L", "a/@href", fb + "facebook/"),
        ("E", "source/@src", "http://edge.flowplayer.org/bauhaus.webm"),
        ("E", "source/@src", "http://edge.flowplayer.org/bauhaus.mp4"),
        ("L", "button/@data-href", "http://edge.flowplayer.org/functional.webm"),
        ("L", "article/@data-href", "http://www.example.com/content-page"),
        ("L", "a/@href", "http://www.example.com/tags/content"),
        ("L", "a/@href", "http://www.example.com/tags/headlines"),
        ("L", "div/@data-href", "http://grabaperch.com/"),
        ("L", "a/@data-href", "http://codecanyon.net/user/CodingJack"),
        ("E", "img/@src", "http://www.example.com/jackbox/img/thumbs/4.jpg"),
        ("L", "div/@data-href", yt + "&autoplay=1"),
        ("E", "iframe/@src", yt),
    }


def test_wac_fb_social_plugins(wac: dict) -> None:
    fb = "https://www.facebook.com/"
    assert got(wac, "http://www.example.com/fb-social-plugins.html") == {
        ("L", "div/@data-uri", "http://www.your-domain.com/your-page.html"),
        ("L", "div/@data-href", "https://developers.facebook.com/docs/plugins/comments"),
        ("L", "div/@data-href", fb + "zuck/posts/10102735452532991?comment_id=1070233703036185"),
        ("L", "div/@data-href", fb + "zuck"),
        ("L", "div/@data-href", "https://developers.facebook.com/docs/plugins/"),
        ("L", "div/@data-href", fb + "facebook"),
    }


def test_wac_onclick(wac: dict) -> None:
    # Strings in on* handlers are speculative (X), like Heritrix's processScriptCode.
    # "demo" and "width=550,..." are not URL-like.
    assert got(wac, NO_URI) == {
        ("X", "div/@onclick", "http://www.example.com/webpage.html"),
        ("X", "input/@onclick", "http://www.example.com/index.html"),
        ("X", "input/@onclick", "http://www.x.com/"),
        ("X", "input/@onclick", "http://www.example.com/button-child.php"),
        ("X", "input/@onclick", "http://example.com/"),
        ("X", "input/@onclick", "http://example.com/location/href/1.html"),
        ("X", "input/@onclick", "http://example.com/location/href/2.html"),
    }


# ------------------------------------------------------------------ synthetic cases


def test_anchor_area_and_dropped_schemes() -> None:
    html = """<a href="a.html#frag">x</a><area href="/map/b"><a href="javascript:void(0)">j</a>
    <a href="mailto:x@y.z">m</a><a href="tel:+123">t</a><a href="data:text/html,hi">d</a>
    <a href="about:blank">a</a><a href="ftp://f.org/x">f</a><a href="#top">t</a><a href="">e</a>
    <a href="  https://Other.ORG:443/%7Eu/ ">o</a>"""
    assert links_of(html) == {
        ("L", "a/@href", "http://example.org/dir/a.html"),
        ("L", "area/@href", "http://example.org/map/b"),
        ("L", "a/@href", "https://other.org/~u/"),
    }


def test_javascript_href_is_scanned_as_script() -> None:
    assert links_of("<a href=\"javascript:go('next.html')\">n</a>") == {
        ("X", "a/@href", "http://example.org/dir/next.html")
    }


def test_entities_decoded() -> None:
    assert urls('<a href="q?a=1&amp;b=2&#38;c=3">x</a>') == {
        ("L", "http://example.org/dir/q?a=1&b=2&c=3")
    }


@pytest.mark.parametrize(
    ("rel", "hop"),
    [
        ("stylesheet", "E"),
        ("icon", "E"),
        ("shortcut icon", "E"),
        ("preload", "E"),
        ("modulepreload", "E"),
        ("apple-touch-icon", "E"),
        ("canonical", "L"),
        ("alternate", "L"),
        ("next", "L"),
        ("prev", "L"),
        ("", "L"),
        ("Stylesheet", "E"),
    ],
)
def test_link_rel(rel: str, hop: str) -> None:
    assert urls(f'<link rel="{rel}" href="/x">') == {(hop, "http://example.org/x")}


@pytest.mark.parametrize("rel", ["pingback", "dns-prefetch", "preconnect"])
def test_link_rel_ignored(rel: str) -> None:
    assert urls(f'<link rel="{rel}" href="//cdn.example.net/">') == set()


def test_img_src_srcset_and_picture() -> None:
    html = """<picture><source srcset="a.webp 1x, b.webp 2x" type="image/webp">
    <img src="c.jpg" srcset="c-480.jpg 480w, c-800.jpg 800w" lowsrc="low.gif"></picture>"""
    assert links_of(html) == {
        ("E", "source/@srcset", "http://example.org/dir/a.webp"),
        ("E", "source/@srcset", "http://example.org/dir/b.webp"),
        ("E", "img/@src", "http://example.org/dir/c.jpg"),
        ("E", "img/@srcset", "http://example.org/dir/c-480.jpg"),
        ("E", "img/@srcset", "http://example.org/dir/c-800.jpg"),
        ("E", "img/@lowsrc", "http://example.org/dir/low.gif"),
    }


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("a.png", ["a.png"]),
        ("a.png 1x,b.png 2x", ["a.png", "b.png"]),
        ("  a.png   1x ,  b.png  2x  ", ["a.png", "b.png"]),
        ("a.png, b.png", ["a.png", "b.png"]),  # trailing comma ends a URL
        ("a,b.png 1x, c.png", ["a,b.png", "c.png"]),  # comma inside a URL
        ("x.png 100w (foo, bar), y.png 2x", ["x.png", "y.png"]),  # parenthesised comma
        ("data:image/gif;base64,R0lGOD= 1x, z.png 2x", ["data:image/gif;base64,R0lGOD=", "z.png"]),
        (",,, ,", []),
        ("", []),
        ("img.png?w=1,2 1x", ["img.png?w=1,2"]),
    ],
)
def test_parse_srcset(value: str, expected: list[str]) -> None:
    assert parse_srcset(value) == expected


def test_srcset_data_uri_dropped() -> None:
    assert urls('<img srcset="data:image/gif;base64,AAAA 1x, real.png 2x">') == {
        ("E", "http://example.org/dir/real.png")
    }


def test_base_href_affects_resolution() -> None:
    html = """<head><base href="http://cdn.example.com/root/"><base href="/ignored/"></head>
    <a href="x.html">x</a><img src="../i.png">"""
    assert urls(html) == {
        ("L", "http://cdn.example.com/root/x.html"),
        ("E", "http://cdn.example.com/i.png"),
    }


def test_relative_base_href() -> None:
    assert urls('<base href="/sub/"><a href="x">x</a>') == {("L", "http://example.org/sub/x")}


def test_bad_base_href_ignored() -> None:
    assert urls('<base href="http://[::1"><a href="x">x</a>') == {("L", "http://example.org/dir/x")}


def test_script_iframe_frame_embed_object() -> None:
    html = """<script src="s.js"></script><iframe src="if.html"></iframe>
    <embed src="e.swf">
    <object data="movie.swf" codebase="http://plugins.example.com/cb/" archive="a.jar b.jar">
      <param name="movie" value="m.swf"><param name="quality" value="high.swf"></object>
    <applet code="Main" codebase="applets/"></applet>"""
    assert links_of(html) == {
        ("E", "script/@src", "http://example.org/dir/s.js"),
        ("E", "iframe/@src", "http://example.org/dir/if.html"),
        ("E", "embed/@src", "http://example.org/dir/e.swf"),
        ("L", "object/@codebase", "http://plugins.example.com/cb/"),
        ("E", "object/@data", "http://plugins.example.com/cb/movie.swf"),
        ("E", "object/@archive", "http://plugins.example.com/cb/a.jar"),
        ("E", "object/@archive", "http://plugins.example.com/cb/b.jar"),
        ("E", "param/@value", "http://example.org/dir/m.swf"),
        ("L", "applet/@codebase", "http://example.org/dir/applets/"),
        ("E", "applet/@code", "http://example.org/dir/applets/Main.class"),
    }


def test_frameset() -> None:
    # A frameset after body content is dropped by the HTML parser (as in browsers).
    html = '<html><frameset><frame src="fr.html" longdesc="d.html"></frameset></html>'
    assert links_of(html) == {
        ("E", "frame/@src", "http://example.org/dir/fr.html"),
        ("L", "frame/@longdesc", "http://example.org/dir/d.html"),
    }


def test_frames_as_links_option() -> None:
    links = html_links(B, '<iframe src="f.html"></iframe>', frames_as_embeds=False)
    assert links == [Link("http://example.org/dir/f.html", "L", "iframe/@src")]


def test_media_elements() -> None:
    html = """<video src="v.mp4" poster="p.jpg"><track src="t.vtt"></video>
    <audio src="a.mp3"><source src="a.ogg"></audio><input type="image" src="btn.png">"""
    assert links_of(html) == {
        ("E", "video/@src", "http://example.org/dir/v.mp4"),
        ("E", "video/@poster", "http://example.org/dir/p.jpg"),
        ("E", "track/@src", "http://example.org/dir/t.vtt"),
        ("E", "audio/@src", "http://example.org/dir/a.mp3"),
        ("E", "source/@src", "http://example.org/dir/a.ogg"),
        ("E", "input/@src", "http://example.org/dir/btn.png"),
    }


def test_forms_get_only() -> None:
    html = """<form action="search"><input name=q></form>
    <form action="/s2" method="GET"></form><form action="/post" method="post"></form>
    <form action="/p2" method=" POST "></form><form></form>"""
    assert links_of(html) == {
        ("L", "form/@action", "http://example.org/dir/search"),
        ("L", "form/@action", "http://example.org/s2"),
    }


def test_meta_refresh_and_content() -> None:
    html = """<meta http-equiv="refresh" content="0; url='/moved.html'">
    <meta property="og:image" content="https://img.example.com/og.png">
    <meta name="description" content="not a url">"""
    assert links_of(html) == {
        ("R", "meta/@content", "http://example.org/moved.html"),
        ("X", "meta/@content", "https://img.example.com/og.png"),
    }


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("5; URL=http://a/b", "http://a/b"),
        ("0;url=x.html", "x.html"),
        ("3", None),
        ('1, url="q.html" ', "q.html"),
        ("0; URL = 'z'", "z"),
        ("", None),
        ("  2.5 ;  y ", "y"),
    ],
)
def test_parse_meta_refresh(content: str, expected: str | None) -> None:
    assert parse_meta_refresh(content) == expected


def test_inline_style_style_block_and_background() -> None:
    html = """<style>@import "print.css"; body { background: url( 'bg.png' ) }</style>
    <div style="background-image:url(d.gif)"></div>
    <table background="t.jpg"><td background=td.jpg>"""
    assert links_of(html) == {
        ("E", "style css @import", "http://example.org/dir/print.css"),
        ("E", "style css url()", "http://example.org/dir/bg.png"),
        ("E", "div/@style css url()", "http://example.org/dir/d.gif"),
        ("E", "table/@background", "http://example.org/dir/t.jpg"),
        ("E", "td/@background", "http://example.org/dir/td.jpg"),
    }


def test_cite_longdesc_and_data_src() -> None:
    html = """<blockquote cite="/q1"></blockquote><ins cite="i.html"></ins>
    <img data-src="lazy.jpg" data-srcset="l1.jpg 1x, l2.jpg 2x" src="ph.gif">
    <div data-href="javascript:x()"></div><div data-url="not a url"></div>"""
    assert links_of(html) == {
        ("L", "blockquote/@cite", "http://example.org/q1"),
        ("L", "ins/@cite", "http://example.org/dir/i.html"),
        ("E", "img/@data-src", "http://example.org/dir/lazy.jpg"),
        ("E", "img/@data-srcset", "http://example.org/dir/l1.jpg"),
        ("E", "img/@data-srcset", "http://example.org/dir/l2.jpg"),
        ("E", "img/@src", "http://example.org/dir/ph.gif"),
    }


def test_svg_image_and_use() -> None:
    html = '<svg><image href="s.png"/><use xlink:href="sprite.svg#icon"/></svg>'
    assert urls(html) == {
        ("E", "http://example.org/dir/s.png"),
        ("E", "http://example.org/dir/sprite.svg"),
    }


def test_inline_script_strings() -> None:
    html = """<script>var img = "/static/logo.png"; var u = "/cal/" + y + "/";</script>
    <script type="application/ld+json">{"url": "https://example.org/org.html"}</script>"""
    assert links_of(html) == {
        ("X", "script string", "http://example.org/static/logo.png"),
        ("X", "script string", "https://example.org/org.html"),
    }


def test_extract_js_off() -> None:
    html = '<script>x="/a.png"</script><a href="javascript:go(\'b.html\')" onclick="c(\'c.html\')">'
    assert html_links(B, html, extract_js=False) == []


def test_meta_robots_nofollow_keeps_embeds() -> None:
    html = '<meta name="robots" content="noindex, nofollow"><a href="a">a</a><img src="i.png">'
    assert urls(html) == {("E", "http://example.org/dir/i.png")}
    assert ("L", "http://example.org/dir/a") in {
        (lk.hop, lk.url) for lk in html_links(B, html, obey_nofollow=False)
    }


def test_broken_html_does_not_crash() -> None:
    html = "<a href='x.html'<img src=y.png><p><<a href=\"z.html\">z</div></td></html><a href=w"
    got_urls = {u for _, u in urls(html)}
    assert "http://example.org/dir/z.html" in got_urls
    for junk in ["", "<", "<a href", "\x00\x00<a href='\x00'>", "<html>" * 1000]:
        html_links(B, junk)


def test_noscript_contents_are_parsed() -> None:
    assert urls('<noscript><img src="ns.gif"></noscript>') == {
        ("E", "http://example.org/dir/ns.gif")
    }


def test_uppercase_and_unquoted() -> None:
    assert urls("<A HREF=Up.HTML>x</A><IMG SRC = 'I.PNG'>") == {
        ("L", "http://example.org/dir/Up.HTML"),
        ("E", "http://example.org/dir/I.PNG"),
    }


# ------------------------------------------------------------------------ charsets


def test_charset_from_http_header() -> None:
    body = '<a href="caf\xe9.html">x</a>'.encode("iso-8859-1")
    links = extract_links(B, None, body, {"Content-Type": "text/html; charset=ISO-8859-1"})
    assert links == [Link("http://example.org/dir/caf%C3%A9.html", "L", "a/@href")]


def test_charset_from_meta() -> None:
    body = '<meta charset="windows-1251"><a href="\u0434.html">x</a>'.encode("cp1251")
    (link,) = HtmlExtractor().extract(B, body, "text/html", None)
    assert link.url == "http://example.org/dir/%D0%B4.html"


def test_bom_wins_and_bad_bytes() -> None:
    assert decode_text(b"\xef\xbb\xbf<p>\xc3\xa9", "iso-8859-1") == "<p>\xe9"
    assert decode_text(b"\xff\xfe<\x00a\x00") == "<a"
    assert decode_text(b"caf\xe9 \xff") == "caf\xe9 \xff"  # not UTF-8 -> windows-1252
    assert decode_text(b"a\x81b", "utf-8") == "a\ufffdb"
    assert decode_text(b"x", "no-such-charset") == "x"
    assert decode_text(b"<meta charset=bogus>\xc3\xa9") == "<meta charset=bogus>\xe9"


def test_html_sniffed_without_mime() -> None:
    links = extract_links(B, None, b"<!DOCTYPE html><a href=x>x</a>")
    assert links == [Link("http://example.org/dir/x", "L", "a/@href")]


def test_location_header_is_redirect() -> None:
    links = extract_links(B, "text/html", b"", [("Location", "/new#x")])
    assert links == [Link("http://example.org/new", "R", "http/location")]


def test_dedup_keeps_first_context() -> None:
    body = b'<a href="x">1</a><a href="x#y">2</a><img src="x">'
    assert extract_links(B, "text/html", body) == [
        Link("http://example.org/dir/x", "L", "a/@href"),
        Link("http://example.org/dir/x", "E", "img/@src"),
    ]


def test_content_location_to_self_is_not_a_link() -> None:
    headers = [("Content-Location", B), ("Content-Type", "text/html")]
    assert extract_links(B, None, b"", headers) == []
    headers = [("Content-Location", "page.en.html")]
    assert extract_links(B, "text/html", b"", headers) == [
        Link("http://example.org/dir/page.en.html", "R", "http/content-location")
    ]


def test_max_links() -> None:
    body = "".join(f'<a href="p{i}.html">{i}</a>' for i in range(100)).encode()
    assert len(extract_links(B, "text/html", body, max_links=7)) == 7
    assert len(extract_links(B, "text/html", body)) == 100


def test_value_attributes() -> None:
    # Heritrix's extractValueAttributes (L for likely URIs); select-menu navigation.
    html = """<select onchange="location=this.value"><option value="/sec/a.html">A</option>
    <option value="b">B</option><option value="https://other.org/c">C</option></select>
    <input type="hidden" name="next" value="/after/login"><input type="submit" value="/no">
    <input value="plain text">"""
    assert links_of(html) == {
        ("L", "option/@value", "http://example.org/sec/a.html"),
        ("L", "option/@value", "https://other.org/c"),
        ("L", "input/@value", "http://example.org/after/login"),
    }


def test_iframe_srcdoc() -> None:
    html = """<base href="http://b.example.com/x/">
    <iframe srcdoc="<img src=&quot;in.png&quot;><iframe srcdoc='<a href=deep>'></iframe>">
    </iframe>"""
    assert links_of(html) == {("E", "iframe/@srcdoc img/@src", "http://b.example.com/x/in.png")}


def test_default_extractors_follow_the_protocol() -> None:
    exs = default_extractors()
    assert [type(ex).__name__ for ex in exs] == [
        "HtmlExtractor", "CssExtractor", "JsExtractor", "SphinxSearchIndexExtractor",
        "SitemapExtractor", "FeedExtractor",
    ]  # fmt: skip
    assert all(isinstance(ex, Extractor) for ex in exs)


def test_processing_instruction_in_body_is_skipped() -> None:
    # lexbor makes a tag_id-0 node for "<?php ... ?>"; its .tag is garbage ("a" here)
    # and reading it could crash the process. Only element nodes are visited.
    html = '<p><?php echo "x.html" ?></p><a href="real.html">r</a>' * 200
    assert urls(html) == {("L", "http://example.org/dir/real.html")}


def test_resolution_shares_work_between_pages_of_a_folder_without_changing_results() -> None:
    """resolve() drops the fragment and keys path references by the base's folder; the
    answers are those of resolving against the page itself."""
    from webark.crawl.extract import resolve
    from webark.url import join_normalized

    pages = ["http://a.test/lib/x.html", "http://a.test/lib/y.html?q=/z/", "http://a.test/"]
    refs = ["f.html#abs", "../up.html", "./", ".", "?k=1#f", "/root", "//b.test/p#x",
            "sub/g.html?x=1#y", "HTTP://C.test/Q", "%7Euser/", "a b.html"]
    for page in pages:
        for ref in refs:
            assert resolve(page, ref) == join_normalized(page, ref), (page, ref)


@pytest.mark.parametrize(
    ("html", "want"),
    [
        ('<DIV STYLE="background:url(a.png)">', ("E", "http://example.org/dir/a.png")),
        ("<p\nonClick\n=\n\"go('/x/y.html')\">", ("X", "http://example.org/x/y.html")),
        ("<table><tr><td BACKGROUND=bg.gif>", ("E", "http://example.org/dir/bg.gif")),
        ("<my-el DATA-SRC=lazy.jpg>", ("E", "http://example.org/dir/lazy.jpg")),
        ("<b title=\"t\"onmouseover=\"f('/o.html')\">", ("X", "http://example.org/o.html")),
        ("<x-y data-url='/du.html'>", ("L", "http://example.org/du.html")),
    ],
)
def test_generic_attributes_on_any_element(html: str, want: tuple[str, str]) -> None:
    """The generic attributes are found on any element, whatever the case of their
    name and whatever precedes it (the text scan that picks the lexbor query)."""
    assert urls(html) == {want}
