"""Decide rules: the building blocks of a crawl scope.

A decide rule looks at a :class:`~webark.crawl.curi.CrawlURI` and answers
:attr:`Decision.ACCEPT`, :attr:`Decision.REJECT` or :attr:`Decision.NONE` ("no
opinion"). A :class:`~webark.crawl.scope.chain.DecideRuleSequence` applies rules in
order; the last answer that is not NONE wins (Heritrix 3 ``DecideRuleSequence``).

The extension point is the :class:`DecideRule` protocol (one method, ``decide``). Two
optional attributes are understood by the sequence:

* ``name`` (``str``): the name shown in :meth:`DecideRuleSequence.stats`; the class
  name when absent.
* ``only_decision`` (:class:`Decision` or ``None``): the only non-NONE answer the rule
  can give. As in Heritrix (``DecideRule.onlyDecision``), the sequence skips a rule
  whose only decision equals the decision already reached: it could not change it. So
  a REJECT rule is asked only about URIs that are accepted so far, which keeps its
  counts meaningful ("rejected N URIs that would otherwise have been crawled") and
  keeps stateful trap rules from spending budget on URIs out of scope anyway.
* ``stats()`` returning plain data (``dict``): per-rule details such as per-regex
  counts, merged into the sequence's report.

Rules that decide on fetch results (content type, status) implement
:class:`FetchedDecideRule` (``decide_fetched(curi, mime, status)``) and answer NONE to
``decide``: before the fetch there is nothing to decide on.

All rules here are plain classes: no base class is required of extensions. The
private helper :class:`_Predicated` only saves repetition (Heritrix
``PredicatedDecideRule``: "if the predicate holds, answer the configured decision").
"""

from __future__ import annotations

import enum
import re
from abc import ABC, abstractmethod
from collections.abc import Iterable
from typing import Any, Protocol, runtime_checkable
from urllib.parse import urlsplit

from webark.crawl.curi import CrawlURI
from webark.url import InvalidURLError, SurtPrefixSet, host_to_ascii, registered_domain

__all__ = [
    "DEFAULT_SCHEMES",
    "AcceptDecideRule",
    "ContentTypeMatchesRegexDecideRule",
    "DecideRule",
    "Decision",
    "FetchStatusDecideRule",
    "FetchedDecideRule",
    "HopsPathMatchesRegexDecideRule",
    "MatchesListRegexDecideRule",
    "OnDomainsDecideRule",
    "OnHostsDecideRule",
    "PrerequisiteAcceptDecideRule",
    "RejectDecideRule",
    "SchemeNotInSetDecideRule",
    "SeedAcceptDecideRule",
    "SurtPrefixedDecideRule",
    "TooManyHopsDecideRule",
    "TransclusionDecideRule",
    "host_of",
]


class Decision(enum.Enum):
    """The answer of a decide rule (Heritrix ``DecideResult``)."""

    ACCEPT = "ACCEPT"
    REJECT = "REJECT"
    NONE = "NONE"

    def __str__(self) -> str:
        return self.value


@runtime_checkable
class DecideRule(Protocol):
    """A rule about a candidate URI (Heritrix ``DecideRule``).

    ``decide`` must be cheap (it runs for every discovered link) and must not raise for
    an unparseable URI: answer NONE (or the rule's decision, if that is what an
    unparseable URI deserves).
    """

    def decide(self, curi: CrawlURI) -> Decision:
        """ACCEPT, REJECT or NONE (no opinion) for ``curi``."""
        ...


@runtime_checkable
class FetchedDecideRule(Protocol):
    """A rule about a fetched URI: decides on the response's media type and status.

    ``mime`` is the Content-Type as received (``None`` when absent); ``status`` the
    fetch status (HTTP status, or a negative Heritrix fetch status code).
    """

    def decide_fetched(self, curi: CrawlURI, mime: str | None, status: int) -> Decision:
        """ACCEPT, REJECT or NONE for a URI after its fetch."""
        ...


def _check_decision(decision: Decision) -> Decision:
    if not isinstance(decision, Decision) or decision is Decision.NONE:
        raise ValueError(f"decision must be Decision.ACCEPT or Decision.REJECT, got {decision!r}")
    return decision


def host_of(uri: str) -> str | None:
    """The host of ``uri`` in ASCII (punycode) form, lowercased, without a trailing
    dot or IPv6 brackets; ``dns:example.com`` gives ``example.com``; ``None`` when there
    is none or the URI cannot be parsed.

    >>> host_of("http://WWW.Bücher.ch:8080/x"), host_of("dns:example.com"), host_of("mailto:a@b")
    ('www.xn--bcher-kva.ch', 'example.com', None)
    """
    if uri[:4].lower() == "dns:":
        host = uri[4:].strip()
    else:
        try:
            host = urlsplit(uri).hostname or ""
        except ValueError:
            return None
    host = host.strip().rstrip(".")
    if not host:
        return None
    return host_to_ascii(host)


class _Predicated(ABC):
    """Answer ``decision`` when :meth:`matches` holds, else NONE (Heritrix
    ``PredicatedDecideRule``). An internal helper for the rules below; rules of other
    modules only need the :class:`DecideRule` protocol."""

    default_decision = Decision.ACCEPT

    def __init__(self, decision: Decision | None = None, name: str | None = None) -> None:
        self.decision = _check_decision(self.default_decision if decision is None else decision)
        self.name = name or type(self).__name__

    @property
    def only_decision(self) -> Decision:
        return self.decision

    @abstractmethod
    def matches(self, curi: CrawlURI) -> bool:
        """True when the rule's condition holds for ``curi``."""

    def decide(self, curi: CrawlURI) -> Decision:
        return self.decision if self.matches(curi) else Decision.NONE

    def __repr__(self) -> str:
        return f"{type(self).__name__}(decision={self.decision.value}, name={self.name!r})"


class AcceptDecideRule:
    """ACCEPT everything (Heritrix ``AcceptDecideRule``)."""

    only_decision = Decision.ACCEPT

    def __init__(self, name: str | None = None) -> None:
        self.name = name or type(self).__name__

    def decide(self, curi: CrawlURI) -> Decision:
        return Decision.ACCEPT


class RejectDecideRule:
    """REJECT everything (Heritrix ``RejectDecideRule``); the first rule of the default
    scope, so that everything not accepted later stays out."""

    only_decision = Decision.REJECT

    def __init__(self, name: str | None = None) -> None:
        self.name = name or type(self).__name__

    def decide(self, curi: CrawlURI) -> Decision:
        return Decision.REJECT


class SeedAcceptDecideRule(_Predicated):
    """ACCEPT seeds (``curi.seed``) (Heritrix ``SeedAcceptDecideRule``)."""

    def matches(self, curi: CrawlURI) -> bool:
        return curi.seed


class PrerequisiteAcceptDecideRule(_Predicated):
    """ACCEPT prerequisites: URIs whose last hop is ``P`` (robots.txt, DNS), so that an
    in-scope URI's prerequisites are fetched even when they are out of scope
    themselves (Heritrix ``PrerequisiteAcceptDecideRule``)."""

    def matches(self, curi: CrawlURI) -> bool:
        return curi.last_hop == "P"


class SurtPrefixedDecideRule(_Predicated):
    """ACCEPT (or REJECT) URIs whose scope SURT starts with one of the prefixes
    (Heritrix ``SurtPrefixedDecideRule``; with ``decision=REJECT`` it is the "negative
    SURT prefixes" rule).

    Args:
        prefixes: a :class:`~webark.url.SurtPrefixSet`, or SURT prefixes such as
            ``"http://(org,archive,"``.
        decision: ACCEPT (default) or REJECT.

    Matching uses :meth:`SurtPrefixSet.match`: ``https`` reads as ``http``, and an IDN
    host is tried in punycode and Unicode form (so ``http://(is,l`` covers
    ``landsbókasafn.is``). An unparseable URI matches nothing. Per-prefix match counts
    are in :meth:`stats`.
    """

    def __init__(
        self,
        prefixes: SurtPrefixSet | Iterable[str],
        decision: Decision | None = None,
        name: str | None = None,
    ) -> None:
        super().__init__(decision, name)
        self.prefixes = prefixes if isinstance(prefixes, SurtPrefixSet) else SurtPrefixSet(prefixes)
        self._counts: dict[str, int] = {}

    def matches(self, curi: CrawlURI) -> bool:
        try:
            prefix = self.prefixes.match(curi.uri)
        except (InvalidURLError, ValueError):
            return False
        if prefix is None:
            return False
        self._counts[prefix] = self._counts.get(prefix, 0) + 1
        return True

    def stats(self) -> dict[str, Any]:
        """``{"prefixes": n, "matched": {prefix: count}}`` (prefixes that matched)."""
        return {"prefixes": len(self.prefixes), "matched": dict(sorted(self._counts.items()))}


class TooManyHopsDecideRule(_Predicated):
    """REJECT URIs more than ``max_hops`` hops from their seed (Heritrix
    ``TooManyHopsDecideRule``, maxHops 20)."""

    default_decision = Decision.REJECT

    def __init__(
        self, max_hops: int = 20, decision: Decision | None = None, name: str | None = None
    ) -> None:
        super().__init__(decision, name)
        if max_hops < 0:
            raise ValueError(f"max_hops must be >= 0, got {max_hops}")
        self.max_hops = max_hops

    def matches(self, curi: CrawlURI) -> bool:
        return len(curi.hops) > self.max_hops


class TransclusionDecideRule(_Predicated):
    """ACCEPT URIs whose hop path ends in a few non-navigational hops: embeds,
    speculative embeds, redirects of something in scope (Heritrix
    ``TransclusionDecideRule``).

    The hop path is read backwards up to the last navigational hop (``L``, and in
    webark also ``M``, a sitemap entry). Over that tail: redirects (``R``) do not count
    against ``max_trans_hops`` but at most ``max_redirect_hops`` of them are allowed;
    at most ``max_speculative_hops`` may be ``X``; the rest (``E``, ``X``, ``P``, ``I``)
    count. ACCEPT when the tail is not empty, has at most ``max_speculative_hops`` X's,
    at most ``max_redirect_hops`` R's and at most ``max_trans_hops`` other hops.

    With the defaults (2, 1, 5): ``LE``, ``LEE``, ``LRE``, ``LRRRE``, ``LX``, ``LXE`` and
    ``E`` are accepted; ``LEEE``, ``LXX``, ``L``, ``EL``, ``LRRRRRR`` and a seed (empty
    path) are not (NONE).

    Heritrix counts redirects like embeds; webark lets an in-scope page's embed go
    through a few redirects (http → https → CDN) but, since this rule comes after
    ``TooManyHopsDecideRule`` in the default chain and can accept what that rejected,
    caps them: otherwise a redirect trap (``/r1`` → ``/r2`` → …) would be followed for
    ever.

    Args:
        max_trans_hops: Heritrix ``maxTransHops`` (default 2).
        max_speculative_hops: Heritrix ``maxSpeculativeHops`` (default 1).
        max_redirect_hops: redirects allowed in the tail (default 5; webark's).
        nav_hops: the hop letters that end the tail (default ``"LM"``; Heritrix: ``L``
            and its submit hop ``S``, which webark does not have; ``M`` is webark's).

    Raises:
        ValueError: a negative limit.
    """

    def __init__(
        self,
        max_trans_hops: int = 2,
        max_speculative_hops: int = 1,
        nav_hops: str = "LM",
        decision: Decision | None = None,
        name: str | None = None,
        max_redirect_hops: int = 5,
    ) -> None:
        super().__init__(decision, name)
        if max_trans_hops < 0 or max_speculative_hops < 0 or max_redirect_hops < 0:
            raise ValueError(
                "max_trans_hops, max_speculative_hops and max_redirect_hops must be >= 0"
            )
        self.max_trans_hops = max_trans_hops
        self.max_speculative_hops = max_speculative_hops
        self.max_redirect_hops = max_redirect_hops
        self.nav_hops = frozenset(nav_hops)

    def matches(self, curi: CrawlURI) -> bool:
        total = counted = speculative = 0
        for hop in reversed(curi.hops):
            if hop in self.nav_hops:
                break
            total += 1
            if hop != "R":
                counted += 1
            if hop == "X":
                speculative += 1
        return (
            total > 0
            and speculative <= self.max_speculative_hops
            and counted <= self.max_trans_hops
            and total - counted <= self.max_redirect_hops
        )


class HopsPathMatchesRegexDecideRule(_Predicated):
    """ACCEPT (or REJECT) URIs whose whole hop path matches a regex (Heritrix
    ``HopsPathMatchesRegexDecideRule``; Java ``matches()`` = :func:`re.fullmatch`).

    E.g. ``.R?((E{0,2})|XE?)`` (CrawlRSS: a page, an optional redirect, its embeds).
    """

    def __init__(
        self,
        regex: str | re.Pattern[str],
        decision: Decision | None = None,
        name: str | None = None,
    ) -> None:
        super().__init__(decision, name)
        self.regex = re.compile(regex) if isinstance(regex, str) else regex

    def matches(self, curi: CrawlURI) -> bool:
        return self.regex.fullmatch(curi.hops) is not None


class MatchesListRegexDecideRule(_Predicated):
    """REJECT (or ACCEPT) URIs matching a list of regexes (Heritrix
    ``MatchesListRegexDecideRule``; each regex must match the whole URI string, as
    Java's ``matches()`` — :func:`re.fullmatch`).

    Args:
        regexes: patterns (strings or compiled).
        decision: REJECT (default) or ACCEPT.
        logical_or: True (default): any regex matching suffices (Heritrix
            ``listLogicalOr``); False: all must match.
        negate: answer the decision when the list does *not* match (Heritrix
            ``NotMatchesListRegexDecideRule``).

    :meth:`stats` counts per regex how many times it made the rule answer: with OR,
    the first regex that matched; with AND (or ``negate``), the rule's total is under
    the first regex. The URI is matched as given in ``curi.uri`` (normalize it first,
    as the frontier does, so that regexes see one form).
    """

    default_decision = Decision.REJECT

    def __init__(
        self,
        regexes: Iterable[str | re.Pattern[str]],
        decision: Decision | None = None,
        logical_or: bool = True,
        negate: bool = False,
        name: str | None = None,
    ) -> None:
        super().__init__(decision, name)
        self.regexes = [re.compile(r) if isinstance(r, str) else r for r in regexes]
        self.logical_or = logical_or
        self.negate = negate
        self._counts = [0] * len(self.regexes)

    def _which(self, uri: str) -> int:
        """Index of the regex that decides a match, or -1 for no match."""
        if not self.regexes:
            return -1
        if self.logical_or:
            for i, regex in enumerate(self.regexes):
                if regex.fullmatch(uri) is not None:
                    return i
            return -1
        return 0 if all(r.fullmatch(uri) is not None for r in self.regexes) else -1

    def matches(self, curi: CrawlURI) -> bool:
        i = self._which(curi.uri)
        if self.negate:
            if i >= 0 or not self.regexes:
                return False
            i = 0
        elif i < 0:
            return False
        self._counts[i] += 1
        return True

    def stats(self) -> dict[str, Any]:
        """``{"regexes": [{"regex": pattern, "count": n}, …]}`` in list order."""
        return {
            "regexes": [
                {"regex": r.pattern, "count": n}
                for r, n in zip(self.regexes, self._counts, strict=True)
            ]
        }


class OnHostsDecideRule(_Predicated):
    """ACCEPT (or REJECT) URIs on one of the given hosts, exactly (Heritrix
    ``OnHostsDecideRule``; ``negate=True`` is ``NotOnHostsDecideRule``).

    Hosts are compared in lowercase ASCII (punycode) form, ports ignored, so
    ``"bücher.ch"`` and ``"xn--bcher-kva.ch"`` are the same entry. A URI without a
    host (``mailto:``) matches no host.
    """

    def __init__(
        self,
        hosts: Iterable[str],
        decision: Decision | None = None,
        negate: bool = False,
        name: str | None = None,
    ) -> None:
        super().__init__(decision, name)
        self.hosts = frozenset(_clean_host(h) for h in hosts)
        self.negate = negate

    def matches(self, curi: CrawlURI) -> bool:
        host = host_of(curi.uri)
        found = host is not None and host in self.hosts
        return found != self.negate


class OnDomainsDecideRule(_Predicated):
    """ACCEPT (or REJECT) URIs on one of the given domains or their subdomains (Heritrix
    ``OnDomainsDecideRule``; ``negate=True`` is ``NotOnDomainsDecideRule``).

    Args:
        domains: domain names (Unicode or punycode; a leading ``.`` or ``*.`` is
            ignored).
        registered: match by registered domain (Public Suffix List, via
            :func:`webark.url.registered_domain`): each entry is reduced to its
            registered domain (``www.bbc.co.uk`` → ``bbc.co.uk``) and a host matches when
            its registered domain is one of them. Without it (default), a host matches
            an entry equal to it or ending in ``.`` + entry.
    """

    def __init__(
        self,
        domains: Iterable[str],
        decision: Decision | None = None,
        negate: bool = False,
        registered: bool = False,
        name: str | None = None,
    ) -> None:
        super().__init__(decision, name)
        cleaned = [_clean_host(d.lstrip("*").lstrip(".")) for d in domains]
        if registered:
            cleaned = [registered_domain(d) or d for d in cleaned]
        self.domains = frozenset(d for d in cleaned if d)
        self.registered = registered
        self.negate = negate

    def _on(self, host: str) -> bool:
        if self.registered:
            return (registered_domain(host) or host) in self.domains
        if host in self.domains:
            return True
        dot = host.find(".")
        while dot >= 0:
            if host[dot + 1 :] in self.domains:
                return True
            dot = host.find(".", dot + 1)
        return False

    def matches(self, curi: CrawlURI) -> bool:
        host = host_of(curi.uri)
        found = host is not None and self._on(host)
        return found != self.negate


def _clean_host(host: str) -> str:
    host = host.strip().rstrip(".")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    return host_to_ascii(host)


DEFAULT_SCHEMES = frozenset({"http", "https", "dns"})
"""Schemes webark can fetch: HTTP(S) and its DNS prerequisite (``dns:host``)."""


class SchemeNotInSetDecideRule(_Predicated):
    """REJECT URIs whose scheme is not in ``schemes`` (Heritrix
    ``SchemeNotInSetDecideRule``). Default :data:`DEFAULT_SCHEMES` (http, https, dns);
    Heritrix's default adds ftp, whois and sftp, which webark cannot fetch."""

    default_decision = Decision.REJECT

    def __init__(
        self,
        schemes: Iterable[str] = DEFAULT_SCHEMES,
        decision: Decision | None = None,
        name: str | None = None,
    ) -> None:
        super().__init__(decision, name)
        self.schemes = frozenset(s.strip().lower().rstrip(":") for s in schemes)

    def matches(self, curi: CrawlURI) -> bool:
        scheme, colon, _rest = curi.uri.partition(":")
        return not colon or scheme.strip().lower() not in self.schemes


class ContentTypeMatchesRegexDecideRule(_Predicated):
    """After the fetch: REJECT (or ACCEPT) URIs whose media type matches a regex
    (Heritrix ``ContentTypeMatchesRegexDecideRule``; ``negate=True`` is
    ``ContentTypeNotMatchesRegexDecideRule``).

    The regex must match the whole media type, lowercased and without parameters
    (``text/html; charset=utf-8`` is tested as ``text/html``). No Content-Type: no
    match. Before the fetch (:meth:`decide`) the answer is NONE.
    """

    default_decision = Decision.REJECT

    def __init__(
        self,
        regex: str | re.Pattern[str],
        decision: Decision | None = None,
        negate: bool = False,
        name: str | None = None,
    ) -> None:
        super().__init__(decision, name)
        self.regex = re.compile(regex) if isinstance(regex, str) else regex
        self.negate = negate

    def matches(self, curi: CrawlURI) -> bool:
        return False

    def decide_fetched(self, curi: CrawlURI, mime: str | None, status: int) -> Decision:
        media = (mime or "").split(";", 1)[0].strip().lower()
        found = bool(media) and self.regex.fullmatch(media) is not None
        return self.decision if found != self.negate else Decision.NONE


class FetchStatusDecideRule(_Predicated):
    """After the fetch: REJECT (or ACCEPT) URIs whose fetch status is one of ``codes``
    or within one of the inclusive ``(low, high)`` ranges (Heritrix
    ``FetchStatusDecideRule`` and ``MatchesStatusCodeDecideRule``). Before the fetch
    the answer is NONE.

    >>> rule = FetchStatusDecideRule([404, (500, 599)])
    >>> [rule.decide_fetched(CrawlURI("http://a/"), None, s).value for s in (404, 503, 200)]
    ['REJECT', 'REJECT', 'NONE']
    """

    default_decision = Decision.REJECT

    def __init__(
        self,
        codes: Iterable[int | tuple[int, int]],
        decision: Decision | None = None,
        name: str | None = None,
    ) -> None:
        super().__init__(decision, name)
        singles: set[int] = set()
        ranges: list[tuple[int, int]] = []
        for code in codes:
            if isinstance(code, tuple):
                low, high = code
                if low > high:
                    raise ValueError(f"status range {low}-{high}: low > high")
                ranges.append((low, high))
            else:
                singles.add(int(code))
        self.codes = frozenset(singles)
        self.ranges = tuple(ranges)

    def matches(self, curi: CrawlURI) -> bool:
        return False

    def decide_fetched(self, curi: CrawlURI, mime: str | None, status: int) -> Decision:
        if status in self.codes or any(lo <= status <= hi for lo, hi in self.ranges):
            return self.decision
        return Decision.NONE
