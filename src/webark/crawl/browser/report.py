"""The browser report (``browser-report.txt`` / ``.json``; ``GET /reports/browser``
live) of a hybrid crawl: pages rendered and why, requests they made and how many went
through the archiving proxy, the gate's refusals (scope, robots.txt), URIs marked seen
for the bulk crawler, outlinks the browser added and screenshots written.

A :class:`~webark.crawl.reports.Report` over the ``"browser"`` entry of the snapshot's
``extensions`` (:class:`BrowserSnapshot`, taken by
:class:`~webark.crawl.browser.delegate.BrowserDelegation`).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import Any

from webark.crawl.browser.gate import BrowserTraffic
from webark.crawl.stats import StatsSnapshot

__all__ = ["BrowserCounts", "BrowserReport", "BrowserSnapshot"]


@dataclass
class BrowserCounts:
    """What the hybrid crawl's pages did (counts)."""

    pages: int = 0
    """Pages rendered (visits that ended)."""
    by_reason: Counter[str] = field(default_factory=Counter)
    """Pages by the kind of rule that delegated them (``regex``, ``host``,
    ``troublesome``)."""
    fell_back: int = 0
    """Pages delegated before the fetch that the browser did not get (fetched instead)."""
    outlinks_added: int = 0
    """Browser links that the static extraction had not found."""
    screenshots: int = 0
    """Resource records written (views + thumbnails)."""
    page_requests: int = 0
    """Requests the pages made (``PageVisit.requests.total``)."""
    proxied: int = 0
    """Requests that went through the proxy (``PageVisit.requests.proxied``)."""
    errors: int = 0
    """Visits that reported an error."""


@dataclass(frozen=True)
class BrowserSnapshot:
    """The hybrid crawl at one moment: copies of its page counts and of the gate's
    traffic counts."""

    counts: BrowserCounts
    traffic: BrowserTraffic


class BrowserReport:
    """The ``browser`` report (module docstring); zeros for a crawl without
    ``browser:``."""

    name = "browser"

    def to_json(self, snap: StatsSnapshot) -> dict[str, Any]:
        b = snap.extensions.get(self.name)
        if not isinstance(b, BrowserSnapshot):
            b = BrowserSnapshot(BrowserCounts(), BrowserTraffic())
        d = {**asdict(b.counts), **asdict(b.traffic)}
        d["by_reason"] = dict(b.counts.by_reason)
        d["requests_per_page"] = round(d["page_requests"] / d["pages"], 2) if d["pages"] else 0.0
        return d

    def render_text(self, snap: StatsSnapshot) -> str:
        d = self.to_json(snap)
        why = ", ".join(f"{k} {v}" for k, v in sorted(d["by_reason"].items())) or "-"
        return "\n".join([
            "Browser report",
            f"  pages rendered: {d['pages']} (by rule: {why}); {d['errors']} with errors; "
            f"{d['fell_back']} fetched by the bulk crawler instead",
            f"  requests by the pages: {d['page_requests']} ({d['requests_per_page']} a page), "
            f"{d['proxied']} through the proxy; {d['captured']} captured",
            f"  refused: {d['out_of_scope']} out of scope, {d['robots_excluded']} by robots.txt, "
            f"{d['not_a_page']} of no crawl page (the browser's own)",
            f"  marked seen for the bulk crawler: {d['marked_seen']}; outlinks added: "
            f"{d['outlinks_added']}; screenshot records: {d['screenshots']}",
        ]) + "\n"  # fmt: skip
