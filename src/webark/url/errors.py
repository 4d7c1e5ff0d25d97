"""Errors raised by :mod:`webark.url`."""

from __future__ import annotations

from webark.core.errors import WebarkError


class InvalidURLError(WebarkError, ValueError):
    """A string that cannot be parsed as a URL by the WHATWG URL Standard parser
    (e.g. ``"http://[::1"``, ``"http://exa mple.com/"``, a relative reference without a
    base).

    Attributes:
        url: the offending input.
        reason: a short explanation.
    """

    def __init__(self, url: str, reason: str = "not a valid URL") -> None:
        self.url = url
        self.reason = reason
        super().__init__(f"{reason}: {url!r}")
