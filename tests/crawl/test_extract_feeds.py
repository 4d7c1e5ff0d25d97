"""RSS / Atom feed extraction."""

from __future__ import annotations

from webark.crawl.extract import extract_links
from webark.crawl.extract.feeds import FeedExtractor

F = "https://news.example.com/feed.xml"

RSS = b"""<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0" xmlns:atom="http://www.w3.org/2005/Atom"
     xmlns:media="http://search.yahoo.com/mrss/">
<channel>
  <title>News</title>
  <link>https://news.example.com/</link>
  <atom:link href="https://news.example.com/feed.xml" rel="self" type="application/rss+xml"/>
  <atom:link href="https://pubsubhubbub.appspot.com/" rel="hub"/>
  <image><url>https://news.example.com/logo.png</url><title>t</title></image>
  <!-- <item><link>https://news.example.com/commented</link></item> -->
  <item>
    <title>One &amp; two</title>
    <link>https://news.example.com/2024/one?a=1&amp;b=2</link>
    <guid isPermaLink="true">https://news.example.com/p/1</guid>
    <enclosure url="https://media.example.net/ep1.mp3" length="1" type="audio/mpeg"/>
    <media:thumbnail url="https://media.example.net/ep1.jpg"/>
  </item>
  <item>
    <link><![CDATA[https://news.example.com/2024/two]]></link>
    <guid isPermaLink="false">tag:news.example.com,2024:2</guid>
  </item>
  <item><link>/relative/three</link><guid>not-a-url</guid></item>
</channel>
</rss>"""

ATOM = b"""<?xml version="1.0" encoding="utf-8"?>
<feed xmlns="http://www.w3.org/2005/Atom">
  <title>Example Feed</title>
  <link href="http://example.org/"/>
  <link rel="self" href="http://example.org/feed.atom"/>
  <link rel="next" href="http://example.org/feed.atom?page=2"/>
  <icon>/favicon.ico</icon>
  <entry>
    <title>Atom-Powered Robots Run Amok</title>
    <link rel="alternate" type="text/html" href="http://example.org/2003/12/13/atom03"/>
    <link rel="enclosure" href="http://example.org/audio/ph34r_my_podcast.mp3"/>
    <link rel="edit" href="http://example.org/edit/1"/>
    <id>urn:uuid:1225c695-cfb8-4ebb-aaaa-80da344efa6a</id>
  </entry>
</feed>"""


def triples(url: str, mime: str, body: bytes) -> list[tuple[str, str, str]]:
    return [(lk.hop, lk.context, lk.url) for lk in extract_links(url, mime, body)]


def test_rss2() -> None:
    assert triples(F, "application/rss+xml", RSS) == [
        ("L", "rss link", "https://news.example.com/"),
        ("E", "rss image", "https://news.example.com/logo.png"),
        ("L", "rss link", "https://news.example.com/2024/one?a=1&b=2"),
        ("L", "rss guid", "https://news.example.com/p/1"),
        ("L", "rss enclosure", "https://media.example.net/ep1.mp3"),
        ("E", "rss media:thumbnail", "https://media.example.net/ep1.jpg"),
        ("L", "rss link", "https://news.example.com/2024/two"),
        ("L", "rss link", "https://news.example.com/relative/three"),
    ]


def test_atom() -> None:
    assert triples("http://example.org/feed.atom", "application/atom+xml", ATOM) == [
        ("L", "atom link/@href", "http://example.org/"),
        ("L", "atom link/@href", "http://example.org/feed.atom?page=2"),
        ("E", "atom icon", "http://example.org/favicon.ico"),
        ("L", "atom link/@href", "http://example.org/2003/12/13/atom03"),
        ("L", "atom link/@href", "http://example.org/audio/ph34r_my_podcast.mp3"),
    ]


def test_rss1_rdf() -> None:
    body = b"""<?xml version="1.0"?><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"
    xmlns="http://purl.org/rss/1.0/"><channel rdf:about="http://x.org/rss"><link>http://x.org/</link>
    </channel><item rdf:about="http://x.org/i1"><link>http://x.org/i1</link></item></rdf:RDF>"""
    assert [u for _, _, u in triples("http://x.org/rss", "application/rdf+xml", body)] == [
        "http://x.org/",
        "http://x.org/i1",
    ]


def test_not_a_feed_and_junk() -> None:
    ex = FeedExtractor()
    assert ex.handles("application/atom+xml", F)
    assert not ex.handles("text/html", F)
    assert list(ex.extract(F, b"<html><link href='x'></html>", "text/xml", None)) == []
    for junk in [b"", b"<rss", b"<feed><link href='", b"\xff\xfe\x00<rss>"]:
        list(ex.extract(F, junk, "application/rss+xml", None))


# -- hostile feeds (issue 20 item 9) --------------------------------------------------
#: 600 kB feeds that made the old regular expressions backtrack (14 s at 120 kB, over a
#: minute at 600 kB; the whitespace one is cubic), and a large well-formed one.
_N = 600_000
HOSTILE_FEEDS = {
    "whitespace after <link>": "<rss><link>" + " " * _N + "x",
    "unclosed <enclosure tags": "<rss>" + "<enclosure " * (_N // 11),
    "unclosed Atom <link tags": "<feed>" + "<link " * (_N // 6),
    "one long attribute word": "<rss><enclosure " + "a" * _N + ">",
    "unclosed quotes": "<rss><enclosure " + 'a="x ' * (_N // 5) + ">",
    "many <guid tags": "<rss>" + "<guid " * (_N // 6) + ">",
    "unclosed CDATA": "<rss>" + "<link><![CDATA[" * (_N // 15),
    "closed tags with spaces": "<rss>" + "<enclosure   url  =  'x'  >  " * (_N // 30),
}
_TIMER = """
import json, sys, time
from webark.crawl.extract.feeds import feed_links
out = {}
for name, text in json.load(sys.stdin).items():
    t = time.perf_counter()
    n = len(list(feed_links("https://f.test/feed.xml", text)))
    out[name] = [n, time.perf_counter() - t]
print(json.dumps(out))
"""


def test_hostile_feeds_take_linear_time() -> None:
    import json
    import subprocess
    import sys

    # a child process, so that a regression fails after 60 s instead of hanging CI
    done = subprocess.run([sys.executable, "-c", _TIMER], input=json.dumps(HOSTILE_FEEDS),
                          capture_output=True, text=True, timeout=60, check=True)  # fmt: skip
    got = json.loads(done.stdout)
    slow = {k: round(t, 3) for k, (_, t) in got.items() if t > 1.0}
    assert not slow, slow  # linear: ~0.1 s at most here, each
    assert got["closed tags with spaces"][0] == _N // 30  # every one read
    assert got["whitespace after <link>"][0] == 0  # the element never ends


def test_a_large_feed_keeps_every_link() -> None:
    items = "".join(
        f"<item><link>https://news.example.com/{i}</link>"
        f"<guid>https://news.example.com/g/{i}</guid></item>"
        for i in range(10_000)
    )
    text = f"<rss><channel>{items}</channel></rss>".encode()
    assert len(text) > 600_000
    links = list(FeedExtractor().extract(F, text, "application/rss+xml", None))
    assert len(links) == 20_000
    assert links[0].url == "https://news.example.com/0"
    assert links[-1].url == "https://news.example.com/g/9999"
