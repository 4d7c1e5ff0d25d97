"""Records → search documents on real captures: HTML pages of the corpus (pywb's
iana.warc.gz; webarchive-discovery's transfer-compression WARCs, one page stored plain,
gzip- and brotli-encoded), a real PDF (the shared-mime-info specification that Debian
ships) captured into a WARC, and the query language."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from system_packages import require
from webark.search.document import FIELDS, SearchDocument, content_type_norm, document_id
from webark.search.extract import Skips, document_for
from webark.search.html_text import html_text, primary_language, visible_lines
from webark.search.query import EmptyQuery, fts5_match, parse_query
from webark.warc.reader import ArchiveReader
from webark.warc.writer import WarcWriter

PDF = Path("/usr/share/doc/shared-mime-info/shared-mime-info-spec.pdf")


def _docs(path: Path, skips: Skips | None = None) -> list[SearchDocument]:
    skips = skips if skips is not None else Skips()
    out = []
    for rec in ArchiveReader(path):
        d = document_for(rec, warc_name=path.name, collection="c", skips=skips,
                         index_time="2026-01-01T00:00:00Z")  # fmt: skip
        if d is not None:
            out.append(d)
    return out


def test_iana_pages(corpus: Path) -> None:
    skips = Skips()
    docs = _docs(corpus / "pywb/warcs/iana.warc.gz", skips)
    # 171 index lines: 16 HTML pages (the rest are CSS, JS, images, fonts, redirects)
    assert len(docs) == 16
    # 295 warcinfo/request/revisit records, 4 redirects (302), 28 scripts, CSS, images
    assert skips.reasons == {"not-response": 295, "status": 4, "type": 28}
    home = next(d for d in docs if d.url == "http://www.iana.org/")
    assert home.title == "Internet Assigned Numbers Authority"
    assert home.wayback_date == "20140126200624" and home.crawl_date == "2014-01-26T20:06:24Z"
    assert home.crawl_year == 2014 and home.status_code == 200
    assert home.id == document_id("20140126200624", "http://www.iana.org/")
    assert home.id == "20140126200624/" + hashlib.md5(b"http://www.iana.org/").hexdigest()
    assert (home.host, home.domain, home.url_norm) == ("www.iana.org", "iana.org",
                                                       "http://iana.org/")  # fmt: skip
    assert home.hash == "sha1:OSSAPWJ23L56IYVRW3GFEAR4MCJMGPTB"  # the CDX digest
    assert (home.source_file_path, home.source_file_offset) == ("iana.warc.gz", 334)
    assert home.content_type == "text/html" and home.content_type_norm == "html"
    assert "The Internet Assigned Numbers Authority (IANA) is responsible" in home.content
    assert "function(" not in home.content and "{" not in home.content  # no script, no CSS
    assert "http://www.iana.org/domains" in home.links
    assert all(u.startswith(("http://", "https://")) for u in home.links)
    assert "www.iana.org" in home.links_hosts and len(set(home.links_hosts)) == len(
        home.links_hosts)  # fmt: skip


@pytest.mark.parametrize("name", ["transfer_compression_none.warc",
                                  "transfer_compression_gzip.warc",
                                  "transfer_compression_brotli.warc",
                                  "transfer_compression_brotli.warc.gz"])  # fmt: skip
def test_content_codings_give_the_same_text(corpus: Path, name: str) -> None:
    """One page captured by wget plain, gzip- and br-encoded: the same document text."""
    base = _docs(corpus / "webarchive-discovery/transfer_compression_none.warc")
    docs = _docs(corpus / "webarchive-discovery" / name)
    assert len(docs) == len(base) == 1
    assert (docs[0].title, docs[0].content, docs[0].links) == (
        base[0].title, base[0].content, base[0].links)  # fmt: skip
    assert docs[0].content and docs[0].title


def test_visible_text_language_and_links() -> None:
    page = html_text(
        '<html xml:lang="de-AT"><head><title> Die  Seite </title><style>p{x:1}</style>'
        '<script>var secret = 1;</script><base href="http://b.example/sub/"></head>'
        "<body><noscript>enable js</noscript><h1>Kopf</h1><p>Erster <b>Absatz</b>."
        '<br>Zeile <a href="x.html#f">x</a> <a href="mailto:a@b">m</a> <a href="#top">t</a>'
        '<a href="//c.example/y">y</a><template>tpl</template><svg><text>s</text></svg></p>'
        "</body></html>",
        "http://a.example/page.html",
    )  # fmt: skip
    assert page.title == "Die Seite"
    assert page.lines == ("Kopf", "Erster Absatz.", "Zeile x m ty")  # no space between t, y
    assert page.language == "de"
    assert page.links == ("http://b.example/sub/x.html", "http://c.example/y")
    assert primary_language("en-GB") == "en" and primary_language("x") == ""
    assert html_text("<p>no lang</p>", content_language="fr-CA, en").language == "fr"
    # the diff view's lines keep the title first
    assert visible_lines(b"<title>T</title><p>one <b>two</b></p>") == ["T", "one two"]


def test_pdf_capture(tmp_path: Path) -> None:
    require(PDF.is_file(), "shared-mime-info (a real PDF)",
            "WEBARK_POSTGRES=1 bash scripts/setup.sh")  # fmt: skip
    data = PDF.read_bytes()
    head = (f"HTTP/1.1 200 OK\r\nContent-Type: application/pdf\r\n"
            f"Content-Length: {len(data)}\r\n\r\n").encode()  # fmt: skip
    with WarcWriter(tmp_path / "w", prefix="PDF") as w:
        w.write(*w.builder.exchange("https://specifications.example/mime.pdf", head + data,
                                    b"GET /mime.pdf HTTP/1.1\r\nHost: x\r\n\r\n"))  # fmt: skip
        path = Path(w.paths[0])
    (doc,) = _docs(path)
    assert doc.content_type_norm == "pdf" and doc.content_type == "application/pdf"
    assert doc.content.startswith("Shared MIME-info Database")
    assert "This is version 0.21 of the Shared MIME-info Database specification" in (
        " ".join(doc.content.split()))  # fmt: skip
    assert doc.links == ()


def test_solr_document_types(corpus: Path) -> None:
    """The JSON Solr gets: webarchive-discovery's field names, each with the JSON type
    its schema.xml type takes (long/int numbers, date strings, multi-valued arrays)."""
    doc = next(d for d in _docs(corpus / "pywb/warcs/iana.warc.gz") if d.url.endswith("/"))
    solr = json.loads(json.dumps(doc.to_solr()))
    assert set(solr) <= set(FIELDS) and "content_language" not in solr  # empty: left out
    ints = {"wayback_date", "crawl_year", "status_code", "source_file_offset"}
    for k, v in solr.items():
        if k in ints:
            assert isinstance(v, int), k
        elif k in ("links", "links_hosts"):
            assert isinstance(v, list) and all(isinstance(x, str) for x in v), k
        else:
            assert isinstance(v, str), k
    assert solr["wayback_date"] == 20140126200624
    assert solr["crawl_date"] == "2014-01-26T20:06:24Z" and solr["index_time"].endswith("Z")


def test_content_type_norm() -> None:
    cases = {"text/html": "html", "application/xhtml+xml": "html", "application/pdf": "pdf",
             "image/png": "image", "audio/mpeg": "audio", "video/mp4": "video",
             "application/msword": "word", "application/vnd.ms-excel": "excel",
             "text/plain": "text", "application/octet-stream": "other"}  # fmt: skip
    assert {k: content_type_norm(k) for k in cases} == cases


@pytest.mark.parametrize(("text", "groups", "negated", "fts5"), [
    ("python decorator", (("python",), ("decorator",)), (), '"python" AND "decorator"'),
    ('"built into it" always', (("built", "into", "it"), ("always",)), (),
     '"built into it" AND "always"'),
    ("asyncio OR trio threads", (("asyncio",), ("trio",), ("threads",)), (),
     '("asyncio" OR "trio") AND "threads"'),
    ('json -"simple json" -yaml', (("json",),), (("simple", "json"), ("yaml",)),
     '("json") NOT ("simple json" OR "yaml")'),
    ('unclosed "phrase to end', (("unclosed",), ("phrase", "to", "end")), (),
     '"unclosed" AND "phrase to end"'),
    ("C++ os.path.join don't", (("C++",), ("os.path.join",), ("don't",)), (),
     '"C++" AND "os.path.join" AND "don\'t"'),
])  # fmt: skip
def test_query_syntax(text: str, groups: tuple[tuple[str, ...], ...],
                      negated: tuple[tuple[str, ...], ...], fts5: str) -> None:  # fmt: skip
    q = parse_query(text)
    flat = tuple(p for g in q.groups for p in g)
    assert flat == groups and q.negated == negated
    assert fts5_match(q) == fts5


@pytest.mark.parametrize("text", ["", "   ", "-only", "OR", '""', "!!! ???"])
def test_empty_queries(text: str) -> None:
    with pytest.raises(EmptyQuery):
        parse_query(text)
