"""Fetch status codes below 1 and the failure value a failed fetch carries.

The numbers are Heritrix 3's ``FetchStatusCodes`` (``org.archive.modules.fetcher``), so
that crawl.log lines read the same (reference/crawl-log.md). The numbers live in
:mod:`webark.crawllog.status` (one table for the whole project); this module says when the
fetcher produces each of them (only those in :data:`FETCHER_CODES`):

* ``S_DNS_SUCCESS`` (1): A ``dns:`` lookup that succeeded.
* ``S_UNATTEMPTED`` (0): Fetch never tried.
* ``S_DOMAIN_UNRESOLVABLE`` (-1): DNS lookup failed (status of the ``dns:`` URI itself).
* ``S_CONNECT_FAILED`` (-2): TCP connect or TLS handshake failed (refused, unreachable,
  certificate rejected).
* ``S_CONNECT_LOST`` (-3): Connection broken after the request was sent: closed or reset
  early, stalled in the body, or a response h11 cannot parse (Heritrix: an IOException while
  reading).
* ``S_TIMEOUT`` (-4): Timeout before any meaningful response was received (connect, TLS
  handshake, or waiting for the response head).
* ``S_RUNTIME_EXCEPTION`` (-5): Unexpected runtime error in the fetcher (a bug: see the
  log).
* ``S_DOMAIN_PREREQUISITE_FAILURE`` (-6): The host of an http(s) URI could not be resolved,
  so no fetch was tried.
* ``S_UNFETCHABLE_URI`` (-7): URI not supported or illegal (scheme other than http/https, no
  host, bad port…).
* ``S_TOO_MANY_RETRIES`` (-8): Retries exhausted (the crawler's).
* ``S_BLOCKED_BY_USER`` (-5001): Blocked by a user setting: webark uses it for addresses
  refused by the private-address guard (``allow_private=False``).
"""

from __future__ import annotations

from dataclasses import dataclass

from webark.core.errors import WebarkError
from webark.crawllog.status import (  # noqa: F401  (re-exported for the fetcher)
    S_BLOCKED_BY_USER,
    S_CONNECT_FAILED,
    S_CONNECT_LOST,
    S_DNS_SUCCESS,
    S_DOMAIN_PREREQUISITE_FAILURE,
    S_DOMAIN_UNRESOLVABLE,
    S_RUNTIME_EXCEPTION,
    S_TIMEOUT,
    S_TOO_MANY_RETRIES,
    S_UNATTEMPTED,
    S_UNFETCHABLE_URI,
)

FETCHER_CODES = frozenset(
    {
        S_CONNECT_FAILED,
        S_CONNECT_LOST,
        S_TIMEOUT,
        S_RUNTIME_EXCEPTION,
        S_DOMAIN_PREREQUISITE_FAILURE,
        S_UNFETCHABLE_URI,
        S_BLOCKED_BY_USER,
    }
)
"""The negative codes :meth:`webark.fetch.HttpFetcher.fetch` can return."""


@dataclass(frozen=True, slots=True)
class FetchFailure:
    """Why a fetch failed.

    Attributes:
        code: the Heritrix fetch status code (negative), e.g. :data:`S_TIMEOUT`.
        kind: a short name of the cause for the crawl.log ``err=`` annotation, e.g.
            ``"ConnectTimeout"``, ``"ConnectionRefused"``, ``"ReadTimeout"``,
            ``"RemoteProtocolError"``, ``"PrivateAddress"``.
        message: a human-readable explanation (names the address, the limit or the
            setting involved).
    """

    code: int
    kind: str
    message: str

    def __str__(self) -> str:
        return f"{self.code} {self.kind}: {self.message}"


class FetchError(WebarkError, ValueError):
    """A failed fetch or lookup was asked for something only a successful one has (its
    WARC records), or a fetcher was set up wrongly (e.g. without a User-Agent)."""
