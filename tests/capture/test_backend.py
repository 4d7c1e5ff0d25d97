"""The capture back end alone, no crawler: real exchanges (webark's fetcher against a
site served on 127.0.0.1) in; valid WARCs, revisits, crawl.log lines and dedup index
entries out.

The site has a page, a copy of it under another URL, a page with an ETag (answered 304
to a conditional request), an empty body, a chunked page, and a 404. The same URLs are
captured twice through one back end; a second back end on the same dedup index (a
recrawl) and a third one with its own dedup policy show what the index and the policy
decide."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

from sites import Page, TestSite, chunked, html
from webark.capture import (
    CaptureConfig,
    CaptureError,
    CaptureMeta,
    SeriesConfig,
    WarcCaptureBackend,
    capture_line,
)
from webark.crawllog.parse import read_crawl_log
from webark.dedup.policy import DedupPolicy
from webark.dedup.sqlite_dedup import open_index
from webark.fetch import Exchange, HttpFetcher
from webark.warc.check import check_file
from webark.warc.reader import ArchiveReader, read_record_at
from webark.warc.writer import is_already_compressed

BODY = html("<p>the same words, twice</p>")
CHUNKED_BODY = b"<html><body>" + b"chunk " * 300 + b"</body></html>"
ETAG = '"v1"'


def _handler(path: str, headers: Mapping[str, str]) -> Page | None:
    if path == "/etag.html":
        if headers.get("if-none-match") == ETAG:
            return 304, (("ETag", ETAG),), b""
        return 200, (("Content-Type", "text/html"), ("ETag", ETAG)), html("<p>tagged</p>")
    return None


PAGES: dict[str, Page] = {
    "/a.html": (200, (("Content-Type", "text/html"),), BODY),
    "/copy.html": (200, (("Content-Type", "text/html"),), BODY),
    "/empty.txt": (200, (("Content-Type", "text/plain"),), b""),
    "/chunked.html": (200, (("Content-Type", "text/html"), ("Transfer-Encoding", "chunked")),
                      chunked(CHUNKED_BODY)),
    "/missing.png": (404, (("Content-Type", "text/html"),), html("<h1>gone</h1>")),
}


@pytest.fixture(scope="module")
def site() -> Iterator[TestSite]:
    with TestSite(PAGES, handler=_handler) as s:
        yield s


def fetch_all(site: TestSite, paths: list[str], backend: WarcCaptureBackend
              ) -> list[Exchange]:  # fmt: skip
    async def go() -> list[Exchange]:
        async with HttpFetcher("webark-test (archive@example.org)", allow_private=True) as f:
            return [await f.fetch(site.url(p), headers=backend.validators(site.url(p)))
                    for p in paths]  # fmt: skip

    return asyncio.run(go())


def backend_for(tmp: Path, name: str, index: Path, **kw: object) -> WarcCaptureBackend:
    return WarcCaptureBackend(CaptureConfig(
        series=SeriesConfig(tmp / name / "warcs", prefix=name.upper()),
        crawl_log=tmp / name / "crawl.log", dedup_index=index, **kw,  # type: ignore[arg-type]
    ))  # fmt: skip


def archive_all(backend: WarcCaptureBackend, exchanges: list[Exchange]) -> list[object]:
    async def go() -> list[object]:
        out = []
        for i, ex in enumerate(exchanges):
            meta = CaptureMeta(via="http://seed.example/", hop_path="L", worker=i + 1,
                               source_tag="http://seed.example/")  # fmt: skip
            result = await backend.archive(ex, meta)
            backend.log(capture_line(ex.url, ex.status, meta, exchange=ex, result=result))
            out.append(result)
        await backend.aclose()
        return out

    return asyncio.run(go())


PATHS = ["/a.html", "/copy.html", "/etag.html", "/empty.txt", "/chunked.html", "/missing.png"]


def test_backend_alone_writes_valid_warcs_revisits_log_and_index(
    tmp_path: Path, site: TestSite
) -> None:
    index = tmp_path / "dedup.sqlite"
    first = backend_for(tmp_path, "one", index)
    ex1 = fetch_all(site, [*PATHS, "/a.html"], first)
    results = archive_all(first, ex1)
    kinds = [(r.revisit_kind, r.hit_kind) for r in results]  # type: ignore[attr-defined]
    # /copy.html repeats /a.html (digest-only); the second /a.html is an exact-url revisit;
    # the empty body and the 404 are stored in full (default policy)
    assert kinds == [(None, None), ("digest", "digest-only"), (None, None), (None, None),
                     (None, None), (None, None), ("digest", "exact-url")]  # fmt: skip

    # a recrawl through a second back end on the same index: every capture a revisit,
    # /etag.html answered 304 to the conditional request the back end's validators made
    second = backend_for(tmp_path, "two", index)
    ex2 = fetch_all(site, ["/a.html", "/etag.html", "/chunked.html"], second)
    assert [e.http_status for e in ex2] == [200, 304, 200]
    assert ("If-None-Match", ETAG) in second.validators(site.url("/etag.html"))
    again = archive_all(second, ex2)
    assert [r.revisit_kind for r in again] == ["digest", "server-not-modified", "digest"]  # type: ignore[attr-defined]

    for name, expected in (("one", 7), ("two", 3)):
        warcs = sorted((tmp_path / name / "warcs").iterdir())
        assert [w.name.endswith(".warc.gz") for w in warcs] == [True], warcs  # closed
        report = check_file(warcs[0])
        assert report.ok, report.errors[:3]
        records = list(ArchiveReader(str(warcs[0])))
        assert [r.type for r in records].count("request") == expected
        revisits = [r for r in records if r.type == "revisit"]
        for r in revisits:  # every revisit names an original that is in a WARC
            assert r.headers.get("WARC-Refers-To-Target-URI")
            assert r.headers.get("WARC-Refers-To-Date")
        lines = read_crawl_log(tmp_path / name / "crawl.log")
        assert len(lines) == expected
        assert all(ln.extra["warcFilename"] == warcs[0].name for ln in lines)
        assert sum("duplicate:digest" in ln.annotations for ln in lines) == len(
            [r for r in revisits if "identical" in (r.headers.get("WARC-Profile") or "")])
        for ln, rec_offset in ((ln, ln.extra["warcFileOffset"]) for ln in lines):
            rec = read_record_at(str(warcs[0]), rec_offset)
            assert rec.target_uri == ln.uri and rec.type in ("response", "revisit")
            assert ln.hop_path == "L" and ln.via == "http://seed.example/"
    snm = read_crawl_log(tmp_path / "two" / "crawl.log")[1]
    assert snm.status == 304 and "duplicate:server-not-modified" in snm.annotations

    # the index: every original points at its response record on disk
    with open_index(index) as idx:
        assert idx.last_capture(site.url("/empty.txt")) is None  # never an original
        for path in ("/a.html", "/etag.html", "/chunked.html"):
            last = idx.last_capture(site.url(path))
            assert last is not None, path
            hit = idx.lookup(site.url(path), last.digest)
            assert hit is not None and hit.warc_filename and hit.offset is not None
            rec = read_record_at(str(tmp_path / "one" / "warcs" / hit.warc_filename), hit.offset)
            assert rec.type == "response" and rec.headers.payload_digest == last.digest
        assert idx.lookup(site.url("/missing.png"), ex1[5].payload_digest or "") is None

    stats = second.stats.to_json()["buckets"]["__all__"]  # type: ignore[index]
    assert stats["revisit"]["urls"] == 3 and stats["new"]["urls"] == 0


def test_per_capture_policy_prefix_and_dedup_ok(tmp_path: Path, site: TestSite) -> None:
    """A capture's own policy (404s too, min size) and WARC prefix win over the back
    end's; ``dedup_ok=False`` keeps a capture out of the index."""
    index = tmp_path / "dedup.sqlite"
    backend = backend_for(tmp_path, "p", index, dedup_policy=DedupPolicy(min_size=10_000))
    exchanges = fetch_all(site, ["/a.html", "/a.html", "/missing.png", "/missing.png",
                                 "/copy.html", "/copy.html", "/copy.html"], backend)  # fmt: skip
    open_policy = DedupPolicy(statuses=frozenset({200, 404}))

    async def go() -> list[object]:
        out = [await backend.archive(exchanges[0], CaptureMeta()),  # too small: stored
               await backend.archive(exchanges[1], CaptureMeta())]
        for ex in exchanges[2:4]:  # 404s deduplicated under the capture's own policy
            out.append(await backend.archive(ex, CaptureMeta(dedup_policy=open_policy,
                                                             warc_prefix="NOTFOUND")))
        out.append(await backend.archive(exchanges[4], CaptureMeta(
            dedup_policy=open_policy, dedup_ok=False)))
        for ex in exchanges[5:]:
            out.append(await backend.archive(ex, CaptureMeta(dedup_policy=open_policy)))
        await backend.aclose()
        return out

    r = asyncio.run(go())
    kinds = [x.revisit_kind for x in r]  # type: ignore[attr-defined]
    # the first /copy.html (dedup-ok false) is not an original, so the second one is
    # stored in full too, and the third is a revisit of the second
    assert kinds == [None, None, None, "digest", None, None, "digest"]
    assert [x.indexed_as_original for x in r] == [  # type: ignore[attr-defined]
        False, False, True, False, False, True, False]
    assert r[6].revisit_of.record_id == r[5].first.record_id  # type: ignore[attr-defined]
    names = sorted(p.name for p in (tmp_path / "p" / "warcs").iterdir())
    assert [n.split("-")[0] for n in names] == ["NOTFOUND", "P"]
    assert all(check_file(tmp_path / "p" / "warcs" / n).ok for n in names)
    with pytest.raises(CaptureError):
        asyncio.run(backend.archive(exchanges[0], CaptureMeta()))


def test_hybrid_series_puts_media_in_uncompressed_warcs(tmp_path: Path) -> None:
    png = b"\x89PNG\r\n\x1a\n" + bytes(2000)
    pages: dict[str, Page] = {"/i.png": (200, (("Content-Type", "image/png"),), png),
                              "/p.html": (200, (("Content-Type", "text/html"),), BODY)}
    backend = WarcCaptureBackend(CaptureConfig(series=SeriesConfig(
        tmp_path / "w", prefix="HY", hybrid=True), crawl_log=tmp_path / "crawl.log"))  # fmt: skip
    assert is_already_compressed("image/png")
    with TestSite(pages) as s:
        exchanges = fetch_all(s, ["/i.png", "/p.html"], backend)
    results = archive_all(backend, exchanges)
    paths = [r.first.path for r in results]  # type: ignore[attr-defined]
    assert paths[0].endswith(".warc") and paths[1].endswith(".warc.gz")
    assert all(check_file(p).ok for p in paths)
