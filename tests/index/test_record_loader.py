"""Loading the record a CDX line points at (webark.index.record_loader): every line of
real WARCs/ARCs (per-record gzip, uncompressed, ARC, ARC.gz) and of a zstd WARC written
by webark loads the record it names; missing files and bad offsets give clear errors;
one loader serves many threads."""

from __future__ import annotations

import re
import shutil
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path

import pytest

from index_stores import StoreChoice
from webark.cdx.line import CdxLine
from webark.core.digests import same_digest
from webark.core.errors import FormatError
from webark.index.collection import Collection
from webark.index.locations import LocationResolver, PrefixLocator, WarcNotFound
from webark.index.record_loader import RecordLoader, RemoteWarcUnsupported
from webark.index.source import KeyRange
from webark.url import cdx_key
from webark.warc.builders import WarcinfoFields
from webark.warc.writer import WarcWriter

FILES = [
    "pywb/warcs/iana.warc.gz",  # per-record gzip, chunked bodies, revisits
    "pywb/warcs/example-extra.warc",  # uncompressed
    "pywb/warcs/example.arc",  # ARC
    "pywb/warcs/example.arc.gz",  # ARC, gzip
    "node-warc/books.toscrape.warc",  # uncompressed, WARC/1.1, chunked
]


def _check(line: CdxLine, loader: RecordLoader) -> None:
    rec = loader.load(line)
    assert rec.offset == line.offset
    assert rec.length == line.length
    assert rec.target_uri is not None and cdx_key(rec.target_uri) == line.urlkey
    if rec.type == "response" and line.digest not in ("-", ""):
        # the index's digest is the record's payload digest (or the computed one)
        recorded = rec.headers.payload_digest
        if recorded is not None:
            assert same_digest(recorded, line.digest)


@pytest.fixture(scope="module")
def coll(
    tmp_path_factory: pytest.TempPathFactory, corpus: Path, index_store: StoreChoice
) -> Collection:
    c = index_store.init(tmp_path_factory.mktemp("rl") / "coll")
    for r in c.add([corpus / f for f in FILES]):
        assert r.status == "indexed", r.message
    return c


def test_every_corpus_line_loads(coll: Collection) -> None:
    loader = RecordLoader(coll.resolver())
    lines = list(coll.source().scan(KeyRange("", None)))
    by_file = {x.filename for x in lines}
    assert by_file == {Path(f).name for f in FILES}
    assert len(lines) > 200
    for line in lines:
        _check(line, loader)


def test_zstd_and_uncompressed_written_by_webark(tmp_path: Path) -> None:
    paths = []
    for codec in ("zstd", "none"):
        with WarcWriter(tmp_path / codec, compression=codec,
                        warcinfo=WarcinfoFields(hostname="h")) as w:
            for i in range(3):
                body = b"body %d" % i
                w.write(w.builder.response(
                    f"http://example.org/{i}",
                    b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body)))
            paths += w.paths
    c = Collection.init(tmp_path / "c")
    for r in c.add(paths):
        assert r.status == "indexed", r.message
    loader = RecordLoader(c.resolver())
    lines = list(c.source().scan(KeyRange("", None)))
    assert len(lines) == 6
    for line in lines:
        rec = loader.load(line)
        assert rec.payload() == b"body " + line.url[-1].encode()


def test_errors_name_file_and_offset(coll: Collection, tmp_path: Path) -> None:
    loader = RecordLoader(coll.resolver())
    line = next(iter(coll.source().scan(KeyRange("org,iana)/", "org,iana)/!"))))
    with pytest.raises(FormatError) as e:
        loader.load(replace(line, offset=line.offset + 3))
    assert e.value.offset == line.offset + 3 and e.value.path is not None
    assert "iana.warc.gz" in str(e.value)
    with pytest.raises(FormatError, match="no offset"):
        loader.load(replace(line, offset=-1))
    with pytest.raises(WarcNotFound) as nf:
        loader.load(replace(line, filename="nowhere.warc.gz"))
    assert nf.value.filename == "nowhere.warc.gz"
    remote = RecordLoader(LocationResolver([PrefixLocator("https://warcs.example.org/")]))
    with pytest.raises(RemoteWarcUnsupported, match=re.escape("https://warcs.example.org/iana.warc.gz")):
        remote.load(line)


def test_moved_warc_is_found_again(tmp_path: Path, corpus: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    shutil.copy(corpus / "pywb/warcs/example.warc.gz", a)
    resolver = LocationResolver([PrefixLocator(a), PrefixLocator(b)])
    loader = RecordLoader(resolver, location_ttl=3600)
    line = CdxLine("com,example)/?example=1", "20140103030321", "http://example.com?example=1",
                   offset=0, filename="example.warc.gz")
    assert loader.load(line).type == "warcinfo"
    (a / "example.warc.gz").rename(b / "example.warc.gz")  # cached location is stale
    assert loader.load(line).type == "warcinfo"
    (b / "example.warc.gz").unlink()
    with pytest.raises(WarcNotFound):
        loader.load(line)


def test_threads_share_one_loader(coll: Collection) -> None:
    loader = RecordLoader(coll.resolver(), max_locations=2)
    lines = list(coll.source().scan(KeyRange("", None)))
    expect = [loader.load(x).record_id for x in lines]
    with ThreadPoolExecutor(8) as ex:
        got = list(ex.map(lambda x: loader.load(x).record_id, lines * 3))
    assert got == expect * 3
