"""Redirect targets the scope drops get their own crawl.log line (issue 20, item 10).

A redirect chain (``/r1`` → ``/r2`` → …) is followed until the scope rejects a target:
too many hops, too many redirects since the last link, a trap rule. Heritrix logs a URI
dropped that way with a negative status (``-4001`` too many link hops, ``-4002`` too
many embed hops, ``-4000`` chaff; :mod:`webark.crawl.scope.statuses`); without the line
the chain would end on a ``3xx`` whose target appears nowhere. Other outlinks out of
scope are not logged (as in Heritrix: they are the scope's business, not fetches).

The line has hop path and via of the target, and in its extra info the rule that
rejected it (``{"rejectedBy": "max_hops"}``), as the after-fetch rules' -5000 lines do.
A target is logged once per run, however many redirects lead to it.
"""

from __future__ import annotations

from webark.capture import capture_line
from webark.crawl.context import CrawlContext, capture_meta
from webark.crawl.curi import CrawlURI
from webark.crawl.scope.statuses import rejected_status

__all__ = ["DroppedRedirects"]

_MAX_MEMO = 100_000


class DroppedRedirects:
    """Logs the redirect targets the scope rejected, once each (module docstring).

    Args:
        ctx: the crawl.
    """

    def __init__(self, ctx: CrawlContext) -> None:
        self.ctx = ctx
        self._logged: set[str] = set()

    def log(self, target: CrawlURI, rule: str | None, worker: int) -> None:
        """Write the crawl.log line of ``target`` (a hop ``R`` candidate) that the scope
        rule ``rule`` rejected, unless this run logged it already (status by
        :func:`~webark.crawl.scope.statuses.rejected_status`)."""
        if target.uri in self._logged:
            return
        if len(self._logged) > _MAX_MEMO:
            self._logged.clear()
        self._logged.add(target.uri)
        line = capture_line(target.uri, rejected_status(rule), capture_meta(target, worker),
                            extra={"rejectedBy": rule or "no rule"})  # fmt: skip
        self.ctx.log(line, seed=target.seed)
