"""CDXJ text of response and revisit records written directly, without a CdxLine.

``webark index`` writes plain CDXJ; for response and revisit records the line can be
formatted straight from the record's values, a few µs less per record than building a
:class:`~webark.cdx.line.CdxLine` and formatting it (bench/README.md). The text is byte
for byte ``format_cdxj(build(e))`` (tests/cdx/test_text_path.py checks every corpus
file); records this path cannot decide alone (no offset, ARC, no usable date) go through
:meth:`RecordIndexer.build <webark.cdx.core.RecordIndexer.build>`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from webark.cdx.compat import mime_cdxj
from webark.cdx.core import cdx_timestamp
from webark.cdx.formats import _SAFE_JSON, _q
from webark.url import cdx_key

if TYPE_CHECKING:
    from webark.cdx.core import Entry, RecordIndexer

__all__ = ["CdxjText"]


class CdxjText:
    """The direct CDXJ text of one indexer's response and revisit records.

    Use :meth:`attach`; the indexer then yields ``str`` lines for those records."""

    __slots__ = ("ix", "quoted_filename")

    def __init__(self, ix: RecordIndexer):
        self.ix = ix
        fn = ix.filename
        self.quoted_filename = "" if not fn or fn == "-" else ', "filename": ' + _q(fn)

    @classmethod
    def attach(cls, ix: RecordIndexer, fmt: str, fields: tuple[str, ...] | None) -> bool:
        """Switch ``ix`` to direct text when ``fmt``/``fields``/the options make a
        response line exactly ``format_cdxj(build(e))`` with no extra field:
        cdxj-indexer compat, default JSON keys, no extra field, key or ng option.
        Returns whether it is on."""
        o = ix.o
        on = (
            fmt == "cdxj"
            and fields is None
            and o.compat == "cdxj-indexer"
            and not ix.extra_fields
            and not (o.scope_keys or o.revisit_refs or o.redirects or o.minimal)
        )
        ix.text = cls(ix) if on else None
        return on

    def response(self, e: Entry) -> str | None:
        """The CDXJ line of a WARC response or revisit record, or None when
        :meth:`~webark.cdx.core.RecordIndexer.build` must decide (problems are reported
        there)."""
        rec = e.rec
        off = rec.offset
        length = rec.length
        if off < 0 or length < 0 or rec.version[:3] == "ARC":
            return None
        h = rec.headers
        ts = cdx_timestamp(h.get("warc-date"))
        if ts is None:
            return None
        ix = self.ix
        head = ix.head(e)
        if e.rtype == "revisit":
            # build(): MIME warc/revisit, status from the HTTP head, no computed digest
            status = (head.status() or "-") if head is not None else "-"
            return self._cdxj(
                e.url, "warc/revisit", status, h.get("warc-payload-digest") or "-", ts, off, length
            )
        mime = status = "-"
        if head is not None:
            ct = head.get(b"content-type")
            mime = mime_cdxj(ct) if ct else "-"
            status = head.status() or "-"
        digest = h.get("warc-payload-digest") or "sha1:" + ix.computed_digest(e)
        return self._cdxj(e.url, mime, status, digest, ts, off, length)

    def _cdxj(
        self, url: str | None, mime: str, status: str, digest: str, ts: str, off: int, length: int
    ) -> str:
        """``format_cdxj`` of the line build() makes from these values (no extra field)."""
        if url:
            if " " in url:
                url = url.replace(" ", "%20")
            key = cdx_key(url)
        else:
            url = key = "-"
        off += self.ix.base
        if (
            url != "-"
            and mime != "-"
            and status != "-"
            and digest != "-"
            and off >= 0
            and _SAFE_JSON.match(url + mime + status + digest)
        ):
            return (
                f'{key} {ts} {{"url": "{url}", "mime": "{mime}", "status": "{status}", '
                f'"digest": "{digest}", "length": "{length}", "offset": "{off}"'
                f"{self.quoted_filename}}}"
            )
        parts = []
        if url != "-":
            parts.append('"url": ' + _q(url))
        if mime != "-":
            parts.append('"mime": ' + _q(mime))
        if status != "-":
            parts.append('"status": ' + _q(status))
        if digest != "-":
            parts.append('"digest": ' + _q(digest))
        parts.append(f'"length": "{length}"')
        if off >= 0:
            parts.append(f'"offset": "{off}"')
        return f"{key} {ts} {{{', '.join(parts)}{self.quoted_filename}}}"
