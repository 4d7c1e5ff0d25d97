"""Crawl scope: decide rules (ACCEPT / REJECT / NONE; the last non-NONE wins).

* :mod:`~webark.crawl.scope.rules` — the :class:`DecideRule` protocol and the rules of
  Heritrix 3's scope (SURT prefixes, hops, transclusion, regex lists, hosts/domains,
  schemes, prerequisites) plus after-fetch rules (content type, status);
* :mod:`~webark.crawl.scope.traps` — crawler-trap defences (pathological paths, path
  depth, query-string explosions);
* :mod:`~webark.crawl.scope.chain` — :class:`DecideRuleSequence` with per-rule counts,
  and :func:`build_scope` (job config + seeds → the Heritrix default chain).

See ``docs/scope.md``.
"""

from webark.crawl.scope.chain import (
    SCOPE_KEYS,
    DecideRuleSequence,
    ScopeConfigError,
    build_scope,
    seed_surt_prefixes,
)
from webark.crawl.scope.rules import (
    DEFAULT_SCHEMES,
    AcceptDecideRule,
    ContentTypeMatchesRegexDecideRule,
    DecideRule,
    Decision,
    FetchedDecideRule,
    FetchStatusDecideRule,
    HopsPathMatchesRegexDecideRule,
    MatchesListRegexDecideRule,
    OnDomainsDecideRule,
    OnHostsDecideRule,
    PrerequisiteAcceptDecideRule,
    RejectDecideRule,
    SchemeNotInSetDecideRule,
    SeedAcceptDecideRule,
    SurtPrefixedDecideRule,
    TooManyHopsDecideRule,
    TransclusionDecideRule,
    host_of,
)
from webark.crawl.scope.traps import (
    PathologicalPathDecideRule,
    QueryExplosionDecideRule,
    TooManyPathSegmentsDecideRule,
    has_repeated_segments,
)

__all__ = [
    "DEFAULT_SCHEMES",
    "SCOPE_KEYS",
    "AcceptDecideRule",
    "ContentTypeMatchesRegexDecideRule",
    "DecideRule",
    "DecideRuleSequence",
    "Decision",
    "FetchStatusDecideRule",
    "FetchedDecideRule",
    "HopsPathMatchesRegexDecideRule",
    "MatchesListRegexDecideRule",
    "OnDomainsDecideRule",
    "OnHostsDecideRule",
    "PathologicalPathDecideRule",
    "PrerequisiteAcceptDecideRule",
    "QueryExplosionDecideRule",
    "RejectDecideRule",
    "SchemeNotInSetDecideRule",
    "ScopeConfigError",
    "SeedAcceptDecideRule",
    "SurtPrefixedDecideRule",
    "TooManyHopsDecideRule",
    "TooManyPathSegmentsDecideRule",
    "TransclusionDecideRule",
    "build_scope",
    "has_repeated_segments",
    "host_of",
    "seed_surt_prefixes",
]
