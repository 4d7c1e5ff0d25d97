"""Fetching (layer L2): an asyncio HTTP/1.1 client on h11 that keeps the exact bytes on
the wire, and the WARC records of what it fetched.

- :class:`HttpFetcher` — ``await fetcher.fetch(url)`` → :class:`Exchange`; resolve
  overrides, a private-address guard, keep-alive per host, timeouts and size/time
  limits (:class:`FetchLimits`), TLS.
- :class:`Exchange` — request and response bytes, parsed status and headers, timing,
  payload digest, truncation (``lenTrunc``/``timeTrunc``) or failure (Heritrix negative
  status, :mod:`webark.fetch.codes`); ``to_records(builder, metadata, original)``.
- :class:`DnsAnswer` — a lookup; ``to_record(builder)`` is Heritrix's ``dns:`` record.

Sources: RFC 9112 (HTTP/1.1 messages, connection reuse), RFC 9110 (semantics), WARC 1.1
(§5.13 WARC-Truncated, §6.3 response, §6.5 request), Heritrix 3 ``FetchHTTP`` and
``FetchStatusCodes``.
"""

from webark.fetch.codes import (
    S_BLOCKED_BY_USER,
    S_CONNECT_FAILED,
    S_CONNECT_LOST,
    S_DNS_SUCCESS,
    S_DOMAIN_PREREQUISITE_FAILURE,
    S_DOMAIN_UNRESOLVABLE,
    S_RUNTIME_EXCEPTION,
    S_TIMEOUT,
    S_UNFETCHABLE_URI,
    FetchError,
    FetchFailure,
)
from webark.fetch.dns import (
    DnsAnswer,
    OverrideResolver,
    Resolver,
    SystemResolver,
    address_class,
    refusal,
)
from webark.fetch.exchange import Exchange, Truncation, exchange_records
from webark.fetch.fetcher import Fetcher, HttpFetcher, unverified_context
from webark.fetch.limits import FetchLimits

__all__ = [
    "S_BLOCKED_BY_USER",
    "S_CONNECT_FAILED",
    "S_CONNECT_LOST",
    "S_DNS_SUCCESS",
    "S_DOMAIN_PREREQUISITE_FAILURE",
    "S_DOMAIN_UNRESOLVABLE",
    "S_RUNTIME_EXCEPTION",
    "S_TIMEOUT",
    "S_UNFETCHABLE_URI",
    "DnsAnswer",
    "Exchange",
    "FetchError",
    "FetchFailure",
    "FetchLimits",
    "Fetcher",
    "HttpFetcher",
    "OverrideResolver",
    "Resolver",
    "SystemResolver",
    "Truncation",
    "address_class",
    "exchange_records",
    "refusal",
    "unverified_context",
]
