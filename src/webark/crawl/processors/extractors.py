"""``extractors``: the outlinks of a fetched URI (Heritrix's extractor processors: HTML,
CSS, JS, sitemaps, feeds, Sphinx search index, ``Location`` → ``R`` hop;
:mod:`webark.crawl.extract`).

Extraction runs in worker processes (:class:`~webark.crawl.extract.pool.ExtractPool`)
when the crawl has any, so fetching and extraction overlap. The body read is the entity
body with transfer and content codings undone, its first 20 MiB at most (the WARC keeps
the wire bytes): a decompression bomb is cut there (:mod:`webark.fetch.body`).

At most the job's ``max_outlinks`` links are kept per document (Heritrix's
``maxOutlinks``, 6000): the others are counted in the URI's crawl.log annotation
``dol:N`` (discarded outlinks, as Heritrix writes it).

A 304 has no body: the links of a not-modified resource are those of its last capture,
read back from its WARC record when the file is at hand
(:meth:`~webark.capture.WarcCaptureBackend.last_capture_record`), so a recrawl with
conditional requests still reaches what an unchanged page or style sheet links to
(Heritrix extracts nothing from a 304).
"""

from __future__ import annotations

import logging

from webark.crawl.context import CrawlContext
from webark.crawl.extract import Outlinks, extract_links
from webark.crawl.extract.pool import ExtractPool
from webark.crawl.processing import UriProcessing
from webark.fetch.body import decoded_body
from webark.warc.payload import MAX_DECODED_BYTES, decode_bounded

__all__ = ["Extractors"]

log = logging.getLogger(__name__)


class Extractors:
    """The ``extractors`` processor (module docstring).

    Args:
        ctx: the crawl.
        pool: the extraction worker processes, or None to extract in process.
    """

    name = "extractors"

    def __init__(self, ctx: CrawlContext, pool: ExtractPool | None) -> None:
        self.ctx = ctx
        self.pool = pool

    def should_process(self, p: UriProcessing) -> bool:
        return p.fetched

    async def process(self, p: UriProcessing) -> None:
        links = await self._links(p)
        if links.dropped:
            p.annotations.append(f"dol:{links.dropped}")
        p.links = links

    async def _links(self, p: UriProcessing) -> Outlinks:
        ex = p.exchange
        assert ex is not None
        uri = p.curi.uri
        limit = self.ctx.job.max_outlinks
        if ex.http_status == 304:
            return self._links_of_last_capture(uri, limit)
        if ex.payload_size > MAX_DECODED_BYTES and ex.header("Location") is None:
            return Outlinks()
        try:
            body = decoded_body(ex, MAX_DECODED_BYTES).data
            if self.pool is not None:
                return await self.pool.extract(uri, ex.mime, body, ex.headers, limit)
            return extract_links(uri, ex.mime, body, ex.headers, max_links=limit)
        except Exception:
            log.exception("link extraction failed for %s", uri)
            return Outlinks()

    def _links_of_last_capture(self, uri: str, limit: int) -> Outlinks:
        """The links of the last full capture of ``uri`` ([] when it is not at hand)."""
        assert self.ctx.backend is not None
        try:
            rec = self.ctx.backend.last_capture_record(uri)
            if rec is None or rec.http is None:
                return Outlinks()
            head = rec.http
            ctype = next((v for k, v in head.headers if k.lower() == "content-type"), None)
            mime = ctype.split(";", 1)[0].strip().lower() if ctype else None
            body = decode_bounded(  # a bomb captured earlier stays cut (fetch.body)
                rec.payload(), head.content_encoding, MAX_DECODED_BYTES
            ).data
            return extract_links(uri, mime, body, head.headers, max_links=limit)
        except Exception:  # a damaged or moved file: no links, the crawl goes on
            log.exception("could not read the last capture of %s", uri)
        return Outlinks()
