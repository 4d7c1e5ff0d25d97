"""Crawl reports: any object with a ``name`` and two render methods, fed a read-only
:class:`~webark.crawl.stats.StatsSnapshot` (DESIGN.md: a ``Report`` protocol, never a
base class to subclass).

The built-in reports follow Heritrix 3's (``CrawlSummaryReport``, ``HostsReport``,
``MimetypesReport``, ``ResponseCodeReport``, ``SeedsReport``, ``SourceTagsReport``,
``FrontierSummaryReport``); :func:`write_reports` writes each as
``JOBDIR/reports/{name}-report.txt`` and ``.json``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from webark.crawl.stats import StatsSnapshot
from webark.crawllog.status import status_meaning

__all__ = [
    "DEFAULT_REPORTS",
    "CrawlSummaryReport",
    "FrontierSummaryReport",
    "HostsReport",
    "MimeTypesReport",
    "Report",
    "ResponseCodeReport",
    "SeedsReport",
    "SourceTagsReport",
    "write_reports",
]


@runtime_checkable
class Report(Protocol):
    """A crawl report. ``name`` becomes the file name (``{name}-report.txt``)."""

    name: str

    def render_text(self, snap: StatsSnapshot) -> str:
        """Human-readable text (Heritrix's report layout where it has one)."""
        ...

    def to_json(self, snap: StatsSnapshot) -> Any:
        """The same content as JSON-serializable data."""
        ...


def _iso(t: float | None) -> str | None:
    return None if t is None else datetime.fromtimestamp(t, UTC).isoformat(timespec="seconds")


def _table(header: tuple[str, ...], rows: Iterable[tuple[Any, ...]]) -> str:
    return "\n".join(" ".join(str(c) for c in r) for r in [header, *rows]) + "\n"


class CrawlSummaryReport:
    name = "crawl"

    def to_json(self, snap: StatsSnapshot) -> dict[str, Any]:
        seeds_ok = sum(1 for st, _ in snap.seeds.values() if st is not None and st > 0)
        return {
            "job": snap.job_name,
            "started": _iso(snap.started),
            "ended": _iso(snap.ended),
            "stop_reason": snap.stop_reason,
            "duration_s": round(snap.elapsed, 3),
            "seeds_crawled": seeds_ok,
            "seeds_uncrawled": len(snap.seeds) - seeds_ok,
            "hosts_visited": len(snap.hosts),
            "uris_processed": snap.processed,
            "uris_succeeded": snap.succeeded,
            "uris_failed": snap.failed,
            "uris_robots_excluded": snap.robots_excluded,
            "uris_queued": snap.queued,
            "docs_per_s": round(snap.uris_per_second, 3),
            "kib_per_s": round(snap.kib_per_second, 3),
            "total_bytes": snap.bytes,
            "novel_bytes": snap.novel_bytes,
            "duplicate_by_hash": snap.duplicates,
            "duplicate_bytes": snap.duplicate_bytes,
        }

    def render_text(self, snap: StatsSnapshot) -> str:
        return "".join(f"{k}: {'-' if v is None else v}\n" for k, v in self.to_json(snap).items())


class HostsReport:
    name = "hosts"

    def to_json(self, snap: StatsSnapshot) -> list[dict[str, Any]]:
        rows = sorted(snap.hosts.items(), key=lambda kv: (-kv[1].urls, kv[0]))
        return [{"host": h, **vars(s)} for h, s in rows]

    def render_text(self, snap: StatsSnapshot) -> str:
        head = ("#urls", "#bytes", "host", "#robots", "#errors", "#dup", "#dupbytes")
        rows = [
            (r["urls"], r["bytes"], r["host"], r["robots_excluded"], r["errors"],
             r["duplicates"], r["duplicate_bytes"])
            for r in self.to_json(snap)
        ]  # fmt: skip
        return _table(head, rows)


class MimeTypesReport:
    name = "mimetype"

    def to_json(self, snap: StatsSnapshot) -> list[dict[str, Any]]:
        rows = sorted(snap.mimes.items(), key=lambda kv: (-kv[1][0], kv[0]))
        return [{"mime": m, "urls": n, "bytes": b} for m, (n, b) in rows]

    def render_text(self, snap: StatsSnapshot) -> str:
        rows = [(r["urls"], r["bytes"], r["mime"]) for r in self.to_json(snap)]
        return _table(("#urls", "#bytes", "mime-types"), rows)


class ResponseCodeReport:
    name = "responsecode"

    def to_json(self, snap: StatsSnapshot) -> list[dict[str, Any]]:
        rows = sorted(snap.statuses.items(), key=lambda kv: (-kv[1], kv[0]))
        return [{"code": c, "urls": n, "meaning": status_meaning(c)} for c, n in rows]

    def render_text(self, snap: StatsSnapshot) -> str:
        return _table(("#urls", "rescode"), [(r["urls"], r["code"]) for r in self.to_json(snap)])


class SeedsReport:
    name = "seeds"

    def to_json(self, snap: StatsSnapshot) -> list[dict[str, Any]]:
        return [
            {"seed": s, "status": st, "redirect": red}
            for s, (st, red) in sorted(snap.seeds.items())
        ]

    def render_text(self, snap: StatsSnapshot) -> str:
        rows = [
            ("CRAWLED" if (r["status"] or 0) > 0 else "NOTCRAWLED", r["status"] or 0, r["seed"],
             r["redirect"] or "")
            for r in self.to_json(snap)
        ]  # fmt: skip
        return _table(("[code]", "[status]", "[seed]", "[redirect]"), rows)


class SourceTagsReport:
    name = "source"

    def to_json(self, snap: StatsSnapshot) -> list[dict[str, Any]]:
        return [{"source": s, "urls": n} for s, n in sorted(snap.source_tags.items())]

    def render_text(self, snap: StatsSnapshot) -> str:
        rows = [(r["source"], r["urls"]) for r in self.to_json(snap)]
        return _table(("[source]", "[#urls]"), rows)


class FrontierSummaryReport:
    name = "frontier-summary"

    def to_json(self, snap: StatsSnapshot) -> dict[str, Any]:
        f = snap.frontier
        if f is None:
            return {}
        return {
            "queued": f.queued,
            "in_flight": f.in_flight,
            "finished": f.finished,
            "succeeded": f.succeeded,
            "blocked_by_quota": f.blocked_by_quota,
            "bytes": f.bytes,
            "queues": f.queues,
            "ready_queues": f.ready_queues,
            "snoozed_queues": f.snoozed_queues,
            "in_flight_queues": f.in_flight_queues,
            "blocked_queues": f.blocked_queues,
            "quota_reached": f.quota_reached,
            "top_queues": [
                {"key": q.key, "queued": q.queued, "finished": q.finished, "bytes": q.bytes}
                for q in f.top_queues
            ],
        }

    def render_text(self, snap: StatsSnapshot) -> str:
        data = self.to_json(snap)
        tops = data.pop("top_queues", [])
        out = "".join(f"{k}: {v}\n" for k, v in data.items())
        if tops:
            out += "\n" + _table(
                ("queue", "#queued", "#finished", "#bytes"),
                [(q["key"], q["queued"], q["finished"], q["bytes"]) for q in tops],
            )
        return out


DEFAULT_REPORTS: tuple[Report, ...] = (
    CrawlSummaryReport(),
    SeedsReport(),
    HostsReport(),
    SourceTagsReport(),
    MimeTypesReport(),
    ResponseCodeReport(),
    FrontierSummaryReport(),
)


def write_reports(
    directory: str | Path, snap: StatsSnapshot, reports: Iterable[Report] = DEFAULT_REPORTS
) -> list[Path]:
    """Write ``{name}-report.txt`` and ``{name}-report.json`` for each report; returns
    the paths written."""
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    out = []
    for r in reports:
        txt = d / f"{r.name}-report.txt"
        txt.write_text(r.render_text(snap), encoding="utf-8")
        js = d / f"{r.name}-report.json"
        js.write_text(json.dumps(r.to_json(snap), indent=2, default=str) + "\n", encoding="utf-8")
        out += [txt, js]
    return out
