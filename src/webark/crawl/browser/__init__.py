"""Browser workers of the crawl (issue 13): pages the bulk crawler delegates are loaded
in Debian's Chromium (Playwright), every request going through webark's archiving
proxy, behaviors run (``browsertrix-behaviors`` + webark's expand), and the rendered
links, ``window.open`` targets and screenshots come back as a :class:`PageVisit`.

Public API::

    async with BrowserPool("http://127.0.0.1:8000", ca_file=ca_pem, size=4) as pool:
        visit = await pool.visit(url, extra_headers={"Warcprox-Meta": meta},
                                 document=PrefetchedDocument(200, headers, body))

This package imports no proxy code (the proxy is L6, ``webark.apps.proxy``): it talks
to it over HTTP like any client. Playwright is imported only when a pool starts;
:class:`~webark.core.errors.BrowserUnavailableError` says what is missing.
"""

from webark.core.errors import BrowserUnavailableError

from .behaviors import BEHAVIORS_VERSION, BehaviorOptions, behaviors_path
from .pool import CHROMIUM, BrowserClosedError, BrowserPool, proxy_spki_pins
from .visit import PageVisit, PrefetchedDocument, RequestCounts, Viewport

__all__ = [
    "BEHAVIORS_VERSION",
    "CHROMIUM",
    "BehaviorOptions",
    "BrowserClosedError",
    "BrowserPool",
    "BrowserUnavailableError",
    "PageVisit",
    "PrefetchedDocument",
    "RequestCounts",
    "Viewport",
    "behaviors_path",
    "proxy_spki_pins",
]
