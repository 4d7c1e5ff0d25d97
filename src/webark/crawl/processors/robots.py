"""The robots.txt prerequisite of an origin: fetched inline the first time the origin is
seen, written and logged as a capture (hop ``P``), kept in ``state/robots.sqlite``.

The first URI of an origin fetches its robots.txt while it holds its queue's in-flight
slot, so politeness still holds: the robots.txt capture is written to the WARC and
logged in crawl.log with hop path ``…P`` and the URI as via; then the URI goes back to
the head of its queue, which waits the politeness delay (robots.txt Crawl-delay
included) before the URI itself is fetched
(:meth:`~webark.crawl.frontier.Frontier.requeue`: the worker is free meanwhile, so ten
workers start fifty new hosts at once). Heritrix schedules prerequisites as separate
``P`` URIs instead; the log lines are the same. A robots.txt that redirects is followed
up to five hops, to any host (RFC 9309 §2.3.1.2), each hop logged with hop ``R``
(``PR``, ``PRR`` …) and the rules reached applied to the first origin (and to any
robots.txt on the way).

A robots.txt fetch that fails on the network (connection refused or lost, a timeout:
the statuses the frontier retries) is tried again like any fetch, as Heritrix retries a
prerequisite: the URI is deferred (-50, ``S_DEFERRED``: no line, back to its queue for
``retry_delay``) and fetches robots.txt again when it comes back, up to ``max_retries``
times. Only then is the failure logged (the robots.txt line with its -2/-3/-4) and the
origin taken as unreachable (the URI gets -61, and so do the origin's other URIs until
the entry expires). One network blip on a new host no longer loses the whole host.

The ``Sitemap:`` lines of a robots.txt become outlinks of it (hop ``M``, so ``…PM``),
through the scope into the frontier, as Heritrix's ``ExtractorRobotsTxt`` does: a
sitemap named only there is fetched too (and its URLs with it).

Across a ``kill -9``: an entry is saved in ``state/robots.sqlite`` right after its
crawl.log line; a robots.txt logged but not yet saved is read back from the WARC record
its line points at (neither fetched nor logged again; fetched and logged when that
record cannot be read).
"""

from __future__ import annotations

import base64
import json
import logging
import os
import sqlite3
from pathlib import Path

from webark.capture import capture_line
from webark.core.errors import WebarkError
from webark.crawl.context import CrawlContext, capture_meta
from webark.crawl.curi import CrawlURI
from webark.crawl.extract import resolve
from webark.crawl.frontier import Outcome, disposition, politeness_delay
from webark.crawl.resume import ResumeLog
from webark.crawl.scope import Decision
from webark.crawllog import CrawlLogLine
from webark.fetch import Exchange
from webark.fetch.body import decoded_body
from webark.robots import RobotsCache, RobotsEntry, RobotsMode, RobotsPolicy, robots_url
from webark.warc.payload import MAX_DECODED_BYTES, decode_bounded
from webark.warc.reader import ArchiveReader

__all__ = ["ROBOTS_REDIRECTS", "RobotsDeferred", "RobotsPrerequisite"]

log = logging.getLogger(__name__)

ROBOTS_REDIRECTS = 5
"""Redirects of a robots.txt followed (RFC 9309 §2.3.1.2: at least five)."""


class RobotsDeferred(WebarkError):
    """The robots.txt fetch failed on the network and will be tried again with the URI
    (module docstring): the URI is deferred (-50)."""


def redirect_target(ex: Exchange) -> str | None:
    """The absolute http(s) URL a 3xx response redirects to, or None."""
    if not ex.ok or ex.http_status is None or not 300 <= ex.http_status < 400:
        return None
    location = ex.header("Location")
    return resolve(ex.url, location) if location else None


class RobotsPrerequisite:
    """The robots.txt rules of each origin (module docstring).

    Args:
        ctx: the crawl.
        state_db: ``state/robots.sqlite`` (created).
        warcs_dir: the job's WARC folder (for reading back a logged robots.txt).
        resume_log: what the runs before a resume logged.
    """

    def __init__(self, ctx: CrawlContext, state_db: Path, warcs_dir: Path,
                 resume_log: ResumeLog) -> None:  # fmt: skip
        self.ctx = ctx
        self.cache = RobotsCache()
        self.mode = RobotsMode(ctx.job.robots)
        self.warcs_dir = warcs_dir
        self.resume_log = resume_log
        self._db = sqlite3.connect(str(state_db), isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("CREATE TABLE IF NOT EXISTS robots (key TEXT PRIMARY KEY, row TEXT)")
        self._load()

    def close(self) -> None:
        """Close the state database."""
        self._db.close()

    async def policy_for(self, curi: CrawlURI, worker: int) -> tuple[RobotsPolicy | None, float]:
        """The robots.txt policy of the URI's origin (None when robots.txt is ignored),
        fetching it inline (prerequisite, hop ``P``) when not known yet, and the
        politeness delay owed before the URI itself may be fetched: seconds, 0 when
        nothing was fetched.

        Raises:
            RobotsDeferred: the fetch failed on the network and the URI has retries
                left (module docstring).
            FetchAborted: the crawl is stopping (:mod:`webark.crawl.stopping`).
        """
        if self.mode is RobotsMode.IGNORE:
            return None, 0.0
        policy = self.cache.get(curi.uri)
        if policy is not None:
            return policy, 0.0
        ctx = self.ctx
        assert ctx.fetcher is not None
        rurl = robots_url(curi.uri)
        pre = curi.child(rurl, "P")
        # each hop is a capture, logged (hop R); more redirects or a loop leave a 3xx:
        # robots.txt unavailable (allow all)
        chain = []
        known = None  # the entry of a robots.txt redirected to, when already fetched
        for hops in range(ROBOTS_REDIRECTS + 1):
            chain.append(pre.uri)
            ex = await ctx.fetches.run(ctx.fetcher.fetch(pre.uri))
            if hops == 0 and not ex.ok and disposition(
                ex.status, curi.retries, ctx.frontier_config
            ) is Outcome.RETRY:  # tried again with the URI; logged once final
                raise RobotsDeferred(f"{rurl}: {ex.error or ex.status}")
            await self._capture(pre, ex, worker)
            target = redirect_target(ex) if hops < ROBOTS_REDIRECTS else None
            if target is None or target in chain:  # a loop: robots.txt unavailable
                break
            if target == robots_url(target):
                known = self.cache.entry(target)
                if known is not None:  # not fetched (nor logged) twice
                    break
            pre = pre.child(target, "R")
        if known is not None:
            body, status = known.body, known.http_status
        else:
            ok = ex.ok and 200 <= ex.status < 300
            body = decoded_body(ex, MAX_DECODED_BYTES).data if ok else b""
            status = ex.http_status if ex.ok else None
        policy = self.cache.record(rurl, status, body)
        for url in chain[1:]:  # the robots.txt of another origin on the way: the same
            if url == robots_url(url) and self.cache.entry(url) is None:
                self.cache.record(url, status, body)
                self._persist(url)
        self._persist(rurl)
        if known is None:  # a robots.txt redirected to, already known: added with it
            self._add_sitemaps(policy, pre)
        # politeness between the prerequisite and the URI itself, as between two URIs
        delay = politeness_delay(ex.duration_ms / 1000.0, ctx.frontier_config,
                                 policy.crawl_delay(ctx.job.robots_token))  # fmt: skip
        return policy, delay

    async def _capture(self, pre: CrawlURI, ex: Exchange, worker: int) -> None:
        """Write (deduplicated like any capture; never conditional: the rules are needed)
        and log one robots.txt fetch, or one hop of its redirects."""
        ctx = self.ctx
        assert ctx.backend is not None
        result = None
        if ex.ok:
            result = await ctx.backend.archive(ex, capture_meta(pre, worker))
            if result.revisit_of is not None:
                ctx.stats.note_revisit(pre.uri, result.revisit_of.target_uri)
        # logged before the rules are saved: after a kill in between, resume reads them
        # back from the WARC records the lines point at (_from_warc)
        meta = capture_meta(pre, worker)
        line = capture_line(pre.uri, ex.status, meta, exchange=ex, result=result)
        ctx.log(line, duplicate=result is not None and result.revisit_kind == "digest")

    def _add_sitemaps(self, policy: RobotsPolicy, robots: CrawlURI) -> None:
        """The ``Sitemap:`` URLs of ``policy`` (the robots.txt fetched as ``robots``)
        as outlinks of it, hop ``M``, through the scope into the frontier (a URL already
        seen is not queued again: a resume or an expired entry adds nothing twice)."""
        ctx = self.ctx
        if ctx.frontier is None:
            return
        scope = ctx.scope_for(robots)
        children = []
        for ref in policy.sitemaps[: ctx.job.max_outlinks]:
            url = resolve(robots.uri, ref.strip())
            if url is not None:
                child = robots.child(url, "M")
                if scope.decide(child) is Decision.ACCEPT:
                    children.append(child)
        if children:
            ctx.frontier.add_many(children)

    # -- state ------------------------------------------------------------------------
    def _persist(self, url: str) -> None:
        """Keep the origin's robots.txt entry in ``state/robots.sqlite`` so a resumed
        crawl does not fetch it again before it expires (Heritrix keeps robots in its
        BDB state as well)."""
        entry = self.cache.entry(url)
        if entry is None:
            return
        row = entry.to_row()
        body = row["body"]
        row["body"] = base64.b64encode(body if isinstance(body, bytes) else b"").decode()
        self._db.execute("INSERT OR REPLACE INTO robots VALUES (?, ?)",
                         (entry.key, json.dumps(row)))  # fmt: skip

    def _load(self) -> None:
        entries = []
        for (text,) in self._db.execute("SELECT row FROM robots"):
            try:
                row = json.loads(text)
                row["body"] = base64.b64decode(row["body"])
                entries.append(RobotsEntry.from_row(row))
            except (KeyError, TypeError, ValueError) as e:
                log.warning("ignoring a bad robots.txt entry in the state: %s", e)
        self.cache.load(entries)
        # robots.txt logged by an earlier run that was killed before saving it
        for url, line in list(self.resume_log.robots.items()):
            if (
                line.hop_path.endswith("P")
                and self.cache.entry(url) is None
                and self._from_warc(url, line)
            ):
                self._persist(url)
                policy = self.cache.get(url, allow_stale=True)
                if policy is not None:  # killed before they were queued, maybe
                    robots = CrawlURI(url, line.hop_path, via=line.via, source=line.source_tag)
                    self._add_sitemaps(policy, robots)

    def _from_warc(self, url: str, line: CrawlLogLine) -> bool:
        """Record the robots.txt that ``line`` (of an earlier run) logged, reading its
        body from the WARC record the line's ``warcFilename``/``warcFileOffset`` point
        at (through the logged redirect hops, if any), so a resumed crawl neither
        fetches it again nor logs a second line for one URI. A failed fetch (status
        < 0) is recorded as unreachable again. Returns False when a record or a hop
        cannot be used (then the robots.txt is fetched and logged as a new capture)."""
        try:
            for _ in range(ROBOTS_REDIRECTS + 1):
                if line.status < 0:
                    self.cache.record(url, None)
                    return True
                extra = json.loads(line.extra_info or "{}")
                path = self.warcs_dir / os.path.basename(str(extra["warcFilename"]))
                rec = next(iter(ArchiveReader(str(path), start=int(extra["warcFileOffset"]))))
                head = rec.http
                if rec.type != "response" or rec.target_uri != line.uri or head is None:
                    return False
                status = head.status or 0
                location = next((v for k, v in head.headers if k.lower() == "location"), None)
                target = resolve(line.uri, location) if location else None
                if 300 <= status < 400 and target is not None:
                    hop = self.resume_log.robots.get(target)
                    if hop is None:  # killed within the redirects: fetch them again
                        return False
                    line = hop
                    continue
                body = b""
                if 200 <= status < 300:
                    body = decode_bounded(rec.payload(), head.content_encoding,
                                          MAX_DECODED_BYTES).data  # fmt: skip
                self.cache.record(url, status, body)
                return True
        except Exception as e:  # no such file/record, a revisit …: fetch it again
            log.warning("resume: robots.txt %s not read back from its WARC: %s", url, e)
        return False
