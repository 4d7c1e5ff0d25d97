"""Crawl reports: any object with a ``name`` and two render methods, fed a read-only
:class:`~webark.crawl.stats.StatsSnapshot` (DESIGN.md: a ``Report`` protocol, never a
base class to subclass).

The built-in reports are Heritrix 3's ten, with its file names (``crawl``, ``seeds``,
``hosts``, ``source``, ``mimetype``, ``responsecode``, ``processors``,
``frontier-summary``, ``frontier-nonempty``, ``threads``), plus ``dedup`` (the split of
Heritrix's DeDuplicator module: exact-URL / canonical-URL / digest-only hits, bytes
saved, server-not-modified answers). :func:`write_reports` writes each as
``JOBDIR/reports/{name}-report.txt`` and ``.json``; :func:`report_by_name` finds one
for the control API (``GET /reports/{name}``).

Times in JSON are ISO 8601 UTC strings (``…+00:00``), durations seconds, sizes bytes.
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
    "DedupReport",
    "FrontierNonemptyReport",
    "FrontierSummaryReport",
    "HostsReport",
    "MimeTypesReport",
    "ProcessorsReport",
    "Report",
    "ResponseCodeReport",
    "SeedsReport",
    "SourceTagsReport",
    "ToeThreadsReport",
    "report_by_name",
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
            "started": _iso(snap.crawl_started or snap.started),
            "ended": _iso(snap.ended),
            "stop_reason": snap.stop_reason,
            "duration_s": round(snap.elapsed, 3),
            "seeds_crawled": seeds_ok,
            "seeds_uncrawled": len(snap.seeds) - seeds_ok,
            "hosts_visited": len(snap.hosts) - ("dns:" in snap.hosts),  # Heritrix: not dns:
            "uris_processed": snap.processed,
            "uris_succeeded": snap.succeeded,
            "uris_failed": snap.failed,
            "uris_robots_excluded": snap.robots_excluded,
            "uris_disregarded": snap.disregarded,
            "uris_queued": snap.queued,
            "docs_per_s": round(snap.uris_per_second, 3),
            "kib_per_s": round(snap.kib_per_second, 3),
            "total_bytes": snap.bytes,
            "novel_bytes": snap.novel_bytes,
            "duplicate_by_hash": snap.duplicates,
            "duplicate_bytes": snap.duplicate_bytes,
            "not_modified": snap.not_modified,
            "not_modified_bytes": snap.not_modified_bytes,
            "warc_bytes": snap.warc_bytes,
            **_browser_pages(snap),
        }

    def render_text(self, snap: StatsSnapshot) -> str:
        return "".join(f"{k}: {'-' if v is None else v}\n" for k, v in self.to_json(snap).items())


def _browser_pages(snap: StatsSnapshot) -> dict[str, int]:
    """``browser_pages`` (pages the hybrid crawl rendered in its browser) when the crawl
    has a ``browser:`` section, else nothing."""
    from webark.crawl.browser.report import BrowserSnapshot

    ext = snap.extensions.get("browser")
    return {"browser_pages": ext.counts.pages} if isinstance(ext, BrowserSnapshot) else {}


class HostsReport:
    name = "hosts"

    """Heritrix's hosts report: a row per host (``dns:`` lookups in the row ``dns:``),
    ``remaining`` the URIs its queues still hold (queue keys are ``host[:port]``; the
    snapshot's largest queues)."""

    def to_json(self, snap: StatsSnapshot) -> list[dict[str, Any]]:
        remaining: dict[str, int] = {}
        for q in snap.frontier.top_queues if snap.frontier else ():
            host = q.key.rsplit(":", 1)[0] if q.key.count(":") == 1 else q.key
            remaining[host] = remaining.get(host, 0) + q.queued
        rows = sorted(snap.hosts.items(), key=lambda kv: (-kv[1].urls, kv[0]))
        return [{"host": h, **vars(s), "remaining": remaining.get(h, 0)} for h, s in rows]

    def render_text(self, snap: StatsSnapshot) -> str:
        """Heritrix 3's columns and header, byte for byte (``HostsReport``)."""
        head = ("[#urls]", "[#bytes]", "[host]", "[#robots]", "[#remaining]", "[#novel-urls]",
                "[#novel-bytes]", "[#dup-by-hash-urls]", "[#dup-by-hash-bytes]",
                "[#not-modified-urls]", "[#not-modified-bytes]")  # fmt: skip
        rows = [
            (r["urls"], r["bytes"], r["host"], r["robots_excluded"], r["remaining"],
             r["novel_urls"], r["novel_bytes"], r["duplicates"], r["duplicate_bytes"],
             r["not_modified"], r["not_modified_bytes"])
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
        if snap.frontier is None:
            return "frontier unstarted\n"
        data = self.to_json(snap)
        tops = data.pop("top_queues", [])
        out = "".join(f"{k}: {v}\n" for k, v in data.items())
        if tops:
            out += "\n" + _table(
                ("queue", "#queued", "#finished", "#bytes"),
                [(q["key"], q["queued"], q["finished"], q["bytes"]) for q in tops],
            )
        return out


_PROCESSOR_FUNCTIONS = {
    "preconditions": "scheme check; dns: lookup and robots.txt prerequisites, robots exclusion",
    "fetchHttp": "fetch HTTP(S) URIs (conditional on recrawl); after-fetch decide rules",
    "extractors": "link extraction (HTTP headers, HTML, CSS, JS, sitemaps, feeds)",
    "warcWriter": "capture back end: dedup decision, response/revisit, request and "
    "metadata records, dedup index",
    "candidates": "scope decisions on outlinks; frontier adds; quota-blocked URIs logged",
    "disposition": "crawl.log line (unless retried); politeness delay of the queue",
    "rssFeeds": "continuous crawling: a round's feeds read, new entries and implied pages",
}


class ProcessorsReport:
    """Heritrix's ``processors-report.txt``: per processor stage, the URIs it handled
    and the time spent in it (seconds summed over workers; average milliseconds per
    URI). ``items`` is the number of outlinks ``candidates`` checked."""

    name = "processors"

    def to_json(self, snap: StatsSnapshot) -> list[dict[str, Any]]:
        return [
            {
                "processor": p.name,
                "function": _PROCESSOR_FUNCTIONS.get(p.name, ""),
                "uris_handled": p.handled,
                "seconds": round(p.seconds, 3),
                "avg_ms": round(1000 * p.seconds / p.handled, 3) if p.handled else 0.0,
                "items": p.items,
            }
            for p in snap.processors
        ]

    def render_text(self, snap: StatsSnapshot) -> str:
        rows = self.to_json(snap)
        out = [f"Processors report - {_iso(snap.now)}", f"  Job being crawled: {snap.job_name}",
               f"  Number of processors: {len(rows)}", ""]  # fmt: skip
        for r in rows:
            out += [
                f"Processor: {r['processor']}",
                f"  Function:          {r['function']}",
                f"  CrawlURIs handled: {r['uris_handled']}",
                f"  Seconds spent:     {r['seconds']} (avg {r['avg_ms']} ms)",
            ]
            if r["processor"] == "candidates":
                out.append(f"  Links checked:     {r['items']}")
            out.append("")
        return "\n".join(out)


def _queue_state(q: Any, now: float) -> str:
    if q.in_flight:
        return "in-flight"
    if q.blocked:
        return "blocked"
    return "snoozed" if q.due > now else "ready"


class FrontierNonemptyReport:
    """Heritrix's ``frontier-nonempty-report.txt``: every queue with URIs queued or in
    flight (at most the queues the snapshot holds, largest first): its size, URIs
    finished, state (``in-flight`` / ``ready`` / ``snoozed``), next-ready time and the
    wait until then (Heritrix "wakes in"), the delay set after its last fetch
    (politeness or back-off, seconds; when known), consecutive 429/5xx errors, and the
    URI in flight with its retries and processor stage."""

    name = "frontier-nonempty"

    def to_json(self, snap: StatsSnapshot) -> dict[str, Any]:
        f = snap.frontier
        if f is None:
            return {"nonempty_queues": 0, "listed": 0, "queues": []}
        by_key = {w.key: w for w in snap.workers if w.uri is not None}
        queues = []
        for q in f.top_queues:
            if q.queued == 0 and not q.in_flight:
                continue
            last = snap.queue_finished.get(q.key)
            w = by_key.get(q.key)
            queues.append({
                "queue": q.key,
                "queued": q.queued,
                "finished": q.finished,
                "succeeded": q.succeeded,
                "bytes": q.bytes,
                "state": _queue_state(q, snap.now),
                "next_ready": _iso(q.due),
                "wakes_in_s": round(max(0.0, q.due - snap.now), 3),
                "delay_s": round(q.due - last, 3) if last is not None and q.due >= last else None,
                "errors": q.errors,
                "in_flight_uri": w.uri if w else None,
                "in_flight_retries": w.retries if w else None,
                "in_flight_stage": w.stage if w else None,
            })  # fmt: skip
        nonempty = f.ready_queues + f.snoozed_queues + f.in_flight_queues
        return {"nonempty_queues": nonempty, "listed": len(queues), "queues": queues}

    def render_text(self, snap: StatsSnapshot) -> str:
        data = self.to_json(snap)
        if snap.frontier is None:
            return "frontier unstarted\n"
        if not data["queues"]:
            return "frontier empty\n"
        out = [f"{data['nonempty_queues']} non-empty queues ({data['listed']} listed)", ""]
        for q in data["queues"]:
            out.append(f"Queue {q['queue']} ({q['state']})")
            out.append(f"  {q['queued']} items, {q['finished']} finished, {q['bytes']} bytes")
            out.append(f"  next ready: {q['next_ready']} (wakes in {q['wakes_in_s']} s)")
            delay = "-" if q["delay_s"] is None else f"{q['delay_s']} s"
            out.append(f"  delay after last fetch: {delay}; consecutive errors: {q['errors']}")
            if q["in_flight_uri"]:
                out.append(f"  in flight: {q['in_flight_uri']} (retries {q['in_flight_retries']},"
                           f" {q['in_flight_stage']})")  # fmt: skip
            out.append("")
        return "\n".join(out)


class ToeThreadsReport:
    """Heritrix's ``threads-report.txt``: each worker with the URI it processes, its
    hop path and via, the processor stage, and since when (ISO time and seconds)."""

    name = "threads"

    def to_json(self, snap: StatsSnapshot) -> dict[str, Any]:
        workers: list[dict[str, Any]] = [
            {
                "worker": w.worker,
                "uri": w.uri,
                "stage": w.stage,
                "since": _iso(w.since),
                "stage_s": round(max(0.0, snap.now - w.since), 3),
                "uri_s": None if w.started is None else round(max(0.0, snap.now - w.started), 3),
                "hops": w.hops,
                "via": w.via,
                "queue": w.key or None,
                "retries": w.retries,
            }
            for w in snap.workers
        ]
        busy = sum(1 for w in snap.workers if w.uri is not None)
        steps: dict[str, int] = {}
        for ws in snap.workers:
            steps[ws.stage] = steps.get(ws.stage, 0) + 1
        return {"workers": len(workers), "busy": busy, "stages": steps, "threads": workers}

    def render_text(self, snap: StatsSnapshot) -> str:
        data = self.to_json(snap)
        stages = ", ".join(f"{n} {k}" for k, n in sorted(data["stages"].items()))
        out = [f"Toe threads report - {_iso(snap.now)}",
               f" {data['workers']} workers, {data['busy']} busy ({stages})", ""]  # fmt: skip
        for w in data["threads"]:
            if w["uri"] is None:
                out.append(f"[#{w['worker']}] idle since {w['since']}")
            else:
                out.append(f"[#{w['worker']}] {w['uri']} {w['hops'] or '-'} {w['via'] or '-'}")
                out.append(f"    {w['stage']} for {w['stage_s']} s (URI for {w['uri_s']} s),"
                           f" queue {w['queue']}, retries {w['retries']}")  # fmt: skip
        return "\n".join(out) + "\n"


class DedupReport:
    """Dedup at crawl time: revisits by kind of original (``exact-url``,
    ``canonical-url``, ``digest-only``; ``unknown`` for revisits counted from crawl.log
    on ``--resume``), ``server-not-modified`` answers (304 to a conditional request),
    and the payload bytes not stored again (Heritrix DeDuplicator report)."""

    name = "dedup"

    def to_json(self, snap: StatsSnapshot) -> dict[str, Any]:
        kinds = ("exact-url", "canonical-url", "digest-only", "unknown", "server-not-modified")
        hits = {k: snap.dedup_hits.get(k, 0) for k in kinds}
        saved = {k: snap.dedup_bytes.get(k, 0) for k in kinds}
        total = sum(hits.values())
        return {
            "hits": hits,
            "bytes_saved": saved,
            "total_hits": total,
            "total_bytes_saved": sum(saved.values()),
            "duplicate_by_hash": snap.duplicates,
            "server_not_modified": snap.not_modified,
            "novel_bytes": snap.novel_bytes,
            "succeeded": snap.succeeded,
        }

    def render_text(self, snap: StatsSnapshot) -> str:
        d = self.to_json(snap)
        rows = [(d["hits"][k], d["bytes_saved"][k], k) for k in d["hits"]]
        rows.append((d["total_hits"], d["total_bytes_saved"], "total"))
        return _table(("#hits", "#bytes-saved", "kind"), rows) + (
            f"\nnovel bytes: {d['novel_bytes']}\n"
            f"URIs succeeded: {d['succeeded']}\n"
        )


DEFAULT_REPORTS: tuple[Report, ...] = (
    CrawlSummaryReport(),
    SeedsReport(),
    HostsReport(),
    SourceTagsReport(),
    MimeTypesReport(),
    ResponseCodeReport(),
    ProcessorsReport(),
    FrontierSummaryReport(),
    FrontierNonemptyReport(),
    ToeThreadsReport(),
    DedupReport(),
)


def report_by_name(name: str, reports: Iterable[Report] = DEFAULT_REPORTS) -> Report | None:
    """The report called ``name`` (also accepted: ``{name}-report``, ``.txt``/``.json``
    suffixes), or ``None``."""
    for suffix in (".txt", ".json"):
        name = name.removesuffix(suffix)
    name = name.removesuffix("-report")
    return next((r for r in reports if r.name == name), None)


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
