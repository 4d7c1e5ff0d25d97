"""The client-side replay script (``client.js``, shipped as package data).

The replay app inserts it into every rewritten HTML page after a configuration
``<script>`` (see :func:`client_config_script`); it wraps the browser APIs through
which a page builds URLs at run time (fetch, XMLHttpRequest, history, window.open,
element URL setters, setAttribute, innerHTML, document.write …) so that they resolve
against the page's original URL and point into the archive. Our own code, no
dependencies; see the comment at the top of ``client.js`` for what it covers.
"""

from __future__ import annotations

import json
from functools import lru_cache
from importlib import resources

__all__ = ["client_config_script", "client_script"]


@lru_cache(maxsize=1)
def client_script() -> str:
    """The JavaScript source of ``webark/rewrite/client.js`` (UTF-8 text, read once).

    Raises:
        FileNotFoundError: the package was installed without its data files (the
            ``package-data`` entry ``webark = ["rewrite/*.js"]`` is missing).
    """
    return resources.files("webark.rewrite").joinpath("client.js").read_text(encoding="utf-8")


def client_config_script(prefix: str, timestamp: str, url: str, modifier: str = "") -> str:
    """``<script>window.__webark = {...};</script>``: the configuration ``client.js``
    reads. JSON with every non-ASCII character and ``<``, ``>``, ``&`` escaped, so the
    text is ASCII and cannot end the script element early, whatever the page encoding.

    >>> client_config_script("/c/", "2014", "http://a.org/</script>")[-61:]
    '"http://a.org/\\\\u003c/script\\\\u003e", "modifier": ""};</script>'
    """
    cfg = json.dumps({"prefix": prefix, "timestamp": timestamp, "url": url,
                      "modifier": modifier}, ensure_ascii=True)
    cfg = cfg.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    return f"<script>window.__webark = {cfg};</script>"
