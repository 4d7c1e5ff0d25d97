"""A site whose content is made by scripts, for the browser crawl tests (issue 13),
served by :class:`sites.TestSite` (its access log has each request's start and end).

From ``/`` (the index):

* ``/js/app.js`` writes the navigation: links to ``/js-page/1..5.html`` exist only in
  the DOM (the URLs are built with ``+``, which static JavaScript extraction skips);
  it sets ``#hero``'s CSS background to ``/img/hero.png``; it calls
  ``window.open("/popup.html")`` after load;
* a ``<details>`` section whose content (a link to ``/expanded/target.html`` and the
  image ``/img/expanded.png``) is fetched from ``/api/more`` when it is opened; and an
  ``aria-expanded`` button whose panel (a link to ``/panel/target.html``) is fetched
  from ``/api/panel`` when clicked;
* an ``<iframe src="/frame.html">`` whose script makes a link to ``/in-frame.html``;
* a static link to ``/feed.html``: a list that loads :data:`BATCHES` batches of
  :data:`PER_BATCH` items from ``/api/items?page=N`` (JSON) as the page is scrolled to
  its end (the first on load); each item is a link to ``/item/K.html``.

:func:`site_urls` gives every URL of the site and the part a static crawler finds.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import parse_qs, urlsplit

from record_site import JS, JSON, png
from sites import CSS, HTML, PNG, TEXT, Page, TestSite

BATCHES = 4
PER_BATCH = 6
#: Pages reachable only through links made by script.
JS_PAGES = tuple(f"/js-page/{i}.html" for i in range(1, 6))
HERO = png(40, 20, (200, 40, 40))
EXPANDED = png(16, 16, (40, 160, 40))
ICON = png(16, 16, (0, 0, 0))

_HEAD = ('<meta charset="utf-8"><link rel="icon" href="/img/icon.png">'
         '<link rel="stylesheet" href="/css/site.css">')  # fmt: skip


def _page(title: str, body: str) -> bytes:
    return (f"<!doctype html><html><head><title>{title}</title>{_HEAD}</head>"
            f"<body>{body}</body></html>").encode()  # fmt: skip


INDEX = _page("js site", """
<h1>A scripted site</h1>
<nav id="nav"></nav>
<div id="hero" style="width:320px;height:120px"></div>
<details id="more"><summary>More</summary><div id="more-body">loading…</div></details>
<button id="panel-button" aria-expanded="false" aria-controls="panel">Show panel</button>
<div id="panel" hidden></div>
<p><a href="/feed.html">the feed</a></p>
<iframe id="frame" src="/frame.html" width="300" height="80"></iframe>
<script src="/js/app.js"></script>""")

APP_JS = b"""
(function () {
  var nav = document.getElementById("nav");
  for (var i = 1; i <= 5; i++) {
    var a = document.createElement("a");
    a.href = "/js-" + "page/" + i + ".html";
    a.textContent = "page " + i;
    nav.appendChild(a);
    nav.appendChild(document.createTextNode(" "));
  }
  document.getElementById("hero").style.backgroundImage = "url(/img/" + "hero.png)";
  var more = document.getElementById("more");
  more.addEventListener("toggle", function () {
    if (!more.open || more.dataset.loaded) return;
    more.dataset.loaded = "1";
    fetch("/api/" + "more").then(function (r) { return r.text(); }).then(function (html) {
      document.getElementById("more-body").innerHTML = html;
    });
  });
  var button = document.getElementById("panel-button");
  button.addEventListener("click", function () {
    button.setAttribute("aria-expanded", "true");
    fetch("/api/" + "panel").then(function (r) { return r.text(); }).then(function (html) {
      var panel = document.getElementById("panel");
      panel.innerHTML = html;
      panel.hidden = false;
    });
  });
  window.addEventListener("load", function () {
    setTimeout(function () { window.open("/pop" + "up.html", "_blank"); }, 100);
  });
})();
"""

FRAME = _page("frame", """<p id="in">in the frame</p>
<script>
var a = document.createElement("a");
a.href = "/in-" + "frame.html";
a.textContent = "from the frame";
document.body.appendChild(a);
</script>""")

FEED = _page("feed", """<h1>Feed</h1>
<ul id="items" style="list-style:none;padding:0"></ul>
<p id="end">end of feed</p>
<script src="/js/feed.js"></script>""")

FEED_JS = b"""
(function () {
  var list = document.getElementById("items");
  var next = 1, loading = false;
  function load() {
    if (loading || next === null) return;
    loading = true;
    fetch("/api/items?page=" + next).then(function (r) { return r.json(); }).then(function (d) {
      d.items.forEach(function (it) {
        var li = document.createElement("li");
        li.style.height = "150px";
        var a = document.createElement("a");
        a.href = it.url;
        a.textContent = it.title;
        li.appendChild(a);
        list.appendChild(li);
      });
      next = d.next;
      loading = false;
    });
  }
  window.addEventListener("scroll", function () {
    var bottom = window.scrollY + window.innerHeight;
    if (bottom >= document.documentElement.scrollHeight - 100) load();
  });
  load();
})();
"""

CSS_BODY = b"body { font-family: sans-serif } nav a { margin-right: 1em }"
MORE = b'<p>More content</p><a href="/expanded/target.html">expanded</a>' \
       b'<img id="expanded-img" src="/img/expanded.png" alt="expanded">'  # fmt: skip
PANEL = b'<p>The panel</p><a href="/panel/target.html">panel target</a>'


def item_path(k: int) -> str:
    return f"/item/{k}.html"


def items_batch(n: int) -> bytes:
    """The JSON of batch ``n`` (1-based): ``{"items": [{"url", "title"}], "next"}``."""
    first = (n - 1) * PER_BATCH + 1
    items = [{"url": item_path(k), "title": f"item {k}"} for k in range(first, first + PER_BATCH)]
    return json.dumps({"items": items, "next": n + 1 if n < BATCHES else None}).encode()


def _leaf(title: str) -> Page:
    return (200, HTML, _page(title, f'<p>{title}</p><a href="/">home</a>'))


def js_pages() -> dict[str, Page]:
    """Path → page of every static path (the batches are :func:`items_handler`'s)."""
    pages: dict[str, Page] = {
        "/robots.txt": (200, TEXT, b"User-agent: *\nAllow: /\n"),
        "/": (200, HTML, INDEX),
        "/css/site.css": (200, CSS, CSS_BODY),
        "/js/app.js": (200, JS, APP_JS),
        "/js/feed.js": (200, JS, FEED_JS),
        "/frame.html": (200, HTML, FRAME),
        "/feed.html": (200, HTML, FEED),
        "/api/more": (200, HTML, MORE),
        "/api/panel": (200, HTML, PANEL),
        "/img/hero.png": (200, PNG, HERO),
        "/img/expanded.png": (200, PNG, EXPANDED),
        "/img/icon.png": (200, PNG, ICON),
    }
    for path in (*JS_PAGES, "/popup.html", "/in-frame.html", "/expanded/target.html",
                 "/panel/target.html"):  # fmt: skip
        pages[path] = _leaf(path)
    for k in range(1, BATCHES * PER_BATCH + 1):
        pages[item_path(k)] = _leaf(f"item {k}")
    return pages


def items_handler(path: str, headers: Mapping[str, str]) -> Page | None:
    """The dynamic part: ``/api/items?page=N`` for N in 1..BATCHES."""
    parts = urlsplit(path)
    if parts.path != "/api/items":
        return None
    page = parse_qs(parts.query).get("page", [""])[0]
    if not page.isdigit() or not 1 <= int(page) <= BATCHES:
        return (404, JSON, b'{"error": "no such page"}')
    return (200, JSON, items_batch(int(page)))


def js_site(host: str = "127.0.0.1", delay: float = 0.0) -> TestSite:
    """The site as a :class:`TestSite` (not started; use ``with``)."""
    return TestSite(js_pages(), host=host, delay=delay, handler=items_handler)


#: What a crawler that does not run scripts finds from ``/``: the pages and embeds
#: named in HTML attributes (the index's style sheet, icon, scripts, iframe and feed
#: link, and the same in the frame and the feed).
STATIC_PATHS = ("/", "/css/site.css", "/img/icon.png", "/js/app.js", "/frame.html",
                "/feed.html", "/js/feed.js")  # fmt: skip


@dataclass(frozen=True)
class SiteUrls:
    """The site's URLs (absolute, on one origin), each tuple sorted.

    Attributes:
        all: every URL a complete capture holds (pages, scripts, style sheet, images,
            the fetched fragments and batches; not robots.txt).
        static: those a crawler that runs no script finds, starting from ``/``.
        pages: the HTML pages among ``all`` (what a crawl visits as pages).
        js_links: the pages linked only from script-made DOM (navigation, frame
            link, expanded section and panel, feed items) and the ``window.open``
            target.
    """

    all: tuple[str, ...]
    static: tuple[str, ...]
    pages: tuple[str, ...]
    js_links: tuple[str, ...]


def site_urls(origin: str) -> SiteUrls:
    """:class:`SiteUrls` of the site served at ``origin`` (``http://host:port``)."""
    paths = [p for p in js_pages() if p != "/robots.txt"]
    paths += [f"/api/items?page={n}" for n in range(1, BATCHES + 1)]
    html = [p for p, (_, headers, _) in js_pages().items()
            if headers == HTML and not p.startswith("/api/")]  # fmt: skip
    items = [item_path(k) for k in range(1, BATCHES * PER_BATCH + 1)]
    js_links = [*JS_PAGES, "/in-frame.html", "/expanded/target.html", "/panel/target.html",
                "/popup.html", *items]  # fmt: skip
    return SiteUrls(
        all=tuple(sorted(origin + p for p in paths)),
        static=tuple(sorted(origin + p for p in STATIC_PATHS)),
        pages=tuple(sorted(origin + p for p in html)),
        js_links=tuple(sorted(origin + p for p in js_links)),
    )
