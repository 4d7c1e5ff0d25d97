"""The client-side script: it is served as package data, parses, and — run in Node
with stand-ins for the browser objects it wraps — sends every URL a page builds at run
time into the archive."""

from __future__ import annotations

import json
import shutil
import subprocess
from importlib import resources
from pathlib import Path

import pytest

from webark.rewrite.client import CLIENT_PARTS, client_config_script, client_script

NODE = shutil.which("node")
HARNESS = Path(__file__).with_name("client_harness.js")
TS = "20140126200624"
needs_node = pytest.mark.skipif(NODE is None, reason="node is not installed")


def test_client_script_is_package_data() -> None:
    text = client_script()
    assert "window.__webark" in text and "XMLHttpRequest.prototype.open" in text
    assert "</" not in text and "<!--" not in text  # can be inlined in a <script> element
    files = resources.files("webark.rewrite")
    assert text == "\n".join(files.joinpath(n).read_text(encoding="utf-8") for n in CLIENT_PARTS)
    assert "__webarkCssInstalled" in text and "__webarkGuardInstalled" in text


def test_config_script_is_ascii_and_cannot_close_the_element() -> None:
    tag = client_config_script("/coll/", TS, "http://b\u00fccher.de/</script><x>&", "mp_")
    assert tag.isascii()
    inner = tag[len("<script>window.__webark = "):-len(";</script>")]
    assert "</" not in inner
    assert json.loads(inner) == {"prefix": "/coll/", "timestamp": TS,
                                 "url": "http://b\u00fccher.de/</script><x>&", "modifier": "mp_"}


@needs_node
def test_client_script_parses(tmp_path: Path) -> None:
    src = tmp_path / "client.js"
    src.write_text(client_script(), encoding="utf-8")
    assert NODE is not None
    subprocess.run([NODE, "--check", str(src)], check=True, capture_output=True)


def run_client(tmp_path: Path, config: dict[str, str], location: str, urls: list[str],
               **more: list[str]) -> dict:  # fmt: skip
    src = tmp_path / "client.js"
    src.write_text(client_script(), encoding="utf-8")
    setup = json.dumps({"config": config, "location": location, "urls": urls, **more})
    assert NODE is not None
    done = subprocess.run([NODE, str(HARNESS), str(src), setup], check=True,
                          capture_output=True, text=True, timeout=60)
    result: dict = json.loads(done.stdout)
    return result


@needs_node
def test_client_rewrites_runtime_urls(tmp_path: Path) -> None:
    page = "http://www.example.org/docs/page.html"
    location = f"http://127.0.0.1:8080/coll/{TS}/{page}"
    out = run_client(tmp_path, {"prefix": "/coll/", "timestamp": TS, "url": page, "modifier": ""},
                     location, ["img/a.png", "../up.html", "//cdn.example.org/x.js", "#top",
                                "javascript:void(0)", "data:,x", f"/coll/{TS}im_/http://a.org/",
                                "http://127.0.0.1:8080/built/from/origin?q=1", "mailto:a@b.c",
                                "/coll/*/http://www.example.org/"])
    P = f"/coll/{TS}"
    assert out["rewrite"] == {
        "img/a.png": f"{P}/http://www.example.org/docs/img/a.png",
        "../up.html": f"{P}/http://www.example.org/up.html",
        "//cdn.example.org/x.js": f"{P}/http://cdn.example.org/x.js",
        "#top": "#top", "javascript:void(0)": "javascript:void(0)", "data:,x": "data:,x",
        f"/coll/{TS}im_/http://a.org/": f"/coll/{TS}im_/http://a.org/",
        "http://127.0.0.1:8080/built/from/origin?q=1":
            f"{P}/http://www.example.org/built/from/origin?q=1",
        "mailto:a@b.c": "mailto:a@b.c",
        "/coll/*/http://www.example.org/": "/coll/*/http://www.example.org/",
    }
    assert out["img"] == {"src": f"{P}im_/http://www.example.org/img/a.png",
                          "srcset": f"{P}im_/http://www.example.org/docs/b.png 1x, "
                                    f"{P}im_/http://cdn.example.org/c.png 2x"}
    assert out["a"] == {"href": f"{P}/http://www.example.org/docs/next.html"}
    assert out["script"] == {"src": f"{P}js_/https://cdn.example.org/lib.js"}
    assert out["link"]["href"] == f"{P}cs_/http://www.example.org/s.css"
    assert out["div"]["attrs"] == {"style": f"background: url('{P}im_/http://www.example.org/bg.png')",
                                   "title": "/not-a-url"}
    assert out["div"]["html"] == (f'<img src="{P}im_/http://www.example.org/x.png">'
                                  f'<a href="{P}/http://other.org/?a=1&amp;b=2">o</a>')
    assert out["video"] == {"poster": f"{P}im_/http://www.example.org/docs/p.jpg"}
    seen = out["seen"]
    assert seen["adjacent"] == f"<iframe src='{P}if_/http://www.example.org/frame.html'></iframe>"
    assert seen["write"] == f'<script src="{P}js_/http://www.example.org/w.js"></script>'
    assert seen["xhr"] == f"{P}/http://www.example.org/api/data.json?x=1"
    assert seen["fetch"] == f"{P}/https://api.example.org/v1"
    assert seen["pushState"] == f"{P}/http://www.example.org/docs/page.html?page=2"
    assert seen.get("replaceState") is None  # no URL given: none invented
    assert seen["open"] == f"{P}/http://www.example.org/popup.html"
    assert out["toOriginal"] == page


@needs_node
def test_client_absolute_prefix_and_mp_mode(tmp_path: Path) -> None:
    page = "https://site.example/a/"
    location = f"http://127.0.0.1:9000/web/{TS}mp_/{page}"
    out = run_client(tmp_path, {"prefix": "http://127.0.0.1:9000/web/", "timestamp": TS,
                                "url": page, "modifier": "mp_"}, location, ["b", "/c?d=1"])
    assert out["rewrite"] == {"b": f"http://127.0.0.1:9000/web/{TS}mp_/https://site.example/a/b",
                              "/c?d=1": f"http://127.0.0.1:9000/web/{TS}mp_/https://site.example/c?d=1"}
    assert out["a"]["href"] == f"http://127.0.0.1:9000/web/{TS}mp_/https://site.example/a/next.html"
    assert out["seen"]["open"] == f"http://127.0.0.1:9000/web/{TS}mp_/https://site.example/popup.html"


@needs_node
def test_client_rewrites_css_and_html_strings(tmp_path: Path) -> None:
    """What client_css.js hands to the page's CSS: url() in its spellings with CSS
    escapes undone, @import (cs_, in both forms), image-set(); in HTML strings, the
    contents of <style> elements, attributes with character references, meta refresh."""
    page = "http://www.example.org/docs/page.html"
    location = f"http://127.0.0.1:8080/coll/{TS}/{page}"
    out = run_client(
        tmp_path, {"prefix": "/coll/", "timestamp": TS, "url": page, "modifier": ""}, location,
        [], css=[
            r".a{background:url(\/\/cdn.example.org\/a.png)}",
            r".b{background:url(\2f img/b.png) no-repeat}",
            '@import url(x.css); @import "y.css"; .c{background:image-set("c.png" 1x)}',
            ".d{color:red}",
        ], html=[
            '<div><style media="all">.s{background:url(//cdn.example.org/s.png)}</style></div>',
            '<p style="background:url(&quot;/i.png&quot;)">x</p>',
            '<meta http-equiv="refresh" content="0; url=http://live.example/next">',
            "<style>.t{color:red}</style>",
        ])  # fmt: skip
    P = f"/coll/{TS}"
    assert out["css"] == [
        f".a{{background:url({P}im_/http://cdn.example.org/a.png)}}",
        f".b{{background:url({P}im_/http://www.example.org/img/b.png) no-repeat}}",
        f'@import url({P}cs_/http://www.example.org/docs/x.css); '
        f'@import "{P}cs_/http://www.example.org/docs/y.css"; '
        f'.c{{background:image-set("{P}im_/http://www.example.org/docs/c.png" 1x)}}',
        ".d{color:red}",
    ]
    assert out["html"] == [
        f'<div><style media="all">.s{{background:url({P}im_/http://cdn.example.org/s.png)}}'
        "</style></div>",
        f'<p style="background:url(&quot;{P}im_/http://www.example.org/i.png&quot;)">x</p>',
        f'<meta http-equiv="refresh" content="0; url={P}/http://live.example/next">',
        "<style>.t{color:red}</style>",
    ]
