"""The crawl.log status of a URI the scope rejected, by the rule that rejected it
(Heritrix ``FetchStatusCodes``): what a dropped redirect target is logged with
(:mod:`webark.crawl.processors.redirects`).

============================================== ======= =============================
rule                                           status  Heritrix constant
============================================== ======= =============================
``max_hops``                                   -4001   ``S_TOO_MANY_LINK_HOPS``
``reject_by_default`` (the transclusion rule   -4002   ``S_TOO_MANY_EMBED_HOPS``
accepts a redirect target unless its embeds or
redirects since the last link are too many)
``max_repetitions``, ``max_path_depth``,       -4000   ``S_DEEMED_CHAFF``
``query_explosion`` (crawler traps)
any other reject rule                          -5000   ``S_OUT_OF_SCOPE``
============================================== ======= =============================
"""

from __future__ import annotations

from webark.crawllog.status import (
    S_DEEMED_CHAFF,
    S_OUT_OF_SCOPE,
    S_TOO_MANY_EMBED_HOPS,
    S_TOO_MANY_LINK_HOPS,
)

__all__ = ["rejected_status"]

_BY_RULE: dict[str | None, int] = {
    "max_hops": S_TOO_MANY_LINK_HOPS,
    "reject_by_default": S_TOO_MANY_EMBED_HOPS,
    "max_repetitions": S_DEEMED_CHAFF,
    "max_path_depth": S_DEEMED_CHAFF,
    "query_explosion": S_DEEMED_CHAFF,
}


def rejected_status(rule: str | None) -> int:
    """The crawl.log status of a redirect target rejected by the scope rule named
    ``rule`` (:meth:`~webark.crawl.scope.DecideRuleSequence.decide_with_rule`; the
    table in the module docstring)."""
    return _BY_RULE.get(rule, S_OUT_OF_SCOPE)
