"""The WARC → CDX indexer (the public names; the parts live in their own modules).

* :mod:`webark.cdx.options`: :class:`IndexOptions` (what to index and how);
* :mod:`webark.cdx.compat`: the rules of pywb and cdxj-indexer, as objects;
* :mod:`webark.cdx.core`: :func:`index_records`, records → :class:`CdxLine` s (pure);
* :mod:`webark.cdx.pairing`: request/response pairing and POST/PUT folding;
* :mod:`webark.cdx.text`: direct CDXJ text of response records (same bytes);
* :mod:`webark.cdx.file_index`: :class:`FileIndex`, one file (or byte range);
* :mod:`webark.cdx.ranges`: :func:`split_points`, :func:`exact_range` (pure, per range);
* :mod:`webark.cdx.parallel`: :func:`index_file_text`, one file over forked processes.

:mod:`webark.spark` maps :func:`exact_range` over the WARCs of an archive on a cluster.
"""

from __future__ import annotations

from webark.cdx.core import index_records
from webark.cdx.file_index import FileIndex, index_file
from webark.cdx.options import COMPATS, DEFAULT_RECORDS, Compat, IndexOptions
from webark.cdx.parallel import CHUNK_BYTES, PARALLEL_MIN_BYTES, index_file_text
from webark.cdx.ranges import TextChunk, exact_range, split_points

__all__ = [
    "CHUNK_BYTES",
    "COMPATS",
    "DEFAULT_RECORDS",
    "PARALLEL_MIN_BYTES",
    "Compat",
    "FileIndex",
    "IndexOptions",
    "TextChunk",
    "exact_range",
    "index_file",
    "index_file_text",
    "index_records",
    "split_points",
]
