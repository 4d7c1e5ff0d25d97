"""The client-side replay script (``client.js``, ``client_css.js``, ``client_guard.js``,
shipped as package data and served as one script, ``/_webark/client.js``).

The replay app inserts it into every rewritten HTML page after a configuration
``<script>`` (see :func:`client_config_script`). Our own code, no dependencies; each
file's header comment says what it covers:

* ``client.js`` — URLs a page builds at run time: it wraps the browser APIs through
  which they reach the network (fetch, XMLHttpRequest, history, window.open, element
  URL setters, setAttribute, innerHTML, document.write …) so that they resolve against
  the page's original URL and point into the archive;
* ``client_css.js`` — CSS that enters the page at run time (``<style>`` text, inline
  style, the CSSOM, the Typed OM, FontFace, HTML parsed from strings), with a
  MutationObserver as the safety net;
* ``client_guard.js`` — no script path to the live web: navigations to other hosts
  (``location`` assignments included) caught through the Navigation API's ``navigate``
  event and sent to the archive, links/forms/popups that open other windows, WebSocket
  (sent to the replay server, which refuses it), WebRTC servers, ``document.domain``,
  script-set meta refresh.
"""

from __future__ import annotations

import json
from functools import lru_cache
from importlib import resources

__all__ = ["CLIENT_PARTS", "client_config_script", "client_script"]


#: The parts of the client script, in the order they run (each later part uses the
#: ``window.__webarkRewrite`` functions of ``client.js``).
CLIENT_PARTS = ("client.js", "client_css.js", "client_guard.js")


@lru_cache(maxsize=1)
def client_script() -> str:
    """The JavaScript of the client script: :data:`CLIENT_PARTS` of ``webark/rewrite/``
    (UTF-8 text, read once), one after the other.

    Raises:
        FileNotFoundError: the package was installed without its data files (the
            ``package-data`` entry ``webark = ["rewrite/*.js"]`` is missing).
    """
    files = resources.files("webark.rewrite")
    return "\n".join(files.joinpath(name).read_text(encoding="utf-8") for name in CLIENT_PARTS)


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
