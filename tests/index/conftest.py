"""Fixtures of the index tests: the corpus WARCs indexed once per session with the real
indexer (webark.cdx.indexer), in both flavours."""

from __future__ import annotations

from pathlib import Path

import pytest

from webark.cdx.indexer import IndexOptions, index_file
from webark.cdx.line import CdxLine


def project(line: CdxLine) -> tuple[object, ...]:
    """The fields every index format keeps (CDXJ drops record_type/date/surt). Also a
    fixture (``proj``), as test modules here are not a package."""
    return (
        line.urlkey,
        line.timestamp,
        line.url,
        line.mime,
        line.status,
        line.digest,
        line.length,
        line.offset,
        line.filename,
    )


@pytest.fixture(scope="session")
def warcs(corpus: Path) -> list[Path]:
    """pywb/warcs/*.warc.gz: 10 WARCs, 199 index lines (171 of them iana.warc.gz)."""
    return sorted((corpus / "pywb" / "warcs").glob("*.warc.gz"))


@pytest.fixture(scope="session")
def corpus_lines(warcs: list[Path]) -> dict[str, list[CdxLine]]:
    """WARC name → its CDX lines (cdxj-indexer flavour, ``index_file``'s default)."""
    return {p.name: list(index_file(p)) for p in warcs}


@pytest.fixture(scope="session")
def collection_lines(warcs: list[Path]) -> dict[str, list[CdxLine]]:
    """WARC name → its CDX lines as a collection indexes them by default (cdxj-indexer
    flavour, POST/PUT bodies folded into the key: ``post_append = true``)."""
    return {p.name: list(index_file(p, IndexOptions(post_append=True))) for p in warcs}


@pytest.fixture(scope="session")
def iana_pywb_lines(corpus: Path) -> list[CdxLine]:
    """iana.warc.gz indexed the pywb way (matches pywb/cdx/iana.cdx byte for byte)."""
    return list(index_file(corpus / "pywb/warcs/iana.warc.gz", IndexOptions.for_format("cdx11")))


@pytest.fixture(scope="session")
def proj():  # type: ignore[no-untyped-def]
    """:func:`project` for the test modules."""
    return project
