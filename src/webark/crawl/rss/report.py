"""The RSS report (``rss-report.txt`` / ``.json``; ``GET /reports/rss`` live): per site
its state, rounds, items found, minimum wait, next eligible time, URLs in progress, the
last emission and the last round's duration; per feed its URI, most recent entry,
implied pages, last fetch and how many fetches were unchanged (CrawlRSS's
``RssCrawlController`` report, with webark's names).

A :class:`~webark.crawl.reports.Report`: it renders the ``"rss"`` entry of the
snapshot's ``extensions`` (:class:`RssSnapshot`, taken by the scheduler), so it is the
same live and at the end.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from webark.crawl.rss.interval import format_interval
from webark.crawl.rss.model import FeedState, SiteConfig, SiteState
from webark.crawl.stats import StatsSnapshot

__all__ = ["FeedReport", "RssReport", "RssSnapshot", "SiteReport"]


@dataclass(frozen=True, slots=True)
class FeedReport:
    """One feed in the report."""

    uri: str
    active: bool
    implied_pages: tuple[str, ...]
    state: FeedState


@dataclass(frozen=True, slots=True)
class SiteReport:
    """One site in the report: its configuration, round state, feeds, when it is next
    eligible (wall-clock seconds; None when inactive) and its URLs in progress."""

    config: SiteConfig
    state: SiteState
    feeds: tuple[FeedReport, ...]
    next_eligible: float | None
    in_progress: int


@dataclass(frozen=True, slots=True)
class RssSnapshot:
    """The continuous crawl at one moment (``now``: wall-clock seconds)."""

    now: float
    sites: tuple[SiteReport, ...]
    hops_regex: str


def _iso(t: float | None) -> str | None:
    return None if t is None else datetime.fromtimestamp(t, UTC).isoformat(timespec="seconds")


def _round(t: float | None) -> float | None:
    return None if t is None else round(t, 3)


class RssReport:
    """The ``rss`` report (module docstring). Empty for a crawl without ``rss:``."""

    name = "rss"

    def to_json(self, snap: StatsSnapshot) -> dict[str, Any]:
        rss = snap.extensions.get(self.name)
        if not isinstance(rss, RssSnapshot):
            return {"sites": [], "crawling": 0, "waiting": 0, "feeds": 0}
        sites = []
        for s in rss.sites:
            st = s.state
            nxt = s.next_eligible
            sites.append({
                "site": s.config.name,
                "active": s.config.active,
                "state": st.phase.report_state,
                "phase": st.phase.value,
                "rounds": st.rounds,
                "items_found": st.items_found,
                "last_round_items": st.last_round_items,
                "min_wait_s": s.config.min_wait,
                "min_wait": format_interval(s.config.min_wait),
                "next_eligible": _iso(nxt),
                "next_eligible_in_s": None if nxt is None else round(max(0.0, nxt - rss.now), 3),
                "urls_in_progress": s.in_progress,
                "last_feed_update": _iso(st.last_feed_update),
                "last_round_end": _iso(st.last_round_end),
                "last_round_duration_s": _round(st.last_round_duration),
                "feeds": [{
                    "uri": f.uri,
                    "active": f.active,
                    "most_recent_entry": _iso(f.state.most_recent),
                    "implied_pages": list(f.implied_pages),
                    "last_fetch": _iso(f.state.last_fetch),
                    "last_status": f.state.last_status,
                    "last_error": f.state.last_error,
                    "fetches": f.state.fetches,
                    "unchanged": f.state.unchanged,
                    "entries_found": f.state.entries_found,
                } for f in s.feeds],
            })  # fmt: skip
        crawling = sum(1 for s in rss.sites if s.state.phase.report_state == "CRAWLING")
        return {"hops_regex": rss.hops_regex, "crawling": crawling,
                "waiting": len(sites) - crawling, "feeds": sum(len(s.feeds) for s in rss.sites),
                "sites": sites}  # fmt: skip

    def render_text(self, snap: StatsSnapshot) -> str:
        d = self.to_json(snap)
        out = [f"RSS report - {_iso(snap.now)}",
               f"  {len(d['sites'])} sites ({d['crawling']} crawling, {d['waiting']} waiting),"
               f" {d['feeds']} feeds; derived URIs scoped by hop path {d.get('hops_regex')}",
               ""]  # fmt: skip
        for s in d["sites"]:
            active = "" if s["active"] else " (inactive)"
            out += [
                f"Site: {s['site']}{active}",
                f"  State: {s['state']} ({s['phase']})",
                f"  Rounds: {s['rounds']}; items found: {s['items_found']}"
                f" ({s['last_round_items']} in the last round)",
                f"  Minimum wait between rounds: {s['min_wait']}",
                f"  Next eligible: {s['next_eligible'] or '-'}"
                + (f" (in {s['next_eligible_in_s']} s)" if s["next_eligible_in_s"] else ""),
                f"  URLs in progress: {s['urls_in_progress']}",
                f"  Last feed update: {s['last_feed_update'] or '-'}; last round "
                + ("-" if s["last_round_duration_s"] is None
                   else f"{s['last_round_duration_s']} s, ended {s['last_round_end']}"),
                "  Feeds:",
            ]  # fmt: skip
            for f in s["feeds"]:
                off = "" if f["active"] else " (inactive)"
                out.append(f"    {f['uri']}{off}")
                out.append(f"      most recent entry: {f['most_recent_entry'] or '-'};"
                           f" {f['entries_found']} entries found")  # fmt: skip
                out.append(f"      last fetch: {f['last_fetch'] or '-'} ({f['last_status']});"
                           f" {f['unchanged']} of {f['fetches']} fetches unchanged")  # fmt: skip
                if f["last_error"]:
                    out.append(f"      last error: {f['last_error']}")
                pages = ", ".join(f["implied_pages"]) or "-"
                out.append(f"      implied pages: {pages}")
            out.append("")
        return "\n".join(out) + "\n"
