"""The decide-rule sequence, the default scope, and building a scope from job config.

:class:`DecideRuleSequence` applies rules in order; the last decision that is not NONE
wins (Heritrix 3 ``DecideRuleSequence``), and it counts, per rule, how many URIs each
rule accepted and rejected and how often it had the last word (:meth:`stats`).

:func:`build_scope` turns the ``scope:`` section of a job (plain data, as loaded from
YAML) plus the seeds into a sequence: Heritrix's default scope chain (see
``docs/scope.md``) with the options the job sets. Mistakes raise
:class:`ScopeConfigError`, which names the key (and list index) and says what to write
instead.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from webark.core.errors import KeyedConfigError
from webark.crawl.curi import CrawlURI
from webark.crawl.scope.rules import (
    DEFAULT_SCHEMES,
    ContentTypeMatchesRegexDecideRule,
    DecideRule,
    Decision,
    FetchStatusDecideRule,
    HopsPathMatchesRegexDecideRule,
    MatchesListRegexDecideRule,
    OnDomainsDecideRule,
    OnHostsDecideRule,
    PrerequisiteAcceptDecideRule,
    RejectDecideRule,
    SchemeNotInSetDecideRule,
    SurtPrefixedDecideRule,
    TooManyHopsDecideRule,
    TransclusionDecideRule,
    host_of,
)
from webark.crawl.scope.traps import (
    PathologicalPathDecideRule,
    QueryExplosionDecideRule,
    TooManyPathSegmentsDecideRule,
)
from webark.url import InvalidURLError, SurtPrefixSet

__all__ = [
    "SCOPE_KEYS",
    "DecideRuleSequence",
    "ScopeConfigError",
    "build_scope",
    "seed_surt_prefixes",
]


class ScopeConfigError(KeyedConfigError):
    """A scope configuration that cannot be used: ``key`` with a list index when it is
    about one entry (``"reject_regex[2]"``), or ``"seeds[0]"``."""

    label = "scope"


def _rule_name(rule: object) -> str:
    name = getattr(rule, "name", None)
    return name if isinstance(name, str) and name else type(rule).__name__


class DecideRuleSequence:
    """Rules applied in order; the last non-NONE decision wins (Heritrix
    ``DecideRuleSequence``). Itself a :class:`~webark.crawl.scope.rules.DecideRule`, so
    sequences nest.

    A rule whose ``only_decision`` equals the decision reached so far is skipped (it
    could not change it), as in Heritrix. Hence a REJECT rule's count is the number of
    URIs it rejected *that were accepted at that point*.

    Before the fetch use :meth:`decide` (or :meth:`decide_with_rule`); after it,
    :meth:`decide_fetched`, which asks rules that implement ``decide_fetched``
    (content type, status) through that method and the others through ``decide``.
    Anything but ACCEPT means "do not crawl" (Heritrix treats a NONE from the scope as
    out of scope too).

    Args:
        rules: the rules, in order.
        name: this sequence's name (when nested in another).

    Not thread-safe (webark is one asyncio loop); rules may keep state.
    """

    def __init__(self, rules: Iterable[DecideRule], name: str = "scope") -> None:
        self.rules: list[DecideRule] = list(rules)
        self.name = name
        self.only_decision: Decision | None = None
        names: list[str] = []
        for rule in self.rules:
            base = _rule_name(rule)
            candidate, n = base, 1
            while candidate in names:
                n += 1
                candidate = f"{base}#{n}"
            names.append(candidate)
        self.names = names
        self._only = [getattr(r, "only_decision", None) for r in self.rules]
        self._fetched: list[Callable[[CrawlURI, str | None, int], Decision] | None] = [
            getattr(r, "decide_fetched", None) for r in self.rules
        ]
        k = len(self.rules)
        self._evaluated = [0] * k
        self._accepted = [0] * k
        self._rejected = [0] * k
        self._won_accept = [0] * k
        self._won_reject = [0] * k
        self._results = {d: 0 for d in Decision}
        self._fetched_results = {d: 0 for d in Decision}

    def _run(self, curi: CrawlURI, fetched: tuple[str | None, int] | None) -> tuple[Decision, int]:
        result = Decision.NONE
        decisive = -1
        for i, rule in enumerate(self.rules):
            if self._only[i] is not None and self._only[i] is result:
                continue
            self._evaluated[i] += 1
            after_fetch = self._fetched[i] if fetched is not None else None
            if after_fetch is not None and fetched is not None:
                r = after_fetch(curi, fetched[0], fetched[1])
            else:
                r = rule.decide(curi)
            if r is not Decision.NONE:
                self._count(i, r)
                result, decisive = r, i
        self._count_won(decisive, result)
        return result, decisive

    def _count(self, i: int, r: Decision) -> None:
        if r is Decision.ACCEPT:
            self._accepted[i] += 1
        else:
            self._rejected[i] += 1

    def _count_won(self, decisive: int, result: Decision) -> None:
        if decisive < 0:
            return
        if result is Decision.ACCEPT:
            self._won_accept[decisive] += 1
        else:
            self._won_reject[decisive] += 1

    def decide(self, curi: CrawlURI) -> Decision:
        """The decision for a candidate URI (before any fetch)."""
        result, _ = self._run(curi, None)
        self._results[result] += 1
        return result

    def decide_with_rule(self, curi: CrawlURI) -> tuple[Decision, str | None]:
        """The decision and the name of the rule that made it (``None`` when no rule
        had an opinion) — e.g. for a crawl.log annotation of an out-of-scope URI."""
        result, decisive = self._run(curi, None)
        self._results[result] += 1
        return result, (self.names[decisive] if decisive >= 0 else None)

    def decide_fetched(self, curi: CrawlURI, mime: str | None, status: int) -> Decision:
        """The decision for a fetched URI, given its Content-Type and fetch status."""
        result, _ = self._run(curi, (mime, status))
        self._fetched_results[result] += 1
        return result

    @property
    def has_fetch_rules(self) -> bool:
        """True when some rule decides on the fetched response (content type, status)."""
        return any(f is not None for f in self._fetched)

    def after_fetch(self, curi: CrawlURI, mime: str | None, status: int
                    ) -> tuple[Decision, str | None]:  # fmt: skip
        """The verdict of the after-fetch rules alone (those that implement
        ``decide_fetched``: ``reject_content_types``, ``reject_status``) on a fetched
        URI, and the name of the rule that gave it: NONE when none of them has an
        opinion. The crawler applies it right after the fetch; the rest of the scope
        was applied when the URI was a candidate (a seed, which no scope rule may
        reject, is judged by these rules only)."""
        result = Decision.NONE
        decisive = -1
        for i, after_fetch in enumerate(self._fetched):
            if after_fetch is None:
                continue
            self._evaluated[i] += 1
            r = after_fetch(curi, mime, status)
            if r is not Decision.NONE:
                self._count(i, r)
                result, decisive = r, i
        self._count_won(decisive, result)
        self._fetched_results[result] += 1
        return result, (self.names[decisive] if decisive >= 0 else None)

    def accepts(self, curi: CrawlURI) -> bool:
        """True if :meth:`decide` answers ACCEPT."""
        return self.decide(curi) is Decision.ACCEPT

    def stats(self) -> dict[str, Any]:
        """A plain-data report (JSON-serializable)::

            {"name": "scope",
             "decisions": {"ACCEPT": n, "REJECT": n, "NONE": n},
             "fetched_decisions": {...},
             "rules": [{"name", "type", "evaluated", "accepted", "rejected",
                        "decided_accept", "decided_reject", "details"?}, ...]}

        ``accepted``/``rejected``: how often the rule answered so; ``decided_*``: how
        often its answer was the final one. ``details`` is the rule's own ``stats()``
        (per-regex counts, per-prefix counts, trap state) when it has one.
        """
        rules: list[dict[str, Any]] = []
        for i, rule in enumerate(self.rules):
            entry: dict[str, Any] = {
                "name": self.names[i],
                "type": type(rule).__name__,
                "evaluated": self._evaluated[i],
                "accepted": self._accepted[i],
                "rejected": self._rejected[i],
                "decided_accept": self._won_accept[i],
                "decided_reject": self._won_reject[i],
            }
            details = getattr(rule, "stats", None)
            if callable(details):
                entry["details"] = details()
            rules.append(entry)
        return {
            "name": self.name,
            "decisions": {d.value: n for d, n in self._results.items()},
            "fetched_decisions": {d.value: n for d, n in self._fetched_results.items()},
            "rules": rules,
        }

    def __repr__(self) -> str:
        return f"DecideRuleSequence({self.name!r}, {self.names!r})"


# --------------------------------------------------------------------------- config

SCOPE_KEYS: dict[str, str] = {
    "seeds_as_surt_prefixes": "bool, default true: accept the SURT prefix implied by each seed",
    "surt_prefixes": "list: more SURT prefixes to accept ('http://(org,example,') or URLs/hosts",
    "reject_surt_prefixes": "list: SURT prefixes (or URLs/hosts) to reject",
    "accept_hosts": "list: hosts to accept (exact host)",
    "reject_hosts": "list: hosts to reject (exact host)",
    "accept_domains": "list: domains to accept, with their subdomains",
    "reject_domains": "list: domains to reject, with their subdomains",
    "domain_match": "'suffix' (default) or 'registered': how accept/reject_domains match",
    "accept_seed_registered_domains": "bool, default false: accept the seeds' registered domains",
    "accept_regex": "list: regexes (whole URI) to accept",
    "reject_regex": "list: regexes (whole URI) to reject",
    "accept_hops_regex": "str: regex (whole hop path, e.g. '.R?((E{0,2})|XE?)') to accept",
    "reject_hops_regex": "str: regex (whole hop path) to reject",
    "max_hops": "int >= 0 or null, default 20: reject URIs more hops from the seed",
    "max_trans_hops": "int >= 0, default 2: embeds/redirects accepted beyond the scope",
    "max_speculative_hops": "int >= 0, default 1: speculative embeds (X) among them",
    "max_repetitions": "int >= 0, default 2 (0 = off): reject /a/a/a/ beyond this many",
    "max_path_depth": "int >= 0 or null, default 20: reject paths with more '/'",
    "query_explosion": "mapping {budget, max_paths, date_like_only}, true, or null (off)",
    "schemes": "list, default [http, https, dns]: reject other schemes",
    "reject_content_types": "list: media-type regexes to reject after the fetch",
    "reject_status": "list: statuses (404) or ranges ('500-599') to reject after the fetch",
}
"""The keys :func:`build_scope` understands, with a one-line description each."""

_QUERY_EXPLOSION_KEYS = ("budget", "max_paths", "date_like_only")


def _fail(key: str, reason: str) -> ScopeConfigError:
    return ScopeConfigError(key, reason)


def _get_bool(config: Mapping[str, Any], key: str, default: bool) -> bool:
    value = config.get(key, default)
    if value is None:
        return default
    if not isinstance(value, bool):
        raise _fail(key, f"expected true or false, got {value!r}; write e.g. '{key}: {default}'")
    return value


def _get_int(
    config: Mapping[str, Any], key: str, default: int | None, *, nullable: bool = False
) -> int | None:
    if key not in config:
        return default
    value = config[key]
    if value is None and nullable:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        extra = " or null (no limit)" if nullable else ""
        example = default if default is not None else 0
        raise _fail(
            key,
            f"expected an integer >= 0{extra}, got {value!r}; write e.g. '{key}: {example}'",
        )
    return value


def _get_list(config: Mapping[str, Any], key: str) -> list[Any]:
    value = config.get(key)
    if value is None:
        return []
    if isinstance(value, str) or not isinstance(value, list | tuple):
        raise _fail(
            key,
            f"expected a list, got {type(value).__name__} {value!r}; "
            f"write a YAML list, e.g. '{key}: [{value!r}]'"
            if isinstance(value, str)
            else f"expected a list, got {type(value).__name__} {value!r}",
        )
    return list(value)


def _get_strings(config: Mapping[str, Any], key: str) -> list[str]:
    items = _get_list(config, key)
    for i, item in enumerate(items):
        if not isinstance(item, str) or not item.strip():
            raise _fail(f"{key}[{i}]", f"expected a non-empty string, got {item!r}")
    return [item.strip() for item in items]


def _compile(key: str, pattern: str) -> re.Pattern[str]:
    try:
        return re.compile(pattern)
    except re.error as e:
        raise _fail(
            key, f"invalid regex {pattern!r}: {e}; fix the pattern (Python 're' syntax)"
        ) from None


def _get_regexes(config: Mapping[str, Any], key: str) -> list[re.Pattern[str]]:
    return [_compile(f"{key}[{i}]", p) for i, p in enumerate(_get_strings(config, key))]


def _get_regex(config: Mapping[str, Any], key: str) -> re.Pattern[str] | None:
    value = config.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise _fail(key, f"expected a regex string, got {value!r}")
    return _compile(key, value)


def _add_prefix_entries(target: SurtPrefixSet, key: str, entries: list[str]) -> None:
    for i, entry in enumerate(entries):
        text = entry[1:].strip() if entry.startswith("+") else entry
        try:
            if text.find("(") > 0:
                target.add(text)
            else:
                target.add_seed(text)
        except (InvalidURLError, ValueError) as e:
            raise _fail(
                f"{key}[{i}]",
                f"{e}; write a SURT prefix like 'http://(org,example,' or a URL/host",
            ) from None


def seed_surt_prefixes(seeds: Iterable[str], *, seeds_as_prefixes: bool = True) -> SurtPrefixSet:
    """The SURT prefixes of a seed list (lines of a Heritrix seeds file: blank lines and
    ``#`` comments skipped, ``+`` lines are SURT-prefix directives).

    Raises:
        ScopeConfigError: a seed cannot be parsed (the key is ``seeds[i]``).
    """
    prefixes = SurtPrefixSet()
    for i, raw in enumerate(seeds):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        line = line.split()[0]
        try:
            if not prefixes.add_directive(line) and seeds_as_prefixes:
                prefixes.add_seed(line)
        except (InvalidURLError, ValueError) as e:
            reason = f"{e}; a seed is a URL such as 'https://example.com/'"
            raise _fail(f"seeds[{i}]", reason) from None
    return prefixes


def _seed_hosts(seeds: Iterable[str]) -> list[str]:
    hosts: list[str] = []
    for raw in seeds:
        line = raw.strip()
        if not line or line.startswith(("#", "+")):
            continue
        url = line.split()[0]
        host = host_of(url if "://" in url else "http://" + url)
        if host:
            hosts.append(host)
    return hosts


def _parse_status(key: str, items: list[Any]) -> list[int | tuple[int, int]]:
    codes: list[int | tuple[int, int]] = []
    for i, item in enumerate(items):
        if isinstance(item, int) and not isinstance(item, bool):
            codes.append(item)
            continue
        m = (
            re.fullmatch(r"\s*(-?\d+)\s*(?:-\s*(-?\d+)\s*)?", item)
            if isinstance(item, str)
            else None
        )
        if m is None or (m.group(2) is not None and int(m.group(1)) > int(m.group(2))):
            raise _fail(
                f"{key}[{i}]",
                f"expected a status (404) or a range ('500-599', low <= high), got {item!r}",
            )
        low = int(m.group(1))
        codes.append(low if m.group(2) is None else (low, int(m.group(2))))
    return codes


def _query_explosion(config: Mapping[str, Any]) -> QueryExplosionDecideRule | None:
    key = "query_explosion"
    value = config.get(key)
    if value is None or value is False:
        return None
    if value is True:
        return QueryExplosionDecideRule(name=key)
    if not isinstance(value, Mapping):
        raise _fail(
            key, f"expected a mapping like {{budget: 100, date_like_only: true}}, got {value!r}"
        )
    for sub in value:
        if sub not in _QUERY_EXPLOSION_KEYS:
            raise _fail(f"{key}.{sub}", f"unknown key; known: {', '.join(_QUERY_EXPLOSION_KEYS)}")
    budget = _get_int(value, "budget", 100)
    max_paths = _get_int(value, "max_paths", 10_000)
    assert budget is not None and max_paths is not None
    if budget < 1 or max_paths < 1:
        which = "budget" if budget < 1 else "max_paths"
        raise _fail(f"{key}.{which}", "must be >= 1")
    return QueryExplosionDecideRule(
        budget=budget,
        max_paths=max_paths,
        date_like_only=_get_bool(value, "date_like_only", False),
        name=key,
    )


def build_scope(config: Mapping[str, Any] | None, seeds: Iterable[str]) -> DecideRuleSequence:
    """Build the crawl scope from the job's ``scope:`` section and the seeds.

    The chain, in order (rules for unset options are left out; names are the config
    keys, so :meth:`DecideRuleSequence.stats` says which key to change):

    1. ``reject_by_default`` — RejectDecideRule
    2. ``surt_prefixes`` — accept seeds' SURT prefixes + ``surt_prefixes``
    3. ``accept_domains``, ``accept_seed_registered_domains``, ``accept_hosts``,
       ``accept_regex``, ``accept_hops_regex`` — further accepts
    4. ``max_hops`` — reject beyond 20 hops
    5. ``transclusion`` — accept embeds (``max_trans_hops`` 2, ``max_speculative_hops`` 1)
    6. ``reject_surt_prefixes``, ``reject_domains``, ``reject_hosts``, ``reject_regex``,
       ``reject_hops_regex``
    7. ``max_repetitions`` — pathological paths; ``max_path_depth`` — too many segments;
       ``query_explosion`` (off unless configured)
    8. ``prerequisites`` — accept last hop ``P``
    9. ``schemes`` — reject other schemes
    10. ``reject_content_types``, ``reject_status`` — after the fetch only

    Args:
        config: the ``scope:`` mapping (``None`` or ``{}``: Heritrix's defaults).
        seeds: seed URLs, or lines of a Heritrix seeds file.

    Raises:
        ScopeConfigError: an unknown key, a value of the wrong type, an invalid regex,
            SURT prefix, seed or status range — naming the key and index.
    """
    config = {} if config is None else config
    if not isinstance(config, Mapping):
        raise _fail("scope", f"expected a mapping of options, got {type(config).__name__}")
    for key in config:
        if key not in SCOPE_KEYS:
            close = difflib.get_close_matches(str(key), SCOPE_KEYS, n=1)
            hint = f"did you mean '{close[0]}'? " if close else ""
            raise _fail(str(key), f"unknown key; {hint}known keys: {', '.join(SCOPE_KEYS)}")
    seeds = list(seeds)
    rules: list[DecideRule] = [RejectDecideRule(name="reject_by_default")]

    prefixes = seed_surt_prefixes(
        seeds, seeds_as_prefixes=_get_bool(config, "seeds_as_surt_prefixes", True)
    )
    _add_prefix_entries(prefixes, "surt_prefixes", _get_strings(config, "surt_prefixes"))
    rules.append(SurtPrefixedDecideRule(prefixes, Decision.ACCEPT, name="surt_prefixes"))

    domain_match = config.get("domain_match", "suffix")
    if domain_match not in ("suffix", "registered"):
        raise _fail("domain_match", f"expected 'suffix' or 'registered', got {domain_match!r}")
    registered = domain_match == "registered"

    accept_domains = _get_strings(config, "accept_domains")
    if accept_domains:
        rules.append(
            OnDomainsDecideRule(
                accept_domains, Decision.ACCEPT, registered=registered, name="accept_domains"
            )
        )
    if _get_bool(config, "accept_seed_registered_domains", False):
        rules.append(
            OnDomainsDecideRule(
                _seed_hosts(seeds),
                Decision.ACCEPT,
                registered=True,
                name="accept_seed_registered_domains",
            )
        )
    accept_hosts = _get_strings(config, "accept_hosts")
    if accept_hosts:
        rules.append(OnHostsDecideRule(accept_hosts, Decision.ACCEPT, name="accept_hosts"))
    accept_regex = _get_regexes(config, "accept_regex")
    if accept_regex:
        rules.append(MatchesListRegexDecideRule(accept_regex, Decision.ACCEPT, name="accept_regex"))
    accept_hops = _get_regex(config, "accept_hops_regex")
    if accept_hops is not None:
        rules.append(
            HopsPathMatchesRegexDecideRule(accept_hops, Decision.ACCEPT, name="accept_hops_regex")
        )

    max_hops = _get_int(config, "max_hops", 20, nullable=True)
    if max_hops is not None:
        rules.append(TooManyHopsDecideRule(max_hops, name="max_hops"))
    trans = _get_int(config, "max_trans_hops", 2)
    spec = _get_int(config, "max_speculative_hops", 1)
    assert trans is not None and spec is not None
    if trans > 0:
        rules.append(TransclusionDecideRule(trans, spec, name="transclusion"))

    negative = SurtPrefixSet()
    _add_prefix_entries(
        negative, "reject_surt_prefixes", _get_strings(config, "reject_surt_prefixes")
    )
    if len(negative):
        rules.append(SurtPrefixedDecideRule(negative, Decision.REJECT, name="reject_surt_prefixes"))
    reject_domains = _get_strings(config, "reject_domains")
    if reject_domains:
        rules.append(
            OnDomainsDecideRule(
                reject_domains, Decision.REJECT, registered=registered, name="reject_domains"
            )
        )
    reject_hosts = _get_strings(config, "reject_hosts")
    if reject_hosts:
        rules.append(OnHostsDecideRule(reject_hosts, Decision.REJECT, name="reject_hosts"))
    reject_regex = _get_regexes(config, "reject_regex")
    if reject_regex:
        rules.append(MatchesListRegexDecideRule(reject_regex, Decision.REJECT, name="reject_regex"))
    reject_hops = _get_regex(config, "reject_hops_regex")
    if reject_hops is not None:
        rules.append(
            HopsPathMatchesRegexDecideRule(reject_hops, Decision.REJECT, name="reject_hops_regex")
        )

    repetitions = _get_int(config, "max_repetitions", 2)
    assert repetitions is not None
    if repetitions > 0:
        rules.append(PathologicalPathDecideRule(repetitions, name="max_repetitions"))
    depth = _get_int(config, "max_path_depth", 20, nullable=True)
    if depth is not None:
        rules.append(TooManyPathSegmentsDecideRule(depth, name="max_path_depth"))
    explosion = _query_explosion(config)
    if explosion is not None:
        rules.append(explosion)

    rules.append(PrerequisiteAcceptDecideRule(name="prerequisites"))
    schemes = (
        _get_strings(config, "schemes")
        if config.get("schemes") is not None
        else sorted(DEFAULT_SCHEMES)
    )
    if not schemes:
        raise _fail("schemes", "an empty list would reject everything; e.g. [http, https, dns]")
    rules.append(SchemeNotInSetDecideRule(schemes, name="schemes"))

    content_types = _get_regexes(config, "reject_content_types")
    for i, regex in enumerate(content_types):
        name = "reject_content_types" if len(content_types) == 1 else f"reject_content_types[{i}]"
        rules.append(ContentTypeMatchesRegexDecideRule(regex, Decision.REJECT, name=name))
    statuses = _parse_status("reject_status", _get_list(config, "reject_status"))
    if statuses:
        rules.append(FetchStatusDecideRule(statuses, Decision.REJECT, name="reject_status"))
    return DecideRuleSequence(rules)
