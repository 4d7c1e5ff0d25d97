"""The robots.txt of one origin as a policy: :class:`RobotsPolicy`.

Matching (rule precedence, ``*`` and ``$`` wildcards, percent-encoding normalization,
user-agent groups and their merging, ``Crawl-delay``, ``Request-rate``, ``Sitemap``) is
protego's (Scrapy's parser, which follows RFC 9309 and Google's reference parser).
This layer adds what a crawler needs around it:

* lenient decoding and Google's limits (:mod:`webark.robots.text`);
* RFC 9309 grouping where protego differs (unknown lines and ``Crawl-delay`` do not
  close a group, user-agent values are cut at the first space or ``/``);
* the HTTP status of the robots.txt fetch (:meth:`RobotsPolicy.from_response`);
* crawl policies (:class:`RobotsMode`): ``obey``, ``ignore``,
  ``obey-but-allow-embeds``.

``docs/robots-differences.md`` lists every corpus case where the answer differs from
Google's or protego's, with the reason.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Final

from protego import Protego, RequestRate, VisitTime

from webark.robots.text import (
    DecodedRobots,
    ParsedRobots,
    decode_robots,
    parse_robots,
    path_params_query,
    to_protego_text,
)

__all__ = [
    "EMBED_HOPS",
    "RequestRate",
    "RobotsMode",
    "RobotsPolicy",
    "RobotsStatus",
    "VisitTime",
    "status_for_http",
]


class RobotsMode(StrEnum):
    """How a crawl treats robots.txt (Heritrix's ``robotsPolicyName``)."""

    OBEY = "obey"
    """Follow the rules of the group that matches the user agent (the default)."""
    IGNORE = "ignore"
    """Fetch everything; robots.txt is still fetched and archived, never obeyed."""
    OBEY_BUT_ALLOW_EMBEDS = "obey-but-allow-embeds"
    """Obey, except for embeds (hop type ``E``) and speculative embeds (``X``), which
    are fetched even when disallowed, so that archived pages render (images, CSS and
    scripts are often disallowed for crawlers that are not search engines)."""


EMBED_HOPS: Final = frozenset({"E", "X"})
"""Hop types :attr:`RobotsMode.OBEY_BUT_ALLOW_EMBEDS` lets through."""


class RobotsStatus(StrEnum):
    """What the robots.txt fetch gave (RFC 9309 §2.3.1)."""

    PARSED = "parsed"
    """2xx: the body's rules apply (an empty or unparseable body allows everything)."""
    UNAVAILABLE = "unavailable"
    """4xx except 429, or redirects not followed to the end (RFC 9309 §2.3.1.2,
    §2.3.1.3): no robots.txt; everything is allowed."""
    UNREACHABLE = "unreachable"
    """5xx, 429, network error (DNS, connect, timeout) or a status that is not HTTP:
    RFC 9309 §2.3.1.4 says assume complete disallow; retry later."""


def status_for_http(http_status: int | None) -> RobotsStatus:
    """The :class:`RobotsStatus` of a robots.txt fetch.

    Args:
        http_status: the final HTTP status after redirects (the fetcher follows up to 5,
            RFC 9309 §2.3.1.2), or ``None`` when no HTTP response was obtained
            (DNS failure, refused connection, timeout, TLS error).

    Returns:
        ``PARSED`` for 2xx; ``UNAVAILABLE`` for 3xx (redirects not followed to the
        end) and 4xx except 429; ``UNREACHABLE`` for 429 (Google treats it as a server
        error), 5xx, ``None`` and anything else (1xx, < 100, >= 600).
    """
    if http_status is None:
        return RobotsStatus.UNREACHABLE
    if 200 <= http_status < 300:
        return RobotsStatus.PARSED
    if 300 <= http_status < 500 and http_status != 429:
        return RobotsStatus.UNAVAILABLE
    return RobotsStatus.UNREACHABLE


_ORIGIN: Final = "http://robots.invalid"


class RobotsPolicy:
    """The robots.txt of one origin (scheme, host, port), ready to answer questions.

    Build it with :meth:`from_response` (status + body of the fetch), :meth:`from_bytes`
    or :meth:`from_text` (a 2xx body), :meth:`allow_all` or :meth:`disallow_all`.
    Instances are immutable in use and cheap to query repeatedly (protego memoizes the
    group of each user agent).

    Sources: RFC 9309 (Robots Exclusion Protocol), google/robotstxt (Google's reference
    parser and its tests), protego; Heritrix 3 ``org.archive.modules.net.Robotstxt``
    and ``CrawlServer.updateRobots`` for the crawler-side conventions.
    """

    __slots__ = ("_body", "_parsed", "_parser", "_status")

    def __init__(self, body: bytes = b"", *, status: RobotsStatus = RobotsStatus.PARSED):
        """Parse ``body`` (only used when ``status`` is ``PARSED``).

        Args:
            body: the robots.txt bytes as received; decoded leniently, see
                :func:`webark.robots.text.decode_robots`. Never raises on bad input.
            status: what the fetch gave (see :func:`status_for_http`).
        """
        self._status = RobotsStatus(status)
        self._body = bytes(body) if self._status is RobotsStatus.PARSED else b""
        self._parsed: ParsedRobots = parse_robots(decode_robots(self._body))
        self._parser: Protego = Protego.parse(to_protego_text(self._parsed))

    # ---- constructors -----------------------------------------------------------------

    @classmethod
    def from_response(cls, http_status: int | None, body: bytes = b"") -> RobotsPolicy:
        """The policy for a robots.txt fetch result.

        Args:
            http_status: final HTTP status, ``None`` for a network error.
            body: the response body (ignored unless the status is 2xx).
        """
        return cls(body, status=status_for_http(http_status))

    @classmethod
    def from_bytes(cls, body: bytes) -> RobotsPolicy:
        """The policy for a robots.txt body served with a 2xx status."""
        return cls(body)

    @classmethod
    def from_text(cls, text: str) -> RobotsPolicy:
        """The policy for robots.txt text (encoded as UTF-8 and read as a 2xx body)."""
        return cls(text.encode("utf-8"))

    @classmethod
    def allow_all(cls) -> RobotsPolicy:
        """No robots.txt (as for a 404)."""
        return cls(status=RobotsStatus.UNAVAILABLE)

    @classmethod
    def disallow_all(cls) -> RobotsPolicy:
        """robots.txt unreachable (as for a 503 or a network error)."""
        return cls(status=RobotsStatus.UNREACHABLE)

    # ---- what it is ---------------------------------------------------------------------

    @property
    def status(self) -> RobotsStatus:
        """What the fetch gave: parsed rules, unavailable (allow all) or unreachable
        (disallow all)."""
        return self._status

    @property
    def body(self) -> bytes:
        """The robots.txt bytes the rules come from (``b""`` unless ``PARSED``)."""
        return self._body

    @property
    def decoded(self) -> DecodedRobots:
        """Decoding details: encoding used, whether the body was cut at 500 KiB, lines."""
        return self._parsed.decoded

    @property
    def parsed(self) -> ParsedRobots:
        """The grouped directives and the line / directive counters."""
        return self._parsed

    # ---- questions ----------------------------------------------------------------------

    def allowed(
        self,
        url: str,
        user_agent: str,
        hop_type: str | None = None,
        *,
        mode: RobotsMode | str = RobotsMode.OBEY,
    ) -> bool:
        """May ``user_agent`` fetch ``url``?

        Args:
            url: an absolute URL of this origin (only path, params and query are
                matched: :func:`webark.robots.text.path_params_query`). Percent-encoded
                or not: both sides are normalized before matching.
            user_agent: the crawler's product token (``"webark"``), matched
                case-insensitively against the ``User-agent`` lines. A whole
                ``User-Agent`` header also works: a group applies when its token occurs
                in it at a word boundary (protego; Heritrix matches substrings too).
                With no matching group the ``*`` group applies, else everything is
                allowed.
            hop_type: the last hop of the URI's hop path (``"L"``, ``"E"``, ``"X"``,
                ``"R"``, ``"P"`` …); a whole hop path such as ``"LLE"`` is accepted and
                its last character used. Only :attr:`RobotsMode.OBEY_BUT_ALLOW_EMBEDS`
                looks at it.
            mode: the crawl's robots policy (:class:`RobotsMode` or its string value).

        Returns:
            True when the fetch is allowed. ``/robots.txt`` itself is always allowed
            (RFC 9309 §2.2.2).

        Raises:
            ValueError: ``mode`` is not a known policy name.
        """
        mode = RobotsMode(mode)
        if mode is RobotsMode.IGNORE:
            return True
        if mode is RobotsMode.OBEY_BUT_ALLOW_EMBEDS and hop_type and hop_type[-1] in EMBED_HOPS:
            return True
        path = path_params_query(url)
        if path == "/robots.txt":
            return True
        if self._status is RobotsStatus.UNAVAILABLE:
            return True
        if self._status is RobotsStatus.UNREACHABLE:
            return False
        return self._parser.can_fetch(_ORIGIN + path, user_agent)

    def crawl_delay(self, user_agent: str) -> float | None:
        """The ``Crawl-delay`` of the group that applies to ``user_agent``, in seconds
        (fractions allowed), or ``None`` when absent or malformed. Not capped here:
        the politeness policy decides how much of it to honour (Heritrix: up to 300 s).
        """
        if self._status is not RobotsStatus.PARSED:
            return None
        return self._parser.crawl_delay(user_agent)

    def request_rate(self, user_agent: str) -> RequestRate | None:
        """The ``Request-rate`` (``requests`` per ``seconds``, optional time window in
        UTC) of the group for ``user_agent``, or ``None``."""
        if self._status is not RobotsStatus.PARSED:
            return None
        return self._parser.request_rate(user_agent)

    def visit_time(self, user_agent: str) -> VisitTime | None:
        """The ``Visit-time`` window (UTC) of the group for ``user_agent``, or None."""
        if self._status is not RobotsStatus.PARSED:
            return None
        return self._parser.visit_time(user_agent)

    @property
    def sitemaps(self) -> list[str]:
        """``Sitemap`` URLs in file order (site-wide, whatever the group), as written."""
        return list(self._parsed.sitemaps)

    @property
    def preferred_host(self) -> str | None:
        """The ``Host`` directive (Yandex extension), or None."""
        return self._parsed.host

    def __repr__(self) -> str:
        return (
            f"RobotsPolicy(status={self._status.value!r}, bytes={len(self._body)}, "
            f"groups={len(self._parsed.groups)})"
        )
