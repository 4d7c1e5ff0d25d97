"""Post-acquisition tools (layer L4): work on WARCs, crawl.logs and collections after a
crawl — crawl.log → revisit WARCs, extraction into a file tree, archive statistics,
reduplication and revisit-reference reports (issue 6).

Imports only from :mod:`webark.core`, :mod:`webark.warc`, :mod:`webark.url`,
:mod:`webark.crawllog`, :mod:`webark.cdx`, :mod:`webark.fetch`, :mod:`webark.robots`,
:mod:`webark.index` and :mod:`webark.dedup`; the CLI (:mod:`webark.cli`) wires them up.
"""
