"""Feed link extraction (:mod:`webark.crawl.extract.feeds`) on damaged and hostile
feeds: corpus feeds (feedparser's, ROME's and wpull's test files) with characters
replaced or cut, random text after an RSS/Atom root, and runs of markup. Extraction
never raises, every link is an absolute URL with a known hop, and the number of links
is bounded by the number of tags (each link comes from one tag)."""

from __future__ import annotations

import pytest
from fuzz_support import FUZZ, TIMEOUT
from hypothesis import example, given
from hypothesis import strategies as st

from corpus_location import CORPUS
from webark.crawl.extract import decode_text
from webark.crawl.extract.feeds import FeedExtractor, feed_links

pytestmark = pytest.mark.timeout(TIMEOUT)

_FILES = [p for p in sorted((CORPUS / "feeds").rglob("*")) if p.is_file() and p.suffix != ".json"]
REAL = [decode_text(p.read_bytes(), None) for p in _FILES[:40]]
BASE = "https://news.example.com/feed.xml"
PIECES = ["<rss>", "<feed>", "<link>", "<link ", "</link>", "<guid>", "<guid isPermaLink='x'>",
          "<![CDATA[", "]]>", "<enclosure url=\"", "<media:thumbnail url='", "\"", "'", ">",
          "<", "href=", "rel=\"next\"", "<icon>", "<url>", "<!--", "-->", "&amp;", " ", "\n",
          "http://a.test/", "/rel", "\x00", "é"]  # fmt: skip


@st.composite
def feeds(draw: st.DrawFn) -> str:
    kind = draw(st.sampled_from(["real", "pieces", "random"]))
    if kind == "pieces":
        root = draw(st.sampled_from(["<rss>", "<feed>", "<rdf:RDF>"]))
        return root + "".join(draw(st.lists(st.sampled_from(PIECES), max_size=200)))
    if kind == "random":
        return draw(st.sampled_from(["<rss>", "<feed>"])) + draw(st.text(max_size=500))
    text = draw(st.sampled_from(REAL))
    for _ in range(draw(st.integers(1, 6))):
        at = draw(st.integers(0, len(text)))
        text = text[:at] + draw(st.sampled_from(PIECES)) + text[at + draw(st.integers(0, 5)) :]
    if draw(st.booleans()):
        text = text[: draw(st.integers(0, len(text)))]
    return text


@FUZZ
@given(feeds())
@example("<rss><link>" + " " * 2000 + "x")  # cubic backtracking before (issue 20 item 9)
@example("<rss><enclosure " + "a" * 5000 + ">")  # quadratic before
def test_feeds_never_raise_and_links_are_absolute(text: str) -> None:
    links = list(feed_links(BASE, text))
    assert len(links) <= text.count("<")
    for link in links:
        assert link.url.startswith(("http://", "https://")), link
        assert link.hop in ("L", "E")


@FUZZ
@given(feeds().map(lambda s: s.encode("utf-8", "surrogatepass")), st.sampled_from(
    [None, "utf-8", "iso-8859-1", "shift_jis", "bogus"]))  # fmt: skip
def test_extractor_on_bytes_never_raises(content: bytes, charset: str | None) -> None:
    out = list(FeedExtractor().extract(BASE, content, "application/rss+xml", charset))
    assert all(x.url.startswith(("http://", "https://")) for x in out)
