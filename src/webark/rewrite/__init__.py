"""Replay rewriting (layer L2): bytes in, bytes out.

Server-side rewriters that keep an archived page inside the archive when it is replayed
(Wayback / pywb style URLs ``/{collection}/{timestamp}{modifier}/{url}``):

* :mod:`webark.rewrite.urls` — :class:`UrlRewriter`, one URL into its archive URL;
* :mod:`webark.rewrite.html`, :mod:`~webark.rewrite.css`, :mod:`~webark.rewrite.js` —
  document rewriters that change only URL values and keep every other byte;
* :mod:`webark.rewrite.headers` — HTTP response headers for replay
  (``X-Archive-Orig-*``);
* :mod:`webark.rewrite.mime` — which rewriter a response gets;
* :mod:`webark.rewrite.client` — the client-side script (``client.js``) that keeps URLs
  built at run time in the archive.

Imports only :mod:`webark.core`, :mod:`webark.warc` and :mod:`webark.url`.
"""
