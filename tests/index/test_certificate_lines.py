"""A TLS certificate-chain metadata record (webark.fetch.certificates) shares its
capture's URL and WARC-Date, and both indexers (cdxj-indexer and pywb conventions) list
it: replay must not take it for the capture (same URL key, same timestamp)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from index_stores import StoreChoice
from tls_chain import PEM_CHAIN, ChainCA
from webark.cdx.indexer import IndexOptions, index_file
from webark.fetch.certificates import certificate_record
from webark.index.capture_select import capture_type, captures, closest, neighbours
from webark.index.collection import Collection
from webark.warc.builders import WarcinfoFields
from webark.warc.writer import WarcWriter

URL = "https://www.example.com/"
WHEN = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
LATER = datetime(2026, 1, 3, tzinfo=UTC)
PAGE = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 2\r\n\r\nhi"
# an ACME server's certificate download: a real response of the chain's media type
ACME = (b"HTTP/1.1 200 OK\r\nContent-Type: application/pem-certificate-chain\r\n"
        b"Content-Length: 4\r\n\r\nPEM!")  # fmt: skip


def _collection(root: Path, index_store: StoreChoice, store: str) -> Collection:
    """A collection on the suite's store (SQLite / PostgreSQL, which keep the WARC type
    of each line) or on a sorted CDXJ file (which keeps only the MIME and status)."""
    if store == "cdxj":
        return Collection.init(root, store="cdxj")
    return index_store.init(root)


@pytest.mark.parametrize("store", ["suite", "cdxj"])
@pytest.mark.parametrize("compat", ["cdxj-indexer", "pywb"])
def test_chain_line_is_not_a_capture(tmp_path_factory: pytest.TempPathFactory,
                                     index_store: StoreChoice, compat: str,
                                     store: str) -> None:  # fmt: skip
    d = tmp_path_factory.mktemp("certs")
    with WarcWriter(d / "w", compression="gzip", warcinfo=WarcinfoFields(hostname="h")) as w:
        for when in (WHEN, LATER):
            page = w.builder.response(URL, PAGE, date=when)
            chain = certificate_record(w.builder, URL, ChainCA().sent,
                                       concurrent_to=page.record_id or "", date=when)  # fmt: skip
            w.write(page, chain)
        w.write(w.builder.response(URL + "cert", ACME, date=WHEN))
        path = w.paths[0]
    lines = list(index_file(path, IndexOptions(compat=compat)))  # type: ignore[arg-type]
    assert sorted(x.mime for x in lines if x.url == URL) == [PEM_CHAIN, PEM_CHAIN,
                                                             "text/html", "text/html"]
    coll = _collection(d / "coll", index_store, store)
    (res,) = coll.add([path], index=lambda p, name: index_file(p, IndexOptions(
        compat=compat)))  # type: ignore[arg-type]  # fmt: skip
    assert res.status == "indexed", res.message
    src = coll.source()
    got = closest(src, URL, "20260102030405")
    assert [(x.timestamp, x.mime, capture_type(x)) for x in got] == [
        ("20260102030405", "text/html", "response"), ("20260103000000", "text/html", "response")]
    assert sorted(capture_type(x) for x in captures(src, URL, all_records=True)) == [
        "metadata", "metadata", "response", "response"]
    assert [x.mime for x in captures(src, URL)] == ["text/html", "text/html"]
    prev, _ = neighbours(src, URL, "20260103000000")
    assert prev is not None and prev.mime == "text/html"
    # an HTTP response served as application/pem-certificate-chain is a capture
    (acme,) = closest(src, URL + "cert", None)
    assert (acme.mime, acme.status, capture_type(acme)) == (PEM_CHAIN, "200", "response")
