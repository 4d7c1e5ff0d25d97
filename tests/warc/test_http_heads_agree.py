"""The two readers of a record's HTTP head agree on every corpus record: the CDX
indexer's :class:`RawHttpHead` (warcio's view, one header looked up per line) and the
lenient full parse :class:`HttpHead` of replay and checks: same head end, status code,
Content-Type, Location and Content-Length."""

from __future__ import annotations

from corpus_location import CORPUS
from webark.warc.http import RawHttpHead, parse_http_head
from webark.warc.reader import ArchiveReader

ARCHIVE_SUFFIXES = (".warc", ".warc.gz", ".arc", ".arc.gz", ".gz.bad")


def test_raw_and_full_http_heads_agree_on_the_corpus() -> None:
    compared = 0
    differ: list[tuple[str, int, object]] = []
    unparsed: list[tuple[str, int, bytes]] = []
    for path in sorted(CORPUS.rglob("*")):
        if not (path.is_file() and path.name.endswith(ARCHIVE_SUFFIXES)):
            continue
        for rec in ArchiveReader(path):
            if rec.type not in ("response", "request", "revisit"):
                continue
            if not (rec.headers.target_uri or "").startswith(("http:", "https:")):
                continue
            data = rec.block.read_all()
            if not data:
                continue
            raw = RawHttpHead.of_block(data)
            full = parse_http_head(data, expect_request=rec.type == "request")
            where = (str(path.relative_to(CORPUS)), rec.offset)
            if full is None:
                if not raw.empty:
                    unparsed.append((*where, raw.first))
                continue
            compared += 1
            if full.head_length != raw.end:
                differ.append((*where, ("end", full.head_length, raw.end)))
            for name in ("content-type", "location", "content-length"):
                if raw.get(name.encode()) != full.get(name):
                    differ.append((*where, name))
            if not full.is_request and str(full.status) != raw.status():
                differ.append((*where, ("status", full.status, raw.status())))
    assert compared > 1400
    assert differ == []
    # a response record holding a request line: no status line for the lenient parser
    assert unparsed == [("pywb/warcs/example-extra.warc", 5199, b"GETX /?example=2 HTTP/1.1")]
