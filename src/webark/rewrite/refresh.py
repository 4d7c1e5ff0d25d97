"""The ``Refresh`` value (HTTP header and ``<meta http-equiv="refresh" content>``):
``"5; url=http://example.com/next"``.

Parsed as the HTML Standard's "shared declarative refresh steps": a delay (digits and
dots), then optionally ``;`` or ``,``, whitespace, ``url=`` (any case) and the URL,
possibly in quotes. Only the URL is rewritten; the rest is kept as written.
"""

from __future__ import annotations

import re

from webark.rewrite.urls import UrlRewriter

__all__ = ["rewrite_refresh"]

_REFRESH = re.compile(
    r"""(?P<lead>\s*[\d.]*\s*[;,]?\s*(?:url\s*=\s*)?)(?P<q>['"]?)(?P<url>.*?)(?P=q)?(?P<trail>\s*)\Z""",
    re.IGNORECASE | re.DOTALL,
)


def rewrite_refresh(value: str, rewriter: UrlRewriter, modifier: str | None = None) -> str:
    """Rewrite the URL of a refresh value; a value without a URL (``"30"``) comes
    back unchanged.

    >>> r = UrlRewriter("/c/", "2014", "http://a.org/x/")
    >>> rewrite_refresh("5; URL='../next'", r)
    "5; URL='/c/2014/http://a.org/next'"
    """
    m = _REFRESH.match(value)
    if m is None or not m.group("url"):
        return value
    url = m.group("url")
    new = rewriter.rewrite(url, modifier)
    if new == url:
        return value
    return value[: m.start("url")] + new + value[m.end("url") :]
