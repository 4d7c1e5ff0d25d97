"""The archived site of the replay-fidelity browser tests (issue 17), written as a WARC.

``http://www.fidelity.test/`` (and its CDN ``cdn.fidelity.test``, and
``live.fidelity.test`` where the leak pages try to go), all captured on 2021-03-01:

* ``/css.html`` — scripts put CSS into the page in every way there is (``<style>`` in
  HTML from JSON with ``url(\\/\\/cdn…)`` escapes, style text, text nodes, inline style
  setters, the CSSOM, constructable sheets, ``@import``, FontFace, CSS escapes); every
  ``url()`` names an image captured here (:data:`CSS_IMAGES`);
* ``/fuzzy.html`` — asks for near misses of what was captured (:data:`FUZZY`);
* ``/post.html`` and ``/form.html`` — fetch/XHR POST and PUT with JSON, form-encoded
  and binary bodies, and a form POST, all captured with those bodies (the JSON with
  its members in another order);
* ``/leak/{name}.html`` — one way out of the archive each (:data:`LEAKS`), the target
  being ``http://live.fidelity.test/landing.html``, captured too.
"""

from __future__ import annotations

import base64
import json
from datetime import UTC, datetime
from pathlib import Path

from webark.warc.writer import WarcWriter

SITE = "http://www.fidelity.test/"
CDN = "http://cdn.fidelity.test/"
LANDING = "http://live.fidelity.test/landing.html"
WHEN = datetime(2021, 3, 1, 12, 0, 0, tzinfo=UTC)
TIMESTAMP = "20210301120000"
#: A 1×1 PNG.
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)

#: Images the CSS page must load from the archive, one per way CSS enters the page.
CSS_IMAGES = {
    "json-style": CDN + "img/a.png",  # <style> from JSON, url(\/\/cdn…), via innerHTML
    "json-attr": SITE + "img/i.png",  # style="…url(&quot;…&quot;)" in the same HTML
    "textContent": SITE + "img/b.png",
    "text-node": CDN + "img/c.png",
    "style-property": SITE + "img/d.png",
    "cssText": SITE + "img/e.png",
    "setProperty": SITE + "img/f.png",
    "insertRule": SITE + "img/g.png",  # relative to the external sheet css/base.css
    "style-setter": SITE + "img/h.png",
    "import": SITE + "img/k.png",  # url() of a sheet that inserted CSS @imports
    "adopted-sheet": SITE + "img/j.png",
    "list-style": SITE + "img/l.png",
    "css-escape": SITE + "img/m.png",  # url(\2f img/m.png) set by script
    "server-escape": SITE + "img/n.png",  # url(\/img\/n.png) in css/base.css
    "style-innerHTML": SITE + "img/o.png",
    "replaceData": SITE + "img/p.png",  # only the MutationObserver sees this one
    "fontface": SITE + "fonts/f.woff2",
}

CSS_PAGE = """<!doctype html><html><head><title>css</title>
<link rel="stylesheet" href="css/base.css">
<style>.box{width:8px;height:8px;display:block}</style>
</head><body>
<div id="frag"></div>
<div class="box b"></div><div class="box c"></div><div class="box" id="d"></div>
<div class="box" id="e"></div><div class="box" id="f"></div><div class="box g"></div>
<div class="box" id="h"></div><div class="box k"></div><div class="box j"></div>
<ul><li id="l">item</li></ul><div class="box" id="m"></div><div class="box n"></div>
<div class="box o"></div><div class="box p"></div>
<script>
var pending = 2;
function done() { if (--pending === 0) { window.__done = true; } }
fetch("fragment.json").then(function (r) { return r.json(); }).then(function (j) {
  document.getElementById("frag").innerHTML = j.html; done();
});
var s = document.createElement("style");
s.textContent = ".b{background-image:url(/img/b.png)}"; document.head.appendChild(s);
var s2 = document.createElement("style");
s2.appendChild(document.createTextNode('.c{background:url("http://cdn.fidelity.test/img/c.png")}'));
document.head.appendChild(s2);
document.getElementById("d").style.backgroundImage = "url(/img/d.png)";
document.getElementById("e").style.cssText = "background: url(img/e.png) no-repeat";
document.getElementById("f").style.setProperty("background-image", "url('/img/f.png')");
document.styleSheets[0].insertRule(".g{background-image:url(../img/g.png)}", 0);
document.getElementById("h").style = "background-image: url('/img/h.png')";
document.head.insertAdjacentHTML("beforeend", '<style>@import url("/css/imported.css");</style>');
var sheet = new CSSStyleSheet(); sheet.replaceSync(".j{background:url(/img/j.png)}");
document.adoptedStyleSheets = [sheet];
document.getElementById("l").style["list-style-image"] = "url(/img/l.png)";
document.getElementById("m").setAttribute("style", "background:url(\\\\2f img/m.png)");
var s3 = document.createElement("style"); document.head.appendChild(s3);
s3.innerHTML = ".o{background:url(/img/o.png)}";
var s4 = document.createElement("style"); var t4 = document.createTextNode(".p{}");
s4.appendChild(t4); document.head.appendChild(s4);
setTimeout(function () { t4.replaceData(0, t4.length, ".p{background:url(/img/p.png)}"); }, 0);
new FontFace("F", "url(/fonts/f.woff2)").load().then(done, done);
</script></body></html>"""
FRAGMENT = json.dumps({"html": '<style>.a{background:url(//cdn.fidelity.test/img/a.png)}</style>'
                       '<div class="box a"></div>'
                       '<div class="box" style="background-image:url(&quot;/img/i.png&quot;)">'
                       "</div>"}).replace("/", "\\/")  # fmt: skip
BASE_CSS = ".n{background:url(\\/img\\/n.png)}\n"
IMPORTED_CSS = ".k{background:url(../img/k.png)}\n"

#: Fuzzy matches: (what the page asks, what was captured, its type, the rule).
FUZZY = [
    ("w/load.php?lang=en&modules=site.styles&only=styles&skin=vector&version=T2",
     "w/load.php?lang=en&modules=site.styles&only=styles&skin=vector&version=T1",
     "text/css", "version-param"),
    ("css/style.css?v=2", "css/style.css?v=1", "text/css", "version-param"),
    ("js/app.js?v=9", "js/app.js", "application/javascript", "version-param"),
    ("img/logo.png?_=1700000000000", "img/logo.png?_=1600000000000", "image/png",
     "cache-buster"),
    ("img/banner.png?utm_source=newsletter", "img/banner.png", "image/png", "tracking-param"),
    ("img/thumb.png?size=s&ref=home", "img/thumb.png?size=s", "image/png", "extra-param"),
    ("docs/", "docs/index.html", "text/html", "index-page"),
]  # fmt: skip
FUZZY_PAGE = """<!doctype html><html><head><title>fuzzy</title>
<link rel="stylesheet"
 href="/w/load.php?lang=en&amp;modules=site.styles&amp;only=styles&amp;skin=vector&amp;version=T2">
<link rel="stylesheet" href="/css/style.css?v=2">
<script src="/js/app.js?v=9"></script>
</head><body><div id="lp">load.php</div><div id="st">style.css</div>
<img src="/img/logo.png?_=1700000000000"><img src="/img/banner.png?utm_source=newsletter">
<img src="/img/pic.png?b=2&amp;a=1"><img src="/img/thumb.png?size=s&amp;ref=home">
<iframe src="/section"></iframe><iframe src="/docs/"></iframe>
</body></html>"""

POST_PAGE = """<!doctype html><html><head><title>post</title></head><body>
<p id="json"></p><p id="form"></p><p id="put"></p>
<script>
var pending = 3;
function show(id, text) {
  document.getElementById(id).textContent = text;
  if (--pending === 0) { window.__done = true; }
}
fetch("/api/search", {method: "POST", headers: {"Content-Type": "application/json"},
  body: JSON.stringify({query: "warc", page: 2})})
  .then(function (r) { return r.json(); }).then(function (j) { show("json", j.result); },
                                                 function (e) { show("json", "failed " + e); });
var x = new XMLHttpRequest(); x.open("POST", "/api/form");
x.setRequestHeader("Content-Type", "application/x-www-form-urlencoded");
x.onload = function () { show("form", x.status === 200 ? x.responseText : "status " + x.status); };
x.send("name=web+archive&lang=en");
fetch("/api/put", {method: "PUT", headers: {"Content-Type": "application/octet-stream"},
  body: new Uint8Array([0, 1, 2, 255])})
  .then(function (r) { return r.ok ? r.text() : "status " + r.status; })
  .then(function (t) { show("put", t); });
</script></body></html>"""
FORM_PAGE = """<!doctype html><html><head><title>form</title></head><body>
<form method="post" action="/submit"><input name="q" value="archive">
<button id="go">go</button></form>
</body></html>"""

#: Leak pages: name → the script that tries to take the page (or a new one) out of
#: the archive to LANDING, built at run time so that no rewriting of literals sees it.
_LIVE = "['http:', '', 'live.fidelity.test', 'landing.html'].join('/')"
LEAKS = {
    "location-href": f"location.href = {_LIVE};",
    "location-assign": f"location.assign({_LIVE});",
    "location-replace": f"location.replace({_LIVE});",
    "window-location": f"window.location = {_LIVE};",
    "protocol-relative": "location.href = '//' + 'live.fidelity.test/landing.html';",
    "meta-refresh": ("var m = document.createElement('meta'); m.httpEquiv = 'refresh';"
                     f" m.content = '0; url=' + {_LIVE}; document.head.appendChild(m);"),
    "frame-busting": ("document.body.insertAdjacentHTML('beforeend',"
                      " '<iframe src=\"frame.html\"></iframe>');"),
    "window-open": f"window.open({_LIVE});",
    "window-open-blank": f"var w = window.open(''); w.location.href = {_LIVE};",
    "target-blank": ("var a = document.createElement('a'); a.target = '_blank';"
                     " a.textContent = 'x'; a.setAttribute('href', 'x.html');"
                     " document.body.appendChild(a);"
                     f" a.attributes.getNamedItem('href').value = {_LIVE}; a.click();"),
    "form-target-blank": ("var f = document.createElement('form'); f.target = '_blank';"
                          " f.setAttribute('action', 'x.html'); document.body.appendChild(f);"
                          f" f.attributes.getNamedItem('action').value = {_LIVE}; f.submit();"),
}  # fmt: skip
#: Leak pages whose outcome is the page's title (no navigation).
IN_PAGE = {
    "websocket": ("var ws = new WebSocket('ws://' + 'live.fidelity.test/socket');"
                  " ws.onclose = function (e) { document.title = 'closed ' + e.code; };"),
    "document-domain": ("try { document.domain = 'fidelity.test';"
                        " document.title = document.domain; }"
                        " catch (e) { document.title = 'threw ' + e.name; }"),
    "service-worker": ("navigator.serviceWorker.register('/sw.js').then("
                       "function () { document.title = 'registered'; },"
                       " function () { document.title = 'refused'; });"),
}  # fmt: skip
FRAME = ("<!doctype html><html><head><title>frame</title></head><body><script>"
         f"top.location.href = {_LIVE};</script></body></html>")  # fmt: skip


def _page(title: str, script: str) -> str:
    return (f"<!doctype html><html><head><title>{title}</title></head><body>"
            f"<p>{title}</p><script>setTimeout(function () {{ {script} }}, 50);</script>"
            "</body></html>")  # fmt: skip


def _response(body: bytes, ctype: str) -> bytes:
    head = f"HTTP/1.1 200 OK\r\nContent-Type: {ctype}\r\nContent-Length: {len(body)}\r\n\r\n"
    return head.encode("latin-1") + body


def _request(url: str, method: str = "GET", body: bytes = b"", ctype: str = "") -> bytes:
    _, _, host, path = url.split("/", 3)
    head = f"{method} /{path} HTTP/1.1\r\nHost: {host}\r\nUser-Agent: Mozilla/5.0 Chrome\r\n"
    if body or method != "GET":
        head += f"Content-Type: {ctype}\r\nContent-Length: {len(body)}\r\n"
    return (head + "\r\n").encode("latin-1") + body


def write_site(out: Path) -> list[Path]:
    """Write the site's WARC into ``out``; returns its paths."""
    writer = WarcWriter(out, prefix="FIDELITY")
    html, css = "text/html; charset=utf-8", "text/css"

    def capture(url: str, body: bytes | str, ctype: str, method: str = "GET",
                req_body: bytes = b"", req_type: str = "") -> None:  # fmt: skip
        data = body.encode("utf-8") if isinstance(body, str) else body
        writer.write(*writer.builder.exchange(
            url, _response(data, ctype), _request(url, method, req_body, req_type), date=WHEN
        ))  # fmt: skip

    with writer:
        capture(SITE + "css.html", CSS_PAGE, html)
        capture(SITE + "fragment.json", FRAGMENT, "application/json")
        capture(SITE + "css/base.css", BASE_CSS, css)
        capture(SITE + "css/imported.css", IMPORTED_CSS, css)
        for url in CSS_IMAGES.values():
            capture(url, PNG, "font/woff2" if url.endswith(".woff2") else "image/png")
        capture(SITE + "fuzzy.html", FUZZY_PAGE, html)
        for _, captured, ctype, _ in FUZZY:
            body: bytes | str = PNG
            if ctype == "text/css":
                body = "#%s{color:rgb(0, 128, 0)}" % ("lp" if "load.php" in captured else "st")
            elif ctype == "application/javascript":
                body = "window.__app = 1;"
            elif ctype == "text/html":
                body = f"<!doctype html><title>{captured}</title><p>{captured}</p>"
            capture(SITE + captured, body, ctype)
        capture(SITE + "img/pic.png?a=1&b=2", PNG, "image/png")  # asked b=2&a=1: same key
        capture(SITE + "section/", "<!doctype html><title>section/</title>", html)  # /section
        capture(SITE + "post.html", POST_PAGE, html)
        capture(SITE + "api/search", json.dumps({"result": "3 captures of warc, page 2"}),
                "application/json", "POST", b'{"page": 2, "query": "warc"}',
                "application/json")  # fmt: skip
        capture(SITE + "api/form", "form: web archive (en)", "text/plain", "POST",
                b"lang=en&name=web+archive", "application/x-www-form-urlencoded")
        capture(SITE + "api/put", "put: 4 bytes", "text/plain", "PUT", bytes([0, 1, 2, 255]),
                "application/octet-stream")  # fmt: skip
        capture(SITE + "api/search", json.dumps({"result": "GET: wrong answer"}),
                "application/json")  # the same URL by GET: never the answer to the POST
        capture(SITE + "form.html", FORM_PAGE, html)
        capture(SITE + "submit", "<!doctype html><title>submitted</title><p>q=archive</p>", html,
                "POST", b"q=archive", "application/x-www-form-urlencoded")  # fmt: skip
        for name, script in {**LEAKS, **IN_PAGE}.items():
            capture(SITE + f"leak/{name}.html", _page(name, script), html)
        capture(SITE + "leak/frame.html", FRAME, html)
        capture(LANDING, "<!doctype html><title>landing</title><p>the archived landing page</p>",
                html)  # fmt: skip
    return [Path(p) for p in writer.paths]
