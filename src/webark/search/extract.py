"""Records → search documents: which captures are searchable and what their text is.

A record becomes a :class:`~webark.search.document.SearchDocument` when it is a
``response`` (or an ARC record) with an HTTP status 2xx other than 204 and 206 (no or
partial body) and a payload of one of the text kinds: HTML (``text/html``,
``application/xhtml+xml``), PDF (``application/pdf``; needs pypdf) or plain text
(``text/plain``). A record without ``Content-Type`` is sniffed from its first bytes
(``%PDF-``, ``<!doctype html``/``<html``). Revisits carry no payload of their own and
get no document: the capture list (``/{coll}/*/{url}``) links every capture of a URL.

Payloads: at most :data:`MAX_PAYLOAD` bytes as stored and once the content coding
(gzip, deflate, br) is undone (:func:`webark.warc.payload.decode_bounded`); larger ones
are skipped. HTML is decoded in the charset a browser picks (BOM, the Content-Type
charset, ``<meta charset>``), else UTF-8, else windows-1252 (WHATWG's default for
undeclared legacy pages); plain text likewise without the ``<meta>`` step.

Every record that is skipped is counted by reason (:class:`Skips`), so ``search build``
can say what it left out; nothing raises for bad content.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime
from urllib.parse import urlsplit

from webark.core.digests import Digest, digest_label
from webark.core.errors import DigestError
from webark.core.timestamps import format_w3c_date, to_timestamp14
from webark.rewrite.charset import html_charset, python_codec
from webark.search.document import (
    MAX_TEXT,
    SearchDocument,
    clean_text,
    content_type_norm,
    document_id,
)
from webark.search.html_text import html_text, html_title
from webark.search.pdf_text import PdfUnavailable, PdfUnreadable, pdf_text
from webark.url import canonicalize, registered_domain
from webark.warc.payload import decode_bounded
from webark.warc.record import WarcRecord

#: Largest payload made into a document, in bytes (as stored and once decoded): the
#: replay app's rewrite limit (20 MiB).
MAX_PAYLOAD = 20 << 20
_TEXT_KINDS = frozenset({"html", "pdf", "text"})


@dataclass
class Skips:
    """Records left out, by reason (``not-response``, ``bad-url``, ``status``, ``type``,
    ``too-large``, ``coding``, ``pdf-unreadable``, ``pdf-unavailable``, ``no-date``,
    ``empty``), and the first few problems with file and offset."""

    reasons: Counter[str] = field(default_factory=Counter)
    problems: list[str] = field(default_factory=list)

    def add(self, reason: str, problem: str | None = None) -> None:
        self.reasons[reason] += 1
        if problem is not None and len(self.problems) < 100:
            self.problems.append(problem)

    def merge(self, other: Skips) -> None:
        self.reasons.update(other.reasons)
        self.problems.extend(other.problems[: max(0, 100 - len(self.problems))])


def _sniff(head: bytes) -> str:
    start = head.lstrip()[:512].lower()
    if start.startswith(b"%pdf-"):
        return "application/pdf"
    if start.startswith((b"<!doctype html", b"<html")):
        return "text/html"
    return ""


def _charset_param(content_type: str | None) -> str | None:
    for part in (content_type or "").split(";")[1:]:
        k, _, v = part.partition("=")
        if k.strip().lower() == "charset":
            return v.strip().strip("\"'") or None
    return None


def _decode(body: bytes, codec: str | None) -> str:
    if codec:
        try:
            return body.decode(codec, "replace")
        except LookupError:
            pass
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError:
        return body.decode("windows-1252", "replace")


def _digest(rec: WarcRecord, body: bytes) -> str:
    declared = rec.headers.payload_digest
    if declared:
        try:
            return Digest.parse(declared).label()
        except DigestError:
            pass
    return digest_label(body)


def capture_title(rec: WarcRecord) -> str:
    """The title of an HTML ``response`` record as its search document would have it
    (:func:`document_for`: same payload limit, content decoding and charset), ``""``
    for a record without one; never raises for bad content."""
    http = rec.http
    if rec.type != "response" or http is None:
        return ""
    if rec.content_length - http.head_length > MAX_PAYLOAD:
        return ""
    decoded = decode_bounded(rec.payload(), http.content_encoding, MAX_PAYLOAD)
    if not decoded.complete or decoded.coding_error:
        return ""
    data = decoded.data
    declared = python_codec(_charset_param(http.get("Content-Type")))
    return clean_text(html_title(_decode(data, html_charset(data, declared)))[:1000])


def document_for(rec: WarcRecord, *, warc_name: str, collection: str, skips: Skips,
                 index_time: str | None = None) -> SearchDocument | None:  # fmt: skip
    """The search document of ``rec`` (read from the WARC called ``warc_name`` in the
    collection ``collection``), or None with the reason counted in ``skips`` (module
    docstring). ``index_time``: W3C-DTF, default now."""
    where = f"{warc_name} @ {rec.offset}"
    if rec.type != "response":
        skips.add("not-response")
        return None
    http = rec.http
    url = rec.target_uri or ""
    if http is None or http.status is None or not url.startswith(("http://", "https://")):
        skips.add("not-response")
        return None
    if clean_text(url) != url:
        skips.add("bad-url", f"{where}: control characters in the URL {url!r}")
        return None
    if not 200 <= http.status < 300 or http.status in (204, 206):
        skips.add("status")
        return None
    if rec.content_length - http.head_length > MAX_PAYLOAD:
        skips.add("too-large")
        return None
    raw_type = http.get("Content-Type")
    body = rec.payload()
    decoded = decode_bounded(body, http.content_encoding, MAX_PAYLOAD)
    if not decoded.complete:
        skips.add("too-large")
        return None
    if decoded.coding_error:
        skips.add("coding", f"{where}: Content-Encoding {http.content_encoding!r} not undone")
        return None
    data = decoded.data
    mime = http.mime or _sniff(data[:1024])
    kind = content_type_norm(mime)
    if kind not in _TEXT_KINDS or (kind == "text" and mime != "text/plain"):  # not CSS, JS
        skips.add("type")
        return None
    date = rec.date
    if date is None:
        skips.add("no-date", f"{where}: no usable WARC-Date")
        return None
    title, lang = "", ""
    links: tuple[str, ...] = ()
    if kind == "html":
        declared = python_codec(_charset_param(raw_type))
        page = html_text(_decode(data, html_charset(data, declared)), url,
                         content_language=http.get("Content-Language"))  # fmt: skip
        title, text, lang, links = page.title, "\n".join(page.lines), page.language, page.links
    elif kind == "pdf":
        try:
            pdf = pdf_text(data)
        except PdfUnavailable:
            skips.add("pdf-unavailable")
            return None
        except PdfUnreadable as exc:
            skips.add("pdf-unreadable", f"{where}: {exc}")
            return None
        title, text = pdf.title, pdf.text
    else:
        text = _decode(data, python_codec(_charset_param(raw_type)))
    if not text.strip() and not title:
        skips.add("empty")
        return None
    host = (urlsplit(url).hostname or "").lower()
    ts = to_timestamp14(date)
    when = date.astimezone(UTC)
    return SearchDocument(
        id=document_id(ts, url), url=url, url_norm=canonicalize(url), host=host,
        domain=registered_domain(host) if host else "", crawl_date=format_w3c_date(when),
        crawl_year=when.year, wayback_date=ts, title=clean_text(title[:1000]),
        content=clean_text(text[:MAX_TEXT]),
        content_type=mime, content_type_norm=kind, content_language=lang,
        status_code=http.status, record_type=rec.type, hash=_digest(rec, body),
        links=links, links_hosts=_hosts(links), source_file_path=warc_name,
        source_file_offset=rec.offset, collection=collection,
        index_time=index_time or format_w3c_date(datetime.now(UTC)),
    )  # fmt: skip


def _hosts(links: tuple[str, ...]) -> tuple[str, ...]:
    seen: dict[str, None] = {}
    for link in links:
        try:
            h = (urlsplit(link).hostname or "").lower()
        except ValueError:
            continue
        if h:
            seen.setdefault(h, None)
    return tuple(seen)
