"""Heritrix crawl.log lines, field for field (layer L1: imports only :mod:`webark.core`).

webark writes Heritrix 3's crawl.log layout so that existing tools read our logs, and
reads Heritrix 1.x and 3.x logs (see :mod:`webark.crawllog.parse` for how the versions
differ). One line per finished URI::

    2018-11-26T14:27:48.334Z   200         99 http://h/robots.txt P http://h/ text/plain
    #001 20181126142747558+257 sha1:SCPACWGYWQ74JSN56C25WZMMJDDADNFO - ip:172.19.0.3
    {"contentSize":331,"warcFilename":"…warc.gz","warcFileOffset":771}

(one line in the file). Columns: log time, fetch status, size, URI, hop path, via, MIME
type, worker thread, fetch start+duration, digest, source tag, annotations, optional
JSON extra info.

* :func:`parse_line` → :class:`CrawlLogLine` (raises :class:`CrawlLogError` naming the
  field and column), :func:`format_line` writes it back byte for byte.
* :func:`iter_crawl_log` reads a file and yields ``(line_number, line or error)``.
* Status codes: :func:`status_meaning`, :data:`HERITRIX_STATUS`
  (:mod:`webark.crawllog.status` has the table); annotations:
  :func:`parse_duplicate`, :class:`DuplicateOf` (:mod:`webark.crawllog.annotations`).
"""

from webark.crawllog.annotations import (
    DuplicateKind,
    DuplicateOf,
    annotation_value,
    join_annotations,
    parse_duplicate,
    split_annotations,
)
from webark.crawllog.format import format_fetch_timestamp, format_line, format_log_timestamp
from webark.crawllog.line import CrawlLogLine, extra_info_json
from webark.crawllog.parse import (
    FIELD_NAMES,
    CrawlLogError,
    iter_crawl_log,
    parse_line,
    read_crawl_log,
)
from webark.crawllog.status import (
    DISREGARDED_STATUSES,
    HERITRIX_STATUS,
    StatusInfo,
    is_disregarded_status,
    is_failure_status,
    status_meaning,
    status_name,
)

__all__ = [
    "DISREGARDED_STATUSES",
    "FIELD_NAMES",
    "HERITRIX_STATUS",
    "CrawlLogError",
    "CrawlLogLine",
    "DuplicateKind",
    "DuplicateOf",
    "StatusInfo",
    "annotation_value",
    "extra_info_json",
    "format_fetch_timestamp",
    "format_line",
    "format_log_timestamp",
    "is_disregarded_status",
    "is_failure_status",
    "iter_crawl_log",
    "join_annotations",
    "parse_duplicate",
    "parse_line",
    "read_crawl_log",
    "split_annotations",
    "status_meaning",
    "status_name",
]
