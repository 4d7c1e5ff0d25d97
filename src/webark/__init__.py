"""webark: a web archiving system (crawl, WARC, dedup, CDX index, replay).

Layers (see DESIGN.md): ``webark.core`` (L0) < ``webark.warc``, ``webark.url``,
``webark.crawllog`` (L1) < ``webark.cdx`` … (L2) < ``webark.index`` … (L3) <
``webark.capture`` (L4) < ``webark.crawl``, ``webark.tools`` (L5) < ``webark.apps``,
``webark.cli`` (L6).
"""

__version__ = "0.2.0"
"""The version of webark, and its only source: pyproject.toml reads it from here
(``[tool.setuptools.dynamic]``), the CLI prints it (``webark --version``), warcinfo
records name it (``software: webark/VERSION``). CHANGELOG.md has an entry per version."""
