"""The archiving proxy (``webark proxy``): an HTTP/1.1 forward proxy that records every
exchange it relays through the capture back end (:mod:`webark.capture`), as warcprox
does for browser and manual crawling.

- :mod:`webark.apps.proxy.server` — :class:`ArchivingProxy`, the request loop.
- :mod:`webark.apps.proxy.relay` — passing responses on to the client as they arrive.
- :mod:`webark.apps.proxy.headers` — hop-by-hop fields and the proxy's own messages.
"""

from webark.apps.proxy.server import ArchivingProxy, ClientRequest, ProxyConfig

__all__ = ["ArchivingProxy", "ClientRequest", "ProxyConfig"]
