"""The corpus's browser-made WARCs replayed in Debian's Chromium (issue 17): every page
they hold, each request for a resource they captured answered from the archive, none
leaving the replay server.

Browser-made: the request records carry a browser's User-Agent. node-warc's capture of
books.toscrape.com by headless Chrome 72 (30 resources; Chrome's header names as
node-warc wrote them, ``X-Content Type Options`` with spaces, which made the replay
server drop the connection for jquery.min.js before); Webrecorder Platform 3.7/3.8 and
webrecorder.io 2.0 (warcprox) recordings of example.com; the Wayback "Save Page"
recordings of pywb's sample archive (Chrome 31 through the live-web proxy: iana.org,
example.com and their revisits). warcio's ``example-bad-non-chunked.warc.gz`` (the
same recording as one gzip member) is not among them: it has no seekable offsets and
``collection add`` refuses it (``webark warc recompress`` makes it replayable).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from browser_support import replay_in_full, webark_serve

from webark.index.collection import Collection
from webark.index.source import KeyRange

#: corpus path → the pages (HTML captures, revisits of them included) it must hold
BROWSER_WARCS = {
    "node-warc/books.toscrape.warc": 1,
    "cdxj-indexer/data/example.warc.gz": 2,
    "warcio/example.warc.gz": 2,
    "warcio/example.warc": 2,
    "warcio/example-resource.warc.gz": 1,
    "warcio/example-trunc.warc": 1,
    "warcio-js/example-bad-length.warc": 2,
    "pywb/warcs/example2.warc.gz": 1,
    "pywb/warcs/example.warc.gz": 2,
    "pywb/warcs/example-extra.warc": 2,
    "pywb/warcs/dupes.warc.gz": 2,
    "pywb/warcs/iana.warc.gz": 16,
}


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, corpus: Path) -> Iterator[dict[str, Any]]:
    """One collection per WARC (several share a file name), all served by one server;
    the pages of each, read from its index."""
    colls = tmp_path_factory.mktemp("browser-warcs") / "colls"
    pages: dict[str, list[tuple[str, str]]] = {}
    for i, rel in enumerate(BROWSER_WARCS):
        # the library, not the CLI: node-warc's single CRLF after each block makes
        # `collection add` exit 1 (damaged) although every record is indexed
        with Collection.init(colls / f"w{i}") as coll:
            assert [r.status for r in coll.add([corpus / rel], "link")] == ["indexed"], rel
            lines = list(coll.source().scan(KeyRange("", None)))
        html_urls = {x.url for x in lines if x.mime.startswith("text/html")}
        pages[rel] = sorted({(x.timestamp, x.url) for x in lines if x.url in html_urls
                             and x.status in ("200", "-")
                             and x.mime in ("text/html", "warc/revisit")})  # fmt: skip
    with webark_serve(colls) as base:
        yield {"base": base, "pages": pages, "names": {r: f"w{i}" for i, r in
                                                       enumerate(BROWSER_WARCS)}}  # fmt: skip


@pytest.mark.parametrize("rel", sorted(BROWSER_WARCS))
def test_browser_made_warc_replays_from_the_archive_alone(browser: Any, served: dict[str, Any],
                                                          rel: str) -> None:  # fmt: skip
    pages = served["pages"][rel]
    assert len(pages) == BROWSER_WARCS[rel], pages
    prefix = served["base"] + served["names"][rel] + "/"
    answered = sum(replay_in_full(browser, served["base"], prefix, ts, url) for ts, url in pages)
    assert answered >= len(pages)
