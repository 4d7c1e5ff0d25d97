"""Changes to a running crawl beyond pause and delays: reject rules that also purge the
frontier, deleting queued URIs by regex, and per-host politeness and quotas — what a
Heritrix operator does from the job console (``deleteURIs``, scope sheets) and a
grab-site user with live ignore patterns.

Every change is made from the crawl's event loop (the control API's handlers), takes
effect at the next URI, and is saved in ``state/job.json``, so ``--resume`` keeps it:

* reject rules are entries of the job's ``scope:`` lists (``reject_surt_prefixes``,
  ``reject_regex``, ``reject_hosts``), judged where Heritrix's default chain judges
  them (:func:`~webark.crawl.scope.build_scope`);
* per-host settings are the job's ``hosts:`` mapping
  (:data:`~webark.crawl.politeness.QUEUE_SETTINGS`).

URIs finished without a fetch get their crawl.log line, as Heritrix writes one for
every URI it disregards: ``-5000`` (``S_OUT_OF_SCOPE``, "out of scope on recheck") for
queued URIs a new reject rule matches, ``-6000`` (``S_DELETED_BY_USER``) for URIs deleted
by regex, ``-5003`` with ``Q:hostQuota`` for those a lowered quota blocks. The frontier
finishes them in one transaction before the lines are written (as for quotas: a kill
in between loses lines, never URIs).
"""

from __future__ import annotations

import dataclasses
import logging
import re
from collections.abc import Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from webark.crawl.control import ControlError
from webark.crawl.curi import politeness_key
from webark.crawl.job import JobConfigError, check_hosts
from webark.crawl.processors.disposition import log_blocked, log_unfetched
from webark.crawl.scope import Decision, ScopeConfigError, build_scope
from webark.crawllog.status import S_DELETED_BY_USER, S_OUT_OF_SCOPE

if TYPE_CHECKING:
    from webark.crawl.control import CrawlControl
    from webark.crawl.curi import CrawlURI
    from webark.crawl.scope import DecideRule

__all__ = [
    "REJECT_KINDS",
    "add_reject_rule",
    "delete_uris",
    "host_settings",
    "reject_rules",
    "remove_reject_rule",
    "set_host",
]

log = logging.getLogger(__name__)

REJECT_KINDS: dict[str, str] = {
    "surt": "reject_surt_prefixes",
    "regex": "reject_regex",
    "host": "reject_hosts",
}
"""Kinds of live reject rule → the ``scope:`` key that holds them: a SURT prefix
(``http://(org,example,)/cal`` or a URL/host, Heritrix negative SURT prefixes), a regex
over the whole URI (Python ``re``, Heritrix ``MatchesListRegexDecideRule``), a host
(exact, port ignored, Heritrix ``OnHostsDecideRule``)."""


def reject_rules(control: CrawlControl) -> dict[str, list[str]]:
    """The job's reject rules by kind (:data:`REJECT_KINDS`), the job file's and those
    added while running."""
    scope = control.controller.job.scope
    return {kind: [str(v) for v in scope.get(key) or []] for kind, key in REJECT_KINDS.items()}


def _key_of(kind: str) -> str:
    if kind not in REJECT_KINDS:
        raise ControlError(f"kind: expected one of {', '.join(REJECT_KINDS)}, got {kind!r}")
    return REJECT_KINDS[kind]


def _set_scope(control: CrawlControl, scope: dict[str, Any]) -> None:
    """Rebuild the crawl's scope from ``scope`` (the job's ``scope:`` mapping) and save
    it in ``state/job.json``.

    Raises:
        ControlError: the scope cannot be built (the message names the entry).
    """
    ctl = control.controller
    try:
        ctl.scope = build_scope(scope, ctl.job.seeds)
    except ScopeConfigError as e:
        raise ControlError(str(e)) from None
    ctl.job = dataclasses.replace(ctl.job, scope=scope)
    ctl.job.save()


def _one_rule(key: str, value: str) -> DecideRule:
    try:
        seq = build_scope({key: [value]}, [])
    except ScopeConfigError as e:
        raise ControlError(str(e)) from None
    return next(r for r, name in zip(seq.rules, seq.names, strict=True) if name == key)


def add_reject_rule(control: CrawlControl, kind: str, value: str) -> dict[str, Any]:
    """Add a reject rule of ``kind`` (:data:`REJECT_KINDS`) and finish every queued URI
    it rejects with ``-5000`` (prerequisites, hop ``P``, are kept: the default chain
    accepts them after the reject rules). URIs in flight finish; links found later are
    judged by the new scope.

    Returns:
        ``{"kind", "value", "purged": n, "rules": reject_rules()}``.

    Raises:
        ControlError: an unknown kind, an empty or invalid value (bad regex, SURT).
        ControlStateError: the crawl is stopping, finished or not started.
    """
    control._require_running("add a reject rule")
    key = _key_of(kind)
    value = str(value).strip()
    if not value:
        raise ControlError("value: give the SURT prefix, regex or host to reject")
    rule = _one_rule(key, value)
    ctl = control.controller
    frontier = ctl.frontier
    if frontier is None:
        raise ControlError("the crawl has not started yet")
    scope = dict(ctl.job.scope)
    entries = [str(v) for v in scope.get(key) or []]
    if value not in entries:
        scope[key] = [*entries, value]
        _set_scope(control, scope)

    def rejected(c: CrawlURI) -> bool:
        return not c.hops.endswith("P") and rule.decide(c) is Decision.REJECT

    purged = frontier.purge(rejected, S_OUT_OF_SCOPE)
    log_unfetched(ctl.ctx, purged, S_OUT_OF_SCOPE, 0)
    log.warning("reject rule %s %r added: %d queued URI(s) purged (crawl.log -5000)",
                kind, value, len(purged))  # fmt: skip
    return {"kind": kind, "value": value, "purged": len(purged), "rules": reject_rules(control)}


def remove_reject_rule(control: CrawlControl, kind: str, value: str) -> dict[str, Any]:
    """Remove a reject rule (the job file's or one added while running). URIs it
    purged stay finished; links found from now on are judged without it.

    Returns:
        ``{"kind", "value", "rules": reject_rules()}``.

    Raises:
        ControlError: an unknown kind, or no such rule (the message lists the rules).
        ControlStateError: the crawl is stopping or finished.
    """
    control._require_running("remove a reject rule")
    key = _key_of(kind)
    value = str(value).strip()
    scope = dict(control.controller.job.scope)
    entries = [str(v) for v in scope.get(key) or []]
    if value not in entries:
        raise ControlError(f"no {kind} reject rule {value!r}; rules: {entries}")
    entries.remove(value)
    if entries:
        scope[key] = entries
    else:
        scope.pop(key, None)
    _set_scope(control, scope)
    log.warning("reject rule %s %r removed", kind, value)
    return {"kind": kind, "value": value, "rules": reject_rules(control)}


def _compile(what: str, pattern: str) -> re.Pattern[str]:
    try:
        return re.compile(pattern)
    except re.error as e:
        raise ControlError(f"{what}: invalid regex {pattern!r}: {e}") from None


def delete_uris(control: CrawlControl, uri_regex: str, queue_regex: str | None = None
                ) -> dict[str, Any]:  # fmt: skip
    """Finish the queued URIs whose whole URI matches ``uri_regex`` (and whose queue
    key matches ``queue_regex``, when given) with ``-6000`` (Heritrix
    ``Frontier.deleteURIs(queueRegex, uriRegex)``, which also matches whole strings).
    Unlike a reject rule, nothing stops the same URIs from being found again (they are
    seen, so they are not queued again in this crawl).

    Returns:
        ``{"uri_regex", "queue_regex", "deleted": n}``.

    Raises:
        ControlError: an invalid regex. ControlStateError: the crawl is stopping,
            finished or not started.
    """
    control._require_running("delete URIs")
    uri_re = _compile("uri_regex", uri_regex)
    queue_re = _compile("queue_regex", queue_regex) if queue_regex else None
    frontier = control.controller.frontier
    if frontier is None:
        raise ControlError("the crawl has not started yet")

    def chosen(c: CrawlURI) -> bool:
        if queue_re is not None and queue_re.fullmatch(c.key) is None:
            return False
        return uri_re.fullmatch(c.uri) is not None

    deleted = frontier.purge(chosen, S_DELETED_BY_USER)
    log_unfetched(control.controller.ctx, deleted, S_DELETED_BY_USER, 0)
    log.warning("deleteURIs %r (queues %r): %d queued URI(s) deleted (crawl.log -6000)",
                uri_regex, queue_regex, len(deleted))  # fmt: skip
    return {"uri_regex": uri_regex, "queue_regex": queue_regex, "deleted": len(deleted)}


def host_settings(control: CrawlControl) -> dict[str, dict[str, float | int]]:
    """The per-host settings (queue key → :data:`~webark.crawl.politeness.QUEUE_SETTINGS`)."""
    return {k: dict(v) for k, v in control.controller.job.hosts.items()}


def set_host(control: CrawlControl, host: str,
             settings: Mapping[str, float | int | None]) -> dict[str, Any]:  # fmt: skip
    """Change the politeness delays and quotas of one queue while the crawl runs.

    Args:
        host: the queue key (``host`` or ``host:port``, as crawl reports list queues),
            or a URL on it.
        settings: any of :data:`~webark.crawl.politeness.QUEUE_SETTINGS` (seconds,
            ``max_uris`` successful fetches, ``max_bytes`` bytes); ``None`` removes
            that setting (the job-wide value applies again).

    Delays apply from the queue's next fetch. A quota the queue has reached blocks it
    at once: its queued URIs are finished with ``-5003`` (``Q:hostQuota``); a quota
    raised above its count lets a blocked queue take URIs again.

    Returns:
        ``{"host", "settings": of this host, "blocked": n}``.

    Raises:
        ControlError: an unknown setting, a bad value, min_delay > max_delay.
        ControlStateError: the crawl is stopping or finished.
    """
    control._require_running("change a host's settings")
    ctl = control.controller
    key = politeness_key(host) if "://" in host else host.strip().lower()
    if not key:
        raise ControlError("host: give a host (or host:port) or a URL")
    merged = {k: dict(v) for k, v in ctl.job.hosts.items()}
    mine: dict[str, Any] = {**merged.get(key, {}), **settings}
    merged[key] = {k: v for k, v in mine.items() if v is not None}
    job = ctl.job
    try:
        hosts = check_hosts(merged, job.min_delay, job.max_delay, job.delay_factor)
    except JobConfigError as e:
        raise ControlError(str(e)) from None
    config = dataclasses.replace(ctl.frontier_config, queue_overrides=MappingProxyType(hosts))
    ctl.frontier_config = config
    ctl.job = dataclasses.replace(job, hosts=hosts)
    ctl.job.save()
    blocked: tuple[CrawlURI, ...] = ()
    if ctl.frontier is not None:
        ctl.frontier.config = config
        if {"max_uris", "max_bytes"} & set(settings):
            blocked = ctl.frontier.requota(key)
            log_blocked(ctl.ctx, blocked, 0)
    log.warning("host %s: settings now %s (%d queued URI(s) blocked by quota)",
                key, hosts.get(key, {}), len(blocked))  # fmt: skip
    return {"host": key, "settings": hosts.get(key, {}), "blocked": len(blocked)}
