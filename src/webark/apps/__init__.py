"""L5: ASGI apps. Today the resolution API (the "CDX server", :mod:`webark.apps.cdx_api`);
replay and the archiving proxy come later. Apps import from every lower layer; nothing
below imports them."""
