"""L3: index stores behind one query interface (:class:`IndexSource`): SQLite (default,
incremental), sorted CDX/CDXJ files (binary search), ZipNum (read), merged sources."""
