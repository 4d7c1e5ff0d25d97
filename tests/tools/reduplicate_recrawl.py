"""A small crawl and its recrawl written with webark's WarcWriter, for the reduplicate
and revisit-refs tests: the recrawl deduplicates against the first crawl by URL, by
digest only (another URL, URL-agnostic), with a 304 (server-not-modified), a chunked
body, an empty body, and one revisit whose original is nowhere."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

from webark.core.digests import digest_label
from webark.warc.builders import Original, RecordBuilder
from webark.warc.record import WarcRecord
from webark.warc.writer import WarcWriter

T1 = datetime(2024, 5, 1, 12, 0, 0, tzinfo=UTC)
T2 = datetime(2025, 5, 1, 12, 0, 0, tzinfo=UTC)


def http_response(body: bytes, *, ctype: str = "text/html", chunked: bool = False,
                  extra: str = "") -> bytes:
    if chunked:
        half = len(body) // 2
        framed = b"".join(
            f"{len(p):x}\r\n".encode() + p + b"\r\n" for p in (body[:half], body[half:]) if p
        ) + b"0\r\n\r\n"
        head = f"HTTP/1.1 200 OK\r\nContent-Type: {ctype}\r\nTransfer-Encoding: chunked\r\n"
        return (head + extra + "\r\n").encode() + framed
    head = f"HTTP/1.1 200 OK\r\nContent-Type: {ctype}\r\nContent-Length: {len(body)}\r\n"
    return (head + extra + "\r\n").encode() + body


def http_request(url: str) -> bytes:
    path = "/" + url.split("/", 3)[3] if url.count("/") >= 3 else "/"
    host = url.split("/")[2]
    return f"GET {path} HTTP/1.1\r\nHost: {host}\r\nUser-Agent: webark-test\r\n\r\n".encode()


@dataclass
class Recrawl:
    """Where the two crawls are and what the test needs to know about them."""

    crawl1: Path
    crawl2: Path
    bodies: dict[str, bytes] = field(default_factory=dict)  # URL (crawl 1) -> payload
    originals: dict[str, WarcRecord] = field(default_factory=dict)  # URL -> crawl-1 record
    revisit_source: dict[str, str] = field(default_factory=dict)  # crawl-2 URL -> crawl-1 URL
    missing_uri: str = "http://site.test/gone"
    not_modified_uri: str = "http://site.test/p4"


def _clock(start: datetime):  # type: ignore[no-untyped-def]
    t = [start]

    def now() -> datetime:
        t[0] += timedelta(seconds=1)
        return t[0]

    return now


def write_recrawl(root: Path) -> Recrawl:
    """Write ``root/crawl1/*.warc.gz`` and ``root/crawl2/*.warc.gz``."""
    out = Recrawl(root / "crawl1", root / "crawl2")
    b1 = RecordBuilder(clock=_clock(T1))
    with WarcWriter(out.crawl1, prefix="CRAWL1", builder=b1) as w:
        pages = {f"http://site.test/p{i}": f"<html>page {i} {'x' * (40 * i)}</html>".encode()
                 for i in range(6)}
        pages["http://site.test/chunked"] = b"chunked body " * 50
        pages["http://site.test/empty"] = b""
        for url, body in pages.items():
            resp = http_response(body, chunked=url.endswith("chunked"),
                                 extra='ETag: "v1"\r\n' if url.endswith("p4") else "")
            recs = w.write(*b1.exchange(url, resp, http_request(url), ip_address="127.0.0.1"))
            out.bodies[url] = body
            out.originals[url] = recs[0]
    b2 = RecordBuilder(clock=_clock(T2))

    def orig(url: str) -> Original:
        r = out.originals[url]
        return Original(r.target_uri or url, r.headers.date_str or "", r.record_id,
                        r.headers.payload_digest)

    with WarcWriter(out.crawl2, prefix="CRAWL2", builder=b2) as w:
        for i in range(3):  # same URL, same payload
            url = f"http://site.test/p{i}"
            w.write(*b2.exchange(url, http_response(out.bodies[url], extra="X-Visit: 2\r\n"),
                                 http_request(url), original=orig(url)))
            out.revisit_source[url] = url
        # URL-agnostic: a mirror serves p3's payload
        mirror = "http://mirror.test/copy-of-p3"
        w.write(*b2.exchange(mirror, http_response(out.bodies["http://site.test/p3"]),
                             http_request(mirror), original=orig("http://site.test/p3")))
        out.revisit_source[mirror] = "http://site.test/p3"
        # 304 Not Modified
        url = out.not_modified_uri
        head = b'HTTP/1.1 304 Not Modified\r\nETag: "v1"\r\nCache-Control: max-age=60\r\n\r\n'
        w.write(*b2.exchange(url, head, http_request(url), original=orig(url)))
        out.revisit_source[url] = url
        # chunked again, and empty again
        for url in ("http://site.test/chunked", "http://site.test/empty"):
            w.write(*b2.exchange(url, http_response(out.bodies[url],
                                                     chunked=url.endswith("chunked")),
                                 http_request(url), original=orig(url)))
            out.revisit_source[url] = url
        # changed content: a new response
        url = "http://site.test/p5"
        w.write(*b2.exchange(url, http_response(b"<html>changed</html>"), http_request(url)))
        # a revisit whose original is in no WARC of the collection
        lost = b"<html>only in a lost WARC</html>"
        w.write(*b2.exchange(
            out.missing_uri, http_response(lost), http_request(out.missing_uri),
            original=Original(out.missing_uri, "2020-01-01T00:00:00Z", None,
                              digest_label(lost)),
        ))
    return out
