"""Fetch status codes of the crawl.log's second column.

A positive code is what the fetch got: an HTTP status (``200``, ``404`` …), ``1`` for a
successful DNS lookup (Heritrix ``S_DNS_SUCCESS``). Zero and negative codes are
Heritrix's ``FetchStatusCodes`` for URIs that were never fetched or failed before a
response; webark writes the same numbers so that tools written for Heritrix logs
(NetarchiveSuite reports, UKWA's log analysers, crawl-log-to-CDX converters) keep
working.

The table below is the one :func:`status_meaning` knows; any other negative code is
reported as "unknown Heritrix status".

===== ==================================== =================================================
code  Heritrix constant                    meaning
===== ==================================== =================================================
1     S_DNS_SUCCESS                        DNS lookup succeeded (``dns:`` URIs)
0     S_UNATTEMPTED                        never tried (no fetch yet)
-1    S_DOMAIN_UNRESOLVABLE                DNS lookup failed
-2    S_CONNECT_FAILED                     HTTP connect failed
-3    S_CONNECT_LOST                       HTTP connect broken
-4    S_TIMEOUT                            HTTP timeout
-5    S_RUNTIME_EXCEPTION                  unexpected runtime exception (see ``err=``)
-6    S_DOMAIN_PREREQUISITE_FAILURE        prerequisite domain lookup failed
-7    S_UNFETCHABLE_URI                    URI recognized as unsupported or illegal
-8    S_TOO_MANY_RETRIES                   retries exhausted
-50   S_DEFERRED                           temporary status while waiting for a prerequisite
-60   S_UNQUEUEABLE                        URI could not be queued in the frontier
-61   S_ROBOTS_PREREQUISITE_FAILURE        robots.txt prerequisite could not be fetched
-62   S_OTHER_PREREQUISITE_FAILURE         some other prerequisite failed
-63   S_PREREQUISITE_UNSCHEDULABLE_FAILURE a prerequisite could not be scheduled
-404  S_DEEMED_NOT_FOUND                   empty HTTP response, deemed "not found"
-3000 S_SERIOUS_ERROR                      severe Java error (e.g. out of memory)
-4000 S_DEEMED_CHAFF                       chaff / crawler-trap detection
-4001 S_TOO_MANY_LINK_HOPS                 too many link hops from a seed
-4002 S_TOO_MANY_EMBED_HOPS                too many embed (transclusion) hops
-5000 S_OUT_OF_SCOPE                       out of scope on recheck
-5001 S_BLOCKED_BY_USER                    blocked by a user setting
-5002 S_BLOCKED_BY_CUSTOM_PROCESSOR        blocked by a processor (e.g. handed to a browser)
-5003 S_BLOCKED_BY_QUOTA                   blocked by a quota (see the ``Q:`` annotation)
-5004 S_BLOCKED_BY_RUNTIME_LIMIT           blocked by a run-time limit
-6000 S_DELETED_BY_USER                    deleted from the frontier by the operator
-7000 S_PROCESSING_THREAD_KILLED           the worker thread was killed
-9998 S_ROBOTS_PRECLUDED                   excluded by robots.txt
===== ==================================== =================================================

Source: Heritrix 3 ``org.archive.modules.fetcher.FetchStatusCodes`` (the same numbers
since Heritrix 1.x) and its user manual's crawl.log chapter.
"""

from __future__ import annotations

from http import HTTPStatus
from typing import Final, NamedTuple


class StatusInfo(NamedTuple):
    """One row of the status table: the Heritrix constant name and a short meaning."""

    name: str
    meaning: str


# Named constants, as in Heritrix (webark.fetch and the crawler use these).
S_DNS_SUCCESS: Final = 1
S_UNATTEMPTED: Final = 0
S_DOMAIN_UNRESOLVABLE: Final = -1
S_CONNECT_FAILED: Final = -2
S_CONNECT_LOST: Final = -3
S_TIMEOUT: Final = -4
S_RUNTIME_EXCEPTION: Final = -5
S_DOMAIN_PREREQUISITE_FAILURE: Final = -6
S_UNFETCHABLE_URI: Final = -7
S_TOO_MANY_RETRIES: Final = -8
S_DEFERRED: Final = -50
S_UNQUEUEABLE: Final = -60
S_ROBOTS_PREREQUISITE_FAILURE: Final = -61
S_OTHER_PREREQUISITE_FAILURE: Final = -62
S_PREREQUISITE_UNSCHEDULABLE_FAILURE: Final = -63
S_DEEMED_NOT_FOUND: Final = -404
S_SERIOUS_ERROR: Final = -3000
S_DEEMED_CHAFF: Final = -4000
S_TOO_MANY_LINK_HOPS: Final = -4001
S_TOO_MANY_EMBED_HOPS: Final = -4002
S_OUT_OF_SCOPE: Final = -5000
S_BLOCKED_BY_USER: Final = -5001
S_BLOCKED_BY_CUSTOM_PROCESSOR: Final = -5002
S_BLOCKED_BY_QUOTA: Final = -5003
S_BLOCKED_BY_RUNTIME_LIMIT: Final = -5004
S_DELETED_BY_USER: Final = -6000
S_PROCESSING_THREAD_KILLED: Final = -7000
S_ROBOTS_PRECLUDED: Final = -9998

HERITRIX_STATUS: Final[dict[int, StatusInfo]] = {
    1: StatusInfo("S_DNS_SUCCESS", "DNS lookup succeeded"),
    0: StatusInfo("S_UNATTEMPTED", "never tried"),
    -1: StatusInfo("S_DOMAIN_UNRESOLVABLE", "DNS lookup failed"),
    -2: StatusInfo("S_CONNECT_FAILED", "HTTP connect failed"),
    -3: StatusInfo("S_CONNECT_LOST", "HTTP connect broken"),
    -4: StatusInfo("S_TIMEOUT", "HTTP timeout"),
    -5: StatusInfo("S_RUNTIME_EXCEPTION", "unexpected runtime exception"),
    -6: StatusInfo("S_DOMAIN_PREREQUISITE_FAILURE", "prerequisite domain lookup failed"),
    -7: StatusInfo("S_UNFETCHABLE_URI", "URI recognized as unsupported or illegal"),
    -8: StatusInfo("S_TOO_MANY_RETRIES", "multiple retries all failed"),
    -50: StatusInfo("S_DEFERRED", "temporary status while waiting for a prerequisite"),
    -60: StatusInfo("S_UNQUEUEABLE", "URI could not be queued"),
    -61: StatusInfo("S_ROBOTS_PREREQUISITE_FAILURE", "robots.txt prerequisite failed"),
    -62: StatusInfo("S_OTHER_PREREQUISITE_FAILURE", "other prerequisite failed"),
    -63: StatusInfo("S_PREREQUISITE_UNSCHEDULABLE_FAILURE", "prerequisite could not be scheduled"),
    -404: StatusInfo("S_DEEMED_NOT_FOUND", "empty HTTP response, deemed not found"),
    -3000: StatusInfo("S_SERIOUS_ERROR", "severe error"),
    -4000: StatusInfo("S_DEEMED_CHAFF", "chaff / crawler trap detected"),
    -4001: StatusInfo("S_TOO_MANY_LINK_HOPS", "too many link hops"),
    -4002: StatusInfo("S_TOO_MANY_EMBED_HOPS", "too many embed hops"),
    -5000: StatusInfo("S_OUT_OF_SCOPE", "out of scope on recheck"),
    -5001: StatusInfo("S_BLOCKED_BY_USER", "blocked by user setting"),
    -5002: StatusInfo("S_BLOCKED_BY_CUSTOM_PROCESSOR", "blocked by a processor"),
    -5003: StatusInfo("S_BLOCKED_BY_QUOTA", "blocked by a quota"),
    -5004: StatusInfo("S_BLOCKED_BY_RUNTIME_LIMIT", "blocked by a run-time limit"),
    -6000: StatusInfo("S_DELETED_BY_USER", "deleted by the operator"),
    -7000: StatusInfo("S_PROCESSING_THREAD_KILLED", "worker thread killed"),
    -9998: StatusInfo("S_ROBOTS_PRECLUDED", "excluded by robots.txt"),
}
"""Zero, negative and pseudo codes (``1``) known to :func:`status_meaning`."""

DNS_SUCCESS: Final = 1
ROBOTS_PRECLUDED: Final = -9998
BLOCKED_BY_QUOTA: Final = -5003
OUT_OF_SCOPE: Final = -5000

DISREGARDED_STATUSES: Final[frozenset[int]] = frozenset(
    {-9998, -5002, -5000, -5001, -4002, -4001, -6000}
)
"""Codes Heritrix 3's frontier counts as "disregarded" rather than "failed"
(``WorkQueueFrontier.isDisregarded``): the URI was dropped on purpose (robots, scope,
hops, operator, processor), not because the fetch went wrong."""


def status_meaning(code: int) -> str:
    """A short English meaning of a crawl.log fetch status.

    Args:
        code: the status column as an integer.

    Returns:
        ``"OK"`` / ``"Not Found"`` … for HTTP codes (``http.HTTPStatus`` phrases,
        ``"HTTP 599"`` for unregistered ones), the Heritrix table meaning for ``1``,
        ``0`` and the negative codes, or ``"unknown Heritrix status -N"``.
    """
    info = HERITRIX_STATUS.get(code)
    if info is not None:
        return info.meaning
    if code >= 100:
        try:
            return HTTPStatus(code).phrase
        except ValueError:
            return f"HTTP {code}"
    return f"unknown Heritrix status {code}"


def status_name(code: int) -> str | None:
    """The Heritrix ``FetchStatusCodes`` constant for ``code`` (``"S_ROBOTS_PRECLUDED"``
    for ``-9998``), or ``None`` for HTTP codes and unknown numbers."""
    info = HERITRIX_STATUS.get(code)
    return info.name if info is not None else None


def is_failure_status(code: int) -> bool:
    """True for codes ``<= 0``: no response was obtained (includes the "disregarded"
    codes such as ``-9998``; see :data:`DISREGARDED_STATUSES` to tell them apart).

    HTTP error statuses (4xx, 5xx) are *not* failures in Heritrix's sense: the server
    answered and the response was archived.
    """
    return code <= 0


def is_disregarded_status(code: int) -> bool:
    """True for the codes Heritrix counts as disregarded (robots, scope, hop limits,
    processor, operator), see :data:`DISREGARDED_STATUSES`."""
    return code in DISREGARDED_STATUSES
