"""The control API of a running crawl (an ASGI app over :mod:`webark.crawl.control`)."""
