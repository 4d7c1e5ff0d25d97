"""warcprox's ``Warcprox-Meta`` request header: parsed, checked against its JSON Schema
(``warcprox-meta.schema.json``, documented in ``docs/proxy-api.md``) and turned into
what the proxy does with one request.

Keys and their warcprox semantics (warcprox ``api.rst``, ``warcproxy.py``): ``warc-prefix``
(the WARC series; ``-``: do not archive), ``dedup-buckets`` (``{name: "rw"|"ro"}`` in
lookup order; legacy ``dedup-bucket``), ``stats.buckets`` (capture statistics per
bucket besides ``__all__``), ``limits`` / ``soft-limits`` (``"bucket/sub/stat": n``;
reached → 420 / 430 before anything is fetched), ``blocks`` (rules; a match → 403
``blocked-by-rule``), ``metadata`` (``seed`` → crawl.log source tag; all of it → the
warcinfo of a series this request starts), ``accept: ["capture-metadata"]`` (the
response carries the capture's timestamp), ``dedup-ok`` (false: this capture is never a
dedup original), and webark's extension ``dedup-policy`` (this capture's
:class:`~webark.dedup.policy.DedupPolicy`, the job file's ``dedup_policy`` keys). Unknown
keys are ignored; a malformed header is a
:class:`WarcproxMetaError` (the proxy answers 400 with its message).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from importlib import resources
from typing import Any
from urllib.parse import urlsplit

import jsonschema

from webark.capture.stats import CaptureStats
from webark.core.errors import RequestError
from webark.dedup.policy import DedupPolicy, DedupPolicyError
from webark.url import to_scope_surt
from webark.url.errors import InvalidURLError

__all__ = [
    "HEADER", "NO_ARCHIVE", "WarcproxMeta", "WarcproxMetaError", "parse_header",
    "response_field", "schema",
]  # fmt: skip

HEADER = "Warcprox-Meta"
NO_ARCHIVE = "-"
"""The ``warc-prefix`` that means "relay, but do not archive"."""

_schema: dict[str, Any] | None = None
_validator: jsonschema.Draft202012Validator | None = None


class WarcproxMetaError(RequestError):
    """A ``Warcprox-Meta`` header that is not JSON, not an object, or breaks the schema
    (the message says where and what)."""


def schema() -> dict[str, Any]:
    """The JSON Schema of the header (JSON Schema 2020-12)."""
    global _schema
    if _schema is None:
        text = resources.files("webark.apps.proxy").joinpath("warcprox-meta.schema.json")
        _schema = json.loads(text.read_text(encoding="utf-8"))
    return _schema


def _check(obj: object) -> None:
    global _validator
    if _validator is None:
        _validator = jsonschema.Draft202012Validator(schema())
    err = jsonschema.exceptions.best_match(_validator.iter_errors(obj))
    if err is not None:
        where = "/".join(str(p) for p in err.absolute_path) or "(top level)"
        raise WarcproxMetaError(f"{HEADER}: at {where}: {err.message}")


@dataclass(frozen=True, slots=True)
class WarcproxMeta:
    """One request's ``Warcprox-Meta`` (module docstring); the defaults are a request
    without the header."""

    warc_prefix: str | None = None
    stats_buckets: tuple[str, ...] = ()
    limits: dict[str, int] = field(default_factory=dict)
    soft_limits: dict[str, int] = field(default_factory=dict)
    blocks: tuple[dict[str, str], ...] = ()
    metadata: dict[str, Any] | None = None
    accept: tuple[str, ...] = ()
    dedup_ok: bool = True
    dedup_buckets: tuple[tuple[str, bool], ...] = ()
    """``(name, writable)`` in lookup order; ``()``: the proxy's own dedup index."""
    dedup_policy: DedupPolicy | None = None
    """``dedup-policy``: this capture's dedup policy; None: the proxy's."""

    @property
    def archive(self) -> bool:
        """False for ``warc-prefix: "-"``."""
        return self.warc_prefix != NO_ARCHIVE

    @property
    def source_tag(self) -> str | None:
        """``metadata.seed`` (crawl.log field 11), or None."""
        seed = (self.metadata or {}).get("seed")
        return seed if isinstance(seed, str) else None

    @property
    def warcinfo(self) -> tuple[tuple[str, str], ...]:
        """``json-metadata`` for the warcinfo record of a series this request starts."""
        if not self.metadata:
            return ()
        return (("json-metadata", json.dumps(self.metadata, separators=(",", ":"))),)

    def blocked_by(self, url: str) -> dict[str, str] | None:
        """The first rule of ``blocks`` that ``url`` matches, or None: ``domain`` (the
        host or a subdomain of it), ``substring`` (in the URL), ``regex`` (Python
        ``re.match`` at the URL's start, as warcprox), ``surt`` (the URL's SURT starts
        with it, e.g. ``http://(com,example,)/private``)."""
        host = (urlsplit(url).hostname or "").lower()
        for rule in self.blocks:
            if any(_matches(kind, value, url, host) for kind, value in rule.items()):
                return rule
        return None

    def reached(self, stats: CaptureStats, soft: bool = False) -> tuple[str, int] | None:
        """The first of ``limits`` (``soft-limits`` when ``soft``) that ``stats`` has
        reached (count >= limit), as ``(key, limit)``; None when none."""
        for key, limit in (self.soft_limits if soft else self.limits).items():
            bucket, sub, stat = key.split("/")
            b = stats.buckets.get(bucket)
            value = b.to_json()[sub][stat] if b is not None else 0
            if value >= limit:
                return key, limit
        return None


def _matches(kind: str, value: str, url: str, host: str) -> bool:
    """Does ``url`` (host ``host``) match the block rule part ``kind: value``?"""
    if kind == "domain":
        d = value.lower().strip(".")
        return host == d or host.endswith("." + d)
    if kind == "substring":
        return value in url
    if kind == "regex":
        return re.match(value, url) is not None
    if kind == "surt":
        try:
            return to_scope_surt(url).startswith(value)
        except InvalidURLError:
            return False
    return False


def parse_header(value: str | None) -> WarcproxMeta:
    """The :class:`WarcproxMeta` of a header value (None: no header).

    Raises:
        WarcproxMetaError: not JSON, not an object, or against the schema (also a
            ``regex`` block rule that does not compile).
    """
    if value is None:
        return WarcproxMeta()
    try:
        obj = json.loads(value)
    except ValueError as e:
        raise WarcproxMetaError(f"{HEADER}: not JSON ({e})") from e
    _check(obj)
    buckets = tuple(b if isinstance(b, str) else b["bucket"]
                    for b in obj.get("stats", {}).get("buckets", []))  # fmt: skip
    blocks = tuple(obj.get("blocks", []))
    for rule in blocks:
        if "regex" in rule:
            try:
                re.compile(rule["regex"])
            except re.error as e:
                raise WarcproxMetaError(f"{HEADER}: at blocks: bad regex {rule['regex']!r}: "
                                        f"{e}") from e  # fmt: skip
    policy = None
    if "dedup-policy" in obj:
        try:
            policy = DedupPolicy.from_mapping(obj["dedup-policy"])
        except DedupPolicyError as e:  # the schema checks types; this, the rest
            raise WarcproxMetaError(f"{HEADER}: at dedup-policy: {e}") from e
    if "dedup-buckets" in obj:
        dedup = tuple((name, mode == "rw") for name, mode in obj["dedup-buckets"].items())
    elif "dedup-bucket" in obj:
        dedup = ((obj["dedup-bucket"], True),)
    else:
        dedup = ()
    return WarcproxMeta(
        warc_prefix=obj.get("warc-prefix"), stats_buckets=buckets, dedup_buckets=dedup,
        limits=dict(obj.get("limits", {})), soft_limits=dict(obj.get("soft-limits", {})),
        blocks=blocks, metadata=obj.get("metadata"), accept=tuple(obj.get("accept", [])),
        dedup_ok=obj.get("dedup-ok", True), dedup_policy=policy,
    )  # fmt: skip


def response_field(obj: dict[str, Any]) -> tuple[str, str]:
    """A ``Warcprox-Meta`` response header field carrying ``obj`` (compact JSON)."""
    return HEADER, json.dumps(obj, separators=(",", ":"))
