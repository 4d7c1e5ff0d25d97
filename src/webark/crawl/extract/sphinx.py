"""Pages named by a Sphinx search index (``searchindex.js``), as speculative links (hop
``X``).

Sphinx, the generator behind docs.python.org, Read the Docs and thousands of other
documentation sites, writes ``searchindex.js`` as one call::

    Search.setIndex({"docnames": ["about", "library/os", ...], ...})

Its client-side search builds the link of a result as ``URL_ROOT + docname +
LINK_SUFFIX`` (``sphinx/themes/basic/static/searchtools.js``). Some pages of a Sphinx
site are linked from nowhere else (``:orphan:`` pages; four in the python3-doc tree
of Debian's ``python3-doc``), so a crawler that follows only links never reaches them,
while a reader can, through the search box. This extractor makes those result links.

Rules:

* only a response whose path ends in ``/searchindex.js`` (or is ``searchindex.js``)
  and whose text starts with ``Search.setIndex(`` is read; its argument must be a JSON
  object with a ``docnames`` list of strings, else nothing is extracted;
* each docname is resolved against the URL of ``searchindex.js`` (Sphinx writes it
  at the root of the output, which is ``URL_ROOT``) with the suffix ``.html``, the
  ``LINK_SUFFIX`` of the ``html`` builder, the default. The ``dirhtml`` builder's
  ``/`` suffix is not guessed: ``documentation_options.js``, which holds it, is a
  different response. A wrong guess costs a 404 per docname, logged as such;
* the context is ``"js sphinx-docname"``; at most :data:`MAX_DOCNAMES` are taken
  (the extraction's own ``maxOutlinks`` cap applies afterwards as for every response);
* the generic JavaScript scan (:mod:`webark.crawl.extract.js`) is not run on a Sphinx
  index (its strings are search terms); a ``searchindex.js`` that is not one is
  scanned like any script.
"""

from __future__ import annotations

import json
from collections.abc import Iterable

from webark.crawl.extract import Link, decode_text, resolve
from webark.crawl.extract.js import is_script, is_sphinx_index_url, js_links

__all__ = ["MAX_DOCNAMES", "SphinxSearchIndexExtractor", "sphinx_docname_links"]

MAX_DOCNAMES = 100_000
"""Docnames read from one index (python3-doc has 530; the largest Sphinx sites a few
thousand)."""

_CALL = "Search.setIndex("
_SUFFIX = ".html"


def sphinx_docname_links(index_url: str, text: str) -> list[Link]:
    """Links (hop ``X``) to the pages listed in a Sphinx ``searchindex.js``.

    Args:
        index_url: the URL ``searchindex.js`` was fetched from.
        text: the script's text.

    Returns an empty list when ``text`` is not a Sphinx search index (no error).

    >>> [lk.url for lk in sphinx_docname_links("http://d/searchindex.js",
    ...     'Search.setIndex({"docnames": ["index", "lib/os"], "terms": {}})')]
    ['http://d/index.html', 'http://d/lib/os.html']
    """
    return _docname_links(index_url, _docnames(text) or [])


def _docname_links(index_url: str, names: list[object]) -> list[Link]:
    links: list[Link] = []
    for name in names[:MAX_DOCNAMES]:
        if not isinstance(name, str) or not name or name.startswith("/"):
            continue
        url = resolve(index_url, name + _SUFFIX)
        if url is not None:
            links.append(Link(url, "X", "js sphinx-docname"))
    return links


def _docnames(text: str) -> list[object] | None:
    """The ``docnames`` list of a Sphinx search index, None when ``text`` is not one."""
    body = text.lstrip("\ufeff \t\r\n")
    if not body.startswith(_CALL):
        return None
    body = body[len(_CALL) :].rstrip(" \t\r\n;")
    if not body.endswith(")"):
        return None
    try:
        index = json.loads(body[:-1])
    except ValueError:
        return None
    names = index.get("docnames") if isinstance(index, dict) else None
    return names if isinstance(names, list) else None


class SphinxSearchIndexExtractor:
    """Extractor for Sphinx's ``searchindex.js`` (see the module docstring)."""

    def handles(self, mime: str, url: str) -> bool:
        """True for a path ending in ``/searchindex.js`` served as a script (a script
        media type, or an unknown one); the JavaScript extractor leaves it to this one."""
        return is_sphinx_index_url(url) and is_script(mime, url)

    def extract(
        self, base_url: str, content: bytes, mime: str, charset: str | None
    ) -> Iterable[Link]:
        """The docname links of the index (UTF-8 unless the HTTP charset says otherwise;
        Sphinx writes UTF-8); the generic script scan when it is not a Sphinx index."""
        text = decode_text(content, charset or "utf-8", sniff=False)
        names = _docnames(text)
        if names is None:
            return list(js_links(base_url, text))
        return _docname_links(base_url, names)
