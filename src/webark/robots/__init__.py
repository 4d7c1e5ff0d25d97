"""robots.txt policy on top of protego (layer L2: imports only L0/L1 and protego).

* :class:`RobotsPolicy` — one origin's robots.txt: ``allowed(url, user_agent,
  hop_type, mode=…)``, ``crawl_delay(user_agent)`` (seconds), ``sitemaps``. Built from
  the fetch result with :meth:`RobotsPolicy.from_response` (HTTP status semantics of
  RFC 9309 §2.3.1: 2xx parse, 4xx allow all, 5xx/429/network error disallow all).
* :class:`RobotsMode` — ``obey`` (default), ``ignore``, ``obey-but-allow-embeds``.
* :class:`RobotsCache` — policies by ``scheme://host:port`` with expiry (24 h default,
  RFC 9309 §2.4), unreachable handling, plain-data persistence, injectable clock.

Where answers differ from Google's reference parser or protego, see
``docs/robots-differences.md``.
"""

from webark.robots.cache import (
    DEFAULT_MAX_UNREACHABLE,
    DEFAULT_TTL,
    DEFAULT_UNREACHABLE_TTL,
    RobotsCache,
    RobotsEntry,
    origin_key,
    robots_url,
)
from webark.robots.policy import (
    EMBED_HOPS,
    RequestRate,
    RobotsMode,
    RobotsPolicy,
    RobotsStatus,
    VisitTime,
    status_for_http,
)
from webark.robots.text import (
    MAX_LINE_BYTES,
    MAX_ROBOTS_BYTES,
    DecodedRobots,
    ParsedRobots,
    decode_robots,
    is_valid_product_token,
    parse_robots,
    path_params_query,
    product_token,
)

__all__ = [
    "DEFAULT_MAX_UNREACHABLE",
    "DEFAULT_TTL",
    "DEFAULT_UNREACHABLE_TTL",
    "EMBED_HOPS",
    "MAX_LINE_BYTES",
    "MAX_ROBOTS_BYTES",
    "DecodedRobots",
    "ParsedRobots",
    "RequestRate",
    "RobotsCache",
    "RobotsEntry",
    "RobotsMode",
    "RobotsPolicy",
    "RobotsStatus",
    "VisitTime",
    "decode_robots",
    "is_valid_product_token",
    "origin_key",
    "parse_robots",
    "path_params_query",
    "product_token",
    "robots_url",
    "status_for_http",
]
