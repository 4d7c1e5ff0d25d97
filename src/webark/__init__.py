"""webark: a web archiving system (crawl, WARC, dedup, CDX index, replay).

Layers (see DESIGN.md): ``webark.core`` (L0) < ``webark.warc``, ``webark.url``,
``webark.crawllog`` (L1) < ``webark.cdx`` … (L2) < ``webark.index`` … (L3) <
``webark.crawl`` (L4) < ``webark.apps``, ``webark.cli`` (L5).
"""

__version__ = "0.1.0"
