"""Helpers of the resolution API tests (imported by conftest and the test modules): a
small in-memory IndexSource, failing sources and the sample captures."""

from __future__ import annotations

import bisect
from collections.abc import Iterator

from webark.cdx.line import CdxLine
from webark.index.source import IndexSource, IndexUnavailable, KeyRange, digest_key, in_time
from webark.url import cdx_key

D1 = "sha1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
D2 = "sha1:BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB"
D3 = "sha1:CCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCC"


class MemorySource:
    """An IndexSource over a list of lines kept sorted by ``"urlkey timestamp"`` (what
    the tests use when no store is needed). ``scans`` counts scans started."""

    def __init__(self, lines: list[CdxLine]):
        self.lines = sorted(lines, key=lambda x: f"{x.urlkey} {x.timestamp}".encode())
        self.keys = [f"{x.urlkey} {x.timestamp}".encode() for x in self.lines]
        self.scans = 0

    def scan(self, rng: KeyRange, reverse: bool = False) -> Iterator[CdxLine]:
        self.scans += 1
        lo = bisect.bisect_left(self.keys, rng.start.encode())
        hi = len(self.keys) if rng.end is None else bisect.bisect_left(self.keys, rng.end.encode())
        idx = range(lo, hi) if not reverse else range(hi - 1, lo - 1, -1)
        for i in idx:
            if in_time(rng, self.lines[i].timestamp):
                yield self.lines[i]

    def by_digest(self, digest: str) -> Iterator[CdxLine]:
        want = digest_key(digest)
        for x in self.lines:
            if digest_key(x.digest) == want:
                yield x


class FailingSource:
    """Raises IndexUnavailable when a scan starts, or after ``after`` lines."""

    def __init__(self, inner: IndexSource | None = None, after: int | None = None):
        self.inner = inner
        self.after = after

    def scan(self, rng: KeyRange, reverse: bool = False) -> Iterator[CdxLine]:
        if self.inner is None or self.after is None:
            raise IndexUnavailable("database is down")
        for i, line in enumerate(self.inner.scan(rng, reverse)):
            if i >= self.after:
                raise IndexUnavailable("database went away")
            yield line

    def by_digest(self, digest: str) -> Iterator[CdxLine]:
        raise IndexUnavailable("database is down")


def cap(url: str, ts: str, digest: str = D1, mime: str = "text/html", status: str = "200",
        **kw: object) -> CdxLine:  # fmt: skip
    """One capture of ``url`` at ``ts``."""
    return CdxLine(
        urlkey=cdx_key(url), timestamp=ts, url=url, mime=mime, status=status, digest=digest,
        length=kw.pop("length", 1000), offset=kw.pop("offset", 0),  # type: ignore[arg-type]
        filename=str(kw.pop("filename", "a.warc.gz")), **kw,  # type: ignore[arg-type]
    )  # fmt: skip


def sample_lines() -> list[CdxLine]:
    """27 captures: example.com (and www., sub., other hosts), revisits, one duplicate
    timestamp, query strings, a POST key."""
    out = [
        cap("http://example.com/", "20100101000000", D1, offset=0),
        cap("http://www.example.com/", "20120615120000", D1, offset=100),
        cap("https://example.com/", "20140101000000", D2, offset=200),
        cap(
            "http://example.com/",
            "20140101000100",
            D2,
            "warc/revisit",
            "-",
            offset=300,
            record_type="revisit",
        ),
        cap("http://example.com/", "20160229235959", D3, offset=400),
        cap(
            "http://example.com/",
            "20180101000000",
            D3,
            "warc/revisit",
            "-",
            offset=500,
            record_type="revisit",
        ),
        cap("http://example.com/", "20200101000000", D1, offset=600),
        cap("http://example.com/a", "20110101000000", D1, offset=700),
        cap("http://example.com/a", "20110101000000", D2, offset=710),  # same second twice
        cap("http://example.com/a", "20150101000000", D2, "image/png", offset=800),
        cap("http://example.com/a/b", "20150101000000", D3, offset=900),
        cap("http://example.com/b?y=2&x=1", "20150505050505", D1, offset=1000),
        cap("http://example.com/redirect", "20150505050505", D1, status="302", offset=1100),
        cap("http://sub.example.com/page", "20130303030303", D2, offset=1200),
        cap("http://sub.example.com/page", "20170303030303", D2, offset=1300),
        cap("http://deep.sub.example.com/", "20190101000000", D3, offset=1400),
        cap("http://example.org/", "20150101000000", D1, offset=1500),
        cap("http://example.org/x", "20150101000000", D1, offset=1600),
        cap("http://other.com/", "20150101000000", D3, "application/pdf", offset=1700),
        cap("http://examplea.com/", "20150101000000", D3, offset=1800),
        cap(
            "http://example.com/feed.xml", "20210101000000", D2, "application/rss+xml", offset=1900
        ),
    ]
    for i in range(6):  # a URL with many captures, one per year
        out.append(cap("http://example.com/news", f"20{10 + i:02d}0601000000", D1, offset=2000 + i))
    return out
