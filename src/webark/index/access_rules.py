"""Access control for replay: SURT-prefix rules with allow / block / exclude policies,
optionally limited to a capture-time range or an embargo period.

The rules file is YAML: a list of rules (or a mapping with a ``rules:`` list)::

    - surt: "http://(org,example,)/private"   # Heritrix scope-SURT prefix…
      policy: block                           # allow | block | exclude
      note: "withdrawn at the owner's request"
    - surt: "https://example.org/drafts/"     # …or a plain URL (its SURT is the prefix)
      policy: exclude
      capture_from: "2010"                    # 1-14 digits or a W3C date, inclusive
      capture_to: "2015-06"                   # padded to the end of June 2015
    - surt: "http://(org,example,"            # example.org and all its subdomains
      policy: exclude
      embargo: P1Y                            # ISO 8601 duration, or a number of days

Matching (pywb's access controls and OpenWayback's exclusion rules work the same way):

* a rule applies to a capture when the capture URL's scope SURT
  (:func:`webark.url.candidate_surts`: ``https`` read as ``http``, lowercased; an IDN
  host in punycode and in Unicode) starts with the rule's prefix, and the capture's
  time (UTC) is within ``capture_from``..``capture_to`` and newer than
  ``now - embargo`` when these are given;
* of the rules that apply, the **longest prefix wins**; among rules with the same
  prefix, a rule with time limits wins over one without, then the first in the file;
* no rule: ``allow``.

Policies: ``allow`` — replay; ``block`` — the capture exists but may not be shown (replay
answers 451, RFC 7725); ``exclude`` — as if the capture did not exist (404, and left out
of CDX and TimeMap output).

A plain URL is turned into the prefix of its own SURT, not a truncated seed prefix:
``http://example.org/private`` → ``http://(org,example,)/private`` (it covers
``/private``, ``/private/x`` and ``/private.html``). Write a SURT with an open host
(``http://(org,example,``) to cover subdomains, ``www`` included.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Literal

import yaml

from webark.cdx.line import CdxLine
from webark.core.errors import ConfigError
from webark.core.timestamps import from_timestamp14, parse_w3c_date, to_timestamp14
from webark.index.source import pad_from, pad_to
from webark.url import SurtPrefixSet, candidate_surts, to_scope_surt

Policy = Literal["allow", "block", "exclude"]
POLICIES: tuple[Policy, ...] = ("allow", "block", "exclude")
_KEYS = frozenset({"surt", "url", "policy", "capture_from", "capture_to", "embargo", "note"})

_DURATION = re.compile(
    r"^P(?!$)(?:(\d+)Y)?(?:(\d+)M)?(?:(\d+)W)?(?:(\d+)D)?"
    r"(?:T(?=\d)(?:(\d+)H)?(?:(\d+)M)?(?:(\d+)S)?)?$"
)
_PARTIAL_DATE = re.compile(r"^(\d{4})(?:-(\d{2})(?:-(\d{2}))?)?$")


class AccessRulesError(ConfigError):
    """A rules file that cannot be used: not YAML, not a list of rules, or a bad value;
    the message names the file, the rule (counting from 1) and the key."""


@dataclass(frozen=True, slots=True)
class Embargo:
    """An ISO 8601 duration (``P1Y``, ``P6M``, ``P2W``, ``P30D``, ``PT12H`` or
    combinations); :meth:`since` goes back from a moment in calendar terms (a year back
    from 29 February is 28 February)."""

    years: int = 0
    months: int = 0
    days: int = 0
    seconds: int = 0
    text: str = ""

    @classmethod
    def parse(cls, value: object) -> Embargo:
        """``"P1Y"``-style text or a number of days (int, or digits).

        Raises:
            ValueError: anything else (negative numbers included).
        """
        if isinstance(value, bool):
            raise ValueError(f"expected an ISO 8601 duration or days, got {value!r}")
        if isinstance(value, int) or (isinstance(value, str) and value.strip().isdigit()):
            days = int(value)
            if days < 0:
                raise ValueError(f"negative embargo {value!r}")
            return cls(days=days, text=f"P{days}D")
        if not isinstance(value, str):
            raise ValueError(f"expected an ISO 8601 duration or days, got {value!r}")
        m = _DURATION.match(value.strip().upper())
        if not m:
            raise ValueError(f"not an ISO 8601 duration (P1Y, P6M, P30D …): {value!r}")
        y, mo, w, d, h, mi, s = (int(g) if g else 0 for g in m.groups())
        return cls(y, mo, w * 7 + d, h * 3600 + mi * 60 + s, value.strip().upper())

    def since(self, now: datetime) -> datetime:
        """``now`` minus this duration (UTC)."""
        months = now.year * 12 + (now.month - 1) - (self.years * 12 + self.months)
        year, month = divmod(months, 12)
        month += 1
        day = now.day
        while True:
            try:
                back = now.replace(year=year, month=month, day=day)
                break
            except ValueError:
                day -= 1  # 31 March - P1M = 28/29 February
        return back - timedelta(days=self.days, seconds=self.seconds)


@dataclass(frozen=True, slots=True)
class AccessRule:
    """One rule.

    Attributes:
        prefix: SURT prefix in comparable form (lowercase, ``http://`` for https).
        policy: ``allow``, ``block`` or ``exclude``.
        capture_from, capture_to: inclusive 14-digit UTC bounds of the capture time
            (None = open).
        embargo: the rule applies only to captures newer than ``now - embargo``.
        note: free text (why the rule exists).
        index: position in the file, counting from 1.
        source: the ``surt`` (or ``url``) value as written.
    """

    prefix: str
    policy: Policy
    capture_from: str | None = None
    capture_to: str | None = None
    embargo: Embargo | None = None
    note: str = ""
    index: int = 0
    source: str = ""

    @property
    def time_limited(self) -> bool:
        """True when the rule has ``capture_from``, ``capture_to`` or ``embargo``."""
        return bool(self.capture_from or self.capture_to or self.embargo)

    def applies_at(self, timestamp14: str, now: datetime) -> bool:
        """True when a capture at ``timestamp14`` (UTC) is within the rule's time
        limits at ``now`` (aware UTC)."""
        if self.capture_from is not None and timestamp14 < self.capture_from:
            return False
        if self.capture_to is not None and timestamp14 > self.capture_to:
            return False
        if self.embargo is not None:
            return from_timestamp14(timestamp14) > self.embargo.since(now)
        return True


@dataclass(frozen=True, slots=True)
class AccessDecision:
    """The outcome for one capture: ``policy`` and the ``rule`` that decided (None when
    no rule applies: ``allow``)."""

    policy: Policy
    rule: AccessRule | None = None

    @property
    def allowed(self) -> bool:
        """True for ``allow``."""
        return self.policy == "allow"


def _comparable_prefix(text: str) -> str:
    """A SURT prefix in the form candidates are compared in (lowercase, NFC, http)."""
    return next(iter(SurtPrefixSet([text])))


def _prefix_of(value: str) -> str:
    """A Heritrix SURT prefix (contains ``(``) as is, a plain URL as its scope SURT."""
    v = value.strip()
    if "(" in v:
        if "://(" not in v:
            v = "http://" + v.lstrip("/")
        return _comparable_prefix(v)
    if "://" not in v:
        v = "http://" + v
    return _comparable_prefix(to_scope_surt(v))


def _time_bound(value: object, upper: bool) -> str:
    """1-14 digits, a W3C date or date-time (YAML dates and datetimes too) → 14 digits,
    padded down (``capture_from``) or up (``capture_to``)."""
    if isinstance(value, bool):
        raise ValueError(f"expected a timestamp or W3C date, got {value!r}")
    if isinstance(value, datetime):
        dt = value if value.tzinfo else value.replace(tzinfo=UTC)
        return to_timestamp14(dt)
    if isinstance(value, date):
        digits = value.strftime("%Y%m%d")
    elif isinstance(value, int):
        digits = str(value)
    elif isinstance(value, str):
        text = value.strip()
        m = _PARTIAL_DATE.match(text)
        if text.isdigit():
            digits = text
        elif m:
            digits = "".join(g for g in m.groups() if g)
        else:
            return to_timestamp14(parse_w3c_date(text))
    else:
        raise ValueError(f"expected a timestamp or W3C date, got {value!r}")
    ts = pad_to(digits) if upper else pad_from(digits)
    from_timestamp14(pad_from(digits))  # a real date (month 13 is not)
    return ts


def _parse_rule(raw: object, index: int, where: str) -> AccessRule:
    def fail(key: str | None, msg: str) -> AccessRulesError:
        at = f"{where}: rule {index}" + (f", key {key!r}" if key else "")
        return AccessRulesError(f"{at}: {msg}")

    if not isinstance(raw, Mapping):
        raise fail(None, f"expected a mapping (surt: …, policy: …), got {raw!r}")
    unknown = sorted(str(k) for k in raw if k not in _KEYS)
    if unknown:
        raise fail(unknown[0], f"unknown key (known: {', '.join(sorted(_KEYS))})")
    if "surt" in raw and "url" in raw:
        raise fail("url", "give surt or url, not both")
    key = "surt" if "surt" in raw else "url"
    where_from = raw.get(key)
    if not isinstance(where_from, str) or not where_from.strip():
        raise fail(key, "missing or empty: a SURT prefix like http://(org,example,)/ or a URL")
    try:
        prefix = _prefix_of(where_from)
    except ValueError as exc:
        raise fail(key, str(exc)) from exc
    policy = raw.get("policy")
    if policy not in POLICIES:
        raise fail("policy", f"expected one of {', '.join(POLICIES)}, got {policy!r}")
    bounds: dict[str, str | None] = {}
    for k in ("capture_from", "capture_to"):
        v = raw.get(k)
        try:
            bounds[k] = None if v is None else _time_bound(v, upper=k == "capture_to")
        except ValueError as exc:
            raise fail(k, str(exc)) from exc
    lo, hi = bounds["capture_from"], bounds["capture_to"]
    if lo and hi and lo > hi:
        raise fail("capture_to", "is before capture_from")
    embargo = None
    if raw.get("embargo") is not None:
        try:
            embargo = Embargo.parse(raw["embargo"])
        except ValueError as exc:
            raise fail("embargo", str(exc)) from exc
    note = raw.get("note", "")
    return AccessRule(
        prefix=prefix,
        policy=policy,
        capture_from=bounds["capture_from"],
        capture_to=bounds["capture_to"],
        embargo=embargo,
        note="" if note is None else str(note),
        index=index,
        source=where_from,
    )


class AccessRules:
    """A set of :class:`AccessRule` with longest-prefix decisions (module docstring).

    Build with :meth:`load` (a YAML file), :meth:`loads` (YAML text) or
    :meth:`from_data` (parsed data). Lookups cost one dictionary probe per character of
    the capture's SURT, however many rules there are.
    """

    def __init__(self, rules: Sequence[AccessRule] = (), *, source: str = "<rules>"):
        self.rules = list(rules)
        self.source = source
        self._by_prefix: dict[str, list[AccessRule]] = {}
        for r in self.rules:
            self._by_prefix.setdefault(r.prefix, []).append(r)
        for group in self._by_prefix.values():
            group.sort(key=lambda r: (not r.time_limited, r.index))

    def __len__(self) -> int:
        return len(self.rules)

    def __repr__(self) -> str:
        return f"AccessRules({self.source!r}, {len(self.rules)} rules)"

    @classmethod
    def from_data(cls, data: object, source: str = "<rules>") -> AccessRules:
        """Rules from parsed YAML/JSON: a list of rule mappings, or ``{"rules": [...]}``
        (None or an empty list: no rules).

        Raises:
            AccessRulesError: naming ``source``, the rule (from 1) and the key.
        """
        if isinstance(data, Mapping):
            if set(data) - {"rules"}:
                extra = sorted(str(k) for k in set(data) - {"rules"})
                raise AccessRulesError(f"{source}: unknown top-level key {extra[0]!r}")
            data = data.get("rules")
        if data is None:
            return cls([], source=source)
        if not isinstance(data, list):
            raise AccessRulesError(f"{source}: expected a list of rules, got {type(data).__name__}")
        return cls([_parse_rule(r, i, source) for i, r in enumerate(data, 1)], source=source)

    @classmethod
    def loads(cls, text: str, source: str = "<rules>") -> AccessRules:
        """Rules from YAML text.

        Raises:
            AccessRulesError: not YAML, or bad rules.
        """
        try:
            data = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            raise AccessRulesError(f"{source}: not valid YAML: {exc}") from exc
        return cls.from_data(data, source)

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> AccessRules:
        """Rules from a YAML file (UTF-8).

        Raises:
            AccessRulesError: not YAML, or bad rules.
            OSError: the file cannot be read.
        """
        p = os.fspath(path)
        with open(p, encoding="utf-8") as f:
            return cls.loads(f.read(), p)

    def matching(self, url: str) -> list[AccessRule]:
        """Rules whose prefix matches ``url`` (punycode or Unicode host), longest prefix
        first (time limits not considered).

        Raises:
            InvalidURLError: the URL cannot be parsed.
        """
        if not self._by_prefix:
            return []
        found: dict[str, list[AccessRule]] = {}
        for s in candidate_surts(url):
            s = _comparable_prefix(s)
            for i in range(len(s), 0, -1):
                group = self._by_prefix.get(s[:i])
                if group is not None:
                    found[s[:i]] = group
        out: list[AccessRule] = []
        for p in sorted(found, key=len, reverse=True):
            out += found[p]
        return out

    def decide(self, url: str, timestamp: str, now: datetime | None = None) -> AccessDecision:
        """The policy for the capture of ``url`` at ``timestamp``.

        Args:
            url: the capture's original URL.
            timestamp: its time, 1–14 digits UTC (a 14-digit CDX timestamp; shorter ones
                are padded to the earliest second they name).
            now: the moment embargoes count back from (aware; naive is taken as UTC;
                default: the current time).

        Returns:
            An :class:`AccessDecision`: the first rule that applies among
            :meth:`matching` (longest prefix; time-limited before unlimited; file order),
            or ``allow`` with no rule.

        Raises:
            ValueError: a bad timestamp; InvalidURLError: an unparseable URL.
        """
        ts = pad_from(timestamp[:14])
        if now is None:
            now = datetime.now(UTC)
        elif now.tzinfo is None:
            now = now.replace(tzinfo=UTC)
        for rule in self.matching(url):
            if rule.applies_at(ts, now):
                return AccessDecision(rule.policy, rule)
        return AccessDecision("allow", None)

    def decide_line(self, line: CdxLine, now: datetime | None = None) -> AccessDecision:
        """:meth:`decide` for an index line (its ``url`` and ``timestamp``)."""
        return self.decide(line.url, line.timestamp, now)

    def excluder(self, now: datetime | None = None) -> Callable[[CdxLine], bool]:
        """A predicate for ``closest(..., exclude=)`` and CDX/TimeMap output: True for
        lines whose policy is ``exclude``."""
        return lambda line: self.decide_line(line, now).policy == "exclude"

    def filter_lines(
        self, lines: Iterable[CdxLine], now: datetime | None = None
    ) -> Iterable[CdxLine]:
        """``lines`` without the excluded ones (blocked lines stay: they exist)."""
        ex = self.excluder(now)
        return (x for x in lines if not ex(x))


def load_access_rules(path: str | os.PathLike[str] | None) -> AccessRules:
    """:meth:`AccessRules.load`, or no rules when ``path`` is None or the file does not
    exist (a collection without a rules file allows everything)."""
    if path is None or not os.path.exists(path):
        return AccessRules([], source=os.fspath(path) if path else "<none>")
    return AccessRules.load(path)


__all__ = [
    "POLICIES",
    "AccessDecision",
    "AccessRule",
    "AccessRules",
    "AccessRulesError",
    "Embargo",
    "Policy",
    "load_access_rules",
]
