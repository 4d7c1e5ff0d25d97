"""L6: the ASGI apps and servers, one sub-package each: :mod:`webark.apps.cdx` (the
resolution API, the "CDX server"), :mod:`webark.apps.replay` (Wayback-style replay),
:mod:`webark.apps.control` (a running crawl's control API). Apps import from every
lower layer; nothing below imports them."""
