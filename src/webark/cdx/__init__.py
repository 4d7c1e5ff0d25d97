"""L2: CDX lines (classic CDX 11/9 fields, CDXJ, the revised "ng" format) and the
WARC → CDX indexer (a pure function from a record stream to CDX lines)."""
