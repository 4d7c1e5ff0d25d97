"""A search document: one capture's text and metadata, under webarchive-discovery's
field names (the UKWA ``warc-indexer`` Solr schema, which SolrWayback also reads), so
that :meth:`SearchDocument.to_solr` can be posted to Solr or OpenSearch unchanged.

Fields and their Solr types (``schema.xml`` of webarchive-discovery, Solr 7+):

=====================  =========  ==================================================
``id``                 string     ``{wayback_date}/{md5 hex of url}``
``url``                string     the archived URL (WARC-Target-URI)
``url_norm``           string     canonical form (IA canonicalization, the URL behind
                                  the CDX key; :func:`webark.url.canonicalize`)
``host``, ``domain``   string     lowercase host, its registered domain (PSL)
``crawl_date``         date       ``2014-01-26T20:08:26Z`` (WARC-Date)
``crawl_year``         int
``wayback_date``       long       ``20140126200826``
``title``              text       ``<title>`` (HTML) or the PDF's Title
``content``            text       the extracted text (at most :data:`MAX_TEXT` chars)
``content_type``       string     the served media type, without parameters
``content_type_norm``  string     html, image, audio, video, pdf, word, excel, text,
                                  other
``content_language``   string     declared language, primary subtag (``en``)
``status_code``        int        HTTP status
``record_type``        string     WARC record type (``response``)
``hash``               string     payload digest, ``sha1:BASE32``
``links``              string[]   outlinks of the page (absolute http(s) URLs)
``links_hosts``        string[]   their hosts
``source_file_path``   string     the WARC's name (the CDX ``filename``; where it lives
                                  is the collection's location map)
``source_file_offset`` long       the record's offset in it
``collection``         string     the collection's name
``index_time``         date       when the document was made
=====================  =========  ==================================================
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import asdict, dataclass, fields

#: Longest ``content`` kept, in characters: webarchive-discovery's default
#: ``text_max_length`` (512 Ki). Text past it is not searchable.
MAX_TEXT = 512 * 1024

#: ``content_type_norm`` values (webarchive-discovery).
NORMS = ("html", "image", "audio", "video", "pdf", "word", "excel", "text", "other")

_WORD = ("application/msword", "application/vnd.openxmlformats-officedocument.wordprocessing",
         "application/vnd.oasis.opendocument.text", "application/rtf")  # fmt: skip
_EXCEL = ("application/vnd.ms-excel", "application/vnd.openxmlformats-officedocument.spreadsheet",
          "application/vnd.oasis.opendocument.spreadsheet", "text/csv")  # fmt: skip


_CONTROLS = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f]")


def clean_text(text: str) -> str:
    """``text`` without C0 control characters other than tab and newlines (so that
    search highlight markers never come from a document, and PostgreSQL takes it: no
    NUL)."""
    return _CONTROLS.sub("", text) if _CONTROLS.search(text) else text


def content_type_norm(media_type: str) -> str:
    """webarchive-discovery's coarse type of a media type (lowercase, no parameters):
    ``text/html`` → ``html``, ``application/pdf`` → ``pdf``, ``image/png`` → ``image``,
    ``text/plain`` → ``text``, …, else ``other``."""
    t = media_type.strip().lower()
    if t in ("text/html", "application/xhtml+xml"):
        return "html"
    if t in ("application/pdf", "application/x-pdf"):
        return "pdf"
    if t.startswith(_WORD):
        return "word"
    if t.startswith(_EXCEL):
        return "excel"
    for major in ("image", "audio", "video"):
        if t.startswith(major + "/"):
            return major
    if t.startswith("text/"):
        return "text"
    return "other"


def document_id(wayback_date: str, url: str) -> str:
    """``{wayback_date}/{md5 hex of url}`` (the ``id`` of the module docstring)."""
    md5 = hashlib.md5(url.encode("utf-8", "surrogateescape"), usedforsecurity=False)
    return f"{wayback_date}/{md5.hexdigest()}"


@dataclass(frozen=True, slots=True)
class SearchDocument:
    """One searchable capture (fields in the module docstring; ``links`` and
    ``links_hosts`` are tuples, dates strings as stored)."""

    id: str
    url: str
    url_norm: str
    host: str
    domain: str
    crawl_date: str
    crawl_year: int
    wayback_date: str
    title: str
    content: str
    content_type: str
    content_type_norm: str
    content_language: str
    status_code: int
    record_type: str
    hash: str
    links: tuple[str, ...]
    links_hosts: tuple[str, ...]
    source_file_path: str
    source_file_offset: int
    collection: str
    index_time: str

    def to_solr(self) -> dict[str, object]:
        """The document as Solr/OpenSearch take it: every field, JSON types as the
        schema wants them (``wayback_date`` a number, lists for the multi-valued link
        fields, empty strings left out so that Solr's defaults apply)."""
        d: dict[str, object] = {}
        for k, v in asdict(self).items():
            if v == "" or v == ():
                continue
            d[k] = list(v) if isinstance(v, tuple) else v
        d["wayback_date"] = int(self.wayback_date)
        return d


#: The field names, in schema order.
FIELDS: tuple[str, ...] = tuple(f.name for f in fields(SearchDocument))
#: The fields a backend stores in its documents table, in this order (the WARC's name,
#: ``source_file_path``, is kept once per WARC in its files table).
STORED_FIELDS: tuple[str, ...] = tuple(f for f in FIELDS if f != "source_file_path")
